/**
 * The hub simulator's own schemas: the custom resource kinds it simulates, for when the real CRDs
 * are not here (see lab/realdata.ts). Written for this project, not taken from the real CRDs: minimal
 * structural OpenAPI v3 schemas of the fields airgap writes and reads (src/cluster, src/mirror/outputs,
 * src/certs) and the simulated controllers use, typed so that a wrong type is refused. A spec that
 * airgap renders in full is closed (an undeclared field is pruned, as the API server prunes it); the
 * parts nobody here looks into (status, NMState configs, the other platforms…) keep whatever they
 * are given. Names, scopes, subresources and printer columns are those the real API serves (`kubectl
 * get` prints the same columns).
 *
 * The real CRDs check more (enums, patterns, CEL rules, required fields): tests that validate against
 * them specifically (test/helpers/crd.ts) need the real ones.
 */
import { crdTypes } from './crds.js';
import type { Schema } from './schema.js';
import type { ResourceType } from './types.js';

const STRING: Schema = { type: 'string' };
const INTEGER: Schema = { type: 'integer' };
const BOOLEAN: Schema = { type: 'boolean' };
/** A quantity (`10Gi`, or a number). */
const QUANTITY: Schema = { 'x-kubernetes-int-or-string': true };
const STRINGS: Schema = { type: 'array', items: STRING };
const STRING_MAP: Schema = { type: 'object', additionalProperties: STRING };

/** An object with these fields and no others (an undeclared field is pruned). */
function closed(properties: Record<string, Schema>, required?: string[]): Schema {
  return { type: 'object', properties, ...(required ? { required } : {}) };
}

/** An object with these fields typed, keeping any other field as it is. */
function open(properties: Record<string, Schema> = {}): Schema {
  return { type: 'object', properties, 'x-kubernetes-preserve-unknown-fields': true };
}

const list = (items: Schema): Schema => ({ type: 'array', items });
const NAME_REF = closed({ name: STRING });
const NAMESPACED_REF = closed({ name: STRING, namespace: STRING });
const LABEL_SELECTOR = closed({
  matchLabels: STRING_MAP,
  matchExpressions: list(closed({ key: STRING, operator: STRING, values: STRINGS }, ['key', 'operator'])),
});
const RELEASE = closed({ image: STRING }, ['image']);
const STATUS = open();
/** A PersistentVolumeClaim spec, as AgentServiceConfig's storage fields take it. */
const PVC_SPEC = open({
  accessModes: STRINGS,
  resources: open({ requests: { type: 'object', additionalProperties: QUANTITY } }),
  storageClassName: STRING,
});

type Column = NonNullable<ResourceType['printerColumns']>[number];
const col = (name: string, jsonPath: string, type = 'string', priority?: number): Column => ({
  name,
  type,
  jsonPath,
  ...(priority !== undefined ? { priority } : {}),
});
const condition = (type: string, field = 'status') => `.status.conditions[?(@.type=="${type}")].${field}`;
const AGE = col('Age', '.metadata.creationTimestamp', 'date');

interface Kind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Subresources beside status (every kind here has status). */
  subresources?: string[];
  columns?: Column[];
  spec: Schema;
}

const HOSTED_CLUSTER: Kind = {
  group: 'hypershift.openshift.io',
  version: 'v1beta1',
  kind: 'HostedCluster',
  plural: 'hostedclusters',
  namespaced: true,
  shortNames: ['hc', 'hcs'],
  columns: [
    col('Version', '.status.version.history[?(@.state=="Completed")].version'),
    col('CP Version', '.status.controlPlaneVersion.history[?(@.state=="Completed")].version'),
    col('KubeConfig', '.status.kubeconfig.name'),
    col('Progress', '.status.version.history[?(@.state!="")].state'),
    col('Available', condition('Available')),
    col('Progressing', condition('Progressing')),
    col('Message', condition('Available', 'message')),
    col('CP Progress', '.status.controlPlaneVersion.history[0].state', 'string', 1),
    col('DP Progress', '.status.version.history[0].state', 'string', 1),
  ],
  spec: closed(
    {
      additionalTrustBundle: NAME_REF,
      auditWebhook: NAME_REF,
      autoscaling: open(),
      capabilities: open(),
      channel: STRING,
      clusterID: STRING,
      configuration: open(),
      controllerAvailabilityPolicy: STRING,
      controlPlaneRelease: RELEASE,
      dns: open({ baseDomain: STRING, baseDomainPrefix: STRING }),
      etcd: closed({
        managementType: STRING,
        managed: closed({
          storage: closed({
            type: STRING,
            persistentVolume: closed({ size: QUANTITY, storageClassName: STRING }),
            restoreSnapshotURL: STRINGS,
          }),
        }),
        unmanaged: open(),
      }),
      fips: BOOLEAN,
      imageContentSources: list(closed({ source: STRING, mirrors: STRINGS }, ['source'])),
      infrastructureAvailabilityPolicy: STRING,
      infraID: STRING,
      issuerURL: STRING,
      labels: STRING_MAP,
      networking: closed({
        clusterNetwork: list(closed({ cidr: STRING, hostPrefix: INTEGER }, ['cidr'])),
        machineNetwork: list(closed({ cidr: STRING }, ['cidr'])),
        serviceNetwork: list(closed({ cidr: STRING }, ['cidr'])),
        networkType: STRING,
        apiServer: open(),
      }),
      nodeSelector: STRING_MAP,
      olmCatalogPlacement: STRING,
      operatorConfiguration: open(),
      pausedUntil: STRING,
      platform: open({ type: STRING, agent: closed({ agentNamespace: STRING }, ['agentNamespace']) }),
      pullSecret: NAME_REF,
      release: RELEASE,
      secretEncryption: closed({
        type: STRING,
        aescbc: closed({ activeKey: NAME_REF, backupKey: NAME_REF }),
        kms: open(),
      }),
      serviceAccountSigningKey: NAME_REF,
      services: list(
        closed({
          service: STRING,
          servicePublishingStrategy: closed({
            type: STRING,
            nodePort: closed({ address: STRING, port: INTEGER }),
            loadBalancer: open(),
            route: open(),
          }),
        }),
      ),
      sshKey: NAME_REF,
      tolerations: list(open()),
    },
    ['release'],
  ),
};

