/**
 * The boot-image file server: a fastify app that serves one directory tree, read-only.
 *
 * {@link createImageServer} builds the app and never listens; `listen.ts` binds it to addresses.
 * What it does, and why (each concern in its own file under static/):
 * - GET and HEAD only; every other method is 405 before any request body is read.
 * - The path is checked before the filesystem is touched (static/paths.ts): percent-decoding per
 *   segment, and `..`, `.`, encoded `/` or `\`, NUL bytes and non-origin-form targets (`http://…`,
 *   `*`) are 400. Names starting with `.` are not served nor listed (half-written downloads live
 *   there). The resolved file is then checked with realpath to be inside the root, so a symlink
 *   that leaves the root is 404 like a file that does not exist.
 * - Files (static/send-file.ts, static/conditional.ts): `Accept-Ranges: bytes`, a strong ETag from
 *   size, mtime and inode, `Last-Modified`, conditional requests (If-Match, If-Unmodified-Since →
 *   412; If-None-Match, If-Modified-Since → 304), single ranges (206 with Content-Range), several
 *   ranges (206 multipart/byteranges), `If-Range` with an ETag or a date, and 416 with
 *   `Content-Range: bytes *\/size`.
 * - Directories are not listed unless `directoryListing` is on (nginx's autoindex is off by
 *   default too): a directory is then 404, like a path that does not exist, so that a client
 *   learns nothing about the tree beyond the files it names. With it on (static/directory-index.ts):
 *   an HTML index (names escaped) or a JSON one (`?format=json`, or an Accept header that asks for
 *   JSON and not HTML), with name, type, size and mtime of each entry.
 * - `/healthz` answers 200 `ok`.
 * - Bytes go from the open file descriptor to the socket in chunks of 256 KiB (static/pump.ts),
 *   read into one buffer that belongs to that download alone (smaller for a smaller answer),
 *   reused chunk after chunk and read into again only once the socket has taken it (backpressure).
 *   A download may also borrow one of the app's 16 read-ahead buffers to read the next chunk
 *   while the socket takes the last, but only if one is free: nobody waits for one. So no
 *   download ever waits for another, and a client that stops reading costs only itself: one
 *   chunk (two if it holds a read-ahead buffer), until the idle timeout closes it. Memory is at
 *   most chunkBytes × (downloads + 16): about 130 MiB for 500 stalled clients.
 * - Every response gives one access-log entry (static/access-log.ts; a structured one to
 *   `onRequestLog`, a line in combined log format to `accessLog`). Query strings are never logged.
 */
import http from 'node:http';
import https from 'node:https';
import { sep } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { formatAccessLog, type AccessLogEntry } from './static/access-log.js';
import { sendIndex } from './static/directory-index.js';
import { closeFd, openTarget, parseTarget, statFd } from './static/paths.js';
import { ReadAheadBuffers } from './static/pump.js';
import { begin, fail, sendText, type Ctx, type Req } from './static/request.js';
import { contentTypeOf, sendFile } from './static/send-file.js';

export { formatAccessLog, type AccessLogEntry } from './static/access-log.js';
export { parseRange } from './static/conditional.js';
export { resolveServeRoot } from './static/paths.js';

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

const DEFAULT_LIMITS: ServerLimits = {
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 1_000,
  maxConnections: 1_024,
};

/**
 * Bytes per read from a file and write to a socket, and the size of each download's one buffer:
 * what a stalled client costs. 1 MiB chunks were not measurably faster on loopback
 * (bench/serve.ts) and would cost four times as much per stalled client.
 */
export const DEFAULT_CHUNK_BYTES = 256 * 1024;
/**
 * Read-ahead buffers of one app (4 MiB with the default chunk), lent to downloads only when free:
 * enough for the few fast downloads that gain from reading ahead (static/pump.ts).
 */
export const READ_AHEAD_BUFFERS = 16;

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
  /** Bytes per read and write, and per download's buffer; default {@link DEFAULT_CHUNK_BYTES}. */
  chunkBytes?: number;
  /** List directories (HTML or JSON). Default off: a directory is 404. */
  directoryListing?: boolean;
}

/** The node server of every binding of an app, so that extra addresses get the same TLS and limits. */
const serverMakers = new WeakMap<FastifyInstance, () => http.Server>();

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
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const ctx: Ctx = {
    root: opts.root.endsWith(sep) && opts.root !== sep ? opts.root.slice(0, -1) : opts.root,
    chunkBytes,
    readAhead: new ReadAheadBuffers(chunkBytes, READ_AHEAD_BUFFERS),
    directoryListing: opts.directoryListing ?? false,
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
  });
  serverMakers.set(app, () => nodeServer(routing!, limits, opts.tls));
  addRoutes(app, ctx);
  return app;
}

/** The routes: methods other than GET and HEAD refused, /healthz, every path, and non-origin targets. */
function addRoutes(app: FastifyInstance, ctx: Ctx): void {
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
}

/**
 * Answer one GET or HEAD: check the path, open what it names inside the root, then the file, or
 * for a directory 404 (listing off) or a redirect to the slash form and its index. Errors after
 * the headers went out cut the connection (the client sees a short body, not a wrong one).
 */
async function serve(rr: Req, ctx: Ctx): Promise<void> {
  try {
    const t = parseTarget(rr.req.url ?? '');
    if (!t.ok) return fail(rr, 400, t.problem);
    const target = await openTarget(ctx.root, t.segments);
    if (!target.ok) return fail(rr, target.status, target.problem);
    const { real, fd } = target;
    let handedOver = false;
    try {
      const st = await statFd(fd);
      if (st.isDirectory()) {
        // 404 rather than nginx's 403: a directory answers like a path that does not exist, so
        // that without listings nobody learns which directories there are (not even by a 301).
        if (!ctx.directoryListing) return fail(rr, 404, 'a directory, and directory listing is off');
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
