/**
 * Operator catalog images without a container runtime. Reading: the file-based catalog under the
 * image's configs directory (label `operators.operatorframework.io.index.configs.v1`, `/configs` by
 * default) is streamed out of the layers of an image already in an OCI layout, top layer first with
 * overlay semantics (the upper layer wins, `.wh.<name>` and `.wh..wh..opq` whiteouts hide lower
 * content), and parsed object by object; nothing is extracted to disk and no layer is held in memory.
 * Rebuilding: oc-mirror v2's catalog_builder.go done right: one new layer per image that replaces the
 * configs directory (opaque whiteout + the filtered FBC) and removes the stale opm cache, root-owned
 * and world-readable, with fixed timestamps, so the same input always gives the same digest.
 */
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import { AirgapError, messageOf } from '../../util/errors.js';
import { DigestVerifier, sha256Digest } from '../digest.js';
import type { OciLayout } from '../layout/store.js';
import { parseManifest, platformString, type Descriptor, type Platform } from '../manifest.js';
import { MediaType, isImageManifestType, isIndexType } from '../media-types.js';
import { openLayerTar } from '../layer-stream.js';
import { FbcModelBuilder, ignoreMatcher, parseFbcStream, type FbcBlob, type FbcModel } from './fbc.js';

/** The label naming the FBC root of a catalog image. */
export const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
/** The label of SQLite catalogs (before 4.11), named in the error when no FBC is found. */
export const DATABASE_LABEL = 'operators.operatorframework.io.index.database.v1';
export const DEFAULT_CONFIGS_DIR = '/configs';
/** Where Red Hat's catalogs keep the opm serve cache (`--cache-dir=/tmp/cache`). */
export const DEFAULT_CACHE_DIR = '/tmp/cache';
/** `created_by` of the history entry of the rebuilt layer. */
export const REBUILD_HISTORY = 'airgap: rebuild filtered catalog';

const LAYER_TYPES = new Set<string>([
  MediaType.OciLayer,
  MediaType.OciLayerGzip,
  MediaType.DockerLayerGzip,
  'application/vnd.docker.image.rootfs.diff.tar',
]);
const OPAQUE = '.wh..wh..opq';
const WHITEOUT = '.wh.';
const INDEX_IGNORE = '.indexignore';
/** A `.indexignore` is a few lines; anything bigger is not one. */
const MAX_IGNORE_FILE = 1024 * 1024;
const ARCH_ALIASES: Record<string, string> = { x86_64: 'amd64', aarch64: 'arm64' };

/** One image manifest of a catalog: the image itself, or one child of its index. */
export interface CatalogManifest {
  digest: string;
  mediaType: string;
  size: number;
  platform?: Platform;
}

export interface CatalogImage {
  /** The manifest that was asked for (the index of a multi-arch catalog). */
  digest: string;
  mediaType: string;
  /** The image whose layers were read (the chosen child of an index). */
  imageDigest: string;
  /** The FBC root as the label names it (`/configs`). */
  configsDir: string;
  model: FbcModel;
  /** FBC files read, relative to the configs directory, in the order they were parsed. */
  files: string[];
  /** Every image manifest of the catalog (children of an index keep their platform). */
  manifests: CatalogManifest[];
}

/** The parts of an image config this module reads or writes; everything else passes through. */
interface ImageConfigDoc {
  created?: string;
  config?: {
    Labels?: Record<string, string> | null;
    Cmd?: string[] | null;
    Entrypoint?: string[] | null;
    WorkingDir?: string;
    [k: string]: unknown;
  } | null;
  rootfs?: { type?: string; diff_ids?: string[] };
  history?: Record<string, unknown>[];
  [k: string]: unknown;
}

/** `/configs/` → `configs`; `/` → `` (the image root). */
function dirKey(dir: string): string {
  return path.posix.normalize(`/${dir}`).replace(/^\/+|\/+$/g, '');
}

/** A tar entry path without the writer's prefix (`./`, `/`) and without a trailing slash. */
function normalise(p: string): string {
  return p.replace(/^(\.\/|\/)+/, '').replace(/\/+$/, '');
}

