/**
 * The hub simulator's Kubernetes API server: HTTPS (fastify), bearer-token auth, serving a
 * {@link HubStore} the way kube-apiserver serves etcd, close enough that `kubectl` and
 * `@kubernetes/client-node` work against it unchanged:
 * - discovery (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`; legacy JSON
 *   even when aggregated discovery is asked for, which clients accept); `/openapi/*` is 404;
 * - CRUD on every type, namespaced and across namespaces, `/status` subresources, label and field
 *   selectors, `dryRun=All`, `fieldValidation` (Strict: unknown fields are 400; otherwise they are
 *   pruned with a `Warning` header), deletecollection;
 * - PATCH as merge, JSON (RFC 6902), strategic (as merge) and server-side apply (apply.ts), 415 else;
 * - watch (`?watch=1`): newline-delimited JSON events, resume from a resourceVersion (too old: one
 *   ERROR event with a 410 Status), `timeoutSeconds`, bookmarks, `sendInitialEvents`;
 * - Table output for `kubectl get` (table.ts);
 * - errors as `Status` objects with the real reason, code, message and causes;
 * - fault injection (fail the next matching requests, drop watch streams) and a request log.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { load } from 'js-yaml';
import { serverSideApply } from './apply.js';
import { openapiV2Json, openapiV2Protobuf, openapiV3Doc, openapiV3Index } from './openapi.js';
import { applyJsonPatch, applyMergePatch, stripStrategicDirectives } from './patch.js';
import { isObject } from './schema.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { conflict, notFound, resourceName } from './store.js';
import { toTable } from './table.js';
import {
  HubApiError,
  type HubStore,
  type KubeObject,
  type ObjectKey,
  type ResourceType,
  type StoreEvent,
} from './types.js';

export interface FaultRule {
  method?: string;
  /** Matched against the request path (no query string). */
  path?: RegExp;
  status: 500 | 409 | 429 | 503 | number;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FaultInjector {
  /** Fail the next matching requests with `status` (a Status body like the real server's). */
  failNext(rule: FaultRule): void;
  /** Abruptly end every open watch stream (the connection is destroyed mid-stream). */
  dropWatches(): void;
  /** Drop every open watch stream every `ms` milliseconds; undefined stops it. */
  dropWatchesEvery(ms: number | undefined): void;
  /** Forget every pending fault and stop periodic drops. */
  clear(): void;
}

export interface RequestRecord {
  method: string;
  /** The path without the query string. */
  path: string;
  status: number;
  /** The query string without `?` ('' when none). */
  query: string;
}

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

const STATUS_REASON: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: unknown,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  };
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

interface Target {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: 'status';
  watchPath: boolean;
}

interface OpenWatch {
  res: ServerResponse;
  cleanup(): void;
}

