/**
 * Read the local files a site names (pull secret, SSH key, CAs, cluster resources with the release
 * signatures, osImages, BMC credentials) and check their content. No network. Problems point at the site field that names
 * the file (`site.yaml:12:18 hosts[1].bmc.credentialsFile`); secret content never appears in them.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { readCaFile } from '../../certs/index.js';
import { isBareRegistry, readClusterResourcesDir } from '../../certs/index.js';
import { loadYamlWithPositions } from '../../config/positions.js';
import { isYamlLimitError, parseYamlDocuments, YamlBudget } from '../../config/yaml-load.js';
import { Problems } from '../../config/problems.js';
import { normalizeAuthKey } from '../../mirror/index.js';
import { parseReference } from '../../mirror/index.js';
import { isAirgapError, unreadableReason } from '../../util/errors.js';
import { SITE_DECODE_CODES, SiteErrorCode, type SiteProblems } from './problems.js';
import { osImage } from './schema.js';
import type {
  BmcCredentials,
  CatalogOverrides,
  ClusterResourceObject,
  DefaultCatalog,
  ImageContentSource,
  ResolvedSite,
  Site,
  SiteInputs,
  SiteOsImage,
} from './types.js';

/** NodePool arch → AgentServiceConfig / InfraEnv cpuArchitecture. */
export const CPU_ARCHITECTURE: Record<string, string> = {
  amd64: 'x86_64',
  arm64: 'aarch64',
  ppc64le: 'ppc64le',
  s390x: 's390x',
};

/** The source repository of each default catalog, by its last path component. */
const CATALOG_INDEXES: Record<string, DefaultCatalog> = {
  'redhat-operator-index': 'redhat-operators',
  'certified-operator-index': 'certified-operators',
  'community-operator-index': 'community-operators',
  'redhat-marketplace-index': 'redhat-marketplace',
};
const CATALOG_SOURCE_NAMESPACE = 'registry.redhat.io/redhat';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

async function readText(problems: SiteProblems, field: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    problems.add(SiteErrorCode.File, field, `${field}: cannot read ${path}: ${unreadableReason(e)}`);
    return undefined;
  }
}

/**
 * A release image in the mirror registry but in a repository no mirror set names for the
 * release: two mirror runs to different prefixes (the release under one, the mirror sets of the
 * other). The cluster would pull its components from where the mirror sets point. Said once, with
 * both places; undefined when the release is where the mirror sets put it (or named at its source).
 */
