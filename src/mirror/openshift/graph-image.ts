/**
 * The OpenShift Update Service graph-data image (`mirror.platform.graph: true`), built without a
 * container runtime, as oc-mirror v2 builds it (internal/pkg/release/graph.go, const.go,
 * internal/pkg/imagebuilder): download the graph-data tarball the update service publishes
 * (`/api/upgrades_info/graph-data`, a tar.gz of the cincinnati-graph-data repository), put its tree
 * under `/var/lib/cincinnati-graph-data/` in one new layer on top of
 * registry.access.redhat.com/ubi9/ubi:latest, and set
 * `CMD ["/bin/bash","-c","exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data"]`
 * so the OSUS init container copies the data into its volume.
 *
 * Differences from oc-mirror, all on purpose: the layer is streamed from the tarball (never
 * extracted to disk, never held whole in memory), entries are re-rooted without a leading `/`, a
 * single top-level directory (a GitHub archive) is stripped, modes are normalised (directories
 * 0755, files 0644), and every mtime is fixed, so the same tarball always gives the same digest.
 *
 * The steps live apart: graph-data.ts finds and downloads the tarball, graph-layer.ts streams it into
 * the new layer, and this file picks the base image (one platform of an index) and writes the new
 * config and manifest on top of it.
 */
import { AirgapError } from '../../util/errors.js';
import type { OciLayout } from '../layout/store.js';
import { parseManifest, platformString, type Descriptor, type ParsedManifest } from '../manifest.js';
import { MediaType } from '../media-types.js';
import { GRAPH_DATA_DIR, assertGzip, writeGraphLayer } from './graph-layer.js';
import { MirrorError } from '../errors.js';
import type { Digest } from '../digest.js';

// The download the image is built from (graph-data.ts), also importable from here.

/** The base image oc-mirror builds the graph image on. */
export const GRAPH_BASE_IMAGE = 'registry.access.redhat.com/ubi9/ubi:latest';
/** Where oc-mirror pushes the graph image, below the destination (`<dest>/openshift/graph-image:latest`). */
export const GRAPH_IMAGE_REPO = 'openshift/graph-image';
/** The command of the image: copy the data into the OSUS graph-data volume. */
export const GRAPH_IMAGE_CMD = [
  '/bin/bash',
  '-c',
  'exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data',
] as const;

/** Options of {@link buildGraphImage}. */
export interface BuildGraphImageOptions {
  /** The platform to take from a multi-arch base; default linux/amd64. */
  platform?: { os: string; architecture: string };
  /** The mtime of every entry of the new layer and the time of its history entries; default the Unix epoch. */
  mtime?: Date;
  /** Also name the image in the layout's index.json (e.g. `openshift/graph-image:latest`). */
  refName?: string;
  /** Recorded with `refName` as where the image came from. */
  source?: string;
}

/** The built image manifest, and its config and new layer. */
export interface GraphImage {
  digest: Digest;
  mediaType: string;
  size: number;
  config: Descriptor;
  layer: Descriptor;
  /** sha256 of the uncompressed layer (the config's new diff_id). */
  diffId: string;
}

interface ImageConfig {
  config?: Record<string, unknown>;
  rootfs?: { type?: string; diff_ids?: string[] };
  history?: Record<string, unknown>[];
  [key: string]: unknown;
}

function baseError(message: string, hint?: string): AirgapError {
  return new AirgapError(MirrorError.GRAPH_IMAGE_BASE, message, {
    hint: hint ?? `mirror ${GRAPH_BASE_IMAGE} into the layout first`,
  });
}

/** The base image manifest: the digest itself, or the child for the platform when it is an index. */
async function baseManifest(
  layout: OciLayout,
  digest: string,
  platform: { os: string; architecture: string },
): Promise<{ parsed: ParsedManifest & { kind: 'image' }; doc: Record<string, unknown> }> {
  if (!(await layout.hasBlob(digest))) {
    throw baseError(`the base image ${digest} is not in the layout at ${layout.dir}`);
  }
  let m = await layout.getManifest(digest);
  let parsed = parseManifest(m.bytes, m.mediaType, `base image ${digest}`);
  if (parsed.kind === 'index') {
    const child = parsed.manifests.find(
      (d) => d.platform?.os === platform.os && d.platform?.architecture === platform.architecture,
    );
    if (!child) {
      const have = parsed.manifests.map((d) => platformString(d.platform)).join(', ') || 'none';
      throw baseError(
        `the base image ${digest} has no ${platform.os}/${platform.architecture} image (it has: ${have})`,
        'pick a base image built for that platform',
      );
    }
    if (!(await layout.hasBlob(child.digest))) {
      throw baseError(
        `the ${platform.os}/${platform.architecture} image ${child.digest} of the base ${digest} is not in the layout`,
        `mirror every platform of ${GRAPH_BASE_IMAGE} (or at least ${platform.os}/${platform.architecture}) into the layout`,
      );
    }
    m = await layout.getManifest(child.digest, child.mediaType);
    parsed = parseManifest(m.bytes, m.mediaType, `base image ${child.digest}`);
    if (parsed.kind !== 'image') throw baseError(`the base image ${child.digest} is a nested index`);
  }
  return { parsed, doc: JSON.parse(m.bytes.toString('utf8')) as Record<string, unknown> };
}

