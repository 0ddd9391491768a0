/**
 * The v2alpha1 schema as decoders: every key oc-mirror knows at each level, with its type. Keys not
 * listed here are unknown fields (oc-mirror decodes with DisallowUnknownFields).
 */
import {
  bool,
  int,
  list,
  obj,
  oneOf,
  optional,
  required,
  str,
  withDefault,
  type Decoder,
} from '../../config/decode.js';
import {
  ARCHITECTURES,
  PLATFORM_TYPES,
  type AdditionalImage,
  type BlockedImage,
  type Helm,
  type HelmChart,
  type HelmRepository,
  type ImageSetContent,
  type IncludeChannel,
  type IncludePackage,
  type LocalHelmChart,
  type Operator,
  type Platform,
  type PlatformFilter,
  type ReleaseChannel,
  type SampleImage,
} from './types.js';

const none = <T>(): T[] => [];

const BUNDLES_REMOVED =
  'oc-mirror v2 removed packages[].bundles (CLID-303); select versions with minVersion/maxVersion ' +
  '(the same version in both selects one bundle)';

const platformFilter = obj<PlatformFilter>({
  os: required(str),
  architecture: required(str),
});

const platforms = withDefault(list(platformFilter), none<PlatformFilter>);

const releaseChannel = obj<ReleaseChannel>({
  name: required(str),
  type: withDefault(oneOf(PLATFORM_TYPES), () => 'ocp' as const),
  minVersion: optional(str),
  maxVersion: optional(str),
  shortestPath: withDefault(bool, () => false),
  full: withDefault(bool, () => false),
});

const platform = obj<Platform>({
  channels: withDefault(list(releaseChannel), none<ReleaseChannel>),
  release: optional(str),
  architectures: withDefault(list(oneOf(ARCHITECTURES)), none<(typeof ARCHITECTURES)[number]>),
  platforms,
  graph: withDefault(bool, () => false),
  kubeVirtContainer: withDefault(bool, () => false),
});

const includeChannel = obj<IncludeChannel>({
  name: required(str),
  minVersion: optional(str),
  maxVersion: optional(str),
});

const includePackage = obj<IncludePackage>(
  {
    name: required(str),
    defaultChannel: optional(str),
    minVersion: optional(str),
    maxVersion: optional(str),
    channels: withDefault(list(includeChannel), none<IncludeChannel>),
  },
  { removed: { bundles: BUNDLES_REMOVED } },
);

const operator = obj<Operator>({
  catalog: required(str),
  targetCatalog: optional(str),
  targetTag: optional(str),
  full: withDefault(bool, () => false),
  skipDependencies: withDefault(bool, () => false),
  targetCatalogSourceTemplate: optional(str),
  platforms,
  packages: withDefault(list(includePackage), none<IncludePackage>),
});

const additionalImage = obj<AdditionalImage>({
  name: required(str),
  targetRepo: optional(str),
  targetTag: optional(str),
  platforms,
});

const helmChart = obj<HelmChart>({
  name: required(str),
  version: optional(str),
  path: optional(str),
  imagePaths: withDefault(list(str), none<string>),
  platforms,
});

const localHelmChart = obj<LocalHelmChart>({
  name: required(str),
  version: optional(str),
  path: required(str),
  imagePaths: withDefault(list(str), none<string>),
  platforms,
});

const helmRepository = obj<HelmRepository>({
  name: required(str),
  url: required(str),
  charts: withDefault(list(helmChart), none<HelmChart>),
});

const helm = obj<Helm>({
  repositories: withDefault(list(helmRepository), none<HelmRepository>),
  local: withDefault(list(localHelmChart), none<LocalHelmChart>),
});

const blockedImage = obj<BlockedImage>({ name: required(str) });
const sampleImage = obj<SampleImage>({ name: required(str) });

/** `mirror:` of an ImageSetConfiguration and `delete:` of a DeleteImageSetConfiguration. */
export const imageSetContent: Decoder<ImageSetContent> = obj<ImageSetContent>({
  platform: optional(platform),
  operators: withDefault(list(operator), none<Operator>),
  additionalImages: withDefault(list(additionalImage), none<AdditionalImage>),
  helm: optional(helm),
  blockedImages: withDefault(list(blockedImage), none<BlockedImage>),
  samples: withDefault(list(sampleImage), none<SampleImage>),
});

/** `archiveSize`: a whole number of GiB. */
export const archiveSize: Decoder<number> = int;

/** Top-level keys of each kind, and hints for keys people bring from other versions. */
export const TOP_LEVEL_KEYS = {
  ImageSetConfiguration: ['kind', 'apiVersion', 'mirror', 'archiveSize'],
  DeleteImageSetConfiguration: ['kind', 'apiVersion', 'delete'],
} as const;

export const TOP_LEVEL_REMOVED: Record<string, string> = {
  storageConfig:
    'storageConfig is oc-mirror v1 (v1alpha2); v2 keeps its state in the workspace and cache, so remove it',
};
