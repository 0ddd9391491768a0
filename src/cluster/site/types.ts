/**
 * The site configuration file (`apiVersion: airgap.openshift.io/v1alpha1`, `kind: Site`): one YAML
 * file that describes a disconnected hosted cluster (HyperShift, Agent platform, bare metal) and the
 * hub it runs on. `loadSite` reads it into a {@link Site} with every default filled in and every path
 * made absolute; `readSiteInputs` reads the local files it names; the lead's preflight adds what
 * needs the network (release digest, control-plane-operator image) to make a {@link ResolvedSite},
 * which the pure renderers in src/cluster/render turn into Kubernetes objects.
 */
import type { PositionMap } from '../../config/positions.js';

export const SITE_API_VERSION = 'airgap.openshift.io/v1alpha1';
export const SITE_KIND = 'Site';

export const NETWORK_STACKS = ['ipv4', 'ipv6', 'dual'] as const;
export type NetworkStack = (typeof NETWORK_STACKS)[number];

export const NETWORK_TYPES = ['OVNKubernetes', 'OpenShiftSDN', 'Calico', 'Other'] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

export const PUBLISHING = ['nodePort', 'loadBalancer'] as const;
export type Publishing = (typeof PUBLISHING)[number];

export const AVAILABILITY = ['HighlyAvailable', 'SingleReplica'] as const;
export type Availability = (typeof AVAILABILITY)[number];

export const OLM_PLACEMENTS = ['management', 'guest'] as const;
export type OlmCatalogPlacement = (typeof OLM_PLACEMENTS)[number];

/** NodePool `spec.arch` values. */
export const NODE_ARCHES = ['amd64', 'arm64', 'ppc64le', 's390x'] as const;
export type NodeArch = (typeof NODE_ARCHES)[number];

export const HOST_ROLES = ['worker', 'auto-assign'] as const;
export type HostRole = (typeof HOST_ROLES)[number];

/**
 * BMC vendors (`hosts[].bmc.vendor`): each picks a metal3 driver scheme and a default Redfish system
 * path. The `*-virtualmedia` schemes boot the discovery ISO without a provisioning network.
 */
export const BMC_VENDORS = [
  'redfish',
  'redfish-virtualmedia',
  'idrac',
  'idrac-virtualmedia',
  'ilo5',
  'ilo5-virtualmedia',
  'ilo4',
  'ilo4-virtualmedia',
  'ipmi',
] as const;
export type BmcVendor = (typeof BMC_VENDORS)[number];

/** Defaults, in one place (docs/site-config.md lists the same). */
export const SITE_DEFAULTS = {
  namespace: 'clusters',
  networkType: 'OVNKubernetes' as NetworkType,
  publishing: 'nodePort' as Publishing,
  controlPlaneAvailability: 'HighlyAvailable' as Availability,
  olmCatalogPlacement: 'management' as OlmCatalogPlacement,
  etcdSize: '8Gi',
  arch: 'amd64' as NodeArch,
  approveAgents: false,
  databaseStorage: '10Gi',
  filesystemStorage: '100Gi',
  imageStorage: '10Gi',
  role: 'worker' as HostRole,
  disableCertificateVerification: false,
} as const;

/** Per-stack network defaults (the hcp CLI's, `--default-dual` for dual; IPv4 first). */
export const STACK_DEFAULTS: Record<NetworkStack, { clusterNetwork: string[]; serviceNetwork: string[] }> = {
  ipv4: { clusterNetwork: ['10.132.0.0/14'], serviceNetwork: ['172.31.0.0/16'] },
  ipv6: { clusterNetwork: ['fd01::/48'], serviceNetwork: ['fd02::/112'] },
  dual: {
    clusterNetwork: ['10.132.0.0/14', 'fd01::/48'],
    serviceNetwork: ['172.31.0.0/16', 'fd02::/112'],
  },
};

/** A label selector (metav1.LabelSelector), as written in the file. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** One `{source, mirrors[]}` entry, as HostedCluster `spec.imageContentSources` takes it. */
export interface ImageContentSource {
  source: string;
  mirrors: string[];
}

