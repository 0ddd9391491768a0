/**
 * Rebuilding a filtered catalog image into the layout, as oc-mirror v2's catalog_builder.go does it
 * but done right: one new layer per image that replaces the configs directory (opaque whiteout + the
 * filtered FBC, see {@link renderFbc}) and removes the stale opm cache, root-owned and
 * world-readable, with fixed timestamps, so the same input always gives the same digest. The config
 * gets the new diff_id, a history entry, the configs label and an opm command line that builds its
 * cache when the pod starts; the manifest (or every image child of an index) points at both.
 */
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { AirgapError } from '../../util/errors.js';
import { sha256Digest, type Digest } from '../digest.js';
import type { OciLayout } from '../layout/store.js';
import { parseManifest, platformString, type Descriptor, type Platform } from '../manifest.js';
import { MediaType, isImageManifestType, isIndexType } from '../media-types.js';
import {
  CONFIGS_LABEL,
  comparePaths,
  configsDirOf,
  dirKey,
  imageName,
  isAttestation,
  readConfig,
  type ImageConfigDoc,
} from './catalog-config.js';
import { OPAQUE, WHITEOUT } from './catalog-layers.js';
import { renderFbc } from './catalog-render.js';
import type { FbcModel } from './fbc.js';
import { writeTar, type TarEntry } from './tar-writer.js';
import { MirrorError } from '../errors.js';

/** Where Red Hat's catalogs keep the opm serve cache (`--cache-dir=/tmp/cache`). */
const DEFAULT_CACHE_DIR = '/tmp/cache';
/** `created_by` of the history entry of the rebuilt layer. */
export const REBUILD_HISTORY = 'airgap: rebuild filtered catalog';

export interface RebuildOptions {
  /** Name the new top-level manifest in the layout's index.json (`repo:tag`). Without it nothing is tagged. */
  refName?: string;
  /** Source annotation for that entry. */
  source?: string;
  /** mtime of every entry of the new layer. Default: the Unix epoch (the same input, the same digest). */
  mtime?: Date;
}

export interface RebuiltImage {
  sourceDigest: string;
  digest: Digest;
  mediaType: string;
  size: number;
  platform?: Platform;
  configDigest: string;
  /** The appended layer (gzip) and its uncompressed digest (the config's new diff_id). */
  layer: Descriptor;
  diffId: string;
  /** The configs directory replaced and the opm cache directory removed. */
  configsDir: string;
  cacheDir: string;
}

export interface RebuiltCatalog {
  digest: Digest;
  mediaType: string;
  size: number;
  /** Each rebuilt image manifest (one, or one per child of the index, in index order). */
  images: RebuiltImage[];
}

/** A manifest written to the layout. */
interface WrittenManifest {
  bytes: Buffer;
  digest: Digest;
  mediaType: string;
}

/** What every image of one rebuild shares: the files, the layers built so far (by configs and cache dir). */
interface RebuildContext {
  layout: OciLayout;
  files: Map<string, Buffer>;
  layers: Map<string, BuiltLayer>;
  mtime: Date;
  /** The catalog as named in messages. */
  image: string;
}

/** The opm command line of an image: the opm binary, its `--cache-dir`, and serve flags to keep. */
function serveCommand(config: NonNullable<ImageConfigDoc['config']>): {
  entrypoint: string[];
  cacheDir?: string;
  flags: string[];
} {
  const argv = [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])];
  const at = argv.indexOf('serve');
  const entrypoint =
    at > 0 ? argv.slice(0, at) : config.Entrypoint?.length ? [...config.Entrypoint] : ['/bin/opm'];
  const flags: string[] = [];
  let cacheDir: string | undefined;
  let positional = false;
  const rest = at >= 0 ? argv.slice(at + 1) : [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a.startsWith('--cache-dir=')) cacheDir = a.slice('--cache-dir='.length);
    else if (a === '--cache-dir') cacheDir = rest[++i];
    else if (
      a === '--cache-only' ||
      a.startsWith('--cache-only=') ||
      a.startsWith('--cache-enforce-integrity')
    ) {
      // dropped: the rebuilt image builds its cache when it starts (see rebuiltConfig)
    } else if (['-p', '--port', '-t', '--termination-log', '--pprof-addr'].includes(a)) {
      flags.push(a, rest[++i] ?? '');
    } else if (!a.startsWith('-') && !positional)
      positional = true; // the old configs dir
    else flags.push(a);
  }
  return { entrypoint, ...(cacheDir ? { cacheDir } : {}), flags };
}

interface BuiltLayer {
  gz: Buffer;
  digest: Digest;
  diffId: string;
}

/**
 * The layer that swaps the catalog: `configs/` with an opaque whiteout (the old FBC and anything else
 * in the directory is gone from the lower layers), the new files, and a whiteout of the stale opm
 * cache. No entry for the cache's parent: a `tmp/` directory entry would reset /tmp's 1777 mode.
 */