/** Compare paths segment by segment, as a sorted directory walk visits them. */
function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

/** What upper layers hide from the layers below them. Directories are kept with a trailing slash. */
interface Overlay {
  files: Set<string>;
  dirs: Set<string>;
}

function isHidden(o: Overlay, p: string): boolean {
  if (o.files.has(p) || o.dirs.has('')) return true;
  for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) {
    if (o.dirs.has(p.slice(0, i + 1))) return true;
  }
  return o.dirs.has(`${p}/`);
}

/** One file found under the configs directory. */
interface FoundFile {
  rel: string;
  kind: 'json' | 'yaml' | 'ignore';
  blobs: FbcBlob[];
  text?: string;
  /** A parse error, raised only if the file is not ignored by a `.indexignore`. */
  error?: unknown;
  /** A hard link: the content is that of another file of the same layer. */
  alias?: FoundFile;
}

interface ScanState {
  configs: string;
  /** `configs/` (the prefix of every path under the FBC root). */
  prefix: string;
  /** Paths as the FBC parser names them (`/configs/pkg/catalog.json`). */
  label: string;
  overlay: Overlay;
  files: Map<string, FoundFile>;
  /** Symbolic links at or under the configs directory (path → target), which are not followed. */
  symlinks: Map<string, string>;
}

/** Does a path matter for what ends up under the configs directory (it, below it, or an ancestor)? */
function relevant(s: ScanState, p: string): boolean {
  return p === '' || p === s.configs || p.startsWith(s.prefix) || s.configs.startsWith(`${p}/`);
}

function imageError(message: string, where: string, cause?: unknown): AirgapError {
  return new AirgapError('CATALOG_IMAGE_INVALID', message, {
    where,
    cause,
    hint: 'the layout holds a damaged catalog image; copy it again',
  });
}

