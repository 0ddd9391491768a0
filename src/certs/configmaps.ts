/**
 * The trust and mirror ConfigMaps a disconnected hub needs, from the registry CA(s) and the mirror
 * mapping (seed digest §1.B.1–1.B.3, §1.C.2):
 *
 * - `openshift-config/registry-config`: one key per registry, `host..port` (or `host`), the CA PEM(s)
 *   that registry's certificate chains to; referenced by the `image.config.openshift.io/cluster`
 *   patch (`spec.additionalTrustedCA.name`, the object form; the seeds' list form is wrong), so the
 *   hub's nodes and the HyperShift operator trust the mirror registry.
 * - `<hosted cluster namespace>/user-ca-bundle`: `ca-bundle.crt`, every CA; for
 *   `HostedCluster.spec.additionalTrustBundle.name`, so the hosted cluster's workers trust it.
 * - `multicluster-engine/custom-registries` (label `app: assisted-service`): `ca-bundle.crt` and
 *   `registries.conf` (from the IDMS/ITMS mapping, by the one registries.conf writer); for
 *   `AgentServiceConfig.spec.mirrorRegistryRef.name`, so discovery hosts pull from the mirror.
 *
 * Every input is read and checked before anything is written; PEMs end with a newline, so the YAML
 * writer emits them as `|` blocks (the seeds warn that `|-` breaks the pods that read them).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { buildRegistriesConfFromMappings, registriesConfToml } from '../mirror/index.js';
import { usageError, CommonError } from '../util/errors.js';
import { writeFilesAtomic } from '../util/fs.js';
import { toYaml, toYamlDocuments } from '../util/yaml.js';
import { describeCertificate, EXPIRY_WARNING_DAYS, readCertificates } from './inspect.js';
import {
  isBareRegistry,
  parseHostPort,
  parseMirrorFlag,
  readClusterResourcesDir,
  readMirrorSetFile,
  type MirrorMapping,
  type MirrorMappingsRead,
} from './mirror-mapping.js';
import { CertsError } from './errors.js';

const REGISTRY_CONFIG = 'registry-config';
const USER_CA_BUNDLE = 'user-ca-bundle';
export const CUSTOM_REGISTRIES = 'custom-registries';
export const DEFAULT_HOSTED_CLUSTER_NAMESPACE = 'clusters';

/** The files `--output` gets, in writing order. */
const TRUST_FILES = {
  registryConfig: 'registry-config.yaml',
  imagePatch: 'image-cluster-patch.yaml',
  userCaBundle: 'user-ca-bundle.yaml',
  customRegistries: 'custom-registries.yaml',
  registriesConf: 'registries.conf',
  readme: 'README.md',
} as const;

export interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  data: Record<string, string>;
}

/** The `image.config.openshift.io/cluster` change: a partial Image object (merge patch or apply). */
export interface ImageConfigPatch {
  apiVersion: 'config.openshift.io/v1';
  kind: 'Image';
  metadata: { name: 'cluster' };
  spec: { additionalTrustedCA: { name: string } };
}

/** One CA certificate read from a file, checked, in canonical PEM (ending with a newline). */
export interface CaCertificate {
  file: string;
  subject: string;
  /** ISO 8601. */
  notAfter: string;
  /** SHA-256 fingerprint, colon-separated hex, as openssl prints it. */
  fingerprint256: string;
  pem: string;
}

/** A registry of `registry-config`: its data key and the CAs that go under it. */
export interface RegistryTrust {
  /** `host[:port]`, as image references name the registry. */
  registry: string;
  /** The ConfigMap key: `host..port`, or `host`. */
  key: string;
  /** Where its CAs came from: its own file (`--registry host=<file>`), else every --ca. */
  caFiles: string[];
  /** Whether the registry was named by --registry, or taken from the mirrors of the mapping. */
  from: 'flag' | 'mapping';
}

