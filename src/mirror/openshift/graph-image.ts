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
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import { AirgapError, usageError } from '../../util/errors.js';
import { writeStreamAtomic } from '../../util/fs.js';
import type { OciLayout } from '../layout/store.js';
import { parseManifest, platformString, type Descriptor, type ParsedManifest } from '../manifest.js';
import { MediaType } from '../media-types.js';
import { AgentPool, getFollowingRedirects, shownUrl } from '../../net/download.js';
import { backoffMs, netErrorCode, retryAfterMs, type TlsOptions } from '../../net/http.js';
import { OCP_UPDATE_URL } from './graph.js';

/** The base image oc-mirror builds the graph image on. */
export const GRAPH_BASE_IMAGE = 'registry.access.redhat.com/ubi9/ubi:latest';
/** Where oc-mirror pushes the graph image, below the destination (`<dest>/openshift/graph-image:latest`). */
export const GRAPH_IMAGE_REPO = 'openshift/graph-image';
/** The graph-data tarball of the public update service. */
export const OCP_GRAPH_DATA_URL = 'https://api.openshift.com/api/upgrades_info/graph-data';
/** The directory of the image that holds the graph data (no leading slash: a layer path). */
export const GRAPH_DATA_DIR = 'var/lib/cincinnati-graph-data';
/** The command of the image: copy the data into the OSUS graph-data volume. */
export const GRAPH_IMAGE_CMD = [
  '/bin/bash',
  '-c',
  'exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data',
] as const;

const GRAPH_DATA_PATH = '/api/upgrades_info/graph-data';

/**
 * The graph-data tarball URL for a graph endpoint: a trailing `/v1/graph` becomes `/graph-data`
 * (`https://api.openshift.com/api/upgrades_info/v1/graph` → `…/api/upgrades_info/graph-data`), so
 * UPDATE_URL_OVERRIDE and --graph-url move the graph-data download too. Any other endpoint keeps
 * its scheme and host with the public path, which is what oc-mirror does with UPDATE_URL_OVERRIDE
 * (graphURLFromUpdateURL). The endpoint's query is not carried over.
 */
export function graphDataUrl(graphEndpoint: string = OCP_UPDATE_URL): string {
  let u: URL;
  try {
    u = new URL(graphEndpoint);
  } catch {
    throw usageError('GRAPH_URL_INVALID', `the update graph URL is not a URL: ${graphEndpoint}`, {
      hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
    });
  }
  u.search = '';
  u.hash = '';
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith('/v1/graph')
    ? `${path.slice(0, -'/v1/graph'.length)}/graph-data`
    : GRAPH_DATA_PATH;
  return u.href;
}

// ---------------------------------------------------------------------------------------- download

/** Options of {@link downloadGraphData}: TLS as for every other endpoint; the proxy comes from the environment. */
export interface DownloadGraphDataOptions extends TlsOptions {
  /** Retries after the first attempt on network errors, 408, 429 and 5xx; default 4. */
  retries?: number;
  /** First backoff in ms; default 250. */
  baseDelayMs?: number;
  /** Time limit for the response headers and for any pause in the body, in ms; default 60 s. */
  timeoutMs?: number;
}

/** What {@link downloadGraphData} fetched. */
export interface GraphDataDownload {
  /** The URL finally read (after redirects), without credentials. */
  url: string;
  bytes: number;
  /** sha256 of the tarball as downloaded. */
  digest: string;
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);
const MAX_REDIRECTS = 5;

const UNREACHABLE_HINT =
  'check the network, or the proxy (HTTPS_PROXY, NO_PROXY); or point --graph-url / UPDATE_URL_OVERRIDE at an ' +
  'update service that serves /api/upgrades_info/graph-data';

function invalidData(where: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError('GRAPH_DATA_INVALID', `the graph data at ${where} is not a tar.gz: ${why}`, {
    where,
    cause,
    hint:
      'check that --graph-url / UPDATE_URL_OVERRIDE points at an OpenShift update service (a proxy or captive ' +
      'portal may answer with a page of its own)',
  });
}

