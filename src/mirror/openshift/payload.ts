import { Parser, type ReadEntry } from 'tar';
import { isYamlLimitError, parseYaml } from '../../config/yaml-load.js';
import { AirgapError, hasCode, messageOf } from '../../util/errors.js';
import type { Digest } from '../digest.js';
import { registryLayer } from '../layer-stream.js';
import { openTar } from '../tar-read.js';
import { parseManifest, platformString, type Descriptor, type ParsedManifest } from '../manifest.js';
import { MediaType } from '../media-types.js';
import { parseReference } from '../reference.js';
import type { RegistryClient } from '../registry/client.js';
import { MirrorError } from '../errors.js';

/**
 * Reading an OpenShift release payload from a registry: the release image's `release-manifests/`
 * holds `image-references` (an ImageStream naming every component by digest), `release-metadata`
 * (Cincinnati metadata) and the `coreos-bootimages` ConfigMap (the CoreOS stream JSON). Layers are
 * streamed, decompressed and tar-parsed in memory; nothing touches the disk.
 */

/** Where the files live inside the release image. */
const IMAGE_REFERENCES = 'release-manifests/image-references';
const RELEASE_METADATA = 'release-manifests/release-metadata';
const COREOS_BOOTIMAGES = 'release-manifests/0000_50_installer_coreos-bootimages.yaml';
const MANIFEST_DIR = 'release-manifests/';
const LAYER_TYPES = new Set<string>([
  MediaType.OciLayer,
  MediaType.OciLayerGzip,
  MediaType.DockerLayerGzip,
  'application/vnd.docker.image.rootfs.diff.tar',
]);
/** No release manifest is anywhere near this; a bigger one is not a release payload. */
const MAX_FILE = 32 * 1024 * 1024;

/** One `spec.tags[]` entry of image-references. */
export interface ImageStreamTag {
  name: string;
  annotations?: Record<string, string>;
  from: { kind: string; name: string };
  generation?: number | null;
  importPolicy?: Record<string, unknown>;
  referencePolicy?: { type: string };
}

/** `release-manifests/image-references`: an ImageStream whose tags are the release components. */
export interface ImageReferences {
  kind: 'ImageStream';
  apiVersion: 'image.openshift.io/v1';
  metadata: { name: string; creationTimestamp?: string | null; annotations?: Record<string, string> };
  spec: { lookupPolicy?: { local: boolean }; tags: ImageStreamTag[] };
  status?: Record<string, unknown>;
}

/** `release-manifests/release-metadata` (`cincinnati-metadata-v0`). */
export interface ReleaseMetadata {
  kind: string;
  version: string;
  previous?: string[];
  next?: string[];
  metadata?: Record<string, string>;
}

/** CoreOS stream metadata (coreos/stream-metadata-go `Stream`), kept loose: consumers pick what they need. */
export interface CoreosStream {
  stream: string;
  metadata?: Record<string, string>;
  architectures: Record<string, unknown>;
}

export interface BootImages {
  /** The parsed `data.stream` JSON (the default stream: rhel-9 on releases that ship several). */
  streamJson: CoreosStream;
  /** The parsed `data.streams` map (name → stream) on releases that carry it. */
  streams?: Record<string, CoreosStream>;
  /** The whole ConfigMap as parsed YAML. */
  configMap: Record<string, unknown>;
}

export interface ReleasePayload {
  /** Digest of the manifest `ref` resolved to (the index for a multi-arch payload). */
  digest: Digest;
  /** Digest of the single-architecture image whose layers were read. */
  imageDigest: string;
  metadata: ReleaseMetadata;
  imageReferences: ImageReferences;
  /** Absent on releases that predate the ConfigMap (before 4.8). */
  bootImages?: BootImages;
  /**
   * Files under `release-manifests/` seen while reading. Reading stops as soon as the three files
   * are found, so this list is complete only for the layers read to their end.
   */
  manifestFiles: string[];
}

/** A release component: the image-references tag name and its digest reference. */
export interface Component {
  name: string;
  image: string;
}

/** The architecture names OpenShift and CoreOS use, mapped to OCI platform names. */
const ARCH_ALIASES: Record<string, string> = { x86_64: 'amd64', aarch64: 'arm64' };

