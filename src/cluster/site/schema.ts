/**
 * The site file's schema as small typed decoders: every key allowed at each level, with its type
 * and default. A key not listed is an unknown field (with a "did you mean" when one is close).
 * Decoding records every problem with its path and goes on, so one run reports them all; checks
 * that need several fields (stacks and CIDRs, duplicates, files) are in sections.ts and hosts.ts.
 */
import {
  bool,
  int,
  invalid,
  list,
  obj,
  oneOf,
  optional,
  required,
  str,
  withDefault,
  type Decoder,
} from '../../config/decode.js';
import { childPath } from '../../config/positions.js';
import {
  AVAILABILITY,
  BMC_VENDORS,
  HOST_ROLES,
  NETWORK_STACKS,
  NETWORK_TYPES,
  NODE_ARCHES,
  OLM_PLACEMENTS,
  PUBLISHING,
  SITE_DEFAULTS,
  type Availability,
  type BmcVendor,
  type HostRole,
  type ImageContentSource,
  type LabelSelector,
  type NetworkStack,
  type NetworkType,
  type NodeArch,
  type OlmCatalogPlacement,
  type Publishing,
  type RootDeviceHints,
  type SiteOsImage,
} from './types.js';
import { SiteErrorCode } from './problems.js';

/** A string that stands for a quantity (`8Gi`, `100Gi`): a number is accepted as bytes, written back as a string. */
const quantity: Decoder<string> = (raw, path, ctx) => {
  const s = typeof raw === 'number' ? String(raw) : str(raw, path, ctx);
  if (s === undefined) return undefined;
  if (!/^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.test(s)) {
    ctx.problems.add(SiteErrorCode.Invalid, path, `${path} "${s}" is not a storage size`, {
      hint: 'write it like 8Gi or 100Gi',
    });
    return undefined;
  }
  return s;
};

const port: Decoder<number> = (raw, path, ctx) => {
  const n = int(raw, path, ctx);
  if (n === undefined) return undefined;
  if (n < 1 || n > 65535) {
    ctx.problems.add(SiteErrorCode.Invalid, path, `${path} ${n} is not a port (1 to 65535)`);
    return undefined;
  }
  return n;
};

function isMapping(raw: unknown): raw is Record<string, unknown> {
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw);
}

/** A mapping of string values (labels). */
const stringMap: Decoder<Record<string, string>> = (raw, path, ctx) => {
  if (!isMapping(raw)) return invalid(ctx, path, 'a mapping of strings', raw);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const s = str(v, childPath(path, k), ctx);
    if (s !== undefined) out[k] = s;
  }
  return out;
};

/** Any mapping, passed through as written (raw nmstate configuration). */
const anyMapping: Decoder<Record<string, unknown>> = (raw, path, ctx) =>
  isMapping(raw) ? raw : invalid(ctx, path, 'a mapping', raw);

// ---- The document -------------------------------------------------------------------------

/** The site file as decoded: paths as written, stack-dependent defaults not applied yet. */
export interface SiteDocument {
  apiVersion: string;
  kind: string;
  cluster: {
    name: string;
    namespace: string;
    baseDomain: string;
    release: { image: string };
    pullSecretFile: string;
    sshKeyFile: string;
    controlPlaneAvailability: Availability;
    olmCatalogPlacement: OlmCatalogPlacement;
    infraID?: string;
    etcd: { storageClass?: string; size: string };
    services: { publishing: Publishing; apiServerAddress?: string };
    nodePool: { arch: NodeArch; agentLabelSelector?: LabelSelector };
    approveAgents: boolean;
  };
  network: {
    stack: NetworkStack;
    networkType: NetworkType;
    clusterNetwork?: string[];
    serviceNetwork?: string[];
    machineNetwork: string[];
  };
  mirror: {
    registry: string;
    caFiles: string[];
    imageContentSources?: ImageContentSource[];
    clusterResources?: string;
  };
  hub: {
    storageClass?: string;
    databaseStorage: string;
    filesystemStorage: string;
    imageStorage: string;
    osImages?: SiteOsImage[];
    osImagesFile?: string;
  };
  hosts: SiteHostDocument[];
}

export interface SiteHostDocument {
  name: string;
  role: HostRole;
  bootMACAddress: string;
  bmc: {
    vendor?: BmcVendor;
    address?: string;
    port?: number;
    systemId?: string;
    url?: string;
    credentialsFile: string;
    disableCertificateVerification: boolean;
  };
  network?: { interfaces: { name: string; macAddress: string }[]; config: Record<string, unknown> };
  rootDeviceHints?: RootDeviceHints;
}

const none = <T>(): T[] => [];

const labelSelector = obj<LabelSelector>({
  matchLabels: optional(stringMap),
  matchExpressions: optional(
    list(
      obj<{ key: string; operator: string; values?: string[] }>({
        key: required(str),
        operator: required(oneOf(['In', 'NotIn', 'Exists', 'DoesNotExist'])),
        values: optional(list(str)),
      }),
    ),
  ),
});