const NODE_POOL: Kind = {
  group: 'hypershift.openshift.io',
  version: 'v1beta1',
  kind: 'NodePool',
  plural: 'nodepools',
  namespaced: true,
  shortNames: ['np', 'nps'],
  subresources: ['scale'],
  columns: [
    col('Cluster', '.spec.clusterName'),
    col('Desired Nodes', '.spec.replicas', 'integer'),
    col('Current Nodes', '.status.replicas', 'integer'),
    col('Autoscaling', condition('AutoscalingEnabled')),
    col('Autorepair', condition('AutorepairEnabled')),
    col('Version', '.status.version'),
    col('UpdatingVersion', condition('UpdatingVersion')),
    col('UpdatingConfig', condition('UpdatingConfig')),
    col('Message', condition('Ready', 'message')),
  ],
  spec: closed(
    {
      arch: STRING,
      autoScaling: closed({ min: INTEGER, max: INTEGER }),
      clusterName: STRING,
      config: list(NAME_REF),
      management: closed({ upgradeType: STRING, autoRepair: BOOLEAN, replace: open(), inPlace: open() }),
      nodeDrainTimeout: STRING,
      nodeLabels: STRING_MAP,
      nodeVolumeDetachTimeout: STRING,
      pausedUntil: STRING,
      platform: open({ type: STRING, agent: closed({ agentLabelSelector: LABEL_SELECTOR }) }),
      release: RELEASE,
      replicas: INTEGER,
      taints: list(open()),
      tuningConfig: list(NAME_REF),
    },
    ['clusterName', 'release'],
  ),
};

const AGENT_INSTALL = 'agent-install.openshift.io';

const AGENT: Kind = {
  group: AGENT_INSTALL,
  version: 'v1beta1',
  kind: 'Agent',
  plural: 'agents',
  namespaced: true,
  columns: [
    col('Cluster', '.spec.clusterDeploymentName.name'),
    col('Approved', '.spec.approved', 'boolean'),
    col('Role', '.status.role'),
    col('Stage', '.status.progress.currentStage'),
    col('Hostname', '.status.inventory.hostname', 'string', 1),
    col('Requested Hostname', '.spec.hostname', 'string', 1),
  ],
  spec: closed({
    approved: BOOLEAN,
    clusterDeploymentName: NAMESPACED_REF,
    hostname: STRING,
    ignitionConfigOverrides: STRING,
    installation_disk_id: STRING,
    installerArgs: STRING,
    machineConfigPool: STRING,
    nodeLabels: STRING_MAP,
    role: STRING,
  }),
};

const AGENT_SERVICE_CONFIG: Kind = {
  group: AGENT_INSTALL,
  version: 'v1beta1',
  kind: 'AgentServiceConfig',
  plural: 'agentserviceconfigs',
  namespaced: false,
  spec: closed({
    databaseStorage: PVC_SPEC,
    filesystemStorage: PVC_SPEC,
    imageStorage: PVC_SPEC,
    ingress: open(),
    iPXEHTTPRoute: STRING,
    mirrorRegistryRef: NAME_REF,
    mustGatherImages: list(open()),
    OSImageAdditionalParamsRef: NAME_REF,
    OSImageCACertRef: NAME_REF,
    osImages: list(
      closed(
        {
          cpuArchitecture: STRING,
          openshiftVersion: STRING,
          rootFSUrl: STRING,
          url: STRING,
          version: STRING,
        },
        ['openshiftVersion', 'url', 'version'],
      ),
    ),
    unauthenticatedRegistries: STRINGS,
  }),
};

