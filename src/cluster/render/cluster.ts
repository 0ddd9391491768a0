/**
 * The hosted cluster objects for `airgap install cluster`, in dependency order (seed digest §1.C):
 * the two namespaces; the trust bundle and the Secrets hcp would create (with its labels); the
 * InfraEnv's pull secret and the legacy `capi-provider-role` in the control plane namespace; the
 * HostedCluster and NodePool, field for field as `hcp create cluster agent --render` writes them
 * (plus the disconnected settings); the InfraEnv, NMStateConfigs, BMC Secrets and BareMetalHosts.
 * Pure: everything comes from the ResolvedSite.
 */
import { CPU_ARCHITECTURE } from '../site/inputs.js';
import { DEFAULT_CATALOGS, type ResolvedSite, type SiteHost } from '../site/types.js';
import { bmcAddress } from './bmc.js';
import { siteTrustObjects } from './hub.js';
import {
  clusterNames,
  CPO_IMAGE_ANNOTATION,
  INFRAENV_LABEL,
  NMSTATE_LABEL,
  OLM_REGISTRY_OVERRIDES_ANNOTATION,
  SAFE_TO_DELETE_LABEL,
  type ClusterNames,
} from './names.js';
import { kube, type KubeObject, type RenderedObject, type RenderStep } from './types.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** The HostedCluster `spec.services`, in hcp's order. */
function servicePublishing(r: ResolvedSite): Record<string, unknown>[] {
  const services = ['APIServer', 'Ignition', 'Konnectivity', 'OAuthServer', 'OIDC'];
  const s = r.site.cluster.services;
  return services.map((service) => ({
    service,
    servicePublishingStrategy:
      s.publishing === 'nodePort'
        ? { nodePort: { address: s.apiServerAddress }, type: 'NodePort' }
        : { type: service === 'APIServer' ? 'LoadBalancer' : 'Route' },
  }));
}

/** HostedCluster annotations: the control-plane-operator image, and the OLM catalog overrides. */
function hostedClusterAnnotations(r: ResolvedSite): Record<string, string> {
  // Without the mirror (a render from the site file alone) no override: HyperShift takes the
  // control plane operator of the release.
  const out: Record<string, string> = r.controlPlaneOperatorImage
    ? { [CPO_IMAGE_ANNOTATION]: r.controlPlaneOperatorImage }
    : {};
  if (r.site.cluster.olmCatalogPlacement !== 'management') return out;
  const images = r.catalogOverrides.images ?? {};
  const all = DEFAULT_CATALOGS.every((c) => images[c]?.includes('@sha256:'));
  if (all) {
    for (const c of DEFAULT_CATALOGS) out[`hypershift.openshift.io/${c}-catalog-image`] = images[c]!;
  } else if (r.catalogOverrides.registryOverrides && r.catalogOverrides.registryOverrides.length > 0) {
    out[OLM_REGISTRY_OVERRIDES_ANNOTATION] = r.catalogOverrides.registryOverrides
      .map((o) => `${o.source}=${o.mirror}`)
      .join(',');
  }
  return out;
}