/** An AgentServiceConfig `spec.osImages[]` entry. */
export interface SiteOsImage {
  openshiftVersion: string;
  version: string;
  url: string;
  cpuArchitecture?: string;
  rootFSUrl?: string;
}

export interface SiteCluster {
  /** The HostedCluster name: an RFC 1123 label, not `clusters`. */
  name: string;
  /** The HostedCluster namespace (default `clusters`); the control plane namespace is `<namespace>-<name>`. */
  namespace: string;
  baseDomain: string;
  /** The release image in the mirror, by tag or digest (the preflight resolves a tag to its digest). */
  release: { image: string };
  /** Absolute path of the pull secret (JSON, must hold the mirror registry's auth). */
  pullSecretFile: string;
  /** Absolute path of an SSH public key for user `core` on the nodes. */
  sshKeyFile: string;
  controlPlaneAvailability: Availability;
  olmCatalogPlacement: OlmCatalogPlacement;
  /** `spec.infraID` (immutable). Default: the cluster name, so that re-rendering gives the same value. */
  infraID: string;
  etcd: { storageClass?: string; size: string };
  services: { publishing: Publishing; apiServerAddress?: string };
  nodePool: { arch: NodeArch; agentLabelSelector?: LabelSelector };
  /** Set InfraEnv `spec.agentApproval.autoApprove` (BareMetalHost-booted Agents are approved anyway). */
  approveAgents: boolean;
}

export interface SiteNetwork {
  stack: NetworkStack;
  networkType: NetworkType;
  clusterNetwork: string[];
  serviceNetwork: string[];
  machineNetwork: string[];
}

export interface SiteMirror {
  /** The mirror registry, `host[:port]` (an IPv6 literal cannot be a key of `registry-config`). */
  registry: string;
  /** Absolute paths of the CA PEM files the registry's certificate chains to. */
  caFiles: string[];
  /** Inline mappings, or… */
  imageContentSources?: ImageContentSource[];
  /** …the absolute path of `airgap mirror`'s `cluster-resources` directory (IDMS/ITMS/CatalogSources). */
  clusterResources?: string;
}

export interface SiteHub {
  /** StorageClass of the AgentServiceConfig volumes (default: the cluster's default class). */
  storageClass?: string;
  databaseStorage: string;
  filesystemStorage: string;
  imageStorage: string;
  /** Inline osImages entries, or… */
  osImages?: SiteOsImage[];
  /** …the absolute path of a file with them (`airgap serve-images --asc-out`, or a list). */
  osImagesFile?: string;
}

export interface SiteBmc {
  /** Absent only when `url` is given. */
  vendor?: BmcVendor;
  /** Host name, IPv4 or IPv6 literal (brackets optional; added in the URL). */
  address?: string;
  port?: number;
  /** The Redfish system id (default `1`, `System.Embedded.1` for iDRAC). */
  systemId?: string;
  /** A complete metal3 BMC URL, used as it is (checked). */
  url?: string;
  /** Absolute path of a YAML or JSON file with `username` and `password`. */
  credentialsFile: string;
  disableCertificateVerification: boolean;
}

export interface RootDeviceHints {
  deviceName?: string;
  hctl?: string;
  model?: string;
  vendor?: string;
  serialNumber?: string;
  minSizeGigabytes?: number;
  wwn?: string;
  rotational?: boolean;
}

export interface SiteHostNetwork {
  interfaces: { name: string; macAddress: string }[];
  /** Raw nmstate configuration (interfaces, dns-resolver, routes), passed through as written. */
  config: Record<string, unknown>;
}

export interface SiteHost {
  name: string;
  role: HostRole;
  bootMACAddress: string;
  bmc: SiteBmc;
  network?: SiteHostNetwork;
  rootDeviceHints?: RootDeviceHints;
}

/** A loaded, validated site with defaults applied and absolute paths. */
export interface Site {
  apiVersion: typeof SITE_API_VERSION;
  kind: typeof SITE_KIND;
  cluster: SiteCluster;
  network: SiteNetwork;
  mirror: SiteMirror;
  hub: SiteHub;
  hosts: SiteHost[];
  /** Where it was read from, for messages about its fields (`file:line:column field`). */
  source: { file: string; dir: string; positions: PositionMap };
  /** Things worth saying that do not stop the install. */
  warnings: string[];
}

