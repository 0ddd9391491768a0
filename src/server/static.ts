/**
 * The boot-image file server: a fastify app that serves one directory tree, read-only.
 *
 * {@link createImageServer} builds the app and never listens; `listen.ts` binds it to addresses.
 * What it does, and why:
 * - GET and HEAD only; every other method is 405 before any request body is read.
 * - The path is checked before the filesystem is touched: percent-decoding per segment, and `..`,
 *   `.`, encoded `/` or `\`, NUL bytes and non-origin-form targets (`http://…`, `*`) are 400. Names
 *   starting with `.` are not served nor listed (half-written downloads live there). The resolved
 *   file is then checked with realpath to be inside the root, so a symlink that leaves the root is
 *   404 like a file that does not exist.
 * - Files: `Accept-Ranges: bytes`, a strong ETag from size, mtime and inode, `Last-Modified`,
 *   conditional requests (If-Match, If-Unmodified-Since → 412; If-None-Match, If-Modified-Since →
 *   304), single ranges (206 with Content-Range), several ranges (206 multipart/byteranges),
 *   `If-Range` with an ETag or a date, and 416 with `Content-Range: bytes *\/size`.
 * - Directories: an HTML index (names escaped) or a JSON one (`?format=json`, or an Accept header
 *   that asks for JSON and not HTML), with name, type, size and mtime of each entry.
 * - `/healthz` answers 200 `ok`.
 * - Bytes go from the open file descriptor to the socket in 1 MiB chunks, read into buffers of one
 *   pool per app (32 by default: memory stays flat however many clients download). A download
 *   reads its next chunk while the previous one is written when the pool has a buffer to spare, and
 *   a buffer is reused only once the socket has taken it (backpressure; no allocation per chunk).
 * - Every response gives one access-log entry (a structured one to `onRequestLog`, a line in
 *   combined log format to `accessLog`). Query strings are never logged.
 */
import { randomBytes } from 'node:crypto';
import { close, constants as fsc, fstat, open, read, type Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { extname, join, sep } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { usageError } from '../util/errors.js';

/** Timeouts and limits of every server socket. A slow or idle client cannot hold the server. */
export interface ServerLimits {
  /** A socket with no bytes moving either way for this long is closed (a reader that stopped reading). */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** The request headers must arrive within this time (slow-header clients are answered 408 and closed). */
  headersTimeoutMs: number;
  /** The whole request must arrive within this time (at least headersTimeoutMs). Responses are not limited. */
  requestTimeoutMs: number;
  /** How often node checks headersTimeoutMs and requestTimeoutMs. */
  checkIntervalMs: number;
  /** At most this many connections at once; more are closed as soon as they are accepted. */
  maxConnections: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 1_000,
  maxConnections: 1_024,
};

/** Bytes per read from a file and write to a socket. */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024;
/** Read buffers shared by all downloads: at most 32 MiB however many clients download at once. */
export const DEFAULT_MAX_BUFFERS = 32;

/** At most this many ranges in one request; more, or ranges that add up past the file size, get the whole file. */
export const MAX_RANGES = 64;

/** One served request, for the access log. */
export interface AccessLogEntry {
  /** When the request arrived. */
  time: Date;
  /** Client address (IPv4-mapped IPv6 addresses shown as IPv4). */
  remote: string;
  method: string;
  /** The request path without its query string. */
  path: string;
  httpVersion: string;
  status: number;
  /** Body bytes sent (less than the length announced when the client went away). */
  bytes: number;
  durationMs: number;
  userAgent?: string;
  referer?: string;
  /** The connection closed before the response was complete. */
  aborted: boolean;
  /** Why the answer is an error, for the operator (never sent to the client). */
  problem?: string;
}

export interface ImageServerOptions {
  /** The directory to serve (resolved with realpath; see {@link resolveServeRoot}). */
  root: string;
  /** Called with one line in combined log format per response. */
  accessLog?: (line: string) => void;
  /** Called with each response's structured entry. */
  onRequestLog?: (entry: AccessLogEntry) => void;
  /** Serve HTTPS with this certificate (chain, leaf first) and key, both PEM. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  limits?: Partial<ServerLimits>;
  /** Bytes per read and write; default {@link DEFAULT_CHUNK_BYTES}. */
  chunkBytes?: number;
  /** Read buffers shared by all downloads (memory: chunkBytes × maxBuffers); default {@link DEFAULT_MAX_BUFFERS}. */
  maxBuffers?: number;
}

/** The node server of every binding of an app, so that extra addresses get the same TLS and limits. */
const serverMakers = new WeakMap<FastifyInstance, () => http.Server>();

/**
 * The directory to serve, as its real path. A usage error (exit 2) when it does not exist, is not
 * a directory or cannot be read.
 */
export async function resolveServeRoot(dir: string, flag = '--dir'): Promise<string> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw usageError(
      'SERVE_DIR_MISSING',
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `the directory ${dir} does not exist`
        : `cannot open the directory ${dir}: ${(e as Error).message}`,
      { where: `${flag} ${dir}`, hint: 'give the directory that holds the boot images (its images/ folder)' },
    );
  }
  const st = await stat(real);
  if (!st.isDirectory())
    throw usageError('SERVE_DIR_NOT_DIR', `${dir} is not a directory`, {
      where: `${flag} ${dir}`,
      hint: 'give the directory that holds the files, not a file in it',
    });
  try {
    await readdir(real);
  } catch (e) {
    throw usageError('SERVE_DIR_UNREADABLE', `cannot read the directory ${dir}: ${(e as Error).message}`, {
      where: `${flag} ${dir}`,
      hint: 'check its permissions for the user that runs airgap',
    });
  }
  return real;
}