function secret(
  name: string,
  namespace: string,
  data: Record<string, string>,
  opts: { type?: string; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...(opts.labels ? { labels: opts.labels } : {}) },
    ...(opts.type ? { type: opts.type } : {}),
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

function renderHostedCluster(r: ResolvedSite, names: ClusterNames = clusterNames(r.site)): KubeObject {
  const c = r.site.cluster;
  const n = r.site.network;
  return {
    apiVersion: 'hypershift.openshift.io/v1beta1',
    kind: 'HostedCluster',
    metadata: { name: names.name, namespace: names.namespace, annotations: hostedClusterAnnotations(r) },
    spec: {
      additionalTrustBundle: { name: names.userCaBundle },
      autoscaling: {},
      capabilities: {},
      configuration: {},
      controllerAvailabilityPolicy: c.controlPlaneAvailability,
      dns: { baseDomain: c.baseDomain },
      etcd: {
        managed: {
          storage: {
            persistentVolume: {
              size: c.etcd.size,
              ...(c.etcd.storageClass !== undefined ? { storageClassName: c.etcd.storageClass } : {}),
            },
            type: 'PersistentVolume',
          },
        },
        managementType: 'Managed',
      },
      fips: false,
      ...(r.imageContentSources.length > 0
        ? {
            imageContentSources: r.imageContentSources.map((i) => ({
              mirrors: [...i.mirrors],
              source: i.source,
            })),
          }
        : {}),
      infraID: c.infraID,
      networking: {
        clusterNetwork: n.clusterNetwork.map((cidr) => ({ cidr })),
        ...(n.machineNetwork.length > 0
          ? { machineNetwork: n.machineNetwork.map((cidr) => ({ cidr })) }
          : {}),
        networkType: n.networkType,
        serviceNetwork: n.serviceNetwork.map((cidr) => ({ cidr })),
      },
      olmCatalogPlacement: c.olmCatalogPlacement,
      platform: { agent: { agentNamespace: names.controlPlaneNamespace }, type: 'Agent' },
      pullSecret: { name: names.pullSecret },
      release: { image: r.releaseImage },
      secretEncryption: { aescbc: { activeKey: { name: names.etcdEncryptionKey } }, type: 'aescbc' },
      services: servicePublishing(r),
      sshKey: { name: names.sshKey },
    },
  };
}

function renderNodePool(r: ResolvedSite, names: ClusterNames = clusterNames(r.site)): KubeObject {
  const np = r.site.cluster.nodePool;
  return {
    apiVersion: 'hypershift.openshift.io/v1beta1',
    kind: 'NodePool',
    metadata: { name: names.name, namespace: names.namespace },
    spec: {
      arch: np.arch,
      clusterName: names.name,
      management: { autoRepair: false, upgradeType: 'InPlace' },
      nodeDrainTimeout: '0s',
      nodeVolumeDetachTimeout: '0s',
      platform: {
        agent: np.agentLabelSelector ? { agentLabelSelector: np.agentLabelSelector } : {},
        type: 'Agent',
      },
      release: { image: r.releaseImage },
      replicas: 0,
    },
  };
}

function renderInfraEnv(r: ResolvedSite, names: ClusterNames = clusterNames(r.site)): KubeObject {
  const c = r.site.cluster;
  const cpu = CPU_ARCHITECTURE[c.nodePool.arch]!;
  const minor = /^(\d+\.\d+)/.exec(r.releaseVersion)?.[1];
  const hasOsImage =
    minor !== undefined &&
    r.osImages.some(
      (o) =>
        o.openshiftVersion === minor &&
        [cpu, cpu === 'aarch64' ? 'arm64' : cpu].includes(o.cpuArchitecture ?? 'x86_64'),
    );
  const staticNetwork = r.site.hosts.some((h) => h.network !== undefined);
  const agentLabels = c.nodePool.agentLabelSelector?.matchLabels;
  return {
    apiVersion: 'agent-install.openshift.io/v1beta1',
    kind: 'InfraEnv',
    metadata: { name: names.name, namespace: names.controlPlaneNamespace },
    spec: {
      additionalTrustBundle: r.caBundlePem,
      ...(c.approveAgents ? { agentApproval: { autoApprove: true } } : {}),
      ...(agentLabels && Object.keys(agentLabels).length > 0 ? { agentLabels: { ...agentLabels } } : {}),
      cpuArchitecture: cpu,
      ...(staticNetwork
        ? { nmStateConfigLabelSelector: { matchLabels: { [NMSTATE_LABEL]: names.name } } }
        : {}),
      ...(hasOsImage ? { osImageVersion: minor } : {}),
      pullSecretRef: { name: names.infraEnvPullSecret },
      sshAuthorizedKey: r.sshPublicKey,
    },
  };
}

function renderNmStateConfig(host: SiteHost, names: ClusterNames): KubeObject | undefined {
  if (!host.network) return undefined;
  return {
    apiVersion: 'agent-install.openshift.io/v1beta1',
    kind: 'NMStateConfig',
    metadata: {
      name: host.name,
      namespace: names.controlPlaneNamespace,
      labels: { [NMSTATE_LABEL]: names.name },
    },
    spec: {
      config: structuredClone(host.network.config),
      interfaces: host.network.interfaces.map((i) => ({ name: i.name, macAddress: i.macAddress })),
    },
  };
}

function renderBareMetalHost(host: SiteHost, names: ClusterNames): KubeObject {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: {
      name: host.name,
      namespace: names.controlPlaneNamespace,
      labels: { [INFRAENV_LABEL]: names.name },
      annotations: {
        'inspect.metal3.io': 'disabled',
        'bmac.agent-install.openshift.io/hostname': host.name,
        ...(host.role === 'worker' ? { 'bmac.agent-install.openshift.io/role': 'worker' } : {}),
      },
    },
    spec: {
      automatedCleaningMode: 'disabled',
      bmc: {
        address: bmcAddress(host),
        credentialsName: names.bmcSecret(host.name),
        disableCertificateVerification: host.bmc.disableCertificateVerification,
      },
      bootMACAddress: host.bootMACAddress.toLowerCase(),
      bootMode: 'UEFI',
      online: true,
      ...(host.rootDeviceHints ? { rootDeviceHints: { ...host.rootDeviceHints } } : {}),
    },
  };
}

