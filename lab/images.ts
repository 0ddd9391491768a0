import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import type { Descriptor, ManifestData } from '../src/mirror/manifest.js';
import { MediaType } from '../src/mirror/media-types.js';
import type { OciLayout } from '../src/mirror/layout/store.js';
import { sha256Digest, type Digest } from '../src/mirror/digest.js';

/**
 * Synthetic container images for tests, benchmarks and the demo: layers are real tar archives of
 * random bytes (gzipped for Docker images), configs carry matching diff_ids, and images come as OCI or Docker schema 2,
 * single-architecture or multi-arch indexes. Layers with the same `id` are byte-identical, so
 * shared base layers behave as they do in a release payload.
 */
export interface LayerSpec {
  /** Same id → same bytes (a shared base layer). Omit for a unique layer. */
  id?: string;
  size: number;
}

export interface ImageSpec {
  /** Repository path inside the layout/registry (`openshift/release`). */
  repo: string;
  /** Tag; without one the image is referenced by digest only. */
  tag?: string;
  format?: 'oci' | 'docker';
  layers: LayerSpec[];
  /** Build a multi-arch index with one image per architecture (each with its own unique layers). */
  arches?: string[];
}

export interface BuiltImage {
  repo: string;
  tag?: string;
  digest: Digest;
  mediaType: string;
  /** Children of an index, by architecture. */
  children?: Record<string, string>;
  /** Distinct blob bytes this image references (configs and layers). */
  bytes: number;
}

const sharedLayers = new Map<string, BuiltLayer>();

/**
 * The bytes of a tar archive holding one file of random bytes, `size` bytes in all (header, payload,
 * padding and end blocks), yielded in chunks so that even a 2 GiB layer is never held in memory.
 */
export function* randomTarChunks(
  size: number,
  name = 'data.bin',
  chunk = 4 * 1024 * 1024,
): Generator<Buffer> {
  const payload = Math.max(0, size - 1536);
  const header = Buffer.alloc(512);
  new Header({
    path: name,
    mode: 0o644,
    size: payload,
    mtime: new Date(0),
    type: 'File',
    uid: 0,
    gid: 0,
  }).encode(header, 0);
  yield header;
  for (let left = payload; left > 0; left -= chunk) yield randomBytes(Math.min(chunk, left));
  yield Buffer.alloc(((512 - (payload % 512)) % 512) + 1024);
}

/** A whole random tar layer in memory (for the small layers of tests and the demo). */
export function randomTarLayer(size: number, name = 'data.bin'): Buffer {
  return Buffer.concat([...randomTarChunks(size, name)]);
}

interface BuiltLayer {
  /** The blob as stored: a plain tar, or gzip of it for Docker images. */
  bytes: Buffer;
  digest: Digest;
  /** Digest of the uncompressed tar (the config's diff_id). */
  diffId: string;
}

/**
 * A layer blob. Docker schema 2 has only a gzip layer type, so Docker images get gzip (level 1)
 * of the tar; OCI images get the plain tar with the uncompressed layer type. Shared layers are
 * built once per id, size and compression.
 */
function layerFor(spec: LayerSpec, salt: string, gzip: boolean): BuiltLayer {
  const make = (name: string): BuiltLayer => {
    const tar = randomTarLayer(spec.size, name);
    const bytes = gzip ? gzipSync(tar, { level: 1 }) : tar;
    return { bytes, digest: sha256Digest(bytes), diffId: gzip ? sha256Digest(tar) : sha256Digest(bytes) };
  };
  if (!spec.id) return make(`${salt}.bin`);
  const key = `${spec.id}:${spec.size}:${gzip ? 'gz' : 'tar'}`;
  let l = sharedLayers.get(key);
  if (!l) {
    l = make(`${spec.id}.bin`);
    sharedLayers.set(key, l);
  }
  return l;
}

/**
 * Store an image config and its manifest (Docker schema 2 or OCI, by `docker`) in the layout;
 * the layers must be there already. The one place lab builders write image manifests.
 */
export async function putImageManifest(
  layout: OciLayout,
  config: Buffer,
  layers: Descriptor[],
  docker: boolean,
): Promise<ManifestData> {
  const mediaType = docker ? MediaType.DockerManifest : MediaType.OciManifest;
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: {
        mediaType: docker ? MediaType.DockerConfig : MediaType.OciConfig,
        digest: await layout.putBytes(config),
        size: config.length,
      },
      layers,
    }),
  );
  return { bytes, digest: await layout.putBytes(bytes), mediaType };
}