/** A node HTTP(S) server with the limits applied, handling requests with `handler`. */
function nodeServer(
  handler: http.RequestListener,
  limits: ServerLimits,
  tls: ImageServerOptions['tls'],
): http.Server {
  const common = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
    noDelay: true,
  };
  const server: http.Server = tls
    ? https.createServer({ ...common, cert: tls.cert, key: tls.key }, handler)
    : http.createServer(common, handler);
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.setTimeout(limits.idleTimeoutMs);
  server.maxConnections = limits.maxConnections;
  return server;
}

/**
 * Another node server for `app` (a second address): the same TLS and limits as `app.server`, its
 * requests handled by `app`. Only for apps made by {@link createImageServer}.
 */
export function serverForAnotherAddress(app: FastifyInstance): http.Server {
  const make = serverMakers.get(app);
  if (!make) throw new Error('serverForAnotherAddress: app was not made by createImageServer');
  return make();
}

/** The fastify app serving `opts.root`. It never listens by itself. */
export function createImageServer(opts: ImageServerOptions): FastifyInstance {
  const limits: ServerLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const ctx: Ctx = {
    root: opts.root.endsWith(sep) && opts.root !== sep ? opts.root.slice(0, -1) : opts.root,
    pool: new BufferPool(opts.chunkBytes ?? DEFAULT_CHUNK_BYTES, opts.maxBuffers ?? DEFAULT_MAX_BUFFERS),
    log: (entry) => {
      opts.onRequestLog?.(entry);
      if (opts.accessLog) opts.accessLog(formatAccessLog(entry));
    },
  };
  let routing: http.RequestListener | undefined;
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    bodyLimit: 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    serverFactory: (handler) => {
      routing = handler;
      return nodeServer(handler, limits, opts.tls);
    },
    // A URL fastify cannot decode is answered like every other bad path, and logged.
    frameworkErrors: (err, req, reply) => {
      reply.hijack();
      const rr = begin(req.raw, reply.raw, ctx);
      rr.problem = err.message;
      sendText(rr, 400, 'Bad Request');
    },
  }) as unknown as FastifyInstance;
  serverMakers.set(app, () => nodeServer(routing!, limits, opts.tls));

  // Read-only: anything but GET and HEAD is refused before a body is read.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method === 'GET' || req.method === 'HEAD') return done();
    reply.hijack();
    const rr = begin(req.raw, reply.raw, ctx);
    sendText(rr, 405, 'Method Not Allowed', { Allow: 'GET, HEAD' });
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/healthz',
    handler: (req, reply) => {
      reply.hijack();
      sendText(begin(req.raw, reply.raw, ctx), 200, 'ok', { 'Cache-Control': 'no-store' });
    },
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    handler: (req, reply) => {
      reply.hijack();
      void serve(begin(req.raw, reply.raw, ctx), ctx);
    },
  });
  app.setNotFoundHandler((req, reply) => {
    reply.hijack();
    const rr = begin(req.raw, reply.raw, ctx);
    rr.problem = 'not an origin-form request target';
    sendText(rr, 400, 'Bad Request');
  });
  return app;
}