export function releaseOutsideMirrors(release: string, sources: ImageContentSource[]): string | undefined {
  let ref;
  try {
    ref = parseReference(release.replace(/^docker:\/\//, ''));
  } catch {
    return undefined; // the site check names a bad reference
  }
  const repo = `${ref.registry}/${ref.repository}`;
  const releaseSets = sources.filter((s) => /\/ocp-release$|\/okd$|\/release$/.test(s.source));
  const mirrors = sources.flatMap((s) => s.mirrors);
  if (sources.some((s) => s.source === repo) || mirrors.includes(repo)) return undefined;
  const named = releaseSets.flatMap((s) => s.mirrors).filter((m) => m.startsWith(`${ref.registry}/`));
  if (named.length === 0) return undefined;
  return `cluster.release.image is in ${repo}, but the mirror sets put the release in ${named.join(' or ')}: the cluster would pull its components from there; point release.image at the same mirror run as mirror.clusterResources`;
}

/** The digest mappings grouped by source (mirror order kept), for `spec.imageContentSources`. */
function imageContentSourcesOf(
  mappings: readonly { source: string; mirror: string; digest: boolean }[],
): ImageContentSource[] {
  const bySource = new Map<string, string[]>();
  for (const m of mappings) {
    if (!m.digest) continue;
    const mirrors = bySource.get(m.source) ?? [];
    if (!mirrors.includes(m.mirror)) mirrors.push(m.mirror);
    bySource.set(m.source, mirrors);
  }
  return [...bySource].map(([source, mirrors]) => ({ source, mirrors }));
}

/** What the YAML files of one cluster-resources directory may come to (airgap writes a few KiB). */
const CLUSTER_RESOURCES_YAML = { bytes: 64 * 1024 * 1024, nodes: 4_000_000 };

/** The objects (by kind) in a cluster-resources directory, in file order. */
async function readClusterResourceObjects(
  dir: string,
  kinds: readonly string[],
): Promise<ClusterResourceObject[]> {
  const names = (await readdir(dir)).filter((n) => ['.yaml', '.yml'].includes(extname(n))).sort();
  const out: ClusterResourceObject[] = [];
  const budget = new YamlBudget(`the cluster resources ${dir}`, CLUSTER_RESOURCES_YAML, 2);
  for (const name of names) {
    const file = join(dir, name);
    for (const doc of parseYamlDocuments(await readFile(file, 'utf8'), {
      source: file,
      exitCode: 2,
      budget,
    })) {
      const items = isObject(doc) && doc.kind === 'List' && Array.isArray(doc.items) ? doc.items : [doc];
      for (const o of items) {
        if (!isObject(o) || typeof o.kind !== 'string' || !kinds.includes(o.kind)) continue;
        if (!isObject(o.metadata) || typeof o.metadata.name !== 'string') continue;
        const { status: _status, ...rest } = o;
        const metadata = { ...(o.metadata as Record<string, unknown>) };
        for (const k of ['creationTimestamp', 'resourceVersion', 'uid', 'generation', 'managedFields'])
          delete metadata[k];
        out.push({ ...rest, metadata } as ClusterResourceObject);
      }
    }
  }
  return out;
}

/** The file `airgap mirror` writes into cluster-resources with the release GPG signatures it verified. */
const SIGNATURE_CONFIGMAP_FILE = 'signature-configmap.yaml';
/** The namespace and label the cluster version operator reads release signatures from. */
const SIGNATURE_NAMESPACE = 'openshift-config-managed';
const SIGNATURE_LABEL = 'release.openshift.io/verification-signatures';
/** A `binaryData` key: `sha256-<hex of the release digest>-<n>`, n counting from 1. */
const SIGNATURE_KEY = /^sha256-[0-9a-f]{64}-[1-9][0-9]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What is wrong with a release-signature ConfigMap document, or nothing. */
function signatureConfigMapProblems(doc: unknown): string[] {
  if (!isObject(doc)) return ['it is not one YAML object'];
  const problems: string[] = [];
  if (doc.apiVersion !== 'v1' || doc.kind !== 'ConfigMap')
    problems.push(`it is ${String(doc.apiVersion)} ${String(doc.kind)}, not a v1 ConfigMap`);
  const meta = isObject(doc.metadata) ? doc.metadata : {};
  if (typeof meta.name !== 'string' || meta.name === '') problems.push('metadata.name is missing');
  if (meta.namespace !== SIGNATURE_NAMESPACE)
    problems.push(
      `metadata.namespace is ${meta.namespace === undefined ? 'missing' : JSON.stringify(meta.namespace)}, not ${SIGNATURE_NAMESPACE} (the only namespace the cluster version operator reads signatures from)`,
    );
  if (!isObject(meta.labels) || !(SIGNATURE_LABEL in meta.labels))
    problems.push(
      `metadata.labels has no ${SIGNATURE_LABEL} (the label the cluster version operator selects by)`,
    );
  if (!isObject(doc.binaryData) || Object.keys(doc.binaryData).length === 0) {
    problems.push('binaryData holds no signatures');
    return problems;
  }
  for (const [key, value] of Object.entries(doc.binaryData)) {
    if (!SIGNATURE_KEY.test(key))
      problems.push(`binaryData key ${JSON.stringify(key)} is not sha256-<hex>-<n>`);
    if (typeof value !== 'string' || value === '' || !BASE64.test(value.replace(/\s+/g, '')))
      problems.push(`binaryData.${key} is not base64`);
  }
  return problems;
}

/**
 * The release-signature ConfigMap `airgap mirror` wrote into cluster-resources, when there is one:
 * checked (the namespace and label the cluster version operator reads, `sha256-<hex>-<n>` keys with
 * base64 values) and without server-set metadata. A malformed file is a problem naming it.
 */
async function readSignatureConfigMap(
  problems: SiteProblems,
  dir: string,
): Promise<ClusterResourceObject | undefined> {
  const field = 'mirror.clusterResources';
  const path = join(dir, SIGNATURE_CONFIGMAP_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    problems.add(SiteErrorCode.File, field, `${field}: cannot read ${path}: ${unreadableReason(e)}`);
    return undefined;
  }
  const hint =
    'write it again with airgap mirror, or remove it (the cluster then cannot verify a release update offline)';
  let docs: unknown[];
  try {
    docs = parseYamlDocuments(text, { source: path, exitCode: 2 }).filter(
      (d) => d !== null && d !== undefined,
    );
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${path} is not YAML: ${(e as Error).message.split('\n')[0]}`,
      {
        hint,
      },
    );
    return undefined;
  }
  const found =
    docs.length === 1
      ? signatureConfigMapProblems(docs[0])
      : [`it holds ${docs.length} YAML documents, not one`];
  if (found.length > 0) {
    problems.add(SiteErrorCode.Invalid, field, `${field}: ${path}: ${found.join('; ')}`, { hint });
    return undefined;
  }
  const o = docs[0] as Record<string, unknown> & { metadata: Record<string, unknown> };
  const { status: _status, ...rest } = o;
  const metadata = { ...o.metadata };
  for (const k of ['creationTimestamp', 'resourceVersion', 'uid', 'generation', 'managedFields'])
    delete metadata[k];
  return { ...rest, metadata } as ClusterResourceObject;
}

/**
 * Catalog overrides from mirrored CatalogSources: each default catalog found (by its index
 * repository name) gives its mirrored image, and a `registry.redhat.io/redhat=<mirror namespace>`
 * rewrite for the catalog ImageStream.
 */
function catalogOverridesOf(catalogSources: readonly ClusterResourceObject[]): CatalogOverrides {
  const images: Partial<Record<DefaultCatalog, string>> = {};
  const registryOverrides: { source: string; mirror: string }[] = [];
  for (const cs of catalogSources) {
    const image = cs.spec?.image;
    if (typeof image !== 'string') continue;
    let ref: ReturnType<typeof parseReference>;
    try {
      ref = parseReference(image);
    } catch {
      // Not an image reference: it names none of the default catalogs (the CatalogSource is applied as it is).
      continue;
    }
    const parts = ref.repository.split('/');
    const catalog = CATALOG_INDEXES[parts[parts.length - 1]!];
    if (!catalog || images[catalog]) continue;
    images[catalog] = image;
    // The hosted cluster's default catalogs are registry.redhat.io/redhat/<index>:vX.Y; oc-mirror
    // keeps that path under the mirror, so the namespace of the mirrored index replaces it.
    const mirror = [ref.registry, ...parts.slice(0, -1)].join('/');
    if (!registryOverrides.some((r) => r.source === CATALOG_SOURCE_NAMESPACE))
      registryOverrides.push({ source: CATALOG_SOURCE_NAMESPACE, mirror });
  }
  return {
    ...(Object.keys(images).length > 0 ? { images } : {}),
    ...(registryOverrides.length > 0 ? { registryOverrides } : {}),
  };
}

function checkPullSecret(problems: SiteProblems, text: string, site: Site): void {
  const field = 'cluster.pullSecretFile';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse fails only on text that is not JSON: said so, with the field.
    problems.add(SiteErrorCode.Invalid, field, `${field}: ${site.cluster.pullSecretFile} is not JSON`, {
      hint: 'give a pull secret file: {"auths": {"<registry>": {"auth": "…"}}}',
    });
    return;
  }
  if (!isObject(parsed) || !isObject(parsed.auths)) {
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${site.cluster.pullSecretFile} has no "auths" object`,
      {
        hint: 'give a pull secret file: {"auths": {"<registry>": {"auth": "…"}}}',
      },
    );
    return;
  }
  // Every image of the hosted cluster comes from the mirror with this secret: without the mirror's
  // credentials nothing pulls, and that would only show as ImagePullBackOff long after the apply.
  const keys = Object.keys(parsed.auths).map(normalizeAuthKey);
  const host = site.mirror.registry;
  if (!keys.some((k) => k === host || host.startsWith(`${k}/`) || k.startsWith(`${host}/`)))
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${site.cluster.pullSecretFile} has no credentials for the mirror registry ${host}`,
      {
        hint: `add them: airgap certs pull-secret --registry ${host} --username <user> --password-file <file> --pull-secret ${site.cluster.pullSecretFile} --output <new file>`,
      },
    );
}

function checkSshKey(problems: SiteProblems, text: string, site: Site): string | undefined {
  const field = 'cluster.sshKeyFile';
  const key = text.trim();
  if (/PRIVATE KEY/.test(key)) {
    problems.add(SiteErrorCode.Invalid, field, `${field}: ${site.cluster.sshKeyFile} is a private key`, {
      hint: 'give the public key (the .pub file next to it)',
    });
    return undefined;
  }
  if (!/^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-\S+) [A-Za-z0-9+/=]+/.test(key) || key.includes('\n')) {
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${site.cluster.sshKeyFile} is not one SSH public key`,
      {
        hint: 'give one line like "ssh-ed25519 AAAA… user@host"',
      },
    );
    return undefined;
  }
  return key;
}

