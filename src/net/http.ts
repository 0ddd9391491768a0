/**
 * The one HTTP layer: an undici Agent per endpoint, trusting the OS CA store (trust.ts),
 * containers-style `certs.d/<host:port>/` directories and CA files together, with an explicit
 * opt-out of TLS verification. Registry, update
 * graph and boot-image clients all get their dispatcher here. When to retry and how long to wait
 * is retry.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { join } from 'node:path';
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { AirgapError, usageError } from '../util/errors.js';
import { isNotFound } from '../util/fs.js';
import { isRetryableStatus, isTlsError, netErrorCode, waitBeforeRetry } from './retry.js';
import { NetError } from './errors.js';
import { readBounded } from './body.js';
import { systemTrust } from './trust.js';
import { parseHttpUrl, shownUrl } from './url.js';

/**
 * How to trust a server: the OS store (always), certs.d directories, extra CAs, or (knowingly) no
 * verification.
 */
export interface TlsOptions {
  /** Extra PEM CA files trusted in addition to the OS store and certs.d (--ca-file). */
  caFiles?: string[];
  /**
   * Directories laid out like /etc/containers/certs.d: `<dir>/<host:port>/*.crt` are CAs,
   * `*.cert` + `*.key` a client certificate. Defaults to the containers and docker system dirs.
   */
  certDirs?: string[];
  /** Skip TLS verification (--src-tls-verify=false / --dest-tls-verify=false). */
  insecureSkipVerify?: boolean;
}

export interface AgentOptions extends TlsOptions {
  /** Concurrent connections to one origin. */
  connections?: number;
  /**
   * The deadline of each phase of a request, in ms: connecting, the response headers once the
   * request is sent, and each wait for more body bytes. Default {@link DEFAULT_STALL_TIMEOUT_MS}.
   */
  stallTimeoutMs?: number;
}

/** How long a server may send nothing (no connection, no headers, no next body bytes) before it is stalled. */
export const DEFAULT_STALL_TIMEOUT_MS = 60_000;

const DEFAULT_CERT_DIRS = ['/etc/containers/certs.d', '/etc/docker/certs.d'];

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw usageError(NetError.TLS_FILE_UNREADABLE, `cannot read ${what} ${path}: ${(e as Error).message}`, {
      hint: 'check the path and its permissions',
    });
  }
}

/** What certs.d holds for one host: CA PEMs and an optional client certificate. */
function certsDirMaterial(host: string, dirs: string[]): { cas: string[]; cert?: string; key?: string } {
  const cas: string[] = [];
  let cert: string | undefined;
  let key: string | undefined;
  for (const dir of dirs) {
    const hostDir = join(dir, host);
    let names: string[];
    try {
      names = readdirSync(hostDir).sort();
    } catch (e) {
      if (isNotFound(e)) continue; // nothing configured for this host here
      throw e; // unreadable, as containers/image refuses it: said with its path
    }
    for (const n of names) {
      if (n.endsWith('.crt')) cas.push(readPem(join(hostDir, n), 'CA file'));
      else if (n.endsWith('.cert')) {
        cert = readPem(join(hostDir, n), 'client certificate');
        key = readPem(join(hostDir, n.replace(/\.cert$/, '.key')), 'client key');
      }
    }
  }
  return { cas, cert, key };
}

const contexts = new Map<string, SecureContext>();

/**
 * A TLS context trusting, all together: the operating system's CA store (trust.ts; Node's own
 * Mozilla roots when the host has none), the CAs of certs.d for the host, and --ca-file. Built
 * once per process for each set.
 */
function contextFor(cas: string[], cert?: string, key?: string): SecureContext {
  const id = JSON.stringify([cas, cert ?? '', key ?? '']);
  let ctx = contexts.get(id);
  if (!ctx) {
    const system = systemTrust();
    ctx = createSecureContext({
      ca: [...(system.pems.length > 0 ? system.pems : rootCertificates), ...system.extra, ...cas],
      ...(cert ? { cert, key } : {}),
    });
    contexts.set(id, ctx);
  }
  return ctx;
}

/** The proxy variables podman, skopeo and oc-mirror honour (lowercase first, as curl does). */
function proxyFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