// ---------------------------------------------------------------- one request

interface Ctx {
  root: string;
  pool: BufferPool;
  log: (e: AccessLogEntry) => void;
}

/** One request in flight: what the access log needs, filled as it goes. */
interface Req {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  started: number;
  time: Date;
  path: string;
  bytes: number;
  problem?: string;
}

function begin(req: http.IncomingMessage, res: http.ServerResponse, ctx: Ctx): Req {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const rr: Req = {
    req,
    res,
    started: performance.now(),
    time: new Date(),
    path: q < 0 ? url : url.slice(0, q),
    bytes: 0,
  };
  res.once('close', () => {
    const remote = req.socket.remoteAddress ?? '-';
    ctx.log({
      time: rr.time,
      remote: remote.startsWith('::ffff:') ? remote.slice(7) : remote,
      method: req.method ?? '-',
      path: rr.path,
      httpVersion: req.httpVersion,
      status: res.statusCode,
      bytes: rr.bytes,
      durationMs: performance.now() - rr.started,
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      ...(req.headers.referer ? { referer: req.headers.referer } : {}),
      aborted: !res.writableFinished,
      ...(rr.problem ? { problem: rr.problem } : {}),
    });
  });
  return rr;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
};

/** A small text response (errors, health), with a body only for GET. */
function sendText(rr: Req, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(`${text}\n`);
  rr.res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(body.length),
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  if (rr.req.method === 'HEAD') {
    rr.res.end();
    return;
  }
  rr.bytes = body.length;
  rr.res.end(body);
}

function fail(rr: Req, status: number, problem: string): void {
  rr.problem = problem;
  sendText(rr, status, REASONS[status] ?? 'Error');
}

/** The path segments of a request target, decoded and checked; or why it is refused (400). */
export function parseTarget(
  url: string,
): { ok: true; segments: string[]; trailingSlash: boolean; query: string } | { ok: false; problem: string } {
  if (!url.startsWith('/')) return { ok: false, problem: 'not an origin-form request target' };
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue; // leading, trailing and repeated slashes
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return { ok: false, problem: 'bad percent-encoding in the path' };
    }
    if (s.includes('\0')) return { ok: false, problem: 'NUL byte in the path' };
    if (s.includes('/') || s.includes('\\')) return { ok: false, problem: 'encoded slash in the path' };
    if (s === '.' || s === '..') return { ok: false, problem: 'dot segment in the path (traversal)' };
    segments.push(s);
  }
  return { ok: true, segments, trailingSlash: rawPath.endsWith('/'), query };
}

function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root === sep ? root : root + sep);
}

/** errno of a filesystem error → status and what the operator reads. */
function fsFailure(e: unknown, what: string): [number, string] {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG')
    return [404, `${what}: ${code}`];
  if (code === 'EACCES' || code === 'EPERM') return [403, `${what}: permission denied (${code})`];
  return [500, `${what}: ${(e as Error).message}`];
}

const openFlags = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK; // libuv adds O_CLOEXEC

const openFd = (path: string) =>
  new Promise<number>((resolve, reject) =>
    open(path, openFlags, (err, fd) => (err ? reject(err) : resolve(fd))),
  );
const statFd = (fd: number) =>
  new Promise<Stats>((resolve, reject) => fstat(fd, (err, st) => (err ? reject(err) : resolve(st))));
