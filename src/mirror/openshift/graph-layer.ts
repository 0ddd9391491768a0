/**
 * The layer of the graph-data image, streamed from the graph-data tarball: its tree re-rooted under
 * `/var/lib/cincinnati-graph-data/` (entries without a leading `/`; a single top-level directory,
 * as a GitHub archive has, is stripped), root-owned, modes normalised (directories 0755, files
 * 0644), every mtime fixed, gzip-compressed straight into the layout's blob store. The tarball is
 * never extracted to disk nor held whole in memory, and the same tarball always gives the same
 * layer digest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import { AirgapError, messageOf, usageError } from '../../util/errors.js';
import { openTar } from '../tar-read.js';
import type { OciLayout } from '../layout/store.js';
import type { Digest } from '../digest.js';
import type { Descriptor } from '../manifest.js';
import { excerpt, invalidData } from './graph-data.js';
import { MirrorError } from '../errors.js';

/** The directory of the image that holds the graph data (no leading slash: a layer path). */
export const GRAPH_DATA_DIR = 'var/lib/cincinnati-graph-data';

/** Directory names of the graph-data tree itself; a top-level directory with one of them is kept. */
const GRAPH_DATA_TOP = new Set(['channels', 'blocked-edges', 'raw', 'build-suggestions', 'signatures']);

/** Entry path without `./` or `/` in front and without a trailing `/`; '' for the root. */
function normalise(path: string, where: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw invalidData(where, `entry ${JSON.stringify(path)} leaves the archive root`);
  return parts.join('/');
}

/**
 * Entries of the tarball, one at a time; each must be consumed before the next is read. It is
 * inflated within the limits of graph data and read up to its tar's end (tar-read.ts): what a file
 * holds past that is not read. A tar that does not parse is GRAPH_DATA_INVALID naming the file.
 */
async function* tarEntries(file: string): AsyncGenerator<ReadEntry> {
  const opened = await openTar(createReadStream(file, { highWaterMark: 1 << 20 }), {
    kind: 'graph-data',
    what: `the graph data ${file}`,
    zstd: () => invalidData(file, 'it is zstd-compressed'),
  }).catch((e: unknown) => {
    throw e instanceof AirgapError ? e : invalidData(file, messageOf(e), e);
  });
  const source = Readable.from(opened.tar);
  const parser = new Parser({ strict: true });
  const queue: ReadEntry[] = [];
  let error: unknown;
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  parser.on('entry', (e: ReadEntry) => {
    queue.push(e);
    notify();
  });
  const fail = (e: unknown) => {
    error ??= e;
    notify();
  };
  parser.on('error', fail);
  parser.on('abort', fail);
  source.on('error', fail);
  parser.on('end', () => {
    ended = true;
    notify();
  });
  source.pipe(parser);
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (error instanceof AirgapError) throw error;
      if (error) throw invalidData(file, messageOf(error), error);
      if (ended) return;
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    source.destroy();
    opened.destroy();
  }
}

/** Read an entry to its end, discarding the bytes. */
async function drain(e: ReadEntry): Promise<void> {
  for await (const _ of e) void _;
}

/** Decide whether every entry sits below one top-level directory that is not graph data itself. */
async function topDirToStrip(file: string): Promise<string | undefined> {
  const tops = new Set<string>();
  let nested = false;
  for await (const e of tarEntries(file)) {
    await drain(e);
    const p = normalise(e.path, file);
    if (p === '') continue;
    const i = p.indexOf('/');
    tops.add(i < 0 ? p : p.slice(0, i));
    if (i < 0 && e.type !== 'Directory') tops.add('\0file'); // a file at the root: nothing to strip
    if (i >= 0) nested = true;
  }
  if (tops.size !== 1 || !nested) return undefined;
  const [top] = [...tops];
  return GRAPH_DATA_TOP.has(top) ? undefined : top;
}

interface LayerEntry {
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink' | 'Link';
  size: number;
  linkpath?: string;
}

/** One tar header (with a pax header before it when a name does not fit ustar). */
function headerBytes(e: LayerEntry, mtime: Date): Buffer {
  const data = {
    path: e.type === 'Directory' ? `${e.path}/` : e.path,
    mode: e.type === 'Directory' ? 0o755 : e.type === 'SymbolicLink' ? 0o777 : 0o644,
    uid: 0,
    gid: 0,
    uname: 'root',
    gname: 'root',
    size: e.type === 'File' ? e.size : 0,
    mtime,
    type: e.type,
    ...(e.linkpath !== undefined ? { linkpath: e.linkpath } : {}),
  };
  const block = Buffer.alloc(512);
  const h = new Header(data);
  if (!h.encode(block, 0)) return block;
  const pax = new Pax({
    path: data.path,
    ...(e.linkpath !== undefined ? { linkpath: e.linkpath } : {}),
  }).encode();
  return Buffer.concat([pax, block]);
}