const INFRA_ENV: Kind = {
  group: AGENT_INSTALL,
  version: 'v1beta1',
  kind: 'InfraEnv',
  plural: 'infraenvs',
  namespaced: true,
  columns: [
    col('ISO Created At', '.status.createdTime'),
    col('ISO URL', '.status.isoDownloadURL', 'string', 1),
  ],
  spec: closed({
    additionalNTPSources: STRINGS,
    additionalTrustBundle: STRING,
    agentApproval: closed({ autoApprove: BOOLEAN }),
    agentLabels: STRING_MAP,
    clusterRef: NAMESPACED_REF,
    cpuArchitecture: STRING,
    ignitionConfigOverride: STRING,
    imageType: STRING,
    ipxeScriptType: STRING,
    kernelArguments: list(open()),
    nmStateConfigLabelSelector: LABEL_SELECTOR,
    osImageVersion: STRING,
    proxy: open(),
    pullSecretRef: NAME_REF,
    sshAuthorizedKey: STRING,
  }),
};

const NMSTATE_CONFIG: Kind = {
  group: AGENT_INSTALL,
  version: 'v1beta1',
  kind: 'NMStateConfig',
  plural: 'nmstateconfigs',
  namespaced: true,
  spec: closed({
    config: open(),
    interfaces: list(closed({ name: STRING, macAddress: STRING }, ['name', 'macAddress'])),
  }),
};

const BARE_METAL_HOST: Kind = {
  group: 'metal3.io',
  version: 'v1alpha1',
  kind: 'BareMetalHost',
  plural: 'baremetalhosts',
  namespaced: true,
  shortNames: ['bmh', 'bmhost'],
  columns: [
    col('Status', '.status.operationalStatus', 'string', 1),
    col('State', '.status.provisioning.state'),
    col('Consumer', '.spec.consumerRef.name'),
    col('BMC', '.spec.bmc.address', 'string', 1),
    col('Online', '.spec.online'),
    col('Error', '.status.errorType'),
    AGE,
  ],
  spec: closed({
    architecture: STRING,
    automatedCleaningMode: STRING,
    bmc: closed({ address: STRING, credentialsName: STRING, disableCertificateVerification: BOOLEAN }, [
      'address',
      'credentialsName',
    ]),
    bootMACAddress: STRING,
    bootMode: STRING,
    consumerRef: open(),
    customDeploy: open(),
    description: STRING,
    externallyProvisioned: BOOLEAN,
    firmware: open(),
    hardwareProfile: STRING,
    image: open(),
    inspectionMode: STRING,
    metaData: open(),
    networkData: open(),
    online: BOOLEAN,
    preprovisioningNetworkDataName: STRING,
    raid: open(),
    rootDeviceHints: closed({
      deviceName: STRING,
      hctl: STRING,
      minSizeGigabytes: INTEGER,
      model: STRING,
      rotational: BOOLEAN,
      serialNumber: STRING,
      vendor: STRING,
      wwn: STRING,
      wwnVendorExtension: STRING,
      wwnWithExtension: STRING,
    }),
    taints: list(open()),
    userData: open(),
  }),
};

const MULTICLUSTER_ENGINE: Kind = {
  group: 'multicluster.openshift.io',
  version: 'v1',
  kind: 'MultiClusterEngine',
  plural: 'multiclusterengines',
  namespaced: false,
  shortNames: ['mce'],
  columns: [
    col('Status', '.status.phase'),
    AGE,
    col('CurrentVersion', '.status.currentVersion'),
    col('DesiredVersion', '.status.desiredVersion'),
    col('Message', '.status.conditions[-1:].message'),
  ],
  spec: open({
    availabilityConfig: STRING,
    localClusterName: STRING,
    nodeSelector: STRING_MAP,
    overrides: open({
      components: list(closed({ name: STRING, enabled: BOOLEAN, configOverrides: open() }, ['name'])),
    }),
    targetNamespace: STRING,
    tolerations: list(open()),
  }),
};

/** One mirror entry of an IDMS, ITMS or ICSP. */
const MIRRORS = list(closed({ source: STRING, mirrors: STRINGS, mirrorSourcePolicy: STRING }, ['source']));

const IMAGE_DIGEST_MIRROR_SET: Kind = {
  group: 'config.openshift.io',
  version: 'v1',
  kind: 'ImageDigestMirrorSet',
  plural: 'imagedigestmirrorsets',
  namespaced: false,
  shortNames: ['idms'],
  spec: closed({ imageDigestMirrors: MIRRORS }),
};