function catalogLayer(
  files: Map<string, Buffer>,
  configs: string,
  cache: string | undefined,
  mtime: Date,
): BuiltLayer {
  const entries: TarEntry[] = [];
  if (cache !== undefined) {
    const slash = cache.lastIndexOf('/');
    entries.push({ path: `${cache.slice(0, slash + 1)}${WHITEOUT}${cache.slice(slash + 1)}`, type: 'File' });
  }
  entries.push({ path: `${configs}/`, type: 'Directory' }, { path: `${configs}/${OPAQUE}`, type: 'File' });
  const dirs = new Set<string>();
  for (const rel of [...files.keys()].sort(comparePaths)) {
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (!dirs.has(d)) {
        dirs.add(d);
        entries.push({ path: `${configs}/${d}/`, type: 'Directory' });
      }
    }
    entries.push({ path: `${configs}/${rel}`, type: 'File', data: files.get(rel) });
  }
  const tar = writeTar(entries, mtime);
  const gz = gzipSync(tar, { level: 9 });
  return { gz, digest: sha256Digest(gz), diffId: sha256Digest(tar) };
}

/**
 * Rebuild a filtered catalog image into `layout`: for the image (or every image child of the index,
 * keeping platforms and media types; attestations of the original are dropped, they attest other
 * bytes), append one layer that replaces the configs directory with `model` (see {@link renderFbc})
 * and removes the opm cache the original pre-built for the whole catalog. Config: the new diff_id,
 * a history entry, the configs label, and `serve <configs> --cache-dir=<dir>
 * --cache-enforce-integrity=false`. Deterministic: the same source and model give the same digest.
 */
export async function rebuildCatalogImage(
  layout: OciLayout,
  sourceDigest: string,
  model: FbcModel,
  opts: RebuildOptions = {},
): Promise<RebuiltCatalog> {
  const image = await imageName(layout, sourceDigest);
  const files = renderFbc(model);
  if (files.size === 0)
    throw new AirgapError(MirrorError.CATALOG_EMPTY, `the filtered catalog for ${image} has no content`, {
      where: image,
      hint: 'list at least one package of the catalog, or mirror it with full: true',
    });
  const ctx: RebuildContext = { layout, files, layers: new Map(), mtime: opts.mtime ?? new Date(0), image };
  const top = await layout.getManifest(sourceDigest);
  const parsed = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  const images: RebuiltImage[] = [];
  let result: WrittenManifest;
  if (parsed.kind === 'image') {
    const r = await rebuildImage(ctx, sourceDigest, parsed.mediaType);
    images.push(r.image);
    result = r.manifest;
  } else {
    const doc = JSON.parse(top.bytes.toString('utf8')) as Record<string, unknown>;
    const children: Descriptor[] = [];
    for (const d of parsed.manifests) {
      if (isAttestation(d)) continue;
      if (!isImageManifestType(d.mediaType))
        throw new AirgapError(
          MirrorError.CATALOG_UNSUPPORTED,
          `${image} has a child of media type ${d.mediaType}${isIndexType(d.mediaType) ? ' (a nested index)' : ''}`,
          { where: image, hint: 'catalog indexes list image manifests only' },
        );
      const r = await rebuildImage(ctx, d.digest, d.mediaType, d.platform);
      images.push(r.image);
      children.push({
        ...d,
        mediaType: r.manifest.mediaType,
        digest: r.manifest.digest,
        size: r.manifest.bytes.length,
      });
    }
    const bytes = Buffer.from(JSON.stringify({ ...doc, manifests: children }));
    result = { bytes, digest: await layout.putBytes(bytes), mediaType: parsed.mediaType };
  }
  if (opts.refName) await layout.setEntry(opts.refName, result, opts.source);
  return { digest: result.digest, mediaType: result.mediaType, size: result.bytes.length, images };
}

/**
 * The opm cache directory of an image (its `--cache-dir`, else {@link DEFAULT_CACHE_DIR}, resolved
 * against WorkingDir), refused when it is the image root or holds the configs directory.
 */
function cacheDirOf(
  inner: NonNullable<ImageConfigDoc['config']>,
  serveCacheDir: string | undefined,
  configsDir: string,
  what: string,
): string {
  const cacheDir = path.posix.resolve(inner.WorkingDir || '/', serveCacheDir ?? DEFAULT_CACHE_DIR);
  const cache = dirKey(cacheDir);
  const configs = dirKey(configsDir);
  if (cache === '' || cache === configs || configs.startsWith(`${cache}/`))
    throw new AirgapError(
      MirrorError.CATALOG_UNSUPPORTED,
      `${what} keeps its opm cache in ${cacheDir}, which holds the catalog itself (${configsDir})`,
      {
        where: what,
        hint: 'the cache directory must be a directory of its own, e.g. --cache-dir=/tmp/cache',
      },
    );
  return cacheDir;
}