function readCredentials(
  problems: SiteProblems,
  field: string,
  path: string,
  text: string,
): BmcCredentials | undefined {
  let doc: unknown;
  try {
    doc = parseYamlDocuments(text, { source: path, exitCode: 2 })[0];
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    problems.add(SiteErrorCode.Invalid, field, `${field}: ${path} is not YAML or JSON`, {
      hint: 'write it as username: <user> and password: <password> (YAML), or the same as JSON',
    });
    return undefined;
  }
  const missing = ['username', 'password'].filter(
    (k) => !isObject(doc) || typeof doc[k] !== 'string' || doc[k] === '',
  );
  if (missing.length > 0) {
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${path} has no ${missing.join(' or ')} (as a non-empty string)`,
      {
        hint: 'write it as username: <user> and password: <password> (quote a password that looks like a number)',
      },
    );
    return undefined;
  }
  const d = doc as Record<string, string>;
  return { username: d.username!, password: d.password! };
}

/** Read osImages entries from a file: `{spec: {osImages}}` (serve-images --asc-out), an AgentServiceConfig, `{osImages}`, or a list. */
function readOsImagesFile(problems: SiteProblems, path: string, text: string): SiteOsImage[] | undefined {
  const field = 'hub.osImagesFile';
  let loaded: ReturnType<typeof loadYamlWithPositions>;
  try {
    loaded = loadYamlWithPositions(text, { source: path, exitCode: 2 });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${path} is not YAML: ${(e as Error).message.split('\n')[0]}`,
    );
    return undefined;
  }
  const v = loaded.value;
  let at: string;
  let list: unknown;
  if (Array.isArray(v)) [at, list] = ['', v];
  else if (isObject(v) && isObject(v.spec) && v.spec.osImages !== undefined)
    [at, list] = ['spec.osImages', v.spec.osImages];
  else if (isObject(v) && v.osImages !== undefined) [at, list] = ['osImages', v.osImages];
  else {
    problems.add(SiteErrorCode.Invalid, field, `${field}: ${path} holds no osImages list`, {
      hint: 'give the file airgap serve-images --asc-out wrote (spec.osImages), or a list of entries',
    });
    return undefined;
  }
  if (!Array.isArray(list) || list.length === 0) {
    problems.add(
      SiteErrorCode.Invalid,
      field,
      `${field}: ${path}: ${at || 'the document'} is not a non-empty list`,
    );
    return undefined;
  }
  const fileProblems = new Problems<SiteErrorCode>(path, loaded.positions);
  const out: SiteOsImage[] = [];
  list.forEach((item, i) => {
    const d = osImage(item, at ? `${at}[${i}]` : `[${i}]`, {
      problems: fileProblems,
      codes: SITE_DECODE_CODES,
    });
    if (d) out.push(d);
  });
  problems.list.push(...fileProblems.list);
  return out;
}