/** Start the API server (see the file comment). */
export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const { store, token } = opts;
  const host = opts.host ?? '127.0.0.1';
  const gitVersion = opts.gitVersion ?? 'v1.31.6';
  const bookmarkMs = opts.bookmarkIntervalMs ?? 10_000;
  const maxWatchSeconds = opts.maxWatchSeconds ?? 1800;
  const log: RequestRecord[] = [];
  const records = new WeakMap<FastifyRequest, RequestRecord>();
  const watches = new Set<OpenWatch>();
  let faults: (FaultRule & { left: number })[] = [];
  let dropTimer: NodeJS.Timeout | undefined;
  const openapiHash = randomBytes(16).toString('hex').toUpperCase();

  const app = Fastify({
    https: { cert: opts.tls.cert, key: opts.tls.key },
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
    records.set(req, rec);
    log.push(rec);
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const rec = records.get(req);
    if (rec) rec.status = reply.statusCode;
    return payload;
  });

  const send = (reply: FastifyReply, code: number, body: unknown) =>
    reply.code(code).type('application/json').send(JSON.stringify(body));

  const sendError = (reply: FastifyReply, e: unknown) => {
    if (e instanceof HubApiError) {
      const details = e.details
        ? Object.fromEntries(Object.entries(e.details).filter(([, v]) => v !== undefined))
        : undefined;
      return send(reply, e.code, statusBody(e.code, e.reason, e.message, details));
    }
    const err = e as { statusCode?: number; message?: string };
    const code = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500;
    const reason = code === 413 ? 'RequestEntityTooLarge' : (STATUS_REASON[code] ?? 'InternalError');
    return send(
      reply,
      code,
      statusBody(
        code,
        reason,
        code === 500 ? `Internal error occurred: ${err.message}` : String(err.message),
      ),
    );
  };

  app.setErrorHandler((e, _req, reply) => sendError(reply, e));
  app.setNotFoundHandler((_req, reply) =>
    send(reply, 404, statusBody(404, 'NotFound', 'the server could not find the requested resource', {})),
  );

  // ---- discovery ----
  const types = () => store.types();
  function groupVersions(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const t of types()) {
      const vs = m.get(t.group) ?? [];
      if (!vs.includes(t.version)) vs.push(t.version);
      m.set(t.group, vs);
    }
    return m;
  }
  function apiGroup(name: string, versions: string[]) {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }
  function resourceList(group: string, version: string) {
    const resources: Record<string, unknown>[] = [];
    for (const t of types().filter((x) => x.group === group && x.version === version)) {
      resources.push({
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ALL_VERBS,
        ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      });
      if (t.hasStatus) {
        resources.push({
          name: `${t.plural}/status`,
          singularName: '',
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ['get', 'patch', 'update'],
        });
      }
    }
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources,
    };
  }

  function findType(group: string, version: string, plural: string): ResourceType | undefined {
    return types().find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** The resource a path names, or a discovery document to send. */
  function route(segs: string[]): { target?: Target; doc?: unknown } {
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api') {
      if (segs.length === 1) {
        return {
          doc: {
            kind: 'APIVersions',
            versions: ['v1'],
            serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `${host}:${port}` }],
          },
        };
      }
      if (segs[1] !== 'v1') throw pathNotFound();
      group = '';
      version = 'v1';
      rest = segs.slice(2);
    } else if (segs[0] === 'apis') {
      const gv = groupVersions();
      gv.delete('');
      if (segs.length === 1) {
        return {
          doc: { kind: 'APIGroupList', apiVersion: 'v1', groups: [...gv].map(([g, vs]) => apiGroup(g, vs)) },
        };
      }
      const versions = gv.get(segs[1]!);
      if (!versions) throw pathNotFound();
      if (segs.length === 2)
        return { doc: { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(segs[1]!, versions) } };
      if (!versions.includes(segs[2]!)) throw pathNotFound();
      group = segs[1]!;
      version = segs[2]!;
      rest = segs.slice(3);
    } else throw pathNotFound();
    if (rest.length === 0) return { doc: resourceList(group, version) };
    let watchPath = false;
    if (rest[0] === 'watch') {
      watchPath = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && findType(group, version, rest[2]!)?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if (rest.length === 0 || rest.length > 3) throw pathNotFound();
    const type = findType(group, version, rest[0]!);
    if (!type) throw pathNotFound();
    const name = rest[1];
    if (!type.namespaced && namespace !== undefined) throw pathNotFound();
    if (type.namespaced && namespace === undefined && name !== undefined) throw pathNotFound();
    let subresource: 'status' | undefined;
    if (rest.length === 3) {
      if (rest[2] !== 'status' || !type.hasStatus) throw pathNotFound();
      subresource = 'status';
    }
    return { target: { type, namespace, name, subresource, watchPath } };
  }

  // ---- bodies ----
  function parseBody(req: FastifyRequest, yaml = false): unknown {
    const raw = req.body;
    if (!Buffer.isBuffer(raw) || raw.length === 0)
      throw new HubApiError(400, 'BadRequest', 'the request body is empty');
    const text = raw.toString('utf8');
    try {
      return yaml || /yaml/.test(String(req.headers['content-type'] ?? '')) ? load(text) : JSON.parse(text);
    } catch (e) {
      throw new HubApiError(
        400,
        'BadRequest',
        `the request body could not be decoded: ${(e as Error).message}`,
      );
    }
  }

  /** The body as an object of `type` at the URL's namespace and name (400 on mismatch). */
  function bodyObject(req: FastifyRequest, t: Target): KubeObject {
    const body = parseBody(req);
    if (!isObject(body)) throw new HubApiError(400, 'BadRequest', 'the request body is not an object');
    const obj = body as KubeObject;
    if (obj.apiVersion === undefined) obj.apiVersion = t.type.apiVersion;
    if (obj.kind === undefined) obj.kind = t.type.kind;
    if (obj.apiVersion !== t.type.apiVersion || obj.kind !== t.type.kind) {
      throw new HubApiError(
        400,
        'BadRequest',
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${t.type.apiVersion})`,
      );
    }
    if (!isObject(obj.metadata)) obj.metadata = { name: '' };
    if (t.name !== undefined) {
      if (obj.metadata.name && obj.metadata.name !== t.name) {
        throw new HubApiError(
          400,
          'BadRequest',
          `the name of the object (${obj.metadata.name}) does not match the name on the URL (${t.name})`,
        );
      }
      obj.metadata.name = t.name;
    }
    if (t.type.namespaced) {
      if (obj.metadata.namespace && t.namespace && obj.metadata.namespace !== t.namespace) {
        throw new HubApiError(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      if (t.namespace) obj.metadata.namespace = t.namespace;
    }
    return obj;
  }

  /** Unknown fields of `obj` per `fieldValidation`: Strict → 400; Warn (default) → Warning headers. */
  function fieldValidation(
    reply: FastifyReply,
    q: URLSearchParams,
    type: ResourceType,
    obj: KubeObject,
  ): void {
    if (!type.normalize) return;
    const mode = q.get('fieldValidation') ?? 'Warn';
    if (mode === 'Ignore') return;
    const { unknownFields } = type.normalize(structuredClone(obj));
    if (unknownFields.length === 0) return;
    if (mode === 'Strict') {
      throw new HubApiError(
        400,
        'BadRequest',
        `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknownFields
          .map((f) => `unknown field "${f}"`)
          .join(', ')}`,
      );
    }
    reply.header(
      'Warning',
      unknownFields.map((f) => `299 - ${JSON.stringify(`unknown field "${f}"`)}`),
    );
  }

  function dryRun<T>(q: URLSearchParams, fn: () => T): T {
    const v = q.getAll('dryRun');
    if (v.length === 0) return fn();
    if (!v.every((x) => x === 'All'))
      throw new HubApiError(
        400,
        'BadRequest',
        `dryRun: Unsupported value: "${v.join(',')}": supported values: "All"`,
      );
    if (!store.dryRun) throw new HubApiError(400, 'BadRequest', 'this store does not support dryRun');
    return store.dryRun(fn);
  }

  const keyOf = (t: Target): ObjectKey => ({
    apiVersion: t.type.apiVersion,
    kind: t.type.kind,
    namespace: t.namespace,
    name: t.name!,
  });

  function getOrThrow(t: Target): KubeObject {
    const obj = store.get(keyOf(t));
    if (!obj) throw notFound(t.type, t.name!);
    return obj;
  }

  function tableAccept(req: FastifyRequest): string | undefined {
    const accept = String(req.headers.accept ?? '');
    for (const part of accept.split(',')) {
      if (/as=Table/.test(part) && /g=meta\.k8s\.io/.test(part))
        return /v=v1beta1/.test(part) ? 'meta.k8s.io/v1beta1' : 'meta.k8s.io/v1';
    }
    return undefined;
  }

  // ---- watch ----
  function watch(req: FastifyRequest, reply: FastifyReply, t: Target, q: URLSearchParams) {
    const type = t.type;
    const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
    const fields = parseFieldSelector(q.get('fieldSelector') ?? undefined, type.source === 'builtin');
    const matches = (o: KubeObject) =>
      (!t.namespace || o.metadata.namespace === t.namespace) &&
      (!t.name || o.metadata.name === t.name) &&
      labels(o) &&
      fields(o);
    const rv = q.get('resourceVersion') ?? '';
    const sendInitial = q.get('sendInitialEvents') === 'true';
    const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
    const timeout = Number(q.get('timeoutSeconds') ?? maxWatchSeconds);
    const res = reply.raw;
    const pending: string[] = [];
    let open = false;
    const write = (type: string, object: unknown) => {
      const line = `${JSON.stringify({ type, object })}\n`;
      if (!open) pending.push(line);
      else if (!res.writableEnded && !res.destroyed) res.write(line);
    };
    const bookmark = (annotations?: Record<string, string>) =>
      write('BOOKMARK', {
        kind: type.kind,
        apiVersion: type.apiVersion,
        metadata: { resourceVersion: store.resourceVersion(), ...(annotations ? { annotations } : {}) },
      });
    const forward = (e: StoreEvent) => {
      if (e.resource.group !== type.group || e.resource.kind !== type.kind) return;
      const obj = { ...e.object, apiVersion: type.apiVersion };
      const now = matches(obj);
      const before = e.old ? matches(e.old) : false;
      if (e.type === 'MODIFIED') {
        if (now && before) write('MODIFIED', obj);
        else if (now) write('ADDED', obj);
        else if (before) write('DELETED', obj);
      } else if (now) write(e.type, obj);
    };

    if (sendInitial || rv === '' || rv === '0') {
      for (const o of store.list(type.apiVersion, type.kind, { namespace: t.namespace }))
        if (matches(o)) write('ADDED', o);
      if (sendInitial) bookmark({ 'k8s.io/initial-events-end': 'true' });
    } else {
      const events = store.eventsSince
        ? store.eventsSince(rv)
        : rv === store.resourceVersion()
          ? []
          : undefined;
      if (events === undefined) {
        write(
          'ERROR',
          statusBody(410, 'Expired', `too old resource version: ${rv} (${store.resourceVersion()})`),
        );
        return reply.code(200).type('application/json').send(pending.join(''));
      }
      for (const e of events) forward(e);
    }
    // Headers go out now (a watch with nothing to say yet must still answer), then the events.
    reply.hijack();
    const rec = records.get(req);
    if (rec) rec.status = 200;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    open = true;
    for (const line of pending.splice(0)) res.write(line);
    const unsubscribe = store.watch(forward);
    const timers: NodeJS.Timeout[] = [setTimeout(() => res.end(), Math.max(0, timeout) * 1000)];
    if (bookmarks) timers.push(setInterval(() => bookmark(), bookmarkMs));
    const handle: OpenWatch = {
      res,
      cleanup() {
        unsubscribe();
        for (const x of timers) clearTimeout(x);
        watches.delete(handle);
      },
    };
    watches.add(handle);
    res.on('close', () => handle.cleanup());
    res.on('finish', () => handle.cleanup());
  }

  // ---- the handler ----
  async function handle(req: FastifyRequest, reply: FastifyReply) {
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
    const fault = faults.find(
      (f) => (!f.method || f.method.toUpperCase() === req.method) && (!f.path || f.path.test(path)),
    );
    if (fault) {
      fault.left -= 1;
      if (fault.left <= 0) faults = faults.filter((f) => f !== fault);
      return injected(reply, fault.status, segs);
    }
    if (path === '/version') {
      const minor = gitVersion.match(/^v\d+\.(\d+)/)?.[1] ?? '31';
      return send(reply, 200, {
        major: '1',
        minor,
        gitVersion,
        gitCommit: '0000000000000000000000000000000000000000',
        gitTreeState: 'clean',
        buildDate: '2025-01-01T00:00:00Z',
        goVersion: 'go1.22.0',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
    }
    if (path === '/openapi/v3') return send(reply, 200, openapiV3Index(types(), openapiHash));
    if (segs[0] === 'openapi' && segs[1] === 'v3') {
      const doc = openapiV3Doc(types(), segs.slice(2).join('/'), gitVersion);
      if (!doc) throw pathNotFound();
      return send(reply, 200, doc);
    }
    if (path === '/openapi/v2') {
      if (/protobuf/.test(String(req.headers.accept ?? ''))) {
        return reply
          .code(200)
          .type('application/com.github.proto-openapi.spec.v2@v1.0+protobuf')
          .send(openapiV2Protobuf(types(), gitVersion));
      }
      return send(reply, 200, openapiV2Json(types(), gitVersion));
    }
    const { target, doc } = route(segs);
    if (doc) {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method);
      return send(reply, 200, doc);
    }
    const t = target!;
    const type = t.type;
    const table = tableAccept(req);
    switch (req.method) {
      case 'GET': {
        if (t.name === undefined) {
          if (t.watchPath || q.get('watch') === 'true' || q.get('watch') === '1')
            return watch(req, reply, t, q);
          const items = store.list(type.apiVersion, type.kind, {
            namespace: t.namespace,
            labelSelector: q.get('labelSelector') ?? undefined,
            fieldSelector: q.get('fieldSelector') ?? undefined,
          });
          const rv = store.resourceVersion();
          if (table)
            return send(
              reply,
              200,
              toTable(type, items, rv, {
                apiVersion: table,
                includeObject: q.get('includeObject') ?? undefined,
              }),
            );
          return send(reply, 200, {
            kind: type.listKind,
            apiVersion: type.apiVersion,
            metadata: { resourceVersion: rv },
            items,
          });
        }
        if (t.watchPath) return watch(req, reply, t, q);
        const obj = getOrThrow(t);
        if (table)
          return send(
            reply,
            200,
            toTable(type, [obj], obj.metadata.resourceVersion ?? '', {
              apiVersion: table,
              includeObject: q.get('includeObject') ?? undefined,
            }),
          );
        return send(reply, 200, obj);
      }
      case 'POST': {
        if (t.name !== undefined) throw methodNotAllowed('POST');
        if (type.namespaced && !t.namespace) throw methodNotAllowed('POST');
        const obj = bodyObject(req, t);
        fieldValidation(reply, q, type, obj);
        return send(
          reply,
          201,
          dryRun(q, () => store.create(obj)),
        );
      }
      case 'PUT': {
        if (t.name === undefined) throw methodNotAllowed('PUT');
        const obj = bodyObject(req, t);
        fieldValidation(reply, q, type, obj);
        return send(
          reply,
          200,
          dryRun(q, () => (t.subresource ? store.updateStatus(obj) : store.update(obj))),
        );
      }
      case 'PATCH': {
        if (t.name === undefined) throw methodNotAllowed('PATCH');
        return patch(req, reply, t, q);
      }
      case 'DELETE':
        return t.name === undefined ? deleteCollection(req, reply, t, q) : deleteOne(req, reply, t, q);
      default:
        throw methodNotAllowed(req.method);
    }
  }

  function patch(req: FastifyRequest, reply: FastifyReply, t: Target, q: URLSearchParams) {
    const ct = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (!PATCH_TYPES.includes(ct)) {
      throw new HubApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
      );
    }
    const type = t.type;
    if (ct === 'application/apply-patch+yaml') {
      const manager = q.get('fieldManager');
      if (!manager) {
        throw new HubApiError(
          400,
          'BadRequest',
          'PATCH, application/apply-patch+yaml requests must have a fieldManager query parameter',
        );
      }
      const config = parseBody(req, true);
      if (!isObject(config))
        throw new HubApiError(400, 'BadRequest', 'the apply configuration is not an object');
      fieldValidation(reply, q, type, config as KubeObject);
      const force = q.get('force') === 'true';
      const existed = store.get(keyOf(t)) !== undefined;
      const result = dryRun(q, () =>
        serverSideApply(store, type, keyOf(t), config as KubeObject, {
          manager,
          force,
          subresource: t.subresource,
        }),
      );
      return send(reply, existed ? 200 : 201, result);
    }
    const body = parseBody(req);
    const result = dryRun(q, () => {
      const current = getOrThrow(t);
      let patched: unknown;
      if (ct === 'application/json-patch+json') patched = applyJsonPatch(current, body);
      else {
        if (!isObject(body)) throw new HubApiError(400, 'BadRequest', 'the merge patch is not an object');
        patched = applyMergePatch(
          current,
          ct === 'application/strategic-merge-patch+json' ? stripStrategicDirectives(body) : body,
        );
      }
      if (!isObject(patched)) throw new HubApiError(422, 'Invalid', 'the patched object is not an object');
      const obj = patched as KubeObject;
      obj.apiVersion = type.apiVersion;
      obj.kind = type.kind;
      if (!isObject(obj.metadata)) obj.metadata = { name: t.name! };
      obj.metadata.name = t.name!;
      if (t.namespace) obj.metadata.namespace = t.namespace;
      fieldValidation(reply, q, type, obj);
      return t.subresource ? store.updateStatus(obj) : store.update(obj);
    });
    return send(reply, 200, result);
  }

  function deleteOptions(req: FastifyRequest): Record<string, unknown> {
    if (!Buffer.isBuffer(req.body) || req.body.length === 0) return {};
    const body = parseBody(req);
    return isObject(body) ? body : {};
  }

  function deleteOne(req: FastifyRequest, reply: FastifyReply, t: Target, q: URLSearchParams) {
    const options = deleteOptions(req);
    const type = t.type;
    const current = getOrThrow(t);
    const pre = isObject(options.preconditions) ? options.preconditions : {};
    if (typeof pre.uid === 'string' && pre.uid !== current.metadata.uid) {
      throw new HubApiError(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
        {
          name: t.name,
          group: type.group,
          kind: type.plural,
        },
      );
    }
    if (typeof pre.resourceVersion === 'string' && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(type, t.name!);
    }
    if (Array.isArray(options.dryRun) && options.dryRun.includes('All')) q.append('dryRun', 'All');
    const result = dryRun(q, () => {
      const r = store.delete(keyOf(t));
      return { r, still: store.get(keyOf(t)) };
    });
    if (result.still) return send(reply, 200, result.still);
    if (type.source !== 'builtin' && result.r) return send(reply, 200, result.r);
    return send(reply, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: t.name, group: type.group, kind: type.plural, uid: current.metadata.uid },
    });
  }

  function deleteCollection(req: FastifyRequest, reply: FastifyReply, t: Target, q: URLSearchParams) {
    deleteOptions(req);
    const type = t.type;
    const items = store.list(type.apiVersion, type.kind, {
      namespace: t.namespace,
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector: q.get('fieldSelector') ?? undefined,
    });
    const deleted = dryRun(q, () =>
      items.map((o) =>
        store.delete({
          apiVersion: type.apiVersion,
          kind: type.kind,
          namespace: o.metadata.namespace,
          name: o.metadata.name,
        }),
      ),
    );
    return send(reply, 200, {
      kind: type.listKind,
      apiVersion: type.apiVersion,
      metadata: { resourceVersion: store.resourceVersion() },
      items: deleted.filter((o) => o !== undefined),
    });
  }

  function injected(reply: FastifyReply, status: number, segs: string[]) {
    const reason = STATUS_REASON[status] ?? 'InternalError';
    if (status === 409) {
      let message =
        'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again';
      try {
        const t = route(segs).target;
        if (t?.name) return sendError(reply, conflict(t.type, t.name));
        if (t)
          message = `Operation cannot be fulfilled on ${resourceName(t.type)}: the object has been modified; please apply your changes to the latest version and try again`;
      } catch {
        // not a resource path: the generic message
      }
      return send(reply, 409, statusBody(409, 'Conflict', message));
    }
    if (status === 429) reply.header('Retry-After', '1');
    const message =
      status === 500
        ? 'Internal error occurred: injected fault'
        : status === 503
          ? 'the server is currently unable to handle the request'
          : status === 429
            ? 'Too many requests, please try again later.'
            : `injected fault (${status})`;
    return send(
      reply,
      status,
      statusBody(status, reason, message, status === 500 ? { causes: [{ message: 'injected fault' }] } : {}),
    );
  }

  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/*',
    handler: async (req, reply) => {
      try {
        return await handle(req, reply);
      } catch (e) {
        return sendError(reply, e);
      }
    },
  });

  function dropWatches(): void {
    for (const w of [...watches]) {
      w.cleanup();
      w.res.socket?.destroy();
      w.res.destroy();
    }
  }

  await app.listen({ host, port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const urlHost =
    host === '::' ? '[::1]' : host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    url: `https://${urlHost}:${port}`,
    port,
    faults: {
      failNext(rule) {
        faults.push({ ...rule, left: rule.times ?? 1 });
      },
      dropWatches,
      dropWatchesEvery(ms) {
        if (dropTimer) clearInterval(dropTimer);
        dropTimer = ms === undefined ? undefined : setInterval(dropWatches, ms);
      },
      clear() {
        faults = [];
        if (dropTimer) clearInterval(dropTimer);
        dropTimer = undefined;
      },
    },
    requests: () => log.map((r) => ({ ...r })),
    async close() {
      if (dropTimer) clearInterval(dropTimer);
      for (const w of [...watches]) {
        w.cleanup();
        w.res.end();
      }
      await app.close();
    },
  };

  function pathNotFound(): HubApiError {
    return new HubApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
  function methodNotAllowed(method: string): HubApiError {
    return new HubApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method})`,
    );
  }
}