/** The config of the base image, which must be JSON and list one diff_id per layer. */
async function baseConfig(
  layout: OciLayout,
  parsed: ParsedManifest & { kind: 'image' },
): Promise<ImageConfig> {
  let cfg: ImageConfig;
  try {
    cfg = JSON.parse((await layout.readBytes(parsed.config.digest)).toString('utf8')) as ImageConfig;
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    throw baseError(
      `the config ${parsed.config.digest} of the base image is not JSON`,
      'rebuild or re-mirror the base image',
    );
  }
  const diffIds = cfg.rootfs?.diff_ids ?? [];
  if (diffIds.length !== parsed.layers.length) {
    throw baseError(
      `the base image config lists ${diffIds.length} diff_ids for ${parsed.layers.length} layers`,
      'rebuild or re-mirror the base image',
    );
  }
  return cfg;
}

/** The graph image's config: the base config plus the new layer's diff_id, oc-mirror's Cmd and their history. */
function graphConfig(cfg: ImageConfig, diffId: string, mtime: Date): ImageConfig {
  const created = mtime.toISOString().replace(/\.000Z$/, 'Z');
  return {
    ...cfg,
    config: { ...(cfg.config ?? {}), Cmd: [...GRAPH_IMAGE_CMD] },
    rootfs: { type: 'layers', diff_ids: [...(cfg.rootfs?.diff_ids ?? []), diffId] },
    history: [
      ...(cfg.history ?? []),
      {
        created,
        created_by: `airgap: COPY graph-data /${GRAPH_DATA_DIR}/`,
        comment: 'OpenShift Update Service graph data',
      },
      { created, created_by: `airgap: CMD ${JSON.stringify(GRAPH_IMAGE_CMD)}`, empty_layer: true },
    ],
  };
}

/**
 * Build the graph-data image into `layout`: the base image (`baseDigest`, already in the layout; an
 * index gives its linux/amd64 image) plus one gzip layer holding the tarball's tree under
 * `/var/lib/cincinnati-graph-data/`, with the diff_id, a history entry and oc-mirror's Cmd added to
 * the config. Media types follow the base manifest (Docker schema 2 or OCI). Nothing is extracted
 * to disk; the same tarball and base always give the same digest.
 */
export async function buildGraphImage(
  layout: OciLayout,
  baseDigest: string,
  graphDataTarGz: string,
  opts: BuildGraphImageOptions = {},
): Promise<GraphImage> {
  const platform = opts.platform ?? { os: 'linux', architecture: 'amd64' };
  const mtime = opts.mtime ?? new Date(0);
  const base = await baseManifest(layout, baseDigest, platform);
  const docker = base.parsed.mediaType === MediaType.DockerManifest;
  await assertGzip(graphDataTarGz);
  const { layer, diffId } = await writeGraphLayer(
    layout,
    graphDataTarGz,
    docker ? MediaType.DockerLayerGzip : MediaType.OciLayerGzip,
    mtime,
  );

  const cfg = await baseConfig(layout, base.parsed);
  const newConfig = graphConfig(cfg, diffId, mtime);
  const configBytes = Buffer.from(JSON.stringify(newConfig));
  const configDigest = await layout.putBytes(configBytes);
  const config: Descriptor = {
    mediaType: docker ? MediaType.DockerConfig : (base.parsed.config.mediaType ?? MediaType.OciConfig),
    digest: configDigest,
    size: configBytes.length,
  };

  const doc: Record<string, unknown> = { ...base.doc };
  delete doc.subject;
  doc.schemaVersion = 2;
  doc.mediaType = base.parsed.mediaType;
  doc.config = config;
  doc.layers = [...base.parsed.layers, layer];
  const manifest = Buffer.from(JSON.stringify(doc));
  const digest = await layout.putBytes(manifest);
  const mediaType = base.parsed.mediaType;
  if (opts.refName) await layout.setEntry(opts.refName, { bytes: manifest, digest, mediaType }, opts.source);
  return { digest, mediaType, size: manifest.length, config, layer, diffId };
}