/** The mirror's CAs as one bundle: each checked by the certs reader (a CA, not expired), each certificate once. */
async function readCaBundle(
  problems: Problems<SiteErrorCode>,
  site: Site,
  warnings: string[],
): Promise<string> {
  let caBundlePem = '';
  const seen = new Set<string>();
  const caOne = !site.source.positions.has('mirror.caFiles[0]');
  for (const [i, file] of site.mirror.caFiles.entries()) {
    const field = caOne ? 'mirror.caFiles' : `mirror.caFiles[${i}]`;
    try {
      for (const ca of await readCaFile(file, new Date(), warnings)) {
        if (seen.has(ca.fingerprint256)) continue;
        seen.add(ca.fingerprint256);
        caBundlePem += ca.pem;
      }
    } catch (e) {
      if (!isAirgapError(e)) throw e;
      problems.add(SiteErrorCode.Invalid, field, `${field}: ${e.message}${e.where ? ` (${e.where})` : ''}`, {
        ...(e.hint ? { hint: e.hint } : {}),
      });
    }
  }
  return caBundlePem;
}

/** The osImages the AgentServiceConfig gets (inline or from a file), with a warning when none is for the node pool's architecture. */
async function readOsImages(
  problems: Problems<SiteErrorCode>,
  site: Site,
  warnings: string[],
): Promise<SiteOsImage[]> {
  let osImages: SiteOsImage[] = site.hub.osImages ?? [];
  if (site.hub.osImagesFile !== undefined) {
    const text = await readText(problems, 'hub.osImagesFile', site.hub.osImagesFile);
    if (text !== undefined) osImages = readOsImagesFile(problems, site.hub.osImagesFile, text) ?? [];
  }
  const cpu = CPU_ARCHITECTURE[site.cluster.nodePool.arch];
  if (
    osImages.length > 0 &&
    !osImages.some(
      (o) => (o.cpuArchitecture ?? 'x86_64') === cpu || (cpu === 'aarch64' && o.cpuArchitecture === 'arm64'),
    )
  )
    warnings.push(
      `no osImages entry is for ${cpu}, the architecture of the node pool (${site.cluster.nodePool.arch})`,
    );
  return osImages;
}