function invalid(message: string, where: string, hint?: string): AirgapError {
  return new AirgapError(MirrorError.PAYLOAD_INVALID, message, { where, ...(hint ? { hint } : {}) });
}

/**
 * The components of a release: every `spec.tags[]` with its `from.name`. Release payloads pin
 * components by digest (`oc adm release mirror` refuses anything else), so a tag reference, a
 * non-DockerImage source or a malformed reference is PAYLOAD_INVALID.
 */
export function componentsOf(refs: ImageReferences, where = 'image-references'): Component[] {
  if (refs?.kind !== 'ImageStream' || refs.apiVersion !== 'image.openshift.io/v1')
    throw invalid(
      `image-references is not an image.openshift.io/v1 ImageStream (kind ${String(refs?.kind)}, apiVersion ${String(refs?.apiVersion)})`,
      where,
    );
  if (!Array.isArray(refs.spec?.tags)) throw invalid('image-references has no spec.tags', where);
  return refs.spec.tags.map((t, i) => {
    const at = `${where} spec.tags[${i}]${t?.name ? ` (${t.name})` : ''}`;
    if (!t?.name || typeof t.from?.name !== 'string') throw invalid('a tag lacks name or from.name', at);
    if (t.from.kind !== 'DockerImage') throw invalid(`from.kind is ${t.from.kind}, not DockerImage`, at);
    let digest: string | undefined;
    try {
      digest = parseReference(t.from.name).digest;
    } catch (e) {
      throw invalid(`from.name is not an image reference: ${messageOf(e)}`, at);
    }
    if (!digest?.startsWith('sha256:'))
      throw invalid(
        `component ${t.name} points at ${t.from.name}, not a @sha256: digest reference`,
        at,
        'release payloads reference every component by digest; this image-references was not produced by a release build',
      );
    return { name: t.name, image: t.from.name };
  });
}

/** `release-manifests/x`, whatever the tar writer's prefix (`./`, `/`). */
function normalise(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '');
}

type Found = Map<string, Buffer>;

/** What a layer's whiteouts hide from the layers below it. */
interface Hidden {
  files: Set<string>;
  dirs: Set<string>;
}

function isHidden(path: string, hidden: Hidden): boolean {
  if (hidden.files.has(path)) return true;
  for (const d of hidden.dirs) if (path.startsWith(d)) return true;
  return false;
}

/**
 * Scan one layer for the wanted files, feeding the tar parser from the (decompressed) blob stream.
 * Stops as soon as every wanted file is known. A layer read to its end is digest-verified; a layer
 * abandoned early is not (its bytes were only parsed, never stored or passed on).
 */