const cluster = obj<SiteDocument['cluster']>({
  name: required(str),
  namespace: withDefault(str, () => SITE_DEFAULTS.namespace),
  baseDomain: required(str),
  release: required(obj<{ image: string }>({ image: required(str) })),
  pullSecretFile: required(str),
  sshKeyFile: required(str),
  controlPlaneAvailability: withDefault(oneOf(AVAILABILITY), () => SITE_DEFAULTS.controlPlaneAvailability),
  olmCatalogPlacement: withDefault(oneOf(OLM_PLACEMENTS), () => SITE_DEFAULTS.olmCatalogPlacement),
  infraID: optional(str),
  etcd: withDefault(
    obj<{ storageClass?: string; size: string }>({
      storageClass: optional(str),
      size: withDefault(quantity, () => SITE_DEFAULTS.etcdSize),
    }),
    () => ({ size: SITE_DEFAULTS.etcdSize }),
  ),
  services: withDefault(
    obj<{ publishing: Publishing; apiServerAddress?: string }>({
      publishing: withDefault(oneOf(PUBLISHING), () => SITE_DEFAULTS.publishing),
      apiServerAddress: optional(str),
    }),
    () => ({ publishing: SITE_DEFAULTS.publishing }),
  ),
  nodePool: withDefault(
    obj<{ arch: NodeArch; agentLabelSelector?: LabelSelector }>({
      arch: withDefault(oneOf(NODE_ARCHES), () => SITE_DEFAULTS.arch),
      agentLabelSelector: optional(labelSelector),
    }),
    () => ({ arch: SITE_DEFAULTS.arch }),
  ),
  approveAgents: withDefault(bool, () => SITE_DEFAULTS.approveAgents),
});

const network = obj<SiteDocument['network']>({
  stack: required(oneOf(NETWORK_STACKS)),
  networkType: withDefault(oneOf(NETWORK_TYPES), () => SITE_DEFAULTS.networkType),
  clusterNetwork: optional(list(str)),
  serviceNetwork: optional(list(str)),
  machineNetwork: withDefault(list(str), none<string>),
});

const imageContentSource = obj<ImageContentSource>({
  source: required(str),
  mirrors: required(list(str)),
});

/** `caFiles` also takes one string. */
const stringOrList: Decoder<string[]> = (raw, path, ctx) =>
  typeof raw === 'string' ? [raw] : list(str)(raw, path, ctx);

const mirror = obj<SiteDocument['mirror']>({
  registry: required(str),
  caFiles: required(stringOrList),
  imageContentSources: optional(list(imageContentSource)),
  clusterResources: optional(str),
});

export const osImage = obj<SiteOsImage>({
  openshiftVersion: required(str),
  version: required(str),
  url: required(str),
  cpuArchitecture: optional(str),
  rootFSUrl: optional(str),
});

const hub = obj<SiteDocument['hub']>({
  storageClass: optional(str),
  databaseStorage: withDefault(quantity, () => SITE_DEFAULTS.databaseStorage),
  filesystemStorage: withDefault(quantity, () => SITE_DEFAULTS.filesystemStorage),
  imageStorage: withDefault(quantity, () => SITE_DEFAULTS.imageStorage),
  osImages: optional(list(osImage)),
  osImagesFile: optional(str),
});

const bmc = obj<SiteHostDocument['bmc']>({
  vendor: optional(oneOf(BMC_VENDORS)),
  address: optional(str),
  port: optional(port),
  systemId: optional(str),
  url: optional(str),
  credentialsFile: required(str),
  disableCertificateVerification: withDefault(bool, () => SITE_DEFAULTS.disableCertificateVerification),
});

const rootDeviceHints = obj<RootDeviceHints>({
  deviceName: optional(str),
  hctl: optional(str),
  model: optional(str),
  vendor: optional(str),
  serialNumber: optional(str),
  minSizeGigabytes: optional(int),
  wwn: optional(str),
  rotational: optional(bool),
});

const hostNetwork = obj<NonNullable<SiteHostDocument['network']>>({
  interfaces: required(
    list(obj<{ name: string; macAddress: string }>({ name: required(str), macAddress: required(str) })),
  ),
  config: required(anyMapping),
});

const host = obj<SiteHostDocument>({
  name: required(str),
  role: withDefault(oneOf(HOST_ROLES), () => SITE_DEFAULTS.role),
  bootMACAddress: required(str),
  bmc: required(bmc),
  network: optional(hostNetwork),
  rootDeviceHints: optional(rootDeviceHints),
});

/** The whole document. */
export const siteDocument = obj<SiteDocument>({
  apiVersion: required(str),
  kind: required(str),
  cluster: required(cluster),
  network: required(network),
  mirror: required(mirror),
  hub: withDefault(hub, () => ({
    databaseStorage: SITE_DEFAULTS.databaseStorage,
    filesystemStorage: SITE_DEFAULTS.filesystemStorage,
    imageStorage: SITE_DEFAULTS.imageStorage,
  })),
  hosts: withDefault(list(host), none<SiteHostDocument>),
});