export interface TrustConfigMapsOptions {
  /** PEM files of CAs (`--ca`): each certificate must be a CA (basicConstraints CA:true), not expired. */
  caFiles?: readonly string[];
  /**
   * Registries to trust (`--registry`): `host[:port]` gets every --ca; `host[:port]=<pem file>` gets
   * that file's CAs only. Default: the registries of the mirrors in the mapping, with every --ca.
   */
  registries?: readonly string[];
  /** A cluster-resources directory (`airgap mirror`'s `<workspace>/cluster-resources`). */
  clusterResources?: string;
  /** Files of ImageDigestMirrorSets (or ImageContentSourcePolicies). */
  idmsFiles?: readonly string[];
  /** Files of ImageTagMirrorSets. */
  itmsFiles?: readonly string[];
  /** `source=mirror[@digest|@tag]` mappings, added to those read from files. */
  mirrors?: readonly string[];
  /** Namespace of `user-ca-bundle`: the HostedCluster's namespace (default `clusters`). */
  hostedClusterNamespace?: string;
  /** The clock for expiry checks (default now). */
  now?: Date;
}

/** Everything rendered, ready to print or write. */
export interface TrustConfigMaps {
  registryConfig: ConfigMap;
  imagePatch: ImageConfigPatch;
  userCaBundle: ConfigMap;
  customRegistries: ConfigMap;
  /** The registries.conf TOML (also `customRegistries.data["registries.conf"]`). */
  registriesConf: string;
  /** The `oc patch` one-liner equivalent to `imagePatch`. */
  patchCommand: string;
  /** How to apply the files, for README.md. */
  readme: string;
  cas: CaCertificate[];
  registries: RegistryTrust[];
  mappings: MirrorMapping[];
  /** The mirror-set objects the mapping was read from (`file: Kind/name`). */
  mirrorSets: string[];
  warnings: string[];
}

const DNS1123_LABEL_RE = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const DAY = 86_400_000;

/**
 * Read a CA file: one or more PEM certificates (read by certs/inspect.ts, which ignores the text
 * around the blocks and names the file in its errors), each a CA (basicConstraints CA:true) valid
 * at `now`. Only the certificates are kept, re-encoded as PEM with LF line ends; a private key in
 * the same file is left behind, with a warning. Errors name the file (exit 2).
 */
export async function readCaFile(
  path: string,
  now = new Date(),
  warnings: string[] = [],
): Promise<CaCertificate[]> {
  const certs = await readCertificates(path);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(await readFile(path, 'latin1'))) {
    warnings.push(
      `${path} also holds a private key; only its certificate(s) are used (keep CA keys on the bastion)`,
    );
  }
  const out: CaCertificate[] = [];
  for (const [i, x] of certs.entries()) {
    const where = certs.length > 1 ? `${path}, certificate ${i + 1} of ${certs.length}` : path;
    const info = describeCertificate(x, now);
    if (!info.isCA) {
      throw usageError(
        CertsError.CA_NOT_CA,
        `${info.subject} is not a CA certificate (it lacks basicConstraints CA:true)`,
        {
          where,
          hint: `this looks like a server certificate; give the CA that issued it (${info.issuer})`,
        },
      );
    }
    if (Date.parse(info.notAfter) <= now.getTime()) {
      throw usageError(CertsError.CA_EXPIRED, `the CA ${info.subject} expired on ${info.notAfter}`, {
        where,
        hint: 'nothing trusts an expired CA: renew it (airgap certs ca) and reissue the registry certificate',
      });
    }
    if (Date.parse(info.notBefore) > now.getTime()) {
      throw usageError(
        CertsError.CA_NOT_YET_VALID,
        `the CA ${info.subject} is not valid before ${info.notBefore}`,
        {
          where,
          hint: "check this machine's clock, or the clock of the machine that made the CA",
        },
      );
    }
    if (Date.parse(info.notAfter) - now.getTime() < EXPIRY_WARNING_DAYS * DAY) {
      warnings.push(`${where} (${info.subject}) expires in ${info.daysLeft} day(s), on ${info.notAfter}`);
    }
    out.push({
      file: path,
      subject: info.subject,
      notAfter: info.notAfter,
      fingerprint256: info.sha256Fingerprint,
      pem: x.toString(),
    });
  }
  return out;
}

