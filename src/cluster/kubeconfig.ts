/**
 * The hosted cluster's admin kubeconfig: the Secret its HostedCluster names in `status.kubeconfig`
 * (key `kubeconfig`, in the HostedCluster's namespace), written 0600 and never printed (it is a
 * credential). The install writes it at its end; `airgap cluster kubeconfig` writes it on demand.
 */
import { writeFileAtomic } from '../util/fs.js';
import { AirgapError } from '../util/errors.js';
import { field } from './conditions.js';
import { API } from './describe.js';
import { openTarget, type ClusterIdentity, type ClusterTarget } from './identity.js';
import type { Kube } from './kube.js';
import { ClusterError } from './errors.js';

/** The admin kubeconfig's text; exit 2 when there is no such HostedCluster, 1 while it has none yet. */
async function hostedKubeconfig(kube: Kube, cluster: ClusterIdentity): Promise<string> {
  const hc = await kube.get({ ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name });
  if (!hc)
    throw new AirgapError(
      ClusterError.CLUSTER_NOT_FOUND,
      `HostedCluster ${cluster.namespace}/${cluster.name} does not exist`,
      {
        where: kube.server,
        hint: 'check --name and --namespace (oc get hostedcluster -A)',
        exitCode: 2,
      },
    );
  const secretName = field(hc, 'status.kubeconfig.name') as string | undefined;
  if (!secretName)
    throw new AirgapError(
      ClusterError.KUBECONFIG_NOT_READY,
      `HostedCluster ${cluster.namespace}/${cluster.name} does not report a kubeconfig yet`,
      {
        hint: 'wait for the control plane to be Available (airgap cluster status)',
      },
    );
  const secret = await kube.get({ ...API.secret, namespace: cluster.namespace, name: secretName });
  const data = secret?.data?.kubeconfig;
  if (!data)
    throw new AirgapError(
      ClusterError.KUBECONFIG_NOT_READY,
      `Secret ${cluster.namespace}/${secretName} has no kubeconfig key`,
      {
        hint: 'wait for the control plane to be Available (airgap cluster status)',
      },
    );
  return Buffer.from(data, 'base64').toString('utf8');
}

/** Write the admin kubeconfig to `out` (0600). Returns its text. */
export async function writeHostedKubeconfig(
  kube: Kube,
  cluster: ClusterIdentity,
  out: string,
): Promise<string> {
  const text = await hostedKubeconfig(kube, cluster);
  await writeFileAtomic(out, text, { mode: 0o600 });
  return text;
}

/** `airgap cluster kubeconfig`: the selected cluster's admin kubeconfig written to `out` (0600). */
export async function writeSelectedKubeconfig(
  o: ClusterTarget & { out: string },
): Promise<{ cluster: ClusterIdentity; file: string }> {
  const { kube, cluster } = await openTarget(o);
  await writeHostedKubeconfig(kube, cluster, o.out);
  return { cluster, file: o.out };
}
