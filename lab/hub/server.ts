/**
 * The hub simulator's Kubernetes API server: HTTPS (fastify), bearer-token auth, serving a
 * {@link HubStore} the way kube-apiserver serves etcd, close enough that `kubectl` and
 * `@kubernetes/client-node` work against it unchanged. This file builds the server, checks the token,
 * keeps the request log and routes each request to its handler in api/, one concern a file:
 * - discovery.ts: `/version`, the OpenAPI documents, discovery (`/api`, `/apis`, ...) and the route
 *   from a path to the resource it names;
 * - crud.ts: get and list (also as a Table for `kubectl get`), create, update (and `/status`),
 *   delete and deletecollection, with label and field selectors, `dryRun=All`, `fieldValidation`
 *   (Strict: unknown fields are 400; otherwise they are pruned with a `Warning` header);
 * - patch.ts: PATCH as merge, JSON (RFC 6902), strategic (as merge) and server-side apply, 415 else;
 * - watch.ts: newline-delimited JSON events, resume from a resourceVersion (too old: one ERROR
 *   event with a 410 Status), `timeoutSeconds`, bookmarks, `sendInitialEvents`;
 * - faults.ts: fault injection (fail the next matching requests, drop watch streams);
 * - status.ts: errors as `Status` objects with the real reason, code, message and causes.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type ApiContext, type RequestRecord, type Target } from './api/context.js';
import {
  createObject,
  deleteCollection,
  deleteObject,
  getObject,
  listObjects,
  updateObject,
} from './api/crud.js';
import { route, serveServerInfo } from './api/discovery.js';
import { createFaults, type FaultInjector, type Faults, sendFault } from './api/faults.js';
import { patchObject } from './api/patch.js';
import { methodNotAllowed, send, sendError, statusBody } from './api/status.js';
import { isWatchQuery, watch } from './api/watch.js';
import type { HubStore } from './types.js';

export type { FaultInjector } from './api/faults.js';
export type { RequestRecord } from './api/context.js';

export interface ApiServer {
  /** `https://127.0.0.1:PORT` or `https://[::1]:PORT`. */
  url: string;
  port: number;
  faults: FaultInjector;
  requests(): RequestRecord[];
  close(): Promise<void>;
}

export interface ApiServerOptions {
  store: HubStore;
  /** Default 127.0.0.1; may be `::1` or `::`. */
  host?: string;
  /** 0 (default): any free port. */
  port?: number;
  token: string;
  tls: { cert: string; key: string };
  /** `/version` gitVersion (default v1.31.6). */
  gitVersion?: string;
  /** How often a watch that allows bookmarks gets one (default 10 s). */
  bookmarkIntervalMs?: number;
  /** How long a watch without timeoutSeconds stays open (default 30 min). */
  maxWatchSeconds?: number;
}

/** Start the API server (see the file comment). */
export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const host = opts.host ?? '127.0.0.1';
  const log: RequestRecord[] = [];
  const ctx: ApiContext = {
    store: opts.store,
    gitVersion: opts.gitVersion ?? 'v1.31.6',
    bookmarkMs: opts.bookmarkIntervalMs ?? 10_000,
    maxWatchSeconds: opts.maxWatchSeconds ?? 1800,
    openapiHash: randomBytes(16).toString('hex').toUpperCase(),
    serverAddress: '',
    records: new WeakMap(),
    watches: new Set(),
  };
  const faults = createFaults(ctx);
  const app = createApp(opts.tls, ctx, log);
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    handler: async (req, reply) => {
      try {
        return await handle(ctx, faults, opts.token, req, reply);
      } catch (e) {
        return sendError(reply, e);
      }
    },
  });

  await app.listen({ host, port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  ctx.serverAddress = `${host}:${port}`;
  const urlHost =
    host === '::' ? '[::1]' : host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    url: `https://${urlHost}:${port}`,
    port,
    faults: faults.injector,
    requests: () => log.map((r) => ({ ...r })),
    async close() {
      faults.stop();
      for (const w of [...ctx.watches]) {
        w.cleanup();
        w.res.end();
      }
      await app.close();
    },
  };
}

/** The fastify instance: TLS, raw bodies (each handler decodes its own), the request log, Status errors. */
function createApp(tls: ApiServerOptions['tls'], ctx: ApiContext, log: RequestRecord[]): FastifyInstance {
  const app = Fastify({
    https: { cert: tls.cert, key: tls.key },
    logger: false,
    bodyLimit: 3 * 1024 * 1024,
    forceCloseConnections: true,
    return503OnClosing: false,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req) => {
    const u = new URL(req.url, 'https://hub');
    const rec: RequestRecord = {
      method: req.method,
      path: u.pathname,
      status: 0,
      query: u.search.replace(/^\?/, ''),
    };
    ctx.records.set(req, rec);
    log.push(rec);
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const rec = ctx.records.get(req);
    if (rec) rec.status = reply.statusCode;
    return payload;
  });

  app.setErrorHandler((e, _req, reply) => sendError(reply, e));
  app.setNotFoundHandler((_req, reply) =>
    send(reply, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource', {})),
  );
  return app;
}

/** One request: health checks, the token, injected faults, server info and discovery, then the verb. */
async function handle(
  ctx: ApiContext,
  faults: Faults,
  token: string,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const u = new URL(req.url, 'https://hub');
  const q = u.searchParams;
  const path = u.pathname;
  if (path === '/healthz' || path === '/readyz' || path === '/livez')
    return reply.type('text/plain').send('ok');
  if (req.headers.authorization !== `Bearer ${token}`)
    return send(reply, 401, statusBody(401, 'Unauthorized', 'Unauthorized'));
  let segs: string[];
  try {
    segs = path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return send(reply, 400, statusBody(400, 'BadRequest', 'malformed path'));
  }
  const fault = faults.take(req.method, path);
  if (fault !== undefined) return sendFault(ctx, reply, fault, segs);
  const info = serveServerInfo(ctx, req, reply, path, segs);
  if (info) return info;
  const { target, doc } = route(ctx, segs);
  if (doc) {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method);
    return send(reply, 200, doc);
  }
  return serveResource(ctx, req, reply, target!, q);
}

/** The verb on a resource, to its handler. */
function serveResource(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  switch (req.method) {
    case 'GET':
      if (t.watchPath || (t.name === undefined && isWatchQuery(q))) return watch(ctx, req, reply, t, q);
      return t.name === undefined ? listObjects(ctx, req, reply, t, q) : getObject(ctx, req, reply, t, q);
    case 'POST':
      return createObject(ctx, req, reply, t, q);
    case 'PUT':
      return updateObject(ctx, req, reply, t, q);
    case 'PATCH':
      return patchObject(ctx, req, reply, t, q);
    case 'DELETE':
      return t.name === undefined
        ? deleteCollection(ctx, req, reply, t, q)
        : deleteObject(ctx, req, reply, t, q);
    default:
      throw methodNotAllowed(req.method);
  }
}
