/**
 * The file-based catalog of an image, streamed out of its layers: the layers are read top layer
 * first with overlay semantics (the upper layer wins, `.wh.<name>` and `.wh..wh..opq` whiteouts hide
 * lower content), only what lies under the configs directory is kept, and JSON/YAML files are parsed
 * object by object as their bytes arrive. Nothing is extracted to disk and no layer is held in
 * memory; every layer is inflated within the limits of an image layer and read to its tar's end
 * (tar-read.ts), and digest-verified as it streams. `.indexignore` files are applied at the end,
 * as opm does, and symbolic links are recorded but never followed.
 */
import { Parser, type ReadEntry } from 'tar';
import { AirgapError, messageOf } from '../../util/errors.js';
import { DigestVerifier } from '../digest.js';
import { openTar, type OpenedTar } from '../tar-read.js';
import type { Descriptor } from '../manifest.js';
import { MediaType } from '../media-types.js';
import { comparePaths, dirKey, imageError, type ImageContent } from './catalog-config.js';
import { ignoreMatcher, parseFbcStream, type FbcBlob } from './fbc.js';
import { MirrorError } from '../errors.js';

/** The opaque whiteout: the directory holding it hides everything lower layers put there. */
export const OPAQUE = '.wh..wh..opq';
/** The prefix of a whiteout: `.wh.<name>` hides `<name>` of lower layers. */
export const WHITEOUT = '.wh.';

const LAYER_TYPES = new Set<string>([
  MediaType.OciLayer,
  MediaType.OciLayerGzip,
  MediaType.DockerLayerGzip,
  'application/vnd.docker.image.rootfs.diff.tar',
]);
const INDEX_IGNORE = '.indexignore';
/** A `.indexignore` is a few lines; anything bigger is not one. */
const MAX_IGNORE_FILE = 1024 * 1024;