/** The blob of a layer from the layout, digest-verified as it streams; ENOENT becomes LAYOUT_BLOB_MISSING. */
async function* layerBytes(layout: OciLayout, layer: Descriptor, what: string): AsyncGenerator<Buffer> {
  const verifier = new DigestVerifier(layer.digest, layer.size);
  try {
    for await (const c of layout.openBlob(layer.digest)) {
      verifier.update(c);
      yield c;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new AirgapError('LAYOUT_BLOB_MISSING', `${what} is missing from the layout at ${layout.dir}`, {
        hint: 'the archive or layout is incomplete; run `airgap mirror verify` on it',
      });
    throw e;
  }
  verifier.verify(what);
}

/**
 * Stream one layer through the tar parser, keeping what lies under the configs directory and is not
 * hidden by an upper layer. JSON/YAML files are parsed as their bytes arrive (the parser waits for
 * the consumer: backpressure reaches the file stream, so neither a layer nor a file is buffered
 * whole). Whiteouts and files of this layer hide lower layers only, so they are merged afterwards.
 */
async function scanLayer(layout: OciLayout, layer: Descriptor, s: ScanState, image: string): Promise<void> {
  const what = `layer ${layer.digest} of ${image}`;
  if (!LAYER_TYPES.has(layer.mediaType))
    throw new AirgapError('CATALOG_UNSUPPORTED', `${what} has media type ${layer.mediaType}`, {
      where: image,
      hint: 'catalog images use gzip or uncompressed tar layers',
    });
  const hides: Overlay = { files: new Set(), dirs: new Set() };
  const found = new Map<string, FoundFile>();
  const pending: Promise<void>[] = [];
  let parseError: unknown;
  const parser = new Parser({ strict: true });
  parser.on('error', (e: unknown) => (parseError ??= e));
  parser.on('entry', (entry: ReadEntry) => {
    const p = normalise(entry.path);
    const slash = p.lastIndexOf('/');
    const dir = p.slice(0, slash + 1);
    const base = p.slice(slash + 1);
    if (base === OPAQUE) {
      if (relevant(s, dir.replace(/\/$/, ''))) hides.dirs.add(dir);
      return void entry.resume();
    }
    if (base.startsWith(WHITEOUT)) {
      const target = dir + base.slice(WHITEOUT.length);
      if (relevant(s, target)) {
        hides.files.add(target);
        hides.dirs.add(`${target}/`);
      }
      return void entry.resume();
    }
    if (p === '' || isHidden(s.overlay, p) || entry.type === 'Directory' || !relevant(s, p))
      return void entry.resume();
    // Any other entry replaces the same path (and a directory there) in lower layers.
    hides.files.add(p);
    hides.dirs.add(`${p}/`);
    if (entry.type === 'SymbolicLink') {
      s.symlinks.set(p, entry.linkpath ?? '');
      return void entry.resume();
    }
    if (!p.startsWith(s.prefix)) return void entry.resume();
    const rel = p.slice(s.prefix.length);
    if (entry.type === 'Link') {
      // A hard link to a file earlier in this layer: the same content under another name.
      const to = normalise(entry.linkpath ?? '');
      const target = to.startsWith(s.prefix) ? found.get(to.slice(s.prefix.length)) : undefined;
      if (target && target.kind !== 'ignore' && /\.(json|ya?ml)$/.test(base))
        found.set(rel, { rel, kind: target.kind, blobs: [], alias: target });
      return void entry.resume();
    }
    if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile')
      return void entry.resume();
    if (base === INDEX_IGNORE) {
      if (entry.size > MAX_IGNORE_FILE) return void entry.resume();
      const rec: FoundFile = { rel, kind: 'ignore', blobs: [], text: '' };
      found.set(rel, rec);
      entry.on('data', (c: Buffer) => (rec.text += c.toString('utf8')));
      return;
    }
    if (!/\.(json|ya?ml)$/.test(base)) return void entry.resume();
    const kind = base.endsWith('.json') ? 'json' : 'yaml';
    const rec: FoundFile = { rel, kind, blobs: [] };
    found.set(rel, rec);
    pending.push(
      (async () => {
        try {
          for await (const blob of parseFbcStream(entry as AsyncIterable<Buffer>, kind, `${s.label}/${rel}`))
            rec.blobs.push(blob);
        } catch (e) {
          rec.error = e;
          rec.blobs = [];
          entry.resume(); // drain the rest so the tar parser moves on
        }
      })(),
    );
  });

  const opened = await openLayerTar(
    layerBytes(layout, layer, what),
    () =>
      new AirgapError('CATALOG_UNSUPPORTED', `${what} is zstd-compressed, which cannot be read yet`, {
        where: image,
        hint: 'mirror a gzip variant of the catalog image',
      }),
  );
  if (opened.empty) return; // an empty blob adds nothing
  const { tar: tarStream, gzip, done: piping } = opened;
  // Wait for one of the parser's events, or for its first error (after which it emits nothing).
  const settle = (event: 'drain' | 'finish', start: () => void) =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off(event, done).off('error', done);
        resolve();
      };
      parser.on(event, done).on('error', done);
      start();
      if (parseError !== undefined) done();
    });
  try {
    for await (const chunk of tarStream) {
      if (!parser.write(chunk) && parseError === undefined) await settle('drain', () => undefined);
      if (parseError !== undefined) break;
    }
    if (parseError === undefined) {
      await piping;
      await settle('finish', () => parser.end());
      await Promise.all(pending);
    }
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    throw imageError(`${what} could not be read as a ${gzip ? 'gzip ' : ''}tar: ${messageOf(e)}`, image, e);
  } finally {
    opened.destroy();
  }
  if (parseError !== undefined)
    throw imageError(`${what} is not a valid tar: ${messageOf(parseError)}`, image, parseError);
  for (const [rel, rec] of found) s.files.set(rel, rec);
  for (const f of hides.files) s.overlay.files.add(f);
  for (const d of hides.dirs) s.overlay.dirs.add(d);
}