/** A printable excerpt of the first bytes of a body that should have been gzip. */
function excerpt(b: Buffer): string {
  return JSON.stringify(b.subarray(0, 40).toString('latin1'));
}

/**
 * Checks bytes as they stream past: the gzip magic on the first two bytes (so an HTML page fails
 * at once), then the whole archive through a tar parser (so a truncated or corrupt tarball never
 * replaces a good one).
 */
class TarGzCheck {
  private head = Buffer.alloc(0);
  private readonly parser = new Parser({ strict: true });
  private error: Error | undefined;
  private entries = 0;
  private readonly done: Promise<void>;

  constructor(private readonly where: string) {
    this.parser.on('entry', (e: ReadEntry) => {
      this.entries++;
      e.resume();
    });
    this.done = new Promise<void>((resolve) => {
      this.parser.on('error', (e: Error) => {
        this.error ??= e;
        resolve();
      });
      this.parser.on('abort', (e: Error) => {
        this.error ??= e;
        resolve();
      });
      this.parser.on('end', () => resolve());
    });
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 64)]);
      if (this.head.length >= 2 && (this.head[0] !== 0x1f || this.head[1] !== 0x8b)) {
        throw invalidData(this.where, `the body is not gzip (it starts with ${excerpt(this.head)})`);
      }
    }
    this.rethrow();
    if (!this.parser.write(chunk)) {
      await Promise.race([new Promise((r) => this.parser.once('drain', r)), this.done]);
    }
    this.rethrow();
  }

  private rethrow(): void {
    const e = this.error;
    if (e) throw invalidData(this.where, e.message, e);
  }

  async finish(): Promise<void> {
    if (this.head.length < 2)
      throw invalidData(this.where, `the body is empty or too short (${excerpt(this.head)})`);
    this.parser.end();
    await this.done;
    this.rethrow();
    if (this.entries === 0) throw invalidData(this.where, 'the archive holds no entries');
  }
}

/**
 * Download the graph-data tarball to `dest`: streamed to a temp file beside it, checked (gzip, a
 * readable tar), then renamed, so `dest` is either the previous file or a complete new one.
 * Redirects are followed; network errors, 408, 429 and 5xx are retried with backoff. Failures:
 * GRAPH_DATA_UNREACHABLE (network, HTTP status), GRAPH_DATA_TLS, GRAPH_DATA_INVALID (not a tar.gz),
 * each naming the URL.
 */
export async function downloadGraphData(
  url: string,
  dest: string,
  opts: DownloadGraphDataOptions = {},
): Promise<GraphDataDownload> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw usageError('GRAPH_URL_INVALID', `the graph-data URL is not a URL: ${url}`, {
      hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
    });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw usageError('GRAPH_URL_INVALID', `the graph-data URL is not http(s): ${shownUrl(target)}`, {
      hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
    });
  }
  const first = shownUrl(target);
  const retries = opts.retries ?? 4;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const backoff = (attempt: number, retryAfter?: number) =>
    backoffMs(attempt + 1, { baseMs: opts.baseDelayMs ?? 250, maxMs: 15_000, retryAfterMs: retryAfter });
  let last = '';
  for (let attempt = 0; attempt <= retries; attempt++) {
    const agents = new AgentPool(opts);
    try {
      const got = await getFollowingRedirects(target, agents, {
        headers: { accept: 'application/gzip, application/x-gzip, application/octet-stream, */*' },
        timeoutMs,
        maxRedirects: MAX_REDIRECTS,
        errorPrefix: 'GRAPH_DATA',
      });
      if ('error' in got) {
        last = got.error;
        if (attempt < retries) await sleep(backoff(attempt));
        continue;
      }
      const res = got.res;
      const where = shownUrl(got.url);
      if (RETRYABLE.has(res.statusCode)) {
        await res.body.dump().catch(() => undefined);
        last = `HTTP ${res.statusCode}`;
        if (attempt < retries) await sleep(backoff(attempt, retryAfterMs(res.headers['retry-after'])));
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const text = await res.body.text().catch(() => '');
        throw new AirgapError(
          'GRAPH_DATA_UNREACHABLE',
          `${where} answered HTTP ${res.statusCode}: ${text.slice(0, 200).trim() || '(empty body)'}`,
          { where, hint: UNREACHABLE_HINT, details: { status: res.statusCode } },
        );
      }
      const check = new TarGzCheck(where);
      const hash = createHash('sha256');
      let bytes = 0;
      const body = res.body;
      async function* checked(): AsyncGenerator<Buffer> {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          await check.write(chunk);
          hash.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      }
      try {
        await writeStreamAtomic(dest, Readable.from(checked()), { check: () => check.finish() });
      } catch (e) {
        body.destroy();
        if (e instanceof AirgapError) throw e;
        last = `the download broke off: ${netErrorCode(e) ?? (e as Error).message}`;
        if (attempt < retries) await sleep(backoff(attempt));
        continue;
      }
      return { url: where, bytes, digest: `sha256:${hash.digest('hex')}` };
    } finally {
      await agents.close();
    }
  }
  throw new AirgapError(
    'GRAPH_DATA_UNREACHABLE',
    `cannot download the graph data from ${first} after ${retries + 1} attempts: ${last}`,
    { where: first, hint: UNREACHABLE_HINT },
  );
}