/** The catalog layer for a configs and cache directory: built and stored once per rebuild, then reused. */
async function layerFor(ctx: RebuildContext, configs: string, cache: string): Promise<BuiltLayer> {
  // A cache inside the configs directory goes with the opaque whiteout; anything else gets its own.
  const ownWhiteout = cache.startsWith(`${configs}/`) ? undefined : cache;
  const key = `${configs}\0${ownWhiteout ?? ''}`;
  let layer = ctx.layers.get(key);
  if (!layer) {
    layer = catalogLayer(ctx.files, configs, ownWhiteout, ctx.mtime);
    ctx.layers.set(key, layer);
    await ctx.layout.putBytes(layer.gz);
  }
  return layer;
}

/** The image config of the rebuilt image: the new layer's diff_id, the opm command line, the label, history. */
function rebuiltConfig(
  config: ImageConfigDoc,
  serve: ReturnType<typeof serveCommand>,
  dirs: { configsDir: string; cacheDir: string },
  diffId: string,
  mtime: Date,
): ImageConfigDoc {
  const { configsDir, cacheDir } = dirs;
  const inner = config.config ?? {};
  const newConfig: ImageConfigDoc = {
    ...config,
    config: {
      ...inner,
      Entrypoint: serve.entrypoint,
      // opm serve with --cache-dir enforces cache integrity by default and exits when the cache is
      // missing or stale. The pre-built cache is removed by the new layer (it indexes the unfiltered catalog),
      // so integrity enforcement is turned off and opm builds the cache when the pod starts, in a
      // directory any user can write (/tmp), from files that any user can read (root-owned, 0644
      // files in 0755 directories). oc-mirror's rebuild (`serve /configs`, files written 0600 by
      // opm's WriteFS) crash-looped on exactly this: https://github.com/openshift/oc-mirror/issues/1099
      Cmd: [
        'serve',
        configsDir,
        `--cache-dir=${cacheDir}`,
        '--cache-enforce-integrity=false',
        ...serve.flags,
      ],
      Labels: { ...(inner.Labels ?? {}), [CONFIGS_LABEL]: configsDir },
    },
    rootfs: {
      ...(config.rootfs ?? {}),
      type: 'layers',
      diff_ids: [...(config.rootfs?.diff_ids ?? []), diffId],
    },
  };
  if (Array.isArray(config.history)) {
    newConfig.history = [
      ...config.history,
      {
        created: typeof config.created === 'string' ? config.created : mtime.toISOString(),
        created_by: REBUILD_HISTORY,
        comment: `replaces ${configsDir} with the filtered catalog and removes the opm cache in ${cacheDir}`,
      },
    ];
  }
  return newConfig;
}

/** Rebuild one image manifest: its catalog layer appended, its config rewritten, both written to the layout. */
async function rebuildImage(
  ctx: RebuildContext,
  digest: string,
  mediaType: string,
  platform?: Platform,
): Promise<{ image: RebuiltImage; manifest: WrittenManifest }> {
  const { layout, image } = ctx;
  const what = platform ? `${image} (${platformString(platform)})` : image;
  const src = await layout.getManifest(digest, mediaType);
  const parsed = parseManifest(src.bytes, src.mediaType, `manifest ${what}`);
  if (parsed.kind !== 'image')
    throw new AirgapError(MirrorError.CATALOG_UNSUPPORTED, `a child of ${image} is itself an index`, {
      where: image,
    });
  const doc = JSON.parse(src.bytes.toString('utf8')) as Record<string, unknown>;
  const config = await readConfig(layout, parsed.config, what);
  const inner = config.config ?? {};
  const configsDir = configsDirOf(config, what);
  const serve = serveCommand(inner);
  const cacheDir = cacheDirOf(inner, serve.cacheDir, configsDir, what);
  const layer = await layerFor(ctx, dirKey(configsDir), dirKey(cacheDir));
  const docker = parsed.mediaType === MediaType.DockerManifest;
  const layerDesc: Descriptor = {
    mediaType: docker ? MediaType.DockerLayerGzip : MediaType.OciLayerGzip,
    digest: layer.digest,
    size: layer.gz.length,
  };
  const newConfig = rebuiltConfig(config, serve, { configsDir, cacheDir }, layer.diffId, ctx.mtime);
  const configBytes = Buffer.from(JSON.stringify(newConfig));
  const configDigest = await layout.putBytes(configBytes);
  const manifestDoc = {
    ...doc,
    config: { ...parsed.config, digest: configDigest, size: configBytes.length },
    layers: [...parsed.layers, layerDesc],
  };
  const bytes = Buffer.from(JSON.stringify(manifestDoc));
  const newDigest = await layout.putBytes(bytes);
  return {
    image: {
      sourceDigest: digest,
      digest: newDigest,
      mediaType: parsed.mediaType,
      size: bytes.length,
      ...(platform ? { platform } : {}),
      configDigest,
      layer: layerDesc,
      diffId: layer.diffId,
      configsDir,
      cacheDir,
    },
    manifest: { bytes, digest: newDigest, mediaType: parsed.mediaType },
  };
}
