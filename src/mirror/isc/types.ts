/**
 * ImageSetConfiguration and DeleteImageSetConfiguration, `mirror.openshift.io/v2alpha1`, as oc-mirror
 * v2 reads them (internal/pkg/api/v2alpha1/type_config.go). Field names are oc-mirror's. Absent
 * lists are `[]` and absent booleans `false` (Go zero values); absent strings stay undefined.
 */

export const ISC_KIND = 'ImageSetConfiguration';
export const DISC_KIND = 'DeleteImageSetConfiguration';
export const ISC_API_VERSION = 'mirror.openshift.io/v2alpha1';
/** The apiVersion of oc-mirror's delete docs example; accepted for DeleteImageSetConfiguration only. */
export const DISC_LEGACY_API_VERSION = 'mirror.openshift.io/v1alpha2';

/** Release payload architectures (`platform.architectures`); `multi` is the multi-arch payload. */
export const ARCHITECTURES = ['amd64', 'arm64', 'ppc64le', 's390x', 'multi'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

/** Release channel type: OpenShift (default) or OKD. */
export const PLATFORM_TYPES = ['ocp', 'okd'] as const;
export type PlatformType = (typeof PLATFORM_TYPES)[number];

/** One OS/architecture pair for sparse manifest-list filtering (`linux/amd64`). */
export interface PlatformFilter {
  os: string;
  architecture: string;
}

/** A release channel to mirror from the update graph. */
export interface ReleaseChannel {
  name: string;
  /** Default `ocp`. */
  type: PlatformType;
  minVersion?: string;
  maxVersion?: string;
  /** Only the shortest upgrade path between min and max. */
  shortestPath: boolean;
  /** The whole channel, not only its head. */
  full: boolean;
}

/** OpenShift/OKD release content (`mirror.platform`). */
export interface Platform {
  channels: ReleaseChannel[];
  /** An explicit release image reference; bypasses the channels. */
  release?: string;
  /** Deprecated by oc-mirror in favour of `platforms`; absent means amd64. */
  architectures: Architecture[];
  platforms: PlatformFilter[];
  /** Build and mirror the Cincinnati graph-data image. */
  graph: boolean;
  /** Also mirror the RHCOS KubeVirt container disk. */
  kubeVirtContainer: boolean;
}

/** A channel filter inside a package. */
export interface IncludeChannel {
  name: string;
  minVersion?: string;
  maxVersion?: string;
}

/** A package of an operator catalog. */
export interface IncludePackage {
  name: string;
  defaultChannel?: string;
  minVersion?: string;
  maxVersion?: string;
  channels: IncludeChannel[];
}

/** An operator catalog (`mirror.operators[]`). */
export interface Operator {
  /** Catalog image reference, or `oci://` path to an OCI layout. */
  catalog: string;
  /** Destination path (namespace/name) override; no tag or digest. */
  targetCatalog?: string;
  targetTag?: string;
  /** All bundles, not only channel heads. */
  full: boolean;
  skipDependencies: boolean;
  /** Path to a CatalogSource template for the generated resource. */
  targetCatalogSourceTemplate?: string;
  platforms: PlatformFilter[];
  packages: IncludePackage[];
}

/** An image mirrored as is (`mirror.additionalImages[]`). */
export interface AdditionalImage {
  name: string;
  /** Destination repository path override. */
  targetRepo?: string;
  targetTag?: string;
  platforms: PlatformFilter[];
}

/** A Helm chart from a repository (oc-mirror shares one Chart type for repository and local charts). */
export interface HelmChart {
  name: string;
  version?: string;
  path?: string;
  /** Custom JSON paths to image references in the rendered manifests. */
  imagePaths: string[];
  platforms: PlatformFilter[];
}

/** A Helm chart on local disk: `path` is required. */
export interface LocalHelmChart extends HelmChart {
  path: string;
}

export interface HelmRepository {
  name: string;
  url: string;
  charts: HelmChart[];
}

export interface Helm {
  repositories: HelmRepository[];
  local: LocalHelmChart[];
}

/** An image to skip; `name` is a Go (RE2) regular expression. */
export interface BlockedImage {
  name: string;
}

/** Declared by oc-mirror and not implemented there. */
export interface SampleImage {
  name: string;
}

/** The content of an image set: `mirror` in an ISC, `delete` in a DISC. */
export interface ImageSetContent {
  platform?: Platform;
  operators: Operator[];
  additionalImages: AdditionalImage[];
  helm?: Helm;
  blockedImages: BlockedImage[];
  samples: SampleImage[];
}

/** `kind: ImageSetConfiguration`. */
export interface ImageSetConfig {
  kind: typeof ISC_KIND;
  apiVersion: string;
  /** GiB per archive segment; absent means oc-mirror's default (500). */
  archiveSize?: number;
  mirror: ImageSetContent;
}

/** `kind: DeleteImageSetConfiguration`. */
export interface DeleteImageSetConfig {
  kind: typeof DISC_KIND;
  apiVersion: string;
  delete: ImageSetContent;
}

/** Either configuration. */
export type AnyImageSetConfig = ImageSetConfig | DeleteImageSetConfig;