// ------------------------------------------------------------------------------------ the layer

/** Directory names of the graph-data tree itself; a top-level directory with one of them is kept. */
const GRAPH_DATA_TOP = new Set(['channels', 'blocked-edges', 'raw', 'build-suggestions', 'signatures']);

/** Entry path without `./` or `/` in front and without a trailing `/`; '' for the root. */
function normalise(path: string, where: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw invalidData(where, `entry ${JSON.stringify(path)} leaves the archive root`);
  return parts.join('/');
}

/** Entries of a tar(.gz) stream, one at a time; each must be consumed before the next is read. */
async function* tarEntries(file: string): AsyncGenerator<ReadEntry> {
  const source = createReadStream(file, { highWaterMark: 1 << 20 });
  const parser = new Parser({ strict: true });
  const queue: ReadEntry[] = [];
  let error: Error | undefined;
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
  const fail = (e: Error) => {
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
  source.pipe(parser as unknown as NodeJS.WritableStream);
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (error) throw error;
      if (ended) return;
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    source.destroy();
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

// ------------------------------------------------------------------------------------ the image

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
  digest: string;
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
  return new AirgapError('GRAPH_IMAGE_BASE', message, {
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

/** Stream the new layer into the layout's blob store; returns its descriptor and diff_id. */
async function writeLayer(
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
    const digest = `sha256:${gzHash.digest('hex')}`;
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
async function assertGzip(file: string): Promise<void> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    throw usageError('GRAPH_DATA_MISSING', `cannot read the graph data ${file}: ${(e as Error).message}`, {
      hint: 'download it first (downloadGraphData)',
    });
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
  const { layer, diffId } = await writeLayer(
    layout,
    graphDataTarGz,
    docker ? MediaType.DockerLayerGzip : MediaType.OciLayerGzip,
    mtime,
  );

  let cfg: ImageConfig;
  try {
    cfg = JSON.parse((await layout.readBytes(base.parsed.config.digest)).toString('utf8')) as ImageConfig;
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    throw baseError(
      `the config ${base.parsed.config.digest} of the base image is not JSON`,
      'rebuild or re-mirror the base image',
    );
  }
  const diffIds = [...(cfg.rootfs?.diff_ids ?? [])];
  if (diffIds.length !== base.parsed.layers.length) {
    throw baseError(
      `the base image config lists ${diffIds.length} diff_ids for ${base.parsed.layers.length} layers`,
      'rebuild or re-mirror the base image',
    );
  }
  const created = mtime.toISOString().replace(/\.000Z$/, 'Z');
  const newConfig: ImageConfig = {
    ...cfg,
    config: { ...(cfg.config ?? {}), Cmd: [...GRAPH_IMAGE_CMD] },
    rootfs: { type: 'layers', diff_ids: [...diffIds, diffId] },
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