/**
 * The `registry-config` key of a registry: `host..port` (OpenShift turns `..` back into `:` for
 * the certs.d directory), or `host` without a port. An IPv6 literal cannot be a ConfigMap key
 * (only letters, digits, `-`, `_` and `.`), so it is refused with what to do instead.
 */
export function registryConfigKey(registry: string, origin = `--registry ${registry}`): string {
  const parsed = parseHostPort(registry);
  if ('error' in parsed) {
    throw usageError(CertsError.REGISTRY_INVALID, `${origin}: ${parsed.error}`, {
      hint: 'write the registry as image references name it: host[:port], e.g. registry.example.com:8443',
    });
  }
  if (parsed.ipv6) {
    throw usageError(
      CertsError.REGISTRY_INVALID,
      `${origin}: an IPv6 address cannot be a key of ${REGISTRY_CONFIG} (ConfigMap keys allow only letters, digits, "-", "_" and ".")`,
      {
        hint: 'give the registry a DNS name (in DNS or /etc/hosts on the nodes, and in its certificate) and mirror to that name',
      },
    );
  }
  return parsed.port === undefined ? parsed.host : `${parsed.host}..${parsed.port}`;
}

/** The `host[:port]` of a scope (`host[:port]/path` → `host[:port]`). */
function scopeRegistry(scope: string): string {
  const slash = scope.indexOf('/');
  return slash < 0 ? scope : scope.slice(0, slash);
}

/** Concatenated PEMs of some CAs, each once, in order. */
function bundle(cas: readonly CaCertificate[]): string {
  const seen = new Set<string>();
  let out = '';
  for (const ca of cas) {
    if (seen.has(ca.fingerprint256)) continue;
    seen.add(ca.fingerprint256);
    out += ca.pem;
  }
  return out;
}

/** The `oc patch` one-liner that sets `additionalTrustedCA` (a JSON merge patch, the object form). */
function imagePatchCommand(configMapName = REGISTRY_CONFIG): string {
  const patch = JSON.stringify({ spec: { additionalTrustedCA: { name: configMapName } } });
  return `oc patch image.config.openshift.io/cluster --type merge -p '${patch}'`;
}

/** Read the mapping from the files and flags given; at least one mapping is required. */
async function readMappings(opts: TrustConfigMapsOptions): Promise<MirrorMappingsRead> {
  const idms = opts.idmsFiles ?? [];
  const itms = opts.itmsFiles ?? [];
  if (opts.clusterResources !== undefined && idms.length + itms.length > 0) {
    throw usageError(
      CommonError.FLAG_CONFLICT,
      '--cluster-resources cannot be combined with --idms or --itms',
      {
        hint: 'give the directory, or the files, not both',
      },
    );
  }
  const read: MirrorMappingsRead =
    opts.clusterResources !== undefined
      ? await readClusterResourcesDir(opts.clusterResources)
      : { mappings: [], objects: [], warnings: [] };
  for (const f of idms) await readMirrorSetFile(f, 'digest', read);
  for (const f of itms) await readMirrorSetFile(f, 'tag', read);
  for (const m of opts.mirrors ?? []) read.mappings.push(parseMirrorFlag(m));
  if (read.mappings.length === 0) {
    throw usageError(
      CertsError.MIRROR_MAPPING_MISSING,
      `${CUSTOM_REGISTRIES} needs at least one mirror mapping`,
      {
        hint: 'give --cluster-resources <workspace>/cluster-resources (from airgap mirror), --idms/--itms files, or --mirror source=mirror',
      },
    );
  }
  return read;
}