/** Re-raise an error with the image appended to where it happened. */
function inImage(e: unknown, image: string): unknown {
  if (!(e instanceof AirgapError)) return e;
  return new AirgapError(e.code, e.message, {
    where: e.where ? `${e.where} in ${image}` : image,
    ...(e.hint ? { hint: e.hint } : {}),
    exitCode: e.exitCode,
    cause: e.cause,
    ...(e.details ? { details: e.details } : {}),
  });
}

/** How an image is named in messages: its layout entry, else `oci:<dir>@<digest>`. */
async function imageName(layout: OciLayout, digest: string): Promise<string> {
  const entry = (await layout.entries()).find((e) => e.descriptor.digest === digest);
  return entry ? entry.refName : `oci:${layout.dir}@${digest}`;
}

async function readConfig(layout: OciLayout, d: Descriptor, image: string): Promise<ImageConfigDoc> {
  const bytes = await layout.readBytes(d.digest);
  if (sha256Digest(bytes) !== d.digest)
    throw imageError(`the config ${d.digest} of ${image} does not match its digest`, image);
  try {
    return JSON.parse(bytes.toString('utf8')) as ImageConfigDoc;
  } catch (e) {
    throw imageError(`the config ${d.digest} of ${image} is not JSON`, image, e);
  }
}

function configsDirOf(config: ImageConfigDoc, image: string): string {
  const raw = config.config?.Labels?.[CONFIGS_LABEL];
  const dir = typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : DEFAULT_CONFIGS_DIR;
  const key = dirKey(dir);
  if (key === '' || key.split('/').includes('..'))
    throw new AirgapError('CATALOG_UNSUPPORTED', `${image} names ${JSON.stringify(dir)} as its FBC root`, {
      where: `${image} label ${CONFIGS_LABEL}`,
      hint: 'a catalog keeps its file-based catalog in a directory of its own, usually /configs',
    });
  return `/${key}`;
}

/** Is an index child an attestation or other non-image (buildx marks them unknown/unknown)? */
function isAttestation(d: Descriptor): boolean {
  return (
    d.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest' || d.platform?.os === 'unknown'
  );
}

/**
 * Read the file-based catalog of a catalog image already in `layout` (blobs present). An index is
 * followed to `opts.arch` (x86_64/aarch64 understood) or else its first linux/amd64 child (all
 * children of real catalogs carry the same FBC). Layers are read last to first; reading stops early
 * once an upper layer hides the whole configs directory. Every layer read is digest-verified.
 * Symbolic links under the configs directory are not followed (catalogs are plain files).
 *
 * Throws CATALOG_NO_FBC when nothing under the configs directory is a catalog file (SQLite catalogs
 * from before 4.11), CATALOG_PARSE (with file:line and the image) for malformed content.
 */