const closeFd = (fd: number) => close(fd, () => undefined);

async function serve(rr: Req, ctx: Ctx): Promise<void> {
  try {
    const t = parseTarget(rr.req.url ?? '');
    if (!t.ok) return fail(rr, 400, t.problem);
    if (t.segments.some((s) => s.startsWith('.')))
      return fail(rr, 404, 'hidden name (starting with a dot) in the path');
    let real: string;
    try {
      real = await realpath(join(ctx.root, ...t.segments));
    } catch (e) {
      const [status, problem] = fsFailure(e, 'resolving the path');
      return fail(rr, status, problem);
    }
    if (!isInside(ctx.root, real)) return fail(rr, 404, `resolves outside the served directory (${real})`);
    let fd: number;
    try {
      // O_NOFOLLOW: the real path has no symlink left; O_NONBLOCK: a FIFO must not block the open.
      fd = await openFd(real);
    } catch (e) {
      const [status, problem] = fsFailure(e, 'opening the file');
      return fail(rr, status, problem);
    }
    let handedOver = false;
    try {
      const st = await statFd(fd);
      if (st.isDirectory()) {
        if (!t.trailingSlash) {
          // Rebuilt from the checked segments: never `//host/` (a redirect to another site).
          const location = `/${t.segments.map(encodeURIComponent).join('/')}/${t.query ? `?${t.query}` : ''}`;
          rr.res.writeHead(301, { Location: location, 'Content-Length': '0' });
          rr.res.end();
          return;
        }
        return await sendIndex(rr, ctx, real, t.query);
      }
      if (!st.isFile()) return fail(rr, 403, 'not a regular file');
      if (t.trailingSlash) return fail(rr, 404, 'a file asked for as a directory');
      handedOver = true;
      sendFile(rr, ctx, fd, st, contentTypeOf(real), () => closeFd(fd));
    } finally {
      if (!handedOver) closeFd(fd);
    }
  } catch (e) {
    rr.problem = `internal error: ${(e as Error).message}`;
    if (!rr.res.headersSent) fail(rr, 500, rr.problem);
    else rr.res.destroy();
  }
}

// ---------------------------------------------------------------- files

const CONTENT_TYPES: Record<string, string> = {
  '.iso': 'application/x-iso9660-image',
  '.img': 'application/octet-stream',
  '.raw': 'application/octet-stream',
  '.qcow2': 'application/octet-stream',
  '.json': 'application/json',
  '.ign': 'application/vnd.coreos.ignition+json',
  '.txt': 'text/plain; charset=utf-8',
  '.sha256': 'text/plain; charset=utf-8',
  '.sha256sum': 'text/plain; charset=utf-8',
  '.sig': 'application/pgp-signature',
  '.asc': 'application/pgp-signature',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.html': 'text/html; charset=utf-8',
  '.pem': 'application/x-pem-file',
  '.crt': 'application/x-pem-file',
  '.gz': 'application/gzip',
  '.xz': 'application/x-xz',
  '.zst': 'application/zstd',
  '.tar': 'application/x-tar',
};

/** The Content-Type of a file name: `.iso` is `application/x-iso9660-image`, `.img` and unknown ones `application/octet-stream`. */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** A strong validator from size, mtime and inode: it changes whenever the file is rewritten or replaced. */
export function etagOf(st: Pick<Stats, 'size' | 'mtimeMs' | 'ino'>): string {
  return `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}-${st.ino.toString(16)}"`;
}

/** The entity tags of an If-Match / If-None-Match header (`*` stays `*`). */
function etagList(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"|\*/g) ?? [];
}