function readme(r: Omit<TrustConfigMaps, 'readme'>, namespace: string): string {
  const f = TRUST_FILES;
  const lines = [
    '# Registry trust and mirror ConfigMaps',
    '',
    'Written by `airgap certs configmaps`. Apply them on the hub (the management cluster) with `oc`',
    'logged in as a cluster admin, in this order:',
    '',
    `1. \`oc apply -f ${f.registryConfig}\`: ConfigMap \`${REGISTRY_CONFIG}\` in \`openshift-config\`, one key per registry`,
    '   (`host..port`), holding the CA its certificate chains to.',
    `2. Point the cluster image configuration at it (the nodes then trust the registry; this takes a few minutes):`,
    '',
    '   ```sh',
    `   ${r.patchCommand}`,
    '   ```',
    '',
    `   (\`${f.imagePatch}\` is the same change as an object, for \`oc apply -f\` or GitOps.)`,
    `3. \`oc apply -f ${f.customRegistries}\`: ConfigMap \`${CUSTOM_REGISTRIES}\` in \`multicluster-engine\` (apply it after`,
    '   the multicluster engine is installed), for `AgentServiceConfig` `spec.mirrorRegistryRef.name:',
    `   ${CUSTOM_REGISTRIES}\`: discovery hosts trust \`ca-bundle.crt\` and pull through \`registries.conf\`.`,
    `4. \`oc apply -f ${f.userCaBundle}\`: ConfigMap \`${USER_CA_BUNDLE}\` in \`${namespace}\` (create the namespace first if`,
    `   needed: \`oc create namespace ${namespace}\`), for \`HostedCluster\` \`spec.additionalTrustBundle.name:`,
    `   ${USER_CA_BUNDLE}\`: the hosted cluster's workers trust the registry.`,
    '',
    `\`${f.registriesConf}\` is the same file as in \`${CUSTOM_REGISTRIES}\`, for podman and skopeo on the bastion:`,
    `\`skopeo inspect --registries-conf ${f.registriesConf} docker://<source image>@sha256:…\` pulls through the mirror.`,
    '',
    '## Registries',
    '',
    ...r.registries.map(
      (g) => `- \`${g.registry}\` (key \`${g.key}\`): ${g.caFiles.map((c) => `\`${c}\``).join(', ')}`,
    ),
    '',
    '## CAs',
    '',
    ...r.cas.map(
      (c) => `- ${c.subject}, from \`${c.file}\`, valid until ${c.notAfter}, SHA-256 ${c.fingerprint256}`,
    ),
    '',
  ];
  if (r.warnings.length > 0) lines.push('## Warnings', '', ...r.warnings.map((w) => `- ${w}`), '');
  return `${lines.join('\n')}`;
}

/**
 * Read and check every input (CA files, registries, mirror sets, flags), then build the ConfigMaps,
 * the Image patch and registries.conf. Nothing is written. Every problem is an AirgapError (exit 2)
 * that names the file or flag.
 */