export async function readCatalogImage(
  layout: OciLayout,
  digest: string,
  opts: { arch?: string } = {},
): Promise<CatalogImage> {
  const image = await imageName(layout, digest);
  const top = await layout.getManifest(digest);
  const parsed = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  let manifests: CatalogManifest[];
  let chosen: CatalogManifest;
  if (parsed.kind === 'index') {
    manifests = parsed.manifests
      .filter((d) => isImageManifestType(d.mediaType) && !isAttestation(d))
      .map((d) => ({
        digest: d.digest,
        mediaType: d.mediaType,
        size: d.size,
        ...(d.platform ? { platform: d.platform } : {}),
      }));
    const want = opts.arch ? (ARCH_ALIASES[opts.arch] ?? opts.arch) : undefined;
    const linux = (m: CatalogManifest) => (m.platform?.os ?? 'linux') === 'linux';
    const pick = want
      ? manifests.find((m) => m.platform?.architecture === want && linux(m))
      : (manifests.find((m) => m.platform?.architecture === 'amd64' && linux(m)) ?? manifests[0]);
    if (!pick) {
      const have = manifests.map((m) => platformString(m.platform)).join(', ') || 'none';
      throw new AirgapError(
        'CATALOG_ARCH_MISSING',
        `${image} has no ${want ? `linux/${want} ` : ''}image (it has ${have})`,
        { where: image, hint: 'every child of a catalog index carries the same catalog; ask for one it has' },
      );
    }
    chosen = pick;
  } else {
    chosen = { digest: top.digest, mediaType: parsed.mediaType, size: top.bytes.length };
    manifests = [chosen];
  }
  const m =
    parsed.kind === 'image'
      ? parsed
      : parseManifest(
          (await layout.getManifest(chosen.digest, chosen.mediaType)).bytes,
          chosen.mediaType,
          `manifest ${image} (${platformString(chosen.platform)})`,
        );
  if (m.kind !== 'image')
    throw new AirgapError('CATALOG_UNSUPPORTED', `a child of ${image} is itself an index`, { where: image });
  const config = await readConfig(layout, m.config, image);
  const configsDir = configsDirOf(config, image);
  const configs = dirKey(configsDir);
  const s: ScanState = {
    configs,
    prefix: `${configs}/`,
    label: configsDir,
    overlay: { files: new Set(), dirs: new Set() },
    files: new Map(),
    symlinks: new Map(),
  };
  for (const layer of [...m.layers].reverse()) {
    if (layer.urls?.length) continue; // a foreign layer is never part of a catalog
    await scanLayer(layout, layer, s, image);
    if (isHidden(s.overlay, configs)) break; // nothing below can reach the configs directory
  }

  const ignores = [...s.files.values()]
    .filter((f) => f.kind === 'ignore')
    .map((f) => {
      const dir = f.rel.includes('/') ? f.rel.slice(0, f.rel.lastIndexOf('/') + 1) : '';
      return { dir, match: ignoreMatcher(f.text ?? '') };
    });
  const ignored = (rel: string) =>
    ignores.some((i) => rel.startsWith(i.dir) && i.match(rel.slice(i.dir.length)));
  const survivors = [...s.files.values()]
    .filter((f) => f.kind !== 'ignore' && !ignored(f.rel))
    .sort((a, b) => comparePaths(a.rel, b.rel));
  if (survivors.length === 0) {
    const link = s.symlinks.get(configs);
    const sqlite = config.config?.Labels?.[DATABASE_LABEL];
    throw new AirgapError(
      'CATALOG_NO_FBC',
      `${image} has no file-based catalog under ${configsDir}${link !== undefined ? ` (${configsDir} is a symbolic link to ${link}, which is not followed)` : ''}${sqlite ? ` (it is a SQLite catalog: ${DATABASE_LABEL}=${sqlite})` : ''}`,
      {
        where: image,
        hint: 'SQLite catalogs from before OpenShift 4.11 are not supported; use a file-based catalog (redhat-operator-index v4.11 or later, or one built with `opm`)',
      },
    );
  }
  const builder = new FbcModelBuilder();
  try {
    for (const f of survivors) {
      const content = f.alias ?? f;
      if (content.error !== undefined) throw content.error;
      for (const blob of content.blobs) builder.add(blob);
    }
    return {
      digest: top.digest,
      mediaType: parsed.mediaType,
      imageDigest: chosen.digest,
      configsDir,
      model: builder.build(),
      files: survivors.map((f) => f.rel),
      manifests,
    };
  } catch (e) {
    throw inImage(e, image);
  }
}

const json = (o: unknown): string => `${JSON.stringify(o, null, 4)}\n`;
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The catalog as files, as `opm` writes it (declcfg WriteFS + WriteJSON): `<package>/catalog.json`
 * per package holding its olm.package, olm.channel (by name), olm.bundle (by name), olm.deprecations
 * and other objects (by schema, then name) as concatenated 4-space indented JSON; objects of no
 * package go to `catalog.json` at the root. Each object is its original `meta`, with the filtered
 * channel entries and default channel. Keys are paths relative to the configs directory, sorted.
 */
