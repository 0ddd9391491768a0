/**
 * A fault-injecting reverse proxy for tests, placed between our engine and a real registry. It
 * forwards every request (method, path, headers including Authorization and Range, streamed body) to
 * the target with undici, streams the answer back, rewrites absolute Location headers that point at
 * the target so they point at the proxy, and injects faults by rule.
 *
 * Rules are tried in order for each request; the first one that fires handles it, and rules after it
 * do not count that request. A rule counts the requests it matches; with `every: n` it fires on every
 * nth of them, and it fires at most `times` times (default 1; `Infinity` for always).
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { Readable } from 'node:stream';
import https from 'node:https';
import type net from 'node:net';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';

export type FaultKind = 'reset' | 'status' | 'retry-after' | 'truncate' | 'corrupt' | 'slow' | 'answer';

export interface FaultRule {
  /** Which requests the rule applies to; omitted = all. `path` tests the path with its query string. */
  match?: { method?: string; path?: RegExp };
  /**
   * - reset: destroy the connection (RST) before the headers, or after `afterBytes` of the body.
   * - status: answer `status` (default 503) with a registry-style JSON error; the target is not asked.
   * - retry-after: answer 429 with `Retry-After: retryAfterSeconds` (default 1); the target is not asked.
   * - truncate: send the headers (full Content-Length), then only `afterBytes` of the body (default
   *   half), then close the connection.
   * - corrupt: flip one byte of the body (at offset `afterBytes`, default the middle), length kept.
   * - slow: wait `delayMs` (default 1000) before the headers, or, with `afterBytes`, after that many
   *   body bytes (a mid-body stall).
   * - answer: the proxy lies: `answer(path)` gives the status, headers and body sent; the target
   *   is not asked (a listing that never ends, a page that is not JSON).
   */
  fault: FaultKind;
  answer?: (path: string) => { status?: number; headers?: Record<string, string>; body: string };
  status?: number;
  retryAfterSeconds?: number;
  afterBytes?: number;
  delayMs?: number;
  /** How many times the rule fires; default 1. */
  times?: number;
  /** Fire on every nth matching request (n, 2n, ...); default 1. */
  every?: number;
}

export interface FaultProxyOptions {
  /** The registry, e.g. "https://127.0.0.1:5000". */
  target: string;
  /** PEM file of the CA to trust for the target. */
  caFile?: string;
  /** Serve HTTPS with this certificate (e.g. the test PKI's server cert); plain HTTP when omitted. */
  tls?: { certPem: string; keyPem: string };
  rules?: FaultRule[];
}

export interface ProxyLogEntry {
  method: string;
  path: string;
  /** The status sent to the client (undefined when the connection was reset before headers). */
  status?: number;
  fault?: FaultKind;
}

export interface FaultProxyStats {
  /** Requests received. */
  requests: number;
  /** Requests forwarded to the target. */
  forwarded: number;
  /** Request body bytes forwarded to the target (uploads). */
  bytesUp: number;
  /** Response body bytes sent back to clients (downloads). */
  bytesDown: number;
  /** Faults injected, in total and by kind. */
  faults: number;
  byFault: Partial<Record<FaultKind, number>>;
  /** Times each rule (by index in the current rules) fired. */
  byRule: number[];
  /** The last 1000 requests, oldest first. */
  log: ProxyLogEntry[];
}

export interface FaultProxy {
  /** "127.0.0.1:port". */
  host: string;
  /** "https://127.0.0.1:port" (http:// without tls). */
  url: string;
  stop(): Promise<void>;
  stats(): FaultProxyStats;
  /** Replace the rules and reset their counters. */
  setRules(rules: FaultRule[]): void;
}

interface RuleState {
  rule: FaultRule;
  seen: number;
  fired: number;
}

/** Hop-by-hop headers, plus those the proxy sets itself (host) or cannot forward (expect). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
]);

const ERROR_CODES: Record<number, string> = {
  400: 'UNSUPPORTED',
  401: 'UNAUTHORIZED',
  403: 'DENIED',
  404: 'NAME_UNKNOWN',
  429: 'TOOMANYREQUESTS',
  500: 'UNKNOWN',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'UNAVAILABLE',
};

function registryError(status: number, message: string): string {
  return JSON.stringify({ errors: [{ code: ERROR_CODES[status] ?? 'UNKNOWN', message, detail: null }] });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Close the client connection abruptly: an RST where the platform allows, else a plain destroy. */