export async function renderTrustConfigMaps(opts: TrustConfigMapsOptions): Promise<TrustConfigMaps> {
  const now = opts.now ?? new Date();
  const warnings: string[] = [];
  const namespace = opts.hostedClusterNamespace ?? DEFAULT_HOSTED_CLUSTER_NAMESPACE;
  if (!DNS1123_LABEL_RE.test(namespace)) {
    throw usageError(
      CommonError.FLAG_INVALID,
      `--hosted-cluster-namespace ${namespace} is not a namespace name`,
      {
        hint: 'lowercase letters, digits and inner hyphens, at most 63 characters (the default is clusters)',
      },
    );
  }

  // The registries: syntax first (cheap), then the CA files, then the mapping.
  const registrySpecs: { registry: string; key: string; file?: string }[] = [];
  for (const spec of opts.registries ?? []) {
    const eq = spec.indexOf('=');
    const registry = eq < 0 ? spec : spec.slice(0, eq);
    const file = eq < 0 ? undefined : spec.slice(eq + 1);
    if (file === '') {
      throw usageError(CertsError.REGISTRY_INVALID, `--registry ${spec}: the CA file after "=" is empty`, {
        hint: 'write --registry host[:port] or --registry host[:port]=<CA PEM file>',
      });
    }
    const key = registryConfigKey(registry);
    if (registrySpecs.some((r) => r.key === key)) {
      throw usageError(CertsError.REGISTRY_INVALID, `--registry ${registry} is given twice`, {
        hint: 'give each registry once; put several CAs for it in one PEM file',
      });
    }
    registrySpecs.push({ registry, key, ...(file !== undefined ? { file } : {}) });
  }

  const caCache = new Map<string, CaCertificate[]>();
  const readCa = async (file: string) => {
    let cas = caCache.get(file);
    if (!cas) caCache.set(file, (cas = await readCaFile(file, now, warnings)));
    return cas;
  };
  const common: CaCertificate[] = [];
  for (const f of opts.caFiles ?? []) common.push(...(await readCa(f)));
  for (const r of registrySpecs) if (r.file !== undefined) await readCa(r.file);

  const read = await readMappings(opts);
  warnings.push(...read.warnings);

  let from: RegistryTrust['from'] = 'flag';
  if (registrySpecs.length === 0) {
    from = 'mapping';
    for (const m of read.mappings) {
      const registry = scopeRegistry(m.mirror);
      const key = registryConfigKey(registry, `the mirror registry ${registry} (from ${m.mirror})`);
      if (!registrySpecs.some((r) => r.key === key)) registrySpecs.push({ registry, key });
    }
  }
  if (common.length === 0 && registrySpecs.some((r) => r.file === undefined)) {
    throw usageError(CertsError.CA_MISSING, 'no CA given: --ca is required', {
      hint: 'give --ca <the registry CA PEM> (the ca.crt that signed the registry certificate), or --registry host[:port]=<CA file> for each registry',
    });
  }

  const registries: RegistryTrust[] = [];
  const data: Record<string, string> = {};
  const all: CaCertificate[] = [...common];
  for (const r of registrySpecs) {
    const cas = r.file !== undefined ? caCache.get(r.file)! : common;
    if (r.file !== undefined) all.push(...cas);
    data[r.key] = bundle(cas);
    registries.push({
      registry: r.registry,
      key: r.key,
      caFiles: r.file !== undefined ? [r.file] : [...(opts.caFiles ?? [])],
      from,
    });
  }
  const mirrorRegistries = new Set(read.mappings.map((m) => scopeRegistry(m.mirror)));
  for (const reg of mirrorRegistries) {
    if (!registries.some((r) => r.registry === reg)) {
      warnings.push(
        `the mirror registry ${reg} has no key in ${REGISTRY_CONFIG}; add --registry ${reg} if it needs this CA`,
      );
    }
  }
  const bareSources = [
    ...new Set(read.mappings.filter((m) => isBareRegistry(m.source)).map((m) => m.source)),
  ];
  for (const s of bareSources) {
    warnings.push(
      `the source ${s} is a whole registry; assisted-service wants registries.conf entries scoped to a repository path`,
    );
  }

  const caBundle = bundle(all);
  const objects = buildTrustObjects({
    registryConfigData: data,
    caBundle,
    mappings: read.mappings,
    hostedClusterNamespace: namespace,
  });

  const rendered: Omit<TrustConfigMaps, 'readme'> = {
    ...objects,
    patchCommand: imagePatchCommand(),
    cas: dedupe(all),
    registries,
    mappings: read.mappings,
    mirrorSets: read.objects,
    warnings,
  };
  return { ...rendered, readme: readme(rendered, namespace) };
}

/** What {@link buildTrustObjects} takes: CAs already read and checked, and the mirror mapping. */
export interface TrustObjectsInput {
  /** `registry-config` data: `host..port` (see {@link registryConfigKey}) → CA PEM(s). */
  registryConfigData: Record<string, string>;
  /** Every CA, concatenated PEMs. */
  caBundle: string;
  mappings: readonly MirrorMapping[];
  /** Namespace of `user-ca-bundle` (the HostedCluster's). */
  hostedClusterNamespace: string;
  /** registries.conf header lines (without `# `). */
  comment?: readonly string[];
}