const padding = (size: number): Buffer => Buffer.alloc((512 - (size % 512)) % 512);

/**
 * The layer tar, chunk by chunk: the parents of {@link GRAPH_DATA_DIR}, then every entry of the
 * tarball re-rooted under it (top-level directory stripped when `strip` names one), missing parent
 * directories added, root-owned, normalised modes, one fixed mtime. Devices and FIFOs are dropped.
 */
async function* layerTar(file: string, strip: string | undefined, mtime: Date): AsyncGenerator<Buffer> {
  const emitted = new Set<string>();
  function* dirs(path: string): Generator<Buffer> {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (emitted.has(d)) continue;
      emitted.add(d);
      yield headerBytes({ path: d, type: 'Directory', size: 0 }, mtime);
    }
  }
  const reroot = (p: string): string | undefined => {
    let rel = normalise(p, file);
    if (strip) rel = rel === strip ? '' : rel.startsWith(`${strip}/`) ? rel.slice(strip.length + 1) : rel;
    return rel === '' ? undefined : `${GRAPH_DATA_DIR}/${rel}`;
  };
  yield* dirs(GRAPH_DATA_DIR);
  for await (const e of tarEntries(file)) {
    const path = reroot(e.path);
    const kind = e.type === 'OldFile' || e.type === 'ContiguousFile' ? 'File' : e.type;
    if (!path || (kind !== 'File' && kind !== 'Directory' && kind !== 'SymbolicLink' && kind !== 'Link')) {
      await drain(e);
      continue;
    }
    yield* dirs(path.slice(0, path.lastIndexOf('/')));
    if (kind === 'Directory') {
      yield* dirs(path);
      await drain(e);
      continue;
    }
    let linkpath: string | undefined;
    if (kind === 'SymbolicLink') linkpath = e.linkpath ?? '';
    if (kind === 'Link') {
      linkpath = reroot(e.linkpath ?? '');
      if (!linkpath)
        throw invalidData(file, `hard link ${JSON.stringify(e.path)} points at the archive root`);
    }
    yield headerBytes(
      { path, type: kind, size: e.size, ...(linkpath !== undefined ? { linkpath } : {}) },
      mtime,
    );
    let n = 0;
    for await (const chunk of e) {
      n += chunk.length;
      yield chunk;
    }
    if (kind === 'File') {
      if (n !== e.size) throw invalidData(file, `entry ${JSON.stringify(e.path)} is truncated`);
      yield padding(n);
    }
  }
  yield Buffer.alloc(1024);
}

/**
 * Stream the graph-data layer ({@link layerTar}) from the tarball into the layout's blob store,
 * through a temp file beside the blobs; returns its descriptor and diff_id.
 */
export async function writeGraphLayer(
  layout: OciLayout,
  file: string,
  mediaType: string,
  mtime: Date,
): Promise<{ layer: Descriptor; diffId: string }> {
  const strip = await topDirToStrip(file);
  const tarHash = createHash('sha256');
  const gzHash = createHash('sha256');
  let size = 0;
  const dir = join(layout.dir, '.airgap-partial');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `graph-layer-${process.pid}-${randomBytes(4).toString('hex')}`);
  async function* tar(): AsyncGenerator<Buffer> {
    for await (const chunk of layerTar(file, strip, mtime)) {
      tarHash.update(chunk);
      yield chunk;
    }
  }
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      gzHash.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(Readable.from(tar()), createGzip({ level: 6 }), count, createWriteStream(tmp));
    const digest = `sha256:${gzHash.digest('hex')}` as Digest; // a hash we computed
    if (await layout.hasBlob(digest, size)) await rm(tmp, { force: true });
    else {
      await mkdir(join(layout.dir, 'blobs', 'sha256'), { recursive: true });
      await rename(tmp, layout.blobPath(digest));
    }
    return { layer: { mediaType, digest, size }, diffId: `sha256:${tarHash.digest('hex')}` };
  } catch (e) {
    await rm(tmp, { force: true });
    if (e instanceof AirgapError) throw e;
    throw invalidData(file, (e as Error).message, e);
  }
}

/** Refuse anything but gzip up front, with the first bytes in the message. */
export async function assertGzip(file: string): Promise<void> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    throw usageError(
      MirrorError.GRAPH_DATA_MISSING,
      `cannot read the graph data ${file}: ${(e as Error).message}`,
      {
        hint: 'download it first (downloadGraphData)',
      },
    );
  }
  try {
    const head = Buffer.alloc(64);
    const { bytesRead } = await fh.read(head, 0, 64, 0);
    if (bytesRead < 2 || head[0] !== 0x1f || head[1] !== 0x8b) {
      throw invalidData(file, `it is not gzip (it starts with ${excerpt(head.subarray(0, bytesRead))})`);
    }
  } finally {
    await fh.close();
  }
}