/** Every hosted cluster object, in dependency order, with no status. The NodePool starts at 0 replicas. */
export function renderCluster(r: ResolvedSite): RenderedObject[] {
  const names = clusterNames(r.site);
  const out: RenderedObject[] = [];
  const add = (step: RenderStep, object: KubeObject, sensitive = false) =>
    out.push({ object, sensitive, step });
  const safe = { [SAFE_TO_DELETE_LABEL]: 'true' };

  add('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: names.namespace }, spec: {} });
  add('namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: names.controlPlaneNamespace },
    spec: {},
  });
  add('cluster', kube(siteTrustObjects(r).userCaBundle));
  add(
    'cluster',
    secret(
      names.pullSecret,
      names.namespace,
      { '.dockerconfigjson': r.pullSecret },
      {
        type: 'kubernetes.io/dockerconfigjson',
        labels: safe,
      },
    ),
    true,
  );
  add(
    'cluster',
    secret(names.sshKey, names.namespace, { 'id_rsa.pub': r.sshPublicKey }, { labels: safe }),
    true,
  );
  add(
    'cluster',
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: names.etcdEncryptionKey, namespace: names.namespace, labels: safe },
      type: 'Opaque',
      // Already base64 (of 32 random bytes): the Secret holds the raw key.
      data: { key: r.etcdEncryptionKey },
    },
    true,
  );
  add(
    'cluster',
    secret(
      names.infraEnvPullSecret,
      names.controlPlaneNamespace,
      { '.dockerconfigjson': r.pullSecret },
      {
        type: 'kubernetes.io/dockerconfigjson',
      },
    ),
    true,
  );
  add('cluster', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: names.capiProviderRole, namespace: names.controlPlaneNamespace },
    rules: [{ apiGroups: ['agent-install.openshift.io'], resources: ['agents'], verbs: ['*'] }],
  });
  add('cluster', renderHostedCluster(r, names));
  add('nodepool', renderNodePool(r, names));
  // NMStateConfigs first: the InfraEnv's discovery ISO embeds those that exist when it is built.
  for (const host of r.site.hosts) {
    const nm = renderNmStateConfig(host, names);
    if (nm) add('infraenv', nm);
  }
  add('infraenv', renderInfraEnv(r, names));
  for (const host of r.site.hosts) out.push(...renderHostAccess(r, host, names));
  return out;
}

/** A host's BMC Secret and BareMetalHost (step hosts): what booting it on the hub takes. */
function renderHostAccess(r: ResolvedSite, host: SiteHost, names: ClusterNames): RenderedObject[] {
  const creds = r.bmcCredentials[host.name];
  if (!creds) throw new Error(`render: no BMC credentials for host ${host.name}`);
  const bmcSecret = secret(
    names.bmcSecret(host.name),
    names.controlPlaneNamespace,
    { username: creds.username, password: creds.password },
    { type: 'Opaque' },
  );
  return [
    { object: bmcSecret, sensitive: true, step: 'hosts' },
    { object: renderBareMetalHost(host, names), sensitive: false, step: 'hosts' },
  ];
}

/**
 * The objects of some of the site's hosts, as renderCluster renders them: each host's
 * NMStateConfig (step infraenv, when it has a static network), BMC Secret and BareMetalHost.
 * `airgap cluster scale` applies these for the hosts a site file adds.
 */
export function renderHostObjects(r: ResolvedSite, hostNames: readonly string[]): RenderedObject[] {
  const names = clusterNames(r.site);
  const hosts = r.site.hosts.filter((h) => hostNames.includes(h.name));
  const nmstate = hosts.flatMap((h) => {
    const nm = renderNmStateConfig(h, names);
    return nm ? [{ object: nm, sensitive: false, step: 'infraenv' as RenderStep }] : [];
  });
  return [...nmstate, ...hosts.flatMap((h) => renderHostAccess(r, h, names))];
}