const REGISTRIES_CONF_COMMENT = [
  'Generated by airgap certs configmaps from the mirror mapping (IDMS/ITMS entries and --mirror flags),',
  'for assisted-service, podman, skopeo and CRI-O (containers-registries.conf(5), version 2).',
];

/**
 * The four trust objects and registries.conf, from inputs already read (pure; no checks): what
 * `airgap certs configmaps` writes and what `airgap install hub` applies.
 */
export function buildTrustObjects(
  input: TrustObjectsInput,
): Pick<
  TrustConfigMaps,
  'registryConfig' | 'imagePatch' | 'userCaBundle' | 'customRegistries' | 'registriesConf'
> {
  const registriesConf = registriesConfToml(buildRegistriesConfFromMappings(input.mappings), {
    comment: input.comment ?? REGISTRIES_CONF_COMMENT,
  });
  return {
    registryConfig: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: REGISTRY_CONFIG, namespace: 'openshift-config' },
      data: input.registryConfigData,
    },
    imagePatch: {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: 'cluster' },
      spec: { additionalTrustedCA: { name: REGISTRY_CONFIG } },
    },
    userCaBundle: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: USER_CA_BUNDLE, namespace: input.hostedClusterNamespace },
      data: { 'ca-bundle.crt': input.caBundle },
    },
    customRegistries: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: CUSTOM_REGISTRIES,
        namespace: 'multicluster-engine',
        labels: { app: 'assisted-service' },
      },
      data: { 'ca-bundle.crt': input.caBundle, 'registries.conf': registriesConf },
    },
    registriesConf,
  };
}

function dedupe(cas: readonly CaCertificate[]): CaCertificate[] {
  const seen = new Set<string>();
  return cas.filter((c) => !seen.has(c.fingerprint256) && seen.add(c.fingerprint256));
}

/** The four objects as one multi-document YAML stream (for stdout, or `oc apply -f -`). */
export function trustConfigMapsYaml(r: TrustConfigMaps): string {
  return toYamlDocuments([r.registryConfig, r.imagePatch, r.userCaBundle, r.customRegistries]);
}

/** Every output file by name, in writing order. */
export function trustConfigMapFiles(r: TrustConfigMaps): Map<string, string> {
  return new Map([
    [TRUST_FILES.registryConfig, toYaml(r.registryConfig)],
    [TRUST_FILES.imagePatch, toYaml(r.imagePatch)],
    [TRUST_FILES.userCaBundle, toYaml(r.userCaBundle)],
    [TRUST_FILES.customRegistries, toYaml(r.customRegistries)],
    [TRUST_FILES.registriesConf, r.registriesConf],
    [TRUST_FILES.readme, r.readme],
  ]);
}

/**
 * Write every file into `dir` (created if needed) as one set: all are written to temp names first,
 * then renamed, so a failure leaves no file half-written. Files of an earlier run are replaced (they
 * are derived from the inputs, like a mirror run's cluster-resources). Returns the paths written.
 */
async function writeTrustConfigMaps(dir: string, r: TrustConfigMaps): Promise<string[]> {
  try {
    if (!(await stat(dir)).isDirectory()) {
      throw usageError(CertsError.OUTPUT_NOT_DIRECTORY, `--output ${dir} exists and is not a directory`, {
        hint: 'give a directory (it is created if it does not exist)',
      });
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const files = [...trustConfigMapFiles(r)].map(([name, data]) => ({ path: join(dir, name), data }));
  await writeFilesAtomic(files, { force: true });
  return files.map((f) => f.path);
}

/** Render and, with `output`, write: what `airgap certs configmaps` does. */
export async function trustConfigMaps(
  opts: TrustConfigMapsOptions & { output?: string },
): Promise<TrustConfigMaps & { files: string[] }> {
  const r = await renderTrustConfigMaps(opts);
  const files = opts.output !== undefined ? await writeTrustConfigMaps(opts.output, r) : [];
  return { ...r, files };
}