function resetSocket(socket: net.Socket): void {
  const raw = (socket as net.Socket & { _parent?: net.Socket })._parent ?? socket;
  if (typeof raw.resetAndDestroy === 'function' && !raw.destroyed) {
    try {
      raw.resetAndDestroy();
    } catch {
      // fall through to destroy
    }
  }
  socket.destroy();
}

/** Start the proxy on 127.0.0.1 (a free port). */
export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(opts.target);
  const ca = opts.caFile ? await readFile(opts.caFile, 'utf8') : undefined;
  const dispatcher = new Agent({ connect: ca ? { ca } : {}, keepAliveTimeout: 1000 });
  let rules: RuleState[] = [];
  const counters = { requests: 0, forwarded: 0, faults: 0, bytesUp: 0, bytesDown: 0 };
  const byFault: Partial<Record<FaultKind, number>> = {};
  const log: ProxyLogEntry[] = [];
  let proxyOrigin = '';

  const setRules = (next: FaultRule[]) => {
    rules = next.map((rule) => ({ rule, seen: 0, fired: 0 }));
  };
  setRules(opts.rules ?? []);

  /** The rule that fires for this request, if any. */
  const pick = (method: string, path: string): FaultRule | undefined => {
    for (const state of rules) {
      const { match } = state.rule;
      if (match?.method && match.method.toUpperCase() !== method) continue;
      if (match?.path) {
        match.path.lastIndex = 0; // a /g or /y pattern must not carry state between requests
        if (!match.path.test(path)) continue;
      }
      state.seen++;
      const every = Math.max(1, state.rule.every ?? 1);
      if (state.fired >= (state.rule.times ?? 1) || state.seen % every !== 0) continue;
      state.fired++;
      counters.faults++;
      byFault[state.rule.fault] = (byFault[state.rule.fault] ?? 0) + 1;
      return state.rule;
    }
    return undefined;
  };

  const rewriteLocation = (value: string): string => {
    try {
      const loc = new URL(value);
      if (loc.host === target.host && loc.protocol === target.protocol) {
        return proxyOrigin + loc.pathname + loc.search + loc.hash;
      }
    } catch {
      // relative: already points at whoever was asked
    }
    return value;
  };

  /** Pass a request body through, counting its bytes (a 'data' listener would steal chunks). */
  async function* counted(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const c of body) {
      counters.bytesUp += c.length;
      yield c;
    }
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    counters.requests++;
    const entry: ProxyLogEntry = { method, path };
    log.push(entry);
    if (log.length > 1000) log.shift();
    const rule = pick(method, path);
    if (rule) entry.fault = rule.fault;
    const socket = req.socket;

    if (rule?.fault === 'reset' && rule.afterBytes === undefined) {
      req.resume();
      // Not synchronously inside the request handler: node's http server then keeps a dead parser in
      // its connection list and server.close() throws.
      setImmediate(() => resetSocket(socket));
      return;
    }
    if (rule?.fault === 'status' || rule?.fault === 'retry-after') {
      req.resume();
      const status = rule.fault === 'status' ? (rule.status ?? 503) : 429;
      const body = registryError(status, `injected by fault proxy (${rule.fault})`);
      const headers: http.OutgoingHttpHeaders = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'docker-distribution-api-version': 'registry/2.0',
      };
      if (rule.fault === 'retry-after') headers['retry-after'] = String(rule.retryAfterSeconds ?? 1);
      entry.status = status;
      res.writeHead(status, headers);
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    if (rule?.fault === 'answer' && rule.answer) {
      req.resume();
      const a = rule.answer(path);
      entry.status = a.status ?? 200;
      res.writeHead(entry.status, {
        'content-type': 'application/json',
        'docker-distribution-api-version': 'registry/2.0',
        ...a.headers,
        'content-length': Buffer.byteLength(a.body),
      });
      res.end(method === 'HEAD' ? undefined : a.body);
      return;
    }
    if (rule?.fault === 'slow' && rule.afterBytes === undefined) await sleep(rule.delayMs ?? 1000);

    // Forward.
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    }
    const hasBody =
      req.headers['content-length'] !== undefined
        ? req.headers['content-length'] !== '0'
        : req.headers['transfer-encoding'] !== undefined;
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    counters.forwarded++;
    let upstream;
    try {
      upstream = await undiciRequest(`${target.origin}${path}`, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body: hasBody ? Readable.from(counted(req)) : method === 'GET' || method === 'HEAD' ? undefined : '',
        dispatcher,
        signal: abort.signal,
      });
    } catch (e) {
      if (res.headersSent || socket.destroyed) return;
      const body = registryError(502, `fault proxy: target unreachable: ${(e as Error).message}`);
      entry.status = 502;
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }

    const outHeaders: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(upstream.headers)) {
      if (v === undefined || HOP_BY_HOP.has(k)) continue;
      outHeaders[k] = k === 'location' && typeof v === 'string' ? rewriteLocation(v) : v;
    }
    const length = Number(upstream.headers['content-length'] ?? NaN);
    entry.status = upstream.statusCode;
    res.writeHead(upstream.statusCode, outHeaders);
    if (method === 'HEAD') {
      await upstream.body.dump();
      res.end();
      return;
    }

    // Where in the body a byte-level fault acts.
    let cut: number | undefined;
    if (rule?.fault === 'reset' || rule?.fault === 'slow') cut = rule.afterBytes;
    if (rule?.fault === 'truncate')
      cut = rule.afterBytes ?? (Number.isFinite(length) ? Math.floor(length / 2) : 0);
    let flipAt: number | undefined;
    if (rule?.fault === 'corrupt') {
      flipAt = rule.afterBytes ?? (Number.isFinite(length) ? Math.floor(length / 2) : 0);
      if (Number.isFinite(length) && length > 0) flipAt = Math.min(flipAt, length - 1);
    }

    let sent = 0;
    try {
      for await (const data of upstream.body) {
        let chunk = data as Buffer;
        counters.bytesDown += chunk.length;
        if (flipAt !== undefined && flipAt >= sent && flipAt < sent + chunk.length) {
          chunk = Buffer.from(chunk);
          chunk[flipAt - sent]! ^= 0xff;
          flipAt = undefined;
        }
        if (cut !== undefined && sent + chunk.length >= cut) {
          const head = chunk.subarray(0, cut - sent);
          if (head.length > 0 && !res.write(head)) await once(res, 'drain');
          sent += head.length;
          if (rule?.fault === 'slow') {
            await sleep(rule.delayMs ?? 1000);
            cut = undefined;
            chunk = chunk.subarray(head.length);
          } else {
            upstream.body.destroy();
            await new Promise<void>((resolve) => res.write('', () => resolve()));
            if (rule?.fault === 'reset') {
              // An RST discards whatever is still in the kernel's send buffer; give loopback a moment.
              await sleep(20);
              resetSocket(socket);
            } else {
              // Flush, close_notify + FIN: the client sees the body end early.
              socket.end();
              socket.once('finish', () => socket.destroy());
            }
            return;
          }
        }
        if (chunk.length > 0 && !res.write(chunk)) await once(res, 'drain');
        sent += chunk.length;
      }
      res.end();
    } catch {
      socket.destroy();
    }
  };

  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch(() => req.socket.destroy());
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, listener)
    : http.createServer(listener);
  const sockets = new Set<net.Socket>();
  server.on(opts.tls ? 'secureConnection' : 'connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // A client that sees a reset may leave a half-open TLS socket behind; errors there are expected.
  server.on('clientError', (_err, s: net.Socket) => s.destroy());

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const host = `127.0.0.1:${port}`;
  proxyOrigin = `${opts.tls ? 'https' : 'http'}://${host}`;

  let stopped: Promise<void> | undefined;
  return {
    host,
    url: proxyOrigin,
    setRules,
    stats: () => ({
      ...counters,
      byFault: { ...byFault },
      byRule: rules.map((r) => r.fired),
      log: log.map((e) => ({ ...e })),
    }),
    stop: () => {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of sockets) s.destroy();
        try {
          server.closeAllConnections();
        } catch {
          // sockets already destroyed above
        }
        await closed;
        await dispatcher.close().catch(() => undefined);
      })();
      return stopped;
    },
  };
}