export function renderFbc(model: FbcModel): Map<string, Buffer> {
  const texts = new Map<string, string[]>();
  const add = (pkg: string, o: unknown) => {
    const list = texts.get(pkg) ?? [];
    list.push(json(o));
    texts.set(pkg, list);
  };
  for (const pkg of [...model.packages.values()].sort(byName)) {
    if (pkg.name === '.' || pkg.name === '..' || pkg.name.includes('/'))
      throw new AirgapError(
        'CATALOG_INVALID',
        `package name ${JSON.stringify(pkg.name)} cannot be a directory`,
        {
          where: pkg.where,
          hint: 'package names are DNS-1123 labels; this catalog is malformed',
        },
      );
    add(
      pkg.name,
      pkg.defaultChannel === undefined ? pkg.meta : { ...pkg.meta, defaultChannel: pkg.defaultChannel },
    );
    for (const ch of [...pkg.channels.values()].sort(byName))
      add(pkg.name, { ...ch.meta, entries: ch.entries });
    for (const b of [...pkg.bundles.values()].sort(byName)) add(pkg.name, b.meta);
  }
  for (const d of model.deprecations) add(str(d.package), d);
  const others = [...model.others].sort((a, b) => {
    const [x, y] = [`${str(a.schema)}\0${str(a.name)}`, `${str(b.schema)}\0${str(b.name)}`];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const o of others) add(str(o.package), o);
  const out = new Map<string, Buffer>();
  for (const pkg of [...texts.keys()].sort()) {
    out.set(pkg === '' ? 'catalog.json' : `${pkg}/catalog.json`, Buffer.from(texts.get(pkg)!.join('')));
  }
  return out;
}

/** One entry of a tar layer written by {@link writeTar}. */
export interface TarEntry {
  /** Relative path (no leading slash); directories may end with `/`. */
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink';
  data?: Buffer;
  /** Default 0644 for files, 0755 for directories. */
  mode?: number;
  linkpath?: string;
}

/**
 * A deterministic tar: entries in the given order, uid/gid 0, uname/gname root, the given mtime.
 * Paths too long for ustar get a PAX header.
 */
export function writeTar(entries: readonly TarEntry[], mtime: Date = new Date(0)): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const dir = e.type === 'Directory';
    const p = dir ? `${e.path.replace(/\/+$/, '')}/` : e.path;
    const data = e.data ?? Buffer.alloc(0);
    const fields = {
      path: p,
      mode: e.mode ?? (dir ? 0o755 : 0o644),
      uid: 0,
      gid: 0,
      uname: 'root',
      gname: 'root',
      size: e.type === 'File' ? data.length : 0,
      mtime,
      type: e.type,
      ...(e.linkpath ? { linkpath: e.linkpath } : {}),
    };
    const header = Buffer.alloc(512);
    const h = new Header(fields);
    h.encode(header, 0);
    if (h.needPax) {
      blocks.push(new Pax({ path: p, ...(e.linkpath ? { linkpath: e.linkpath } : {}), mtime }).encode());
      const short = new Header({ ...fields, path: p.slice(-99), linkpath: e.linkpath?.slice(-99) });
      header.fill(0);
      short.encode(header, 0);
    }
    blocks.push(header);
    if (e.type === 'File' && data.length > 0) {
      blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

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
  digest: string;
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
  digest: string;
  mediaType: string;
  size: number;
  /** Each rebuilt image manifest (one, or one per child of the index, in index order). */
  images: RebuiltImage[];
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
      // dropped: the rebuilt image builds its cache when it starts (see rebuildImage)
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
  digest: string;
  diffId: string;
}

/**
 * The layer that swaps the catalog: `configs/` with an opaque whiteout (the old FBC and anything else
 * in the directory is gone from the lower layers), the new files, and a whiteout of the stale opm
 * cache. No entry for the cache's parent: a `tmp/` directory entry would reset /tmp's 1777 mode.
 */
function catalogLayer(files: Map<string, Buffer>, configs: string, cache: string | undefined, mtime: Date) {
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
    throw new AirgapError('CATALOG_EMPTY', `the filtered catalog for ${image} has no content`, {
      where: image,
      hint: 'list at least one package of the catalog, or mirror it with full: true',
    });
  const mtime = opts.mtime ?? new Date(0);
  const layers = new Map<string, BuiltLayer>();
  const top = await layout.getManifest(sourceDigest);
  const parsed = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  const images: RebuiltImage[] = [];
  let result: { bytes: Buffer; digest: string; mediaType: string };
  if (parsed.kind === 'image') {
    const r = await rebuildImage(layout, sourceDigest, parsed.mediaType, files, layers, mtime, image);
    images.push(r.image);
    result = r.manifest;
  } else {
    const doc = JSON.parse(top.bytes.toString('utf8')) as Record<string, unknown>;
    const children: Descriptor[] = [];
    for (const d of parsed.manifests) {
      if (isAttestation(d)) continue;
      if (!isImageManifestType(d.mediaType))
        throw new AirgapError(
          'CATALOG_UNSUPPORTED',
          `${image} has a child of media type ${d.mediaType}${isIndexType(d.mediaType) ? ' (a nested index)' : ''}`,
          { where: image, hint: 'catalog indexes list image manifests only' },
        );
      const r = await rebuildImage(layout, d.digest, d.mediaType, files, layers, mtime, image, d.platform);
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

async function rebuildImage(
  layout: OciLayout,
  digest: string,
  mediaType: string,
  files: Map<string, Buffer>,
  layers: Map<string, BuiltLayer>,
  mtime: Date,
  image: string,
  platform?: Platform,
): Promise<{ image: RebuiltImage; manifest: { bytes: Buffer; digest: string; mediaType: string } }> {
  const what = platform ? `${image} (${platformString(platform)})` : image;
  const src = await layout.getManifest(digest, mediaType);
  const parsed = parseManifest(src.bytes, src.mediaType, `manifest ${what}`);
  if (parsed.kind !== 'image')
    throw new AirgapError('CATALOG_UNSUPPORTED', `a child of ${image} is itself an index`, { where: image });
  const doc = JSON.parse(src.bytes.toString('utf8')) as Record<string, unknown>;
  const config = await readConfig(layout, parsed.config, what);
  const inner = config.config ?? {};
  const configsDir = configsDirOf(config, what);
  const configs = dirKey(configsDir);
  const serve = serveCommand(inner);
  const cacheDir = path.posix.resolve(inner.WorkingDir || '/', serve.cacheDir ?? DEFAULT_CACHE_DIR);
  const cache = dirKey(cacheDir);
  if (cache === '' || cache === configs || configs.startsWith(`${cache}/`))
    throw new AirgapError(
      'CATALOG_UNSUPPORTED',
      `${what} keeps its opm cache in ${cacheDir}, which holds the catalog itself (${configsDir})`,
      {
        where: what,
        hint: 'the cache directory must be a directory of its own, e.g. --cache-dir=/tmp/cache',
      },
    );
  // A cache inside the configs directory goes with the opaque whiteout; anything else gets its own.
  const ownWhiteout = cache.startsWith(`${configs}/`) ? undefined : cache;
  const key = `${configs}\0${ownWhiteout ?? ''}`;
  let layer = layers.get(key);
  if (!layer) {
    layer = catalogLayer(files, configs, ownWhiteout, mtime);
    layers.set(key, layer);
    await layout.putBytes(layer.gz);
  }
  const docker = parsed.mediaType === MediaType.DockerManifest;
  const layerDesc: Descriptor = {
    mediaType: docker ? MediaType.DockerLayerGzip : MediaType.OciLayerGzip,
    digest: layer.digest,
    size: layer.gz.length,
  };
  const newConfig: ImageConfigDoc = {
    ...config,
    config: {
      ...inner,
      Entrypoint: serve.entrypoint,
      // opm serve with --cache-dir enforces cache integrity by default and exits when the cache is
      // missing or stale. The pre-built cache is removed above (it indexes the unfiltered catalog),
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
      diff_ids: [...(config.rootfs?.diff_ids ?? []), layer.diffId],
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