/** A tar entry path without the writer's prefix (`./`, `/`) and without a trailing slash. */
function normalise(p: string): string {
  return p.replace(/^(\.\/|\/)+/, '').replace(/\/+$/, '');
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
export interface FoundFile {
  rel: string;
  kind: 'json' | 'yaml' | 'ignore';
  blobs: FbcBlob[];
  text?: string;
  /** A parse error, raised only if the file is not ignored by a `.indexignore`. */
  error?: unknown;
  /** A hard link: the content is that of another file of the same layer. */
  alias?: FoundFile;
}

/** What the layers read so far left under the configs directory. */
export interface ScanState {
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

/** What one layer adds; merged into the scan once the whole layer is read (it hides lower layers only). */
interface LayerFinds {
  hides: Overlay;
  found: Map<string, FoundFile>;
  /** Parses of JSON/YAML files still reading their entries. */
  pending: Promise<void>[];
}

/** Does a path matter for what ends up under the configs directory (it, below it, or an ancestor)? */
function relevant(s: ScanState, p: string): boolean {
  return p === '' || p === s.configs || p.startsWith(s.prefix) || s.configs.startsWith(`${p}/`);
}

/** The blob of a layer from the layout (or registry), digest-verified as it streams (missing: LAYOUT_BLOB_MISSING). */
async function* layerBytes(layout: ImageContent, layer: Descriptor, what: string): AsyncGenerator<Buffer> {
  const verifier = new DigestVerifier(layer.digest, layer.size);
  for await (const c of await layout.openBlob(layer.digest, 0, what, layer.size)) {
    verifier.update(c);
    yield c;
  }
  verifier.verify(what);
}

/** A whiteout entry: record what it hides (when it matters). False for any other entry. */
function takeWhiteout(s: ScanState, l: LayerFinds, dir: string, base: string): boolean {
  if (base === OPAQUE) {
    if (relevant(s, dir.replace(/\/$/, ''))) l.hides.dirs.add(dir);
    return true;
  }
  if (!base.startsWith(WHITEOUT)) return false;
  const target = dir + base.slice(WHITEOUT.length);
  if (relevant(s, target)) {
    l.hides.files.add(target);
    l.hides.dirs.add(`${target}/`);
  }
  return true;
}

/** Parse a JSON/YAML entry as its bytes arrive; a parse error is kept on the file, not thrown. */
async function parseEntry(
  entry: ReadEntry,
  rec: FoundFile,
  kind: 'json' | 'yaml',
  name: string,
): Promise<void> {
  try {
    for await (const blob of parseFbcStream(entry as AsyncIterable<Buffer>, kind, name)) rec.blobs.push(blob);
  } catch (e) {
    rec.error = e;
    rec.blobs = [];
    entry.resume(); // drain the rest so the tar parser moves on
  }
}

/**
 * One tar entry of a layer: a whiteout, or a path under the configs directory not hidden by an
 * upper layer (a catalog file, a `.indexignore`, a hard link to a file of this layer, a symbolic
 * link). Everything else is skipped. Entries not consumed here are resumed so the parser moves on.
 */
function takeEntry(entry: ReadEntry, s: ScanState, l: LayerFinds): void {
  const p = normalise(entry.path);
  const slash = p.lastIndexOf('/');
  const dir = p.slice(0, slash + 1);
  const base = p.slice(slash + 1);
  if (takeWhiteout(s, l, dir, base)) return void entry.resume();
  if (p === '' || isHidden(s.overlay, p) || entry.type === 'Directory' || !relevant(s, p))
    return void entry.resume();
  // Any other entry replaces the same path (and a directory there) in lower layers.
  l.hides.files.add(p);
  l.hides.dirs.add(`${p}/`);
  if (entry.type === 'SymbolicLink') {
    s.symlinks.set(p, entry.linkpath ?? '');
    return void entry.resume();
  }
  if (!p.startsWith(s.prefix)) return void entry.resume();
  const rel = p.slice(s.prefix.length);
  if (entry.type === 'Link') {
    // A hard link to a file earlier in this layer: the same content under another name.
    const to = normalise(entry.linkpath ?? '');
    const target = to.startsWith(s.prefix) ? l.found.get(to.slice(s.prefix.length)) : undefined;
    if (target && target.kind !== 'ignore' && /\.(json|ya?ml)$/.test(base))
      l.found.set(rel, { rel, kind: target.kind, blobs: [], alias: target });
    return void entry.resume();
  }
  if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile')
    return void entry.resume();
  if (base === INDEX_IGNORE) {
    if (entry.size > MAX_IGNORE_FILE) return void entry.resume();
    const rec: FoundFile = { rel, kind: 'ignore', blobs: [], text: '' };
    l.found.set(rel, rec);
    entry.on('data', (c: Buffer) => (rec.text += c.toString('utf8')));
    return;
  }
  if (!/\.(json|ya?ml)$/.test(base)) return void entry.resume();
  const kind = base.endsWith('.json') ? 'json' : 'yaml';
  const rec: FoundFile = { rel, kind, blobs: [] };
  l.found.set(rel, rec);
  l.pending.push(parseEntry(entry, rec, kind, `${s.label}/${rel}`));
}

/**
 * Write a layer's tar bytes into the parser, waiting when it asks to (backpressure reaches the
 * file stream, so neither a layer nor a file is buffered whole), then wait for the end of the tar
 * and for every file parse. Returns the parser's first error, after which it reads nothing more.
 */
async function feedParser(parser: Parser, opened: OpenedTar, pending: Promise<void>[]): Promise<unknown> {
  let parseError: unknown;
  parser.on('error', (e: unknown) => (parseError ??= e));
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
  for await (const chunk of opened.tar) {
    if (!parser.write(chunk) && parseError === undefined) await settle('drain', () => undefined);
    if (parseError !== undefined) break;
  }
  if (parseError === undefined) {
    await settle('finish', () => parser.end());
    await Promise.all(pending);
    await opened.rest(); // past the tar's end: read for the digest, not inflated nor parsed
  }
  return parseError;
}

/**
 * Stream one layer through the tar parser, keeping what lies under the configs directory and is not
 * hidden by an upper layer (see {@link takeEntry}). Whiteouts and files of this layer hide lower
 * layers only, so they are merged into the scan afterwards.
 */
async function scanLayer(
  layout: ImageContent,
  layer: Descriptor,
  s: ScanState,
  image: string,
): Promise<void> {
  const what = `layer ${layer.digest} of ${image}`;
  if (!LAYER_TYPES.has(layer.mediaType))
    throw new AirgapError(MirrorError.CATALOG_UNSUPPORTED, `${what} has media type ${layer.mediaType}`, {
      where: image,
      hint: 'catalog images use gzip or uncompressed tar layers',
    });
  const l: LayerFinds = { hides: { files: new Set(), dirs: new Set() }, found: new Map(), pending: [] };
  const parser = new Parser({ strict: true });
  parser.on('entry', (entry: ReadEntry) => takeEntry(entry, s, l));

  const opened = await openTar(layerBytes(layout, layer, what), {
    kind: 'layer',
    what,
    zstd: () =>
      new AirgapError(
        MirrorError.CATALOG_UNSUPPORTED,
        `${what} is zstd-compressed, which cannot be read yet`,
        {
          where: image,
          hint: 'mirror a gzip variant of the catalog image',
        },
      ),
  });
  if (opened.empty) return; // an empty blob adds nothing
  let parseError: unknown;
  try {
    parseError = await feedParser(parser, opened, l.pending);
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    throw imageError(
      `${what} could not be read as a ${opened.gzip ? 'gzip ' : ''}tar: ${messageOf(e)}`,
      image,
      e,
    );
  } finally {
    opened.destroy();
  }
  if (parseError !== undefined)
    throw imageError(`${what} is not a valid tar: ${messageOf(parseError)}`, image, parseError);
  for (const [rel, rec] of l.found) s.files.set(rel, rec);
  for (const f of l.hides.files) s.overlay.files.add(f);
  for (const d of l.hides.dirs) s.overlay.dirs.add(d);
}

/**
 * Read what the layers leave under `configsDir`, last layer first; reading stops early once an
 * upper layer hides the whole configs directory. Foreign layers (with URLs) are never part of a
 * catalog and are skipped.
 */
export async function scanCatalogLayers(
  layout: ImageContent,
  layers: readonly Descriptor[],
  configsDir: string,
  image: string,
): Promise<ScanState> {
  const configs = dirKey(configsDir);
  const s: ScanState = {
    configs,
    prefix: `${configs}/`,
    label: configsDir,
    overlay: { files: new Set(), dirs: new Set() },
    files: new Map(),
    symlinks: new Map(),
  };
  for (const layer of [...layers].reverse()) {
    if (layer.urls?.length) continue; // a foreign layer is never part of a catalog
    await scanLayer(layout, layer, s, image);
    if (isHidden(s.overlay, configs)) break; // nothing below can reach the configs directory
  }
  return s;
}

/** The catalog files of a scan that no `.indexignore` excludes, in directory-walk order. */
export function catalogFiles(s: ScanState): FoundFile[] {
  const ignores = [...s.files.values()]
    .filter((f) => f.kind === 'ignore')
    .map((f) => {
      const dir = f.rel.includes('/') ? f.rel.slice(0, f.rel.lastIndexOf('/') + 1) : '';
      return { dir, match: ignoreMatcher(f.text ?? '') };
    });
  const ignored = (rel: string) =>
    ignores.some((i) => rel.startsWith(i.dir) && i.match(rel.slice(i.dir.length)));
  return [...s.files.values()]
    .filter((f) => f.kind !== 'ignore' && !ignored(f.rel))
    .sort((a, b) => comparePaths(a.rel, b.rel));
}