async function buildSingle(
  layout: OciLayout,
  spec: ImageSpec,
  arch: string,
): Promise<{ m: ManifestData; bytes: number }> {
  const docker = spec.format === 'docker';
  const layerType = docker ? MediaType.DockerLayerGzip : MediaType.OciLayer;
  const layers: Descriptor[] = [];
  const diffIds: string[] = [];
  let bytes = 0;
  for (const [i, l] of spec.layers.entries()) {
    const built = layerFor(l, `${spec.repo}-${arch}-${i}`, docker);
    diffIds.push(built.diffId);
    if (!(await layout.hasBlob(built.digest, built.bytes.length))) await layout.putBytes(built.bytes);
    layers.push({ mediaType: layerType, digest: built.digest, size: built.bytes.length });
    bytes += built.bytes.length;
  }
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: '2026-01-01T00:00:00Z',
      config: {
        Labels: { 'io.airgap.synthetic': spec.repo, 'io.airgap.nonce': randomBytes(8).toString('hex') },
      },
      rootfs: { type: 'layers', diff_ids: diffIds },
    }),
  );
  bytes += config.length;
  return { m: await putImageManifest(layout, config, layers, docker), bytes };
}

/** Build images into an OCI layout; each becomes an index.json entry named `repo:tag` or `repo@digest`. */
export async function buildImages(layout: OciLayout, specs: ImageSpec[]): Promise<BuiltImage[]> {
  const out: BuiltImage[] = [];
  const entries: Parameters<OciLayout['setEntries']>[0] = [];
  for (const spec of specs) {
    let top: ManifestData;
    let children: Record<string, string> | undefined;
    let bytes = 0;
    if (spec.arches && spec.arches.length > 0) {
      const docker = spec.format === 'docker';
      const manifests: Descriptor[] = [];
      children = {};
      for (const arch of spec.arches) {
        const c = await buildSingle(layout, spec, arch);
        bytes += c.bytes;
        children[arch] = c.m.digest;
        manifests.push({
          mediaType: c.m.mediaType,
          digest: c.m.digest,
          size: c.m.bytes.length,
          platform: { architecture: arch, os: 'linux' },
        });
      }
      const mediaType = docker ? MediaType.DockerManifestList : MediaType.OciIndex;
      const bytesIdx = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType, manifests }));
      top = { bytes: bytesIdx, digest: await layout.putBytes(bytesIdx), mediaType };
    } else {
      const c = await buildSingle(layout, spec, 'amd64');
      top = c.m;
      bytes = c.bytes;
    }
    entries.push({ refName: spec.tag ? `${spec.repo}:${spec.tag}` : `${spec.repo}@${top.digest}`, m: top });
    out.push({
      repo: spec.repo,
      ...(spec.tag ? { tag: spec.tag } : {}),
      digest: top.digest,
      mediaType: top.mediaType,
      ...(children ? { children } : {}),
      bytes,
    });
  }
  // One index.json write for the lot: thousands of images are built for the plan benchmark.
  await layout.setEntries(entries);
  return out;
}

export interface ReleaseShapeOptions {
  /** Images referenced by digest only in one repository (release components). */
  byDigest: number;
  /** Tagged images, each in its own repository. */
  tagged: number;
  /** Sizes of the base layers every image shares. */
  shared: number[];
  /** Unique layers per image and their size range. */
  unique: number;
  uniqueMin: number;
  uniqueMax: number;
  repo?: string;
}

/** A set shaped like a release payload: many digest-only images in one repository plus tagged ones, sharing base layers. */
export function releaseShapedSpecs(o: ReleaseShapeOptions): ImageSpec[] {
  const specs: ImageSpec[] = [];
  const base = o.shared.map((size, i) => ({ id: `base${i}`, size }));
  const unique = () =>
    Array.from({ length: o.unique }, () => ({
      size: o.uniqueMin + Math.floor(Math.random() * (o.uniqueMax - o.uniqueMin + 1)),
    }));
  for (let i = 0; i < o.byDigest; i++)
    specs.push({ repo: o.repo ?? 'ocp/release', layers: [...base, ...unique()] });
  for (let i = 0; i < o.tagged; i++) {
    specs.push({
      repo: `ocp/tagged-${i}`,
      tag: `v1.${i}`,
      format: i % 2 ? 'docker' : 'oci',
      layers: [...base, ...unique()],
    });
  }
  return specs;
}