const IMAGE_TAG_MIRROR_SET: Kind = {
  ...IMAGE_DIGEST_MIRROR_SET,
  kind: 'ImageTagMirrorSet',
  plural: 'imagetagmirrorsets',
  shortNames: ['itms'],
  spec: closed({ imageTagMirrors: MIRRORS }),
};

const IMAGE_CONTENT_SOURCE_POLICY: Kind = {
  group: 'operator.openshift.io',
  version: 'v1alpha1',
  kind: 'ImageContentSourcePolicy',
  plural: 'imagecontentsourcepolicies',
  namespaced: false,
  spec: closed({ repositoryDigestMirrors: list(closed({ source: STRING, mirrors: STRINGS }, ['source'])) }),
};

const IMAGE: Kind = {
  group: 'config.openshift.io',
  version: 'v1',
  kind: 'Image',
  plural: 'images',
  namespaced: false,
  spec: closed({
    additionalTrustedCA: NAME_REF,
    allowedRegistriesForImport: list(open()),
    externalRegistryHostnames: STRINGS,
    registrySources: open(),
  }),
};

const CLUSTER_IMAGE_POLICY: Kind = {
  group: 'config.openshift.io',
  version: 'v1',
  kind: 'ClusterImagePolicy',
  plural: 'clusterimagepolicies',
  namespaced: false,
  spec: closed({ scopes: STRINGS, policy: open({ rootOfTrust: open({ policyType: STRING }) }) }, [
    'scopes',
    'policy',
  ]),
};

const CATALOG_SOURCE: Kind = {
  group: 'operators.coreos.com',
  version: 'v1alpha1',
  kind: 'CatalogSource',
  plural: 'catalogsources',
  namespaced: true,
  shortNames: ['catsrc'],
  categories: ['olm'],
  columns: [
    col('Display', '.spec.displayName'),
    col('Type', '.spec.sourceType'),
    col('Publisher', '.spec.publisher'),
    AGE,
  ],
  spec: open({
    displayName: STRING,
    grpcPodConfig: open(),
    image: STRING,
    priority: INTEGER,
    publisher: STRING,
    secrets: STRINGS,
    sourceType: STRING,
    updateStrategy: open(),
  }),
};

const CLUSTER_CATALOG: Kind = {
  group: 'olm.operatorframework.io',
  version: 'v1',
  kind: 'ClusterCatalog',
  plural: 'clustercatalogs',
  namespaced: false,
  columns: [col('LastUnpacked', '.status.lastUnpacked', 'date'), col('Serving', condition('Serving')), AGE],
  spec: closed(
    {
      availabilityMode: STRING,
      priority: INTEGER,
      source: closed(
        { type: STRING, image: closed({ ref: STRING, pollIntervalMinutes: INTEGER }, ['ref']) },
        ['type'],
      ),
    },
    ['source'],
  ),
};

/** The kinds the simulator serves from its own schemas. */
export const OWN_KINDS: readonly Kind[] = [
  HOSTED_CLUSTER,
  NODE_POOL,
  AGENT,
  AGENT_SERVICE_CONFIG,
  INFRA_ENV,
  NMSTATE_CONFIG,
  BARE_METAL_HOST,
  MULTICLUSTER_ENGINE,
  IMAGE_DIGEST_MIRROR_SET,
  IMAGE_TAG_MIRROR_SET,
  IMAGE_CONTENT_SOURCE_POLICY,
  IMAGE,
  CLUSTER_IMAGE_POLICY,
  CATALOG_SOURCE,
  CLUSTER_CATALOG,
];

/** A CustomResourceDefinition document for one of our kinds (what crds.ts reads from a real file). */
function definition(k: Kind): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${k.group}` },
    spec: {
      group: k.group,
      scope: k.namespaced ? 'Namespaced' : 'Cluster',
      names: {
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        singular: k.kind.toLowerCase(),
        ...(k.shortNames ? { shortNames: k.shortNames } : {}),
        ...(k.categories ? { categories: k.categories } : {}),
      },
      versions: [
        {
          name: k.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: closed({
              apiVersion: STRING,
              kind: STRING,
              metadata: { type: 'object' },
              spec: k.spec,
              status: STATUS,
            }),
          },
          subresources: {
            status: {},
            ...Object.fromEntries((k.subresources ?? []).map((s) => [s, {}])),
          },
          ...(k.columns ? { additionalPrinterColumns: k.columns } : {}),
        },
      ],
    },
  };
}

/** The resource types of the own schemas, as the real CRDs' would be (source `own-schemas`). */
export function ownSchemaTypes(): ResourceType[] {
  return OWN_KINDS.flatMap((k) => crdTypes(definition(k), 'own-schemas'));
}