/**
 * Read and check every local file the site names. Throws one usage error listing every problem
 * (exit 2). The result holds secrets: never log it.
 */
export async function readSiteInputs(site: Site): Promise<SiteInputs> {
  const problems = new Problems<SiteErrorCode>(site.source.file, site.source.positions);
  const warnings: string[] = [];

  const pullText = await readText(problems, 'cluster.pullSecretFile', site.cluster.pullSecretFile);
  if (pullText !== undefined) checkPullSecret(problems, pullText, site);
  const sshText = await readText(problems, 'cluster.sshKeyFile', site.cluster.sshKeyFile);
  const sshPublicKey = sshText !== undefined ? checkSshKey(problems, sshText, site) : undefined;

  const caBundlePem = await readCaBundle(problems, site, warnings);

  // Mirror mappings and the objects the hub gets.
  let mirrorMappings: SiteInputs['mirrorMappings'] = [];
  let mirrorSets: ClusterResourceObject[] = [];
  let catalogSources: ClusterResourceObject[] = [];
  let releaseSignatures: ClusterResourceObject | undefined;
  if (site.mirror.clusterResources !== undefined) {
    releaseSignatures = await readSignatureConfigMap(problems, site.mirror.clusterResources);
    try {
      const read = await readClusterResourcesDir(site.mirror.clusterResources);
      mirrorMappings = read.mappings;
      warnings.push(...read.warnings);
      mirrorSets = await readClusterResourceObjects(site.mirror.clusterResources, [
        'ImageDigestMirrorSet',
        'ImageTagMirrorSet',
        'ImageContentSourcePolicy',
      ]);
      catalogSources = await readClusterResourceObjects(site.mirror.clusterResources, ['CatalogSource']);
    } catch (e) {
      if (!isAirgapError(e)) throw e;
      problems.add(
        SiteErrorCode.Invalid,
        'mirror.clusterResources',
        `mirror.clusterResources: ${e.message}${e.where ? ` (${e.where})` : ''}`,
        {
          ...(e.hint ? { hint: e.hint } : {}),
        },
      );
    }
  } else {
    for (const ics of site.mirror.imageContentSources ?? [])
      for (const mirror of ics.mirrors)
        mirrorMappings.push({ source: ics.source, mirror, digest: true, tag: false });
  }
  const imageContentSources = imageContentSourcesOf(mirrorMappings);
  for (const ics of imageContentSources) {
    if (isBareRegistry(ics.source))
      warnings.push(
        `the mirror source ${ics.source} is a whole registry; HyperShift does not pass such entries on (OCPBUGS-33951): add entries for its repositories`,
      );
  }
  const misplaced = releaseOutsideMirrors(site.cluster.release.image, imageContentSources);
  if (misplaced) warnings.push(misplaced);
  const catalogOverrides = catalogOverridesOf(catalogSources);
  if (
    site.cluster.olmCatalogPlacement === 'management' &&
    !catalogOverrides.images &&
    !catalogOverrides.registryOverrides
  )
    warnings.push(
      'olmCatalogPlacement is management but no default catalog (redhat-operator-index, …) was mirrored: the hosted cluster’s default catalogs will not pull',
    );

  const osImages = await readOsImages(problems, site, warnings);

  // BMC credentials.
  const bmcCredentials: Record<string, BmcCredentials> = {};
  for (const [i, host] of site.hosts.entries()) {
    const field = `hosts[${i}].bmc.credentialsFile`;
    const text = await readText(problems, field, host.bmc.credentialsFile);
    if (text === undefined) continue;
    const creds = readCredentials(problems, field, host.bmc.credentialsFile, text);
    if (creds) bmcCredentials[host.name] = creds;
  }

  problems.throwIfAny();
  return {
    pullSecret: pullText!,
    sshPublicKey: sshPublicKey!,
    caBundlePem,
    mirrorMappings,
    imageContentSources,
    mirrorSets,
    catalogSources,
    ...(releaseSignatures ? { releaseSignatures } : {}),
    catalogOverrides,
    osImages,
    bmcCredentials,
    warnings,
  };
}