const strongMatch = (tag: string, etag: string) => !tag.startsWith('W/') && tag === etag;
const weakMatch = (tag: string, etag: string) => tag.replace(/^W\//, '') === etag;

/** An HTTP date in whole seconds since the epoch, or undefined when it does not parse. */
function httpDate(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

export type RangeResult =
  { kind: 'none' } | { kind: 'unsatisfiable' } | { kind: 'ranges'; ranges: { start: number; end: number }[] };

/**
 * A `Range` header against a file of `size` bytes (RFC 9110 §14.1.2): `none` when it is absent,
 * not in bytes, malformed, or asks for too much (then the whole file is sent), `unsatisfiable`
 * when no range overlaps the file (416), else the ranges in the order asked, each clipped to the
 * file (`end` inclusive).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return { kind: 'none' };
  const specs = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length === 0 || specs.length > MAX_RANGES) return { kind: 'none' };
  const ranges: { start: number; end: number }[] = [];
  for (const spec of specs) {
    const r = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
    if (!r || (r[1] === '' && r[2] === '')) return { kind: 'none' };
    if (r[1] === '') {
      const suffix = Number(r[2]);
      if (suffix > 0 && size > 0) ranges.push({ start: Math.max(0, size - suffix), end: size - 1 });
      continue;
    }
    const start = Number(r[1]);
    const last = r[2] === '' ? Infinity : Number(r[2]);
    if (last < start) return { kind: 'none' };
    if (start < size) ranges.push({ start, end: Math.min(last, size - 1) });
  }
  if (ranges.length === 0) return { kind: 'unsatisfiable' };
  const total = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
  if (ranges.length > 1 && total > size) return { kind: 'none' };
  return { kind: 'ranges', ranges };
}

function sendFile(rr: Req, ctx: Ctx, fd: number, st: Stats, type: string, done: () => void): void {
  const { req, res } = rr;
  const size = st.size;
  const etag = etagOf(st);
  const mtime = Math.floor(st.mtimeMs / 1000);
  const base: Record<string, string> = {
    ETag: etag,
    'Last-Modified': st.mtime.toUTCString(),
    'Accept-Ranges': 'bytes',
  };
  const h = req.headers;
  const finish = (status: number, headers: Record<string, string>) => {
    res.writeHead(status, { ...base, ...headers });
    res.end();
    done();
  };
  // Preconditions in the order of RFC 9110 §13.2.2.
  if (h['if-match'] !== undefined) {
    const tags = etagList(h['if-match']);
    if (!tags.some((t) => t === '*' || strongMatch(t, etag))) {
      rr.problem = 'If-Match does not match';
      return finish(412, { 'Content-Length': '0' });
    }
  } else {
    const ius = httpDate(h['if-unmodified-since']);
    if (ius !== undefined && mtime > ius) {
      rr.problem = 'modified since If-Unmodified-Since';
      return finish(412, { 'Content-Length': '0' });
    }
  }
  if (h['if-none-match'] !== undefined) {
    const tags = etagList(h['if-none-match']);
    if (tags.some((t) => t === '*' || weakMatch(t, etag))) return finish(304, {});
  } else {
    const ims = httpDate(h['if-modified-since']);
    if (ims !== undefined && mtime <= ims) return finish(304, {});
  }

  // Range applies to GET only; If-Range that does not match means the whole file.
  let range: RangeResult = req.method === 'GET' ? parseRange(h.range, size) : { kind: 'none' };
  const ifRange = h['if-range'];
  if (range.kind !== 'none' && ifRange !== undefined) {
    const v = String(ifRange).trim();
    const fresh = v.startsWith('"') || v.startsWith('W/') ? strongMatch(v, etag) : httpDate(v) === mtime;
    if (!fresh) range = { kind: 'none' };
  }

  if (range.kind === 'unsatisfiable') {
    rr.problem = `Range ${h.range} outside ${size} bytes`;
    rr.res.writeHead(416, { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': '0' });
    res.end();
    return done();
  }
  const head = req.method === 'HEAD';
  if (range.kind === 'none') {
    res.writeHead(200, { ...base, 'Content-Type': type, 'Content-Length': String(size) });
    if (head || size === 0) {
      res.end();
      return done();
    }
    return pump(rr, ctx, fd, [{ start: 0, end: size - 1 }], undefined, done);
  }
  if (range.ranges.length === 1) {
    const r = range.ranges[0]!;
    res.writeHead(206, {
      ...base,
      'Content-Type': type,
      'Content-Range': `bytes ${r.start}-${r.end}/${size}`,
      'Content-Length': String(r.end - r.start + 1),
    });
    return pump(rr, ctx, fd, [r], undefined, done);
  }
  const boundary = `airgap-${randomBytes(12).toString('hex')}`;
  const parts = range.ranges.map((r) =>
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Type: ${type}\r\nContent-Range: bytes ${r.start}-${r.end}/${size}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = range.ranges.reduce((n, r, i) => n + parts[i]!.length + r.end - r.start + 1, tail.length);
  res.writeHead(206, {
    ...base,
    'Content-Type': `multipart/byteranges; boundary=${boundary}`,
    'Content-Length': String(length),
  });
  pump(rr, ctx, fd, range.ranges, { parts, tail }, done);
}

function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))),
  );
}

/**
 * The read buffers of every download of one app: at most `max` buffers of `size` bytes, allocated
 * when first needed and kept (so memory stays flat at its peak instead of churning the GC). A
 * download waits its turn (first come, first served) when all are in use.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  private readonly waiters: ((b: Buffer) => void)[] = [];
  private allocated = 0;

  constructor(
    readonly size: number,
    readonly max: number,
  ) {}

  /** Downloads waiting for a buffer. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** A buffer now if one is free or may be made and nobody waits; else undefined. */
  tryAcquire(): Buffer | undefined {
    if (this.waiters.length > 0) return undefined;
    const b = this.free.pop();
    if (b) return b;
    if (this.allocated < this.max) {
      this.allocated++;
      return Buffer.allocUnsafeSlow(this.size);
    }
    return undefined;
  }

  /** A buffer, waiting for one if all are in use. */
  acquire(): Promise<Buffer> {
    const b = this.tryAcquire();
    return b ? Promise.resolve(b) : new Promise((resolve) => this.waiters.push(resolve));
  }

  release(b: Buffer): void {
    const next = this.waiters.shift();
    if (next) next(b);
    else this.free.push(b);
  }
}

const GONE = Symbol('gone');

/**
 * Stream `ranges` of `fd` to the response, in chunks read into buffers of the app's pool. While
 * chunk k is being written, chunk k+1 is read into a second buffer if the pool has one to spare;
 * a buffer goes back to the pool (or to the next chunk) only once the socket has taken it, and is
 * handed to a waiting download between chunks. Between ranges, the multipart headers. Stops when
 * the client goes away; `done` is called exactly once, when the descriptor may be closed.
 */
function pump(
  rr: Req,
  ctx: Ctx,
  fd: number,
  ranges: { start: number; end: number }[],
  multipart: { parts: Buffer[]; tail: Buffer } | undefined,
  done: () => void,
): void {
  const { res } = rr;
  const pool = ctx.pool;
  // No wait below outlives the client: 'close' wakes whatever waits. (One callback per wait, not
  // a race against one long-lived promise, whose reactions would pile up chunk after chunk.)
  let gone = false;
  let wake: (() => void) | undefined;
  res.once('close', () => {
    gone = true;
    wake?.();
  });
  const orGone = async <T>(p: Promise<T>): Promise<T | typeof GONE> => {
    if (gone) return GONE;
    const r = await new Promise<T | typeof GONE>((resolve) => {
      wake = () => resolve(GONE);
      p.then(resolve, () => resolve(GONE)); // a failed write: the connection is going
    });
    wake = undefined;
    return r;
  };
  /** The write the socket has not finished, and the pool buffer it holds (none for multipart headers). */
  let inflight: { done: Promise<void>; buf?: Buffer } | undefined;
  /** Pool buffers this download holds that no write uses. */
  const spare: Buffer[] = [];
  /** Wait for the write in flight; false when the client went away meanwhile. */
  const drained = async (): Promise<boolean> => {
    if (!inflight) return !gone;
    const w = inflight;
    if ((await orGone(w.done)) === GONE) return false;
    inflight = undefined;
    if (w.buf) {
      if (pool.waiting > 0) pool.release(w.buf);
      else spare.push(w.buf);
    }
    return !gone;
  };
  const send = (data: Buffer, buf?: Buffer) => {
    // The callback is the moment the socket has taken the bytes (node drops it for a socket
    // already destroyed; 'close' then ends the wait).
    const w = new Promise<void>((resolve, reject) => {
      res.write(data, (err) => (err ? reject(err) : resolve()));
    });
    w.catch(() => undefined); // seen by the next wait, or as 'close'; never an unhandled rejection
    inflight = { done: w, ...(buf ? { buf } : {}) };
    rr.bytes += data.length;
  };
  /** A buffer to read the next chunk into, or undefined when the client went away. */
  const nextBuffer = async (): Promise<Buffer | undefined> => {
    const own = spare.pop();
    if (own) return own;
    if (inflight) {
      const extra = pool.tryAcquire();
      if (extra) return extra;
      if (!(await drained())) return undefined;
      const again = spare.pop();
      if (again) return again;
    }
    const acquiring = pool.acquire();
    const b = await orGone(acquiring);
    if (b !== GONE) return b;
    // Still in the queue: pass the buffer on when it comes.
    void acquiring.then((x) => pool.release(x));
    return undefined;
  };
  const run = async (): Promise<boolean> => {
    for (let i = 0; i < ranges.length; i++) {
      if (multipart) {
        if (!(await drained())) return false;
        send(multipart.parts[i]!);
      }
      const { start, end } = ranges[i]!;
      let pos = start;
      while (pos <= end) {
        const buf = await nextBuffer();
        if (!buf) return false;
        let n: number;
        try {
          n = await readAt(fd, buf, Math.min(buf.length, end - pos + 1), pos);
        } catch (e) {
          spare.push(buf);
          throw e;
        }
        if (n === 0) {
          spare.push(buf);
          throw new Error(`the file ended at byte ${pos}, before ${end + 1} (it shrank while served)`);
        }
        if (!(await drained())) {
          spare.push(buf);
          return false;
        }
        send(n === buf.length ? buf : buf.subarray(0, n), buf);
        pos += n;
      }
    }
    if (multipart) {
      if (!(await drained())) return false;
      send(multipart.tail);
    }
    if (!(await drained())) return false;
    res.end();
    return true;
  };
  const settle = async () => {
    for (const b of spare.splice(0)) pool.release(b);
    const buf = inflight?.buf;
    // A buffer still in a write goes back once the write is done or the socket is closed: after
    // 'close' the socket's handle is closed, and nothing reads the buffer any more.
    if (buf && inflight) await orGone(inflight.done);
    if (buf) pool.release(buf);
    done();
  };
  run().then(settle, (e: Error) => {
    if (!gone) {
      rr.problem = `read failed: ${e.message}`;
      res.destroy(e);
    }
    return settle();
  });
}

// ---------------------------------------------------------------- directories

/** One entry of a directory index. */
export interface IndexEntry {
  name: string;
  type: 'file' | 'directory';
  size: number;
  /** ISO 8601, UTC. */
  mtime: string;
}

/** What `?format=json` returns for a directory. */
export interface DirectoryIndex {
  path: string;
  entries: IndexEntry[];
}

async function listDirectory(ctx: Ctx, dir: string): Promise<IndexEntry[]> {
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.'));
  const entries = await Promise.all(
    names.map(async (name): Promise<IndexEntry | undefined> => {
      const p = join(dir, name);
      try {
        // Symlinks are listed only when they stay inside the root, like they are served.
        const real = await realpath(p);
        if (!isInside(ctx.root, real)) return undefined;
        const st = await stat(real);
        if (!st.isFile() && !st.isDirectory()) return undefined;
        return {
          name,
          type: st.isDirectory() ? 'directory' : 'file',
          size: st.isDirectory() ? 0 : st.size,
          mtime: st.mtime.toISOString(),
        };
      } catch {
        return undefined;
      }
    }),
  );
  return entries
    .filter((e): e is IndexEntry => e !== undefined)
    .sort((a, b) =>
      a.type === b.type ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.type === 'directory' ? -1 : 1,
    );
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function wantsJson(req: http.IncomingMessage, query: string): boolean {
  const format = new URLSearchParams(query).get('format');
  if (format === 'json') return true;
  if (format === 'html') return false;
  const accept = (req.headers.accept ?? '').toLowerCase();
  return accept.includes('application/json') && !accept.includes('text/html');
}

function formatSize(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

function indexHtml(urlPath: string, entries: IndexEntry[]): string {
  const title = `Index of ${escapeHtml(urlPath)}`;
  const rows = entries.map((e) => {
    const href = encodeURIComponent(e.name) + (e.type === 'directory' ? '/' : '');
    const label = escapeHtml(e.name) + (e.type === 'directory' ? '/' : '');
    const size = e.type === 'directory' ? '-' : formatSize(e.size);
    return `<tr><td><a href="${href}">${label}</a></td><td>${size}</td><td>${e.mtime}</td></tr>`;
  });
  const up = urlPath === '/' ? '' : '<tr><td><a href="../">../</a></td><td></td><td></td></tr>';
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${title}</title>`,
    '<style>body{font-family:sans-serif}td{padding:0 1em 0 0}</style>',
    `</head><body><h1>${title}</h1>`,
    '<table><tr><th align="left">Name</th><th align="left">Size</th><th align="left">Modified (UTC)</th></tr>',
    up,
    ...rows,
    '</table></body></html>',
    '',
  ].join('\n');
}

async function sendIndex(rr: Req, ctx: Ctx, dir: string, query: string): Promise<void> {
  let entries: IndexEntry[];
  try {
    entries = await listDirectory(ctx, dir);
  } catch (e) {
    const [status, problem] = fsFailure(e, 'listing the directory');
    return fail(rr, status, problem);
  }
  // The path as the client wrote it is only used once decoded and escaped.
  const segments = parseTargetSegments(rr.path);
  const urlPath = segments.length ? `/${segments.join('/')}/` : '/';
  const json = wantsJson(rr.req, query);
  const body = Buffer.from(
    json
      ? `${JSON.stringify({ path: urlPath, entries } satisfies DirectoryIndex, null, 2)}\n`
      : indexHtml(urlPath, entries),
  );
  rr.res.writeHead(200, {
    'Content-Type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'Content-Length': String(body.length),
    'Cache-Control': 'no-cache',
    Vary: 'Accept',
    'X-Content-Type-Options': 'nosniff',
  });
  if (rr.req.method === 'HEAD') {
    rr.res.end();
    return;
  }
  rr.bytes = body.length;
  rr.res.end(body);
}

function parseTargetSegments(path: string): string[] {
  const t = parseTarget(path);
  return t.ok ? t.segments : [];
}

// ---------------------------------------------------------------- access log

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `[10/Oct/2000:13:55:36 +0000]`, in UTC. */
function clfDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** Quote a log field: control characters, `"`, `\` and non-ASCII as \xHH, so a line stays one line. */
function logField(s: string | undefined): string {
  if (!s) return '-';
  return s.replace(/[^\x20-\x7e]|["\\]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 256
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * One line in combined log format, then the duration in seconds, then `aborted` when the client
 * went away, then the problem in quotes when there is one:
 * `127.0.0.1 - - [22/Nov/2026:04:03:21 +0000] "GET /images/x.iso HTTP/1.1" 206 1024 "-" "curl/7.88.1" 0.002`
 */
export function formatAccessLog(e: AccessLogEntry): string {
  const extra = `${e.aborted ? ' aborted' : ''}${e.problem ? ` "${logField(e.problem)}"` : ''}`;
  return `${e.remote} - - [${clfDate(e.time)}] "${logField(e.method)} ${logField(e.path)} HTTP/${e.httpVersion}" ${e.status} ${e.bytes || '-'} "${logField(e.referer)}" "${logField(e.userAgent)}" ${(e.durationMs / 1000).toFixed(3)}${extra}`;
}