/**
 * The dispatcher for one host: an undici Agent, or, when HTTPS_PROXY/HTTP_PROXY is set, an
 * EnvHttpProxyAgent that tunnels through the proxy (CONNECT) unless NO_PROXY names the host. TLS
 * to the registry is configured the same way on both paths.
 */
export function createAgent(host: string, opts: AgentOptions = {}): Dispatcher {
  const extra = (opts.caFiles ?? []).map((f) => readPem(f, 'CA file'));
  const fromDirs = certsDirMaterial(host, opts.certDirs ?? DEFAULT_CERT_DIRS);
  const custom = [...fromDirs.cas, ...extra];
  // One TLS context per agent: building it parses every root certificate, which costs more CPU
  // than the handshake itself if done per connection.
  const secureContext = contextFor(custom, fromDirs.cert, fromDirs.key);
  const stall = opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  const tls = {
    rejectUnauthorized: !opts.insecureSkipVerify,
    timeout: stall,
    secureContext,
  };
  // One deadline per phase, none for the whole request: a 20 GiB layer may take an hour, but it
  // never goes `stall` ms without a byte. HTTP/1.1 only: undici 8 speaks HTTP/2 to any server that
  // offers it (registries and CDNs do), and would carry every transfer to a host on one connection;
  // `connections` parallel blob copies are that many connections, each with its own deadlines.
  const common = {
    allowH2: false,
    connections: opts.connections ?? 8,
    keepAliveTimeout: 30_000,
    headersTimeout: stall,
    bodyTimeout: stall,
  };
  if (proxyFromEnv()) return new EnvHttpProxyAgent({ ...common, connect: tls, requestTls: tls });
  return new Agent({ ...common, connect: tls });
}

/** A request's options without where it goes (the URL says that). */
export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

/**
 * One request to `url` through `dispatcher`. Every HTTP user in airgap goes through a dispatcher
 * of its own (createAgent), so this is all of undici's `request` it needs; the release bundle
 * then loads only undici's dispatchers, not its fetch, WebSocket and caches (scripts/undici-lean.mjs).
 */
export function requestOn(
  dispatcher: Dispatcher,
  url: string | URL,
  opts: RequestOptions,
): Promise<Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  return dispatcher.request({ ...opts, origin: u.origin, path: `${u.pathname}${u.search}` });
}

/** Options of {@link getJson}. */
export interface GetJsonOptions extends AgentOptions {
  /** Accept header; default `application/json`. */
  accept?: string;
  /** More request headers (an `authorization` from the auth file: never shown). */
  headers?: Record<string, string>;
  /** Time limit for one attempt (headers and body), in ms; default 60 s. */
  timeoutMs?: number;
  /** Retries after the first attempt on network errors, 408, 429 and 5xx; default 4. */
  retries?: number;
  /** First backoff in ms, doubled per attempt with jitter; default 250. */
  baseDelayMs?: number;
  /** Prefix of the error codes: `<prefix>_UNREACHABLE`, `_TLS`, `_STATUS`, `_INVALID`; default `HTTP`. */
  errorPrefix?: string;
  /** Hint for an endpoint that cannot be reached (network errors, 5xx after retries). */
  unreachableHint?: string;
  /** The most bytes of a body read; more is `<prefix>_TOO_LARGE`. Default 64 MiB. */
  maxBytes?: number;
}

/** The default bound of a body held in memory (graph JSON of every channel is a few MiB). */
const DEFAULT_MAX_BODY = 64 * 1024 * 1024;

/**
 * GET a JSON document: {@link getBytes}, then JSON. `<prefix>_STATUS` for any non-2xx,
 * `<prefix>_INVALID` for a body that is not JSON.
 */
