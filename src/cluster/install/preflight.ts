/**
 * What the hub must have before anything of a hosted cluster is applied: the APIs of MCE (with
 * hypershift and assisted-service) and metal3, an AgentServiceConfig that can build the discovery
 * ISO for the release, and a cluster name no other namespace holds. Each lack is exit 2, found
 * here rather than an hour into the install.
 */
import { AirgapError } from '../../util/errors.js';
import { field } from '../conditions.js';
import { API } from '../describe.js';
import type { ClusterIdentity } from '../identity.js';
import type { Kube } from '../kube.js';
import { ClusterError } from '../errors.js';

/** The APIs a hosted-cluster install needs on the hub (MCE with hypershift and assisted-service). */
const REQUIRED_APIS = [
  API.hostedCluster,
  API.nodePool,
  API.infraEnv,
  API.agent,
  API.bareMetalHost,
  API.agentServiceConfig,
];

export interface ClusterPreflightOptions {
  kube: Kube;
  cluster: ClusterIdentity;
  /** `4.17.3`: the AgentServiceConfig must have an osImage for its x.y. */
  releaseVersion: string;
  /** AgentServiceConfig `cpuArchitecture` of the hosts (`x86_64`). */
  cpuArchitecture: string;
}

/**
 * What the hub must have before anything of a hosted cluster is applied (exit 2 otherwise): the
 * HyperShift, assisted-service and metal3 APIs, an AgentServiceConfig with an osImage for the
 * release (else the discovery ISO fails much later), and no HostedCluster of the same name in
 * another namespace (names are unique across the hub).
 */
export async function clusterPreflight(o: ClusterPreflightOptions): Promise<{ warnings: string[] }> {
  await requireApis(o.kube);
  await requireOsImage(o);
  await requireFreeName(o.kube, o.cluster);
  return { warnings: await hypershiftOperatorWarnings(o.kube) };
}

async function requireApis(kube: Kube): Promise<void> {
  const missing: string[] = [];
  for (const t of REQUIRED_APIS)
    if (!(await kube.resource(t.apiVersion, t.kind))) missing.push(`${t.kind} (${t.apiVersion})`);
  if (missing.length)
    throw new AirgapError(ClusterError.HUB_NOT_READY, `the hub does not serve ${missing.join(', ')}`, {
      where: kube.server,
      hint: 'run airgap install hub first (it enables hypershift and assisted-service in the MultiClusterEngine)',
      exitCode: 2,
    });
}

/** The AgentServiceConfig exists and has an osImage for the release's x.y and the hosts' arch. */
async function requireOsImage(o: ClusterPreflightOptions): Promise<void> {
  const { kube } = o;
  const asc = await kube.get({ ...API.agentServiceConfig, name: 'agent' });
  if (!asc)
    throw new AirgapError(ClusterError.HUB_NOT_READY, 'the hub has no AgentServiceConfig agent', {
      where: kube.server,
      hint: 'run airgap install hub first (it creates the AgentServiceConfig with your osImages)',
      exitCode: 2,
    });
  const minor = o.releaseVersion.split('.').slice(0, 2).join('.');
  const images =
    (field(asc, 'spec.osImages') as { openshiftVersion?: string; cpuArchitecture?: string }[] | undefined) ??
    [];
  if (
    !images.some((i) => i.openshiftVersion === minor && (i.cpuArchitecture ?? 'x86_64') === o.cpuArchitecture)
  )
    throw new AirgapError(
      ClusterError.HUB_NO_OS_IMAGE,
      `the AgentServiceConfig has no osImage for OpenShift ${minor} ${o.cpuArchitecture} (it has: ${
        images.map((i) => `${i.openshiftVersion} ${i.cpuArchitecture ?? 'x86_64'}`).join(', ') || 'none'
      })`,
      {
        where: 'AgentServiceConfig agent',
        hint: `serve the RHCOS of release ${o.releaseVersion} (airgap images fetch --release …; airgap serve-images --asc-out), add it to hub.osImages in the site file, and run airgap install hub again`,
        exitCode: 2,
      },
    );
}

/** HostedCluster names are unique across the hub. */
async function requireFreeName(kube: Kube, cluster: ClusterIdentity): Promise<void> {
  const same = (await kube.list(API.hostedCluster.apiVersion, API.hostedCluster.kind)).items.filter(
    (hc) => hc.metadata.name === cluster.name && hc.metadata.namespace !== cluster.namespace,
  );
  if (same.length)
    throw new AirgapError(
      ClusterError.CLUSTER_NAME_TAKEN,
      `a HostedCluster named ${cluster.name} already exists in namespace ${same[0]!.metadata.namespace}`,
      {
        where: kube.server,
        hint: 'hosted cluster names are unique across the hub: pick another cluster.name',
        exitCode: 2,
      },
    );
}

/**
 * A HyperShift operator not installed by MCE lacks IMAGE_AGENT_CAPI_PROVIDER and deploys the CAPI
 * agent provider from quay.io, which a disconnected hub cannot pull.
 */
async function hypershiftOperatorWarnings(kube: Kube): Promise<string[]> {
  const warnings: string[] = [];
  const ho = await kube.get({ ...API.deployment, namespace: 'hypershift', name: 'operator' });
  const containers =
    (field(ho, 'spec.template.spec.containers') as { env?: { name: string }[] }[] | undefined) ?? [];
  if (ho && !containers.some((c) => c.env?.some((e) => e.name === 'IMAGE_AGENT_CAPI_PROVIDER')))
    warnings.push(
      'the HyperShift operator has no IMAGE_AGENT_CAPI_PROVIDER: it will deploy the CAPI agent provider from quay.io/edge-infrastructure/cluster-api-provider-agent:latest, which a disconnected hub cannot pull. Install the operator through MCE, or annotate the HostedCluster with hypershift.openshift.io/capi-provider-agent-image=<the mirrored image>',
    );
  return warnings;
}