/** A new etcd encryption key: base64 of 32 random bytes (AES-256-CBC), as hcp generates it. */
function newEtcdEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}

/** What the preflight resolves over the network (or keeps from an earlier run). */
export interface NetworkResolved {
  /** The release by digest. */
  releaseImage: string;
  releaseVersion: string;
  controlPlaneOperatorImage: string;
  /**
   * The key of an existing `<name>-etcd-encryption-key` Secret, if there is one: a new key for an
   * existing cluster would make its etcd data unreadable. Default: a new key.
   */
  etcdEncryptionKey?: string;
  /** Catalog overrides with the images resolved to digests (default: those read from the files). */
  catalogOverrides?: CatalogOverrides;
}

/** The ResolvedSite the renderers take, from the site, its files, and the network-resolved values. */
export function resolveSite(site: Site, inputs: SiteInputs, net: NetworkResolved): ResolvedSite {
  return {
    site,
    releaseImage: net.releaseImage,
    releaseVersion: net.releaseVersion,
    controlPlaneOperatorImage: net.controlPlaneOperatorImage,
    imageContentSources: inputs.imageContentSources,
    caBundlePem: inputs.caBundlePem,
    pullSecret: inputs.pullSecret,
    sshPublicKey: inputs.sshPublicKey,
    etcdEncryptionKey: net.etcdEncryptionKey ?? newEtcdEncryptionKey(),
    osImages: inputs.osImages,
    catalogOverrides: net.catalogOverrides ?? inputs.catalogOverrides,
    bmcCredentials: inputs.bmcCredentials,
    mirrorMappings: inputs.mirrorMappings,
    mirrorSets: inputs.mirrorSets,
    catalogSources: inputs.catalogSources,
    ...(inputs.releaseSignatures ? { releaseSignatures: inputs.releaseSignatures } : {}),
  };
}
