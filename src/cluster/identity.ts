/**
 * Which hosted cluster, on which hub: the identity of a HostedCluster (name and namespace, and the
 * control plane namespace HyperShift derives from them), how a command's choice of cluster (a name,
 * or the site file's) becomes one, and the connection to the hub that runs it.
 */
import { usageError, CommonError } from '../util/errors.js';
import { Kube } from './kube.js';
import { loadSite } from './site/index.js';

export interface ClusterIdentity {
  name: string;
  namespace: string;
}

/** The control plane (and agent) namespace HyperShift uses for a hosted cluster. */
export function controlPlaneNamespace(c: ClusterIdentity): string {
  return `${c.namespace}-${c.name.replaceAll('.', '-')}`;
}

/** A cluster as a command names it: --name/--namespace, or the site file that describes it. */
export interface ClusterSelector {
  name?: string;
  namespace?: string;
  /** Site file: the name and namespace come from it when not given. */
  site?: string;
}

/** The hosted cluster the selector names: its name/namespace, else the site file's, else exit 2. */
async function selectCluster(s: ClusterSelector): Promise<ClusterIdentity> {
  let name = s.name;
  let namespace = s.namespace;
  if (s.site) {
    const site = await loadSite(s.site, { checkFiles: false });
    name ??= site.cluster.name;
    namespace ??= site.cluster.namespace;
  }
  if (!name)
    throw usageError(
      CommonError.FLAG_MISSING,
      'which hosted cluster? give --name (and --namespace) or --site',
      {
        hint: 'oc get hostedcluster -A lists them',
      },
    );
  return { name, namespace: namespace ?? 'clusters' };
}

/** The management cluster (hub): a kubeconfig file (else KUBECONFIG, else ~/.kube/config) and context. */
export interface HubConnection {
  kubeconfig?: string;
  context?: string;
}

/** Connect to the hub (exit 2 when its kubeconfig cannot be read). */
export function connectHub(hub: HubConnection): Kube {
  return Kube.connect({
    ...(hub.kubeconfig ? { kubeconfig: hub.kubeconfig } : {}),
    ...(hub.context ? { context: hub.context } : {}),
  });
}

/** What the cluster commands (status, kubeconfig, destroy) act on: a cluster on a hub. */
export interface ClusterTarget {
  hub: HubConnection;
  cluster: ClusterSelector;
}

/** The selected cluster and a connection to its hub, in that order (a bad site file is reported first). */
export async function openTarget(t: ClusterTarget): Promise<{ kube: Kube; cluster: ClusterIdentity }> {
  const cluster = await selectCluster(t.cluster);
  return { kube: connectHub(t.hub), cluster };
}