async function scanLayer(
  client: RegistryClient,
  repo: string,
  layer: Descriptor,
  wanted: readonly string[],
  found: Found,
  hidden: Hidden,
  seen: Set<string>,
): Promise<void> {
  const what = `layer ${client.registry}/${repo}@${layer.digest}`;
  if (!LAYER_TYPES.has(layer.mediaType))
    throw new AirgapError(MirrorError.PAYLOAD_UNSUPPORTED, `${what} has media type ${layer.mediaType}`, {
      hint: 'release payloads use gzip or uncompressed tar layers',
    });
  const layerHidden: Hidden = { files: new Set(), dirs: new Set() };
  let parseError: unknown;
  const parser = new Parser({ strict: true });
  parser.on('error', (e: unknown) => (parseError ??= e));
  parser.on('entry', (entry: ReadEntry) => {
    const path = normalise(entry.path);
    const base = path.slice(path.lastIndexOf('/') + 1);
    const dir = path.slice(0, path.lastIndexOf('/') + 1);
    if (base === '.wh..wh..opq') layerHidden.dirs.add(dir);
    else if (base.startsWith('.wh.')) {
      layerHidden.files.add(dir + base.slice(4));
      layerHidden.dirs.add(`${dir}${base.slice(4)}/`);
    } else if (path.startsWith(MANIFEST_DIR) && path !== MANIFEST_DIR) seen.add(path);
    const take =
      wanted.includes(path) &&
      !found.has(path) &&
      !isHidden(path, hidden) &&
      (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile');
    if (take && entry.size > MAX_FILE)
      parseError ??= invalid(`${path} is ${entry.size} bytes, too large for a release manifest`, what);
    if (!take || entry.size > MAX_FILE) return void entry.resume();
    const parts: Buffer[] = [];
    entry.on('data', (c: Buffer) => parts.push(c));
    entry.on('end', () => found.set(path, Buffer.concat(parts)));
  });

  const blob = await registryLayer(client, repo, layer);
  const opened = await openTar(blob.bytes, {
    kind: 'layer',
    what,
    zstd: () =>
      new AirgapError(
        MirrorError.PAYLOAD_UNSUPPORTED,
        `${what} is zstd-compressed, which cannot be read yet`,
      ),
  });
  let stoppedEarly = false;
  try {
    for await (const chunk of opened.tar) {
      parser.write(chunk);
      if (parseError !== undefined || wanted.every((w) => found.has(w))) {
        // Early stop: leaving the loop destroys the streams down to the HTTP body. The rest of this
        // layer is neither read nor digest-verified; none of it is stored or passed on, and the files
        // taken from it are validated as documents by the caller.
        stoppedEarly = true;
        break;
      }
    }
    if (!stoppedEarly) {
      await new Promise<void>((resolve) => parser.end(resolve));
      await opened.rest(); // past the tar's end: read for the digest, not inflated nor parsed
    }
  } catch (e) {
    if (hasCode(e, MirrorError.MIRROR_INFLATE_LIMIT, MirrorError.MIRROR_SIZE_MISMATCH)) throw e;
    throw invalid(`${what} could not be read as a ${opened.gzip ? 'gzip ' : ''}tar: ${messageOf(e)}`, what);
  } finally {
    opened.destroy();
  }
  if (parseError instanceof AirgapError) throw parseError;
  if (parseError) throw invalid(`${what} is not a valid tar: ${messageOf(parseError)}`, what);
  if (!stoppedEarly) blob.verify(what);
  for (const f of layerHidden.files) hidden.files.add(f);
  for (const d of layerHidden.dirs) hidden.dirs.add(d);
}

function parseJson<T>(bytes: Buffer, file: string, image: string): T {
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch (e) {
    throw invalid(`${file} in ${image} is not JSON: ${messageOf(e)}`, image);
  }
}

function parseStream(text: unknown, key: string, image: string): CoreosStream {
  if (typeof text !== 'string')
    throw invalid(`${COREOS_BOOTIMAGES} in ${image} has no data.${key} string`, image);
  const s = parseJson<CoreosStream>(Buffer.from(text), `${COREOS_BOOTIMAGES} data.${key}`, image);
  if (typeof s?.stream !== 'string' || typeof s.architectures !== 'object' || s.architectures === null)
    throw invalid(`${COREOS_BOOTIMAGES} data.${key} in ${image} is not CoreOS stream metadata`, image);
  return s;
}

/** Parse the coreos-bootimages ConfigMap YAML: `data.stream` (and `data.streams` when present). */
export function parseBootImages(bytes: Buffer, image = COREOS_BOOTIMAGES): BootImages {
  let doc: Record<string, unknown>;
  try {
    doc = parseYaml(bytes.toString('utf8'), { source: `${COREOS_BOOTIMAGES} in ${image}` }) as Record<
      string,
      unknown
    >;
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw invalid(`${COREOS_BOOTIMAGES} in ${image} is not YAML: ${messageOf(e)}`, image);
  }
  if (doc?.kind !== 'ConfigMap') throw invalid(`${COREOS_BOOTIMAGES} in ${image} is not a ConfigMap`, image);
  const data = (doc.data ?? {}) as Record<string, unknown>;
  const out: BootImages = { streamJson: parseStream(data.stream, 'stream', image), configMap: doc };
  if (typeof data.streams === 'string') {
    const map = parseJson<Record<string, unknown>>(
      Buffer.from(data.streams),
      `${COREOS_BOOTIMAGES} data.streams`,
      image,
    );
    out.streams = Object.fromEntries(
      Object.entries(map).map(([k, v]) => [k, parseStream(JSON.stringify(v), `streams.${k}`, image)]),
    );
  }
  return out;
}

/** Resolve `ref` to a single-architecture image manifest, following an index to `arch`. */
async function resolveImage(
  client: RegistryClient,
  repo: string,
  ref: string,
  arch: string,
  image: string,
): Promise<{ digest: Digest; imageDigest: Digest; manifest: ParsedManifest & { kind: 'image' } }> {
  const top = await client.getManifest(repo, ref);
  let parsed = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  let imageDigest = top.digest;
  if (parsed.kind === 'index') {
    const want = ARCH_ALIASES[arch] ?? arch;
    const child = parsed.manifests.find(
      (d) => d.platform?.architecture === want && (d.platform.os ?? 'linux') === 'linux',
    );
    if (!child) {
      const have = parsed.manifests.map((d) => platformString(d.platform)).join(', ') || 'none';
      throw new AirgapError(
        MirrorError.PAYLOAD_ARCH_MISSING,
        `${image} has no linux/${want} image (it has ${have})`,
        {
          hint: 'ask for one of the architectures the release was built for',
        },
      );
    }
    const m = await client.getManifest(repo, child.digest);
    parsed = parseManifest(m.bytes, m.mediaType, `manifest ${image} (${want})`);
    if (parsed.kind !== 'image') throw invalid(`the ${want} child of ${image} is itself an index`, image);
    imageDigest = m.digest;
  }
  return { digest: top.digest, imageDigest, manifest: parsed };
}

/**
 * Read a release payload image: its digest, `release-metadata`, `image-references` and the CoreOS
 * boot image stream. An index is followed to `opts.arch` (default amd64; `x86_64`/`aarch64` are
 * understood). Layers are read from the last one down, as a container runtime would overlay them
 * (the last layer wins and honours whiteouts), and reading stops once all three files are found:
 * on real payloads that is within the last layer. A layer read to its end is digest-verified.
 *
 * Throws PAYLOAD_INVALID when a required file is missing or malformed (naming the file and the
 * image), or when the image has no `release-manifests/` at all (not a release image).
 */
export async function readReleasePayload(
  client: RegistryClient,
  repo: string,
  ref: string,
  opts: { arch?: string } = {},
): Promise<ReleasePayload> {
  const image = `${client.registry}/${repo}${ref.startsWith('sha256:') ? '@' : ':'}${ref}`;
  const { digest, imageDigest, manifest } = await resolveImage(
    client,
    repo,
    ref,
    opts.arch ?? 'amd64',
    image,
  );
  const wanted = [IMAGE_REFERENCES, RELEASE_METADATA, COREOS_BOOTIMAGES];
  const found: Found = new Map();
  const hidden: Hidden = { files: new Set(), dirs: new Set() };
  const seen = new Set<string>();
  for (const layer of [...manifest.layers].reverse()) {
    if (layer.urls?.length) continue; // a foreign layer is not in the registry; release content never is one
    await scanLayer(client, repo, layer, wanted, found, hidden, seen);
    if (wanted.every((w) => found.has(w))) break;
  }
  for (const file of [IMAGE_REFERENCES, RELEASE_METADATA]) {
    if (found.has(file)) continue;
    throw seen.size === 0
      ? invalid(
          `${image} is not an OpenShift release image: it has no ${file} (no release-manifests/ at all)`,
          image,
          'give the release payload image, e.g. quay.io/openshift-release-dev/ocp-release:<version>-x86_64',
        )
      : invalid(
          `${image} has release-manifests/ but no ${file}`,
          image,
          'the release image is incomplete or was built by something other than `oc adm release new`',
        );
  }
  const imageReferences = parseJson<ImageReferences>(found.get(IMAGE_REFERENCES)!, IMAGE_REFERENCES, image);
  componentsOf(imageReferences, `${IMAGE_REFERENCES} in ${image}`);
  const metadata = parseJson<ReleaseMetadata>(found.get(RELEASE_METADATA)!, RELEASE_METADATA, image);
  if (typeof metadata?.version !== 'string')
    throw invalid(`${RELEASE_METADATA} in ${image} has no version`, image);
  const boot = found.get(COREOS_BOOTIMAGES);
  return {
    digest,
    imageDigest,
    metadata,
    imageReferences,
    ...(boot ? { bootImages: parseBootImages(boot, image) } : {}),
    manifestFiles: [...seen].sort(),
  };
}