export async function getJson(url: string, opts: GetJsonOptions = {}): Promise<unknown> {
  const { status, body, shown } = await getOnce(url, opts);
  const prefix = opts.errorPrefix ?? 'HTTP';
  const text = body.toString('utf8');
  if (status < 200 || status >= 300) {
    throw new AirgapError(
      `${prefix}_STATUS`,
      `${shown} answered HTTP ${status}: ${text.slice(0, 300).trim() || '(empty body)'}`,
      { where: shown, details: { status } },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // JSON.parse fails only on text that is not JSON: said so.
    throw new AirgapError(
      `${prefix}_INVALID`,
      `${shown} did not answer JSON: ${JSON.stringify(text.slice(0, 80))}`,
      {
        where: shown,
        hint: 'check that the URL points at the right service',
      },
    );
  }
}

/**
 * GET a small body (signatures, documents) into memory; undefined when the server answers one of
 * the `absent` statuses (what a store says for "no such object": 404, and 403 on some buckets).
 * Retries and errors as {@link getJson}.
 */
export async function getBytes(
  url: string,
  opts: GetJsonOptions & { absent?: number[] } = {},
): Promise<Buffer | undefined> {
  const { status, body, shown } = await getOnce(url, { accept: '*/*', ...opts });
  if (opts.absent?.includes(status)) return undefined;
  if (status < 200 || status >= 300) {
    throw new AirgapError(
      `${opts.errorPrefix ?? 'HTTP'}_STATUS`,
      `${shown} answered HTTP ${status}: ${body.toString('utf8').slice(0, 300).trim() || '(empty body)'}`,
      { where: shown, details: { status } },
    );
  }
  return body;
}

/**
 * One GET with the shared machinery: one undici Agent for the URL's host (CA files, certs.d, TLS
 * opt-out), retries with jittered backoff (honouring Retry-After) on network errors, 408, 429 and
 * 5xx, and AirgapErrors that name the URL: `<prefix>_URL_INVALID`, `<prefix>_UNREACHABLE`,
 * `<prefix>_TLS` (with the CA hint). Any other status is returned with its body.
 */
async function getOnce(
  url: string,
  opts: GetJsonOptions,
): Promise<{ status: number; body: Buffer; shown: string }> {
  const prefix = opts.errorPrefix ?? 'HTTP';
  const target = parseHttpUrl(url, prefix);
  const shown = shownUrl(target);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const retries = opts.retries ?? 4;
  const base = opts.baseDelayMs ?? 250;
  const agent = createAgent(target.host, { ...opts, connections: 1 });
  const backoff = (attempt: number, retryAfter?: string | string[]) =>
    waitBeforeRetry(attempt + 1, { baseMs: base, maxMs: 15_000 }, retryAfter);
  try {
    let last = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      let res: Dispatcher.ResponseData;
      try {
        res = await requestOn(agent, target, {
          method: 'GET',
          headers: { ...opts.headers, accept: opts.accept ?? 'application/json' },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (e) {
        if (isTlsError(e)) {
          throw new AirgapError(`${prefix}_TLS`, `TLS verification failed for ${shown}: ${netErrorCode(e)}`, {
            where: shown,
            cause: e,
            hint: `trust the CA that signed ${target.host}: install it into the system store (update-ca-trust), or give --ca-file or certs.d/${target.host}/ca.crt`,
          });
        }
        last = `${netErrorCode(e) ?? (e as Error).name}: ${(e as Error).message}`;
        if (attempt < retries) await backoff(attempt);
        continue;
      }
      let body: Buffer | undefined;
      const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BODY;
      try {
        body = await readBounded(res.body, maxBytes);
      } catch (e) {
        last = `body read failed: ${(e as Error).message}`;
        if (attempt < retries) await backoff(attempt);
        continue;
      }
      if (body === undefined)
        throw new AirgapError(
          `${prefix}_TOO_LARGE`,
          `${shown} sent more than ${maxBytes / 1024 / 1024} MiB, more than it can mean`,
          { where: shown, hint: 'check that the URL names the right service' },
        );
      if (isRetryableStatus(res.statusCode)) {
        last = `HTTP ${res.statusCode}`;
        if (attempt < retries) await backoff(attempt, res.headers['retry-after']);
        continue;
      }
      return { status: res.statusCode, body, shown };
    }
    throw new AirgapError(
      `${prefix}_UNREACHABLE`,
      `cannot reach ${shown} after ${retries + 1} attempts: ${last}`,
      {
        where: shown,
        ...(opts.unreachableHint ? { hint: opts.unreachableHint } : {}),
      },
    );
  } finally {
    await agent.close().catch(() => undefined); // the answer (or its failure) is already had: closing adds nothing
  }
}