/** Command-line overrides of site fields (flags win over the file). */
export interface SiteOverrides {
  name?: string;
  namespace?: string;
  release?: string;
  baseDomain?: string;
  apiServerAddress?: string;
  controlPlaneAvailability?: Availability;
  approveAgents?: boolean;
}

/** BMC user name and password of one host (never logged). */
export interface BmcCredentials {
  username: string;
  password: string;
}

/** A mirror-set or CatalogSource object read from the cluster-resources directory, as it was written. */
export interface ClusterResourceObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

/** The four default OLM catalogs a HostedCluster with `olmCatalogPlacement: management` runs. */
export const DEFAULT_CATALOGS = [
  'redhat-operators',
  'certified-operators',
  'community-operators',
  'redhat-marketplace',
] as const;
export type DefaultCatalog = (typeof DEFAULT_CATALOGS)[number];

/**
 * OLM catalog overrides for a HostedCluster with `olmCatalogPlacement: management`: either the
 * mirrored image of every default catalog (by digest; set only when all four are known, since
 * HyperShift wants them together), or `source=mirror` prefix rewrites for the catalog ImageStream.
 */
export interface CatalogOverrides {
  images?: Partial<Record<DefaultCatalog, string>>;
  registryOverrides?: { source: string; mirror: string }[];
}

/** What `readSiteInputs` reads from the files a site names (no network). */
export interface SiteInputs {
  /** The pull secret JSON text (never logged). */
  pullSecret: string;
  sshPublicKey: string;
  /** The CA PEMs, each certificate once, each ending with a newline. */
  caBundlePem: string;
  /** Digest (IDMS) and tag (ITMS) mappings, from the cluster resources or the inline list. */
  mirrorMappings: { source: string; mirror: string; digest: boolean; tag: boolean }[];
  /** The digest mappings grouped by source, for HostedCluster `spec.imageContentSources`. */
  imageContentSources: ImageContentSource[];
  /** IDMS/ITMS/ICSP objects read from the cluster resources (empty with inline imageContentSources). */
  mirrorSets: ClusterResourceObject[];
  /** CatalogSources read from the cluster resources. */
  catalogSources: ClusterResourceObject[];
  /** The release-signature ConfigMap (`signature-configmap.yaml`) of the cluster resources, if there is one. */
  releaseSignatures?: ClusterResourceObject;
  /** Catalog overrides derived from the CatalogSources (images possibly by tag: resolve to digests). */
  catalogOverrides: CatalogOverrides;
  osImages: SiteOsImage[];
  /** Per host name. */
  bmcCredentials: Record<string, BmcCredentials>;
  warnings: string[];
}

/**
 * Everything the renderers need: the site, its files' contents, and what the preflight resolved
 * over the network.
 */
export interface ResolvedSite {
  site: Site;
  /** The release image by digest (`<mirror>/…@sha256:…`). */
  releaseImage: string;
  /** `x.y.z` of the release. */
  releaseVersion: string;
  /** The payload's `hypershift` component in the mirror, by digest. */
  controlPlaneOperatorImage: string;
  imageContentSources: ImageContentSource[];
  caBundlePem: string;
  /** Pull secret JSON text. */
  pullSecret: string;
  sshPublicKey: string;
  /** Base64 of 32 random bytes (newEtcdEncryptionKey()). */
  etcdEncryptionKey: string;
  osImages: SiteOsImage[];
  catalogOverrides: CatalogOverrides;
  /** Per host name. */
  bmcCredentials: Record<string, BmcCredentials>;
  mirrorMappings: { source: string; mirror: string; digest: boolean; tag: boolean }[];
  mirrorSets: ClusterResourceObject[];
  catalogSources: ClusterResourceObject[];
  /** The release-signature ConfigMap for the cluster version operator (openshift-config-managed). */
  releaseSignatures?: ClusterResourceObject;
}
