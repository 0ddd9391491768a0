/**
 * How a request reaches a registry: the undici dispatcher for its host, first contact (GET /v2/,
 * which learns the auth scheme and remembers a registry that cannot be reached), redirects (never
 * carrying credentials to another host), and retries with jittered backoff that honour Retry-After.
 * Authentication is asked of an {@link Authorizer} (auth.ts); what the answers mean is client.ts. A
 * registry that stops answering is counted and given up by stalls.ts.
 */
import type { Dispatcher } from 'undici';
import { createAgent, DEFAULT_STALL_TIMEOUT_MS, requestOn, type AgentOptions } from '../../net/http.js';
import { isRetryableRequestError, isRetryableStatus, waitBeforeRetry } from '../../net/retry.js';
import { AirgapError } from '../../util/errors.js';
import { parseChallenge, type Challenge } from './challenge.js';
import { RegistryError, networkError, statusError } from './errors.js';
import { MirrorError } from '../errors.js';
import { StallWatch, isStall } from './stalls.js';

export interface RetryOptions {
  /** Attempts per request, including the first. */
  attempts?: number;
  /** First backoff in ms; doubles each attempt, with jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Longest Retry-After we honour, in ms. */
  maxRetryAfterMs?: number;
}

export type Action = 'pull' | 'pull,push';

/** One request to a registry, described. */
export interface RegistryRequest {
  method: Dispatcher.HttpMethod;
  /** `/v2/...` or an absolute URL (upload Location). */
  path: string;
  repo?: string;
  action?: Action;
  /** The token scope instead of the repository's (`registry:catalog:*` for the catalog). */
  scope?: string;
  /** Extra repository pulled from in the same token (cross-repository mount). */
  mountFrom?: string;
  headers?: Record<string, string>;
  /** A replayable body; streaming bodies go through `send` with retries handled by the caller. */
  body?: Buffer | string | AsyncIterable<Buffer>;
  /** Statuses that are answers, not errors. */
  ok: number[];
  /** What this request is for, in words: "manifest quay.io/org/app:v1". */
  what: string;
  /** Answer a redirect instead of following it. */
  noRedirect?: boolean;
  /**
   * false: a 401 is final and says nothing about the token sent, so it is neither dropped nor
   * refreshed (distribution wants the `delete` action for DELETE of an upload session, which a
   * pull,push token never has).
   */
  authRetry?: boolean;
}

export type Response = Dispatcher.ResponseData;

/** What the transport asks of authentication (auth.ts). */
export interface Authorizer {
  /** The challenge first contact found (a 401 to GET /v2/). */
  setChallenge(challenge: Challenge | undefined): void;
  /** The Authorization header for `req`, if the registry wants one. */
  header(req: RegistryRequest): Promise<string | undefined>;
  /**
   * The registry answered 401 to `req` sent with `auth`. Returns when the request is worth sending
   * once more with fresh credentials (allowed only when `mayRetry`); throws the error to report
   * otherwise.
   */
  refused(req: RegistryRequest, res: Response, auth: string | undefined, mayRetry: boolean): Promise<void>;
}

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
/** AIRGAP_DEBUG=http logs every registry request (never headers or bodies, so never a secret). */
const DEBUG_HTTP = (process.env.AIRGAP_DEBUG ?? '').split(',').includes('http');

/** The first value of a response header. */
export function header(res: Response, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The connection to one registry, with its retry policy. */
export class RegistryTransport {
  readonly agent: Dispatcher;
  readonly userAgent: string;
  private readonly retry: Required<RetryOptions>;
  /** The first contact: GET /v2/ once, so that concurrent requests do not each collect a 401. */
  private learned?: Promise<void>;
  /** Set when first contact failed for good: every request reports this instead of retrying. */
  private unreachable?: RegistryError;
  /** Requests and bodies that got nothing in time; the registry is given up after a few in a row. */
  readonly stalls: StallWatch;

  constructor(
    readonly registry: string,
    readonly base: string,
    opts: AgentOptions & {
      retry?: RetryOptions;
      userAgent?: string;
      /** Told each time the registry stalls (a warning line for the user). */
      onNotice?: (message: string) => void;
    },
  ) {
    this.agent = createAgent(registry, opts);
    this.stalls = new StallWatch(registry, opts.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS, opts.onNotice);
    this.retry = {
      attempts: opts.retry?.attempts ?? 6,
      baseDelayMs: opts.retry?.baseDelayMs ?? 250,
      maxDelayMs: opts.retry?.maxDelayMs ?? 15_000,
      maxRetryAfterMs: opts.retry?.maxRetryAfterMs ?? 60_000,
    };
    this.userAgent = opts.userAgent ?? 'airgap/0.1';
  }

  /** Attempts per request, including the first. */
  get attempts(): number {
    return this.retry.attempts;
  }

  /** Cut every connection (anything still open was abandoned after a fault). */
  async close(): Promise<void> {
    await this.agent.destroy();
  }

  /** Wait before attempt `attempt + 1`, honouring a Retry-After header when given. */
  async backoff(attempt: number, retryAfter?: string | string[]): Promise<void> {
    const r = this.retry;
    await waitBeforeRetry(
      attempt,
      { baseMs: r.baseDelayMs, maxMs: r.maxDelayMs, maxRetryAfterMs: r.maxRetryAfterMs },
      retryAfter,
    );
  }

  /** A request that got no answer, as a RegistryError (errors.ts). */
  networkError(e: unknown, what: string): AirgapError {
    return networkError(this.registry, e, what);
  }

  url(path: string): string {
    return path.startsWith('http://') || path.startsWith('https://') ? path : `${this.base}${path}`;
  }

  /**
   * First contact, once per client: GET /v2/ (with retries) learns the auth scheme, so concurrent
   * requests do not each collect a 401. A registry that cannot be reached at all (connection
   * refused, unknown host, TLS rejected) is remembered, and every request then fails at once with
   * that reason instead of retrying on its own.
   */
  private firstContact(auth: Authorizer): Promise<void> {
    this.learned ??= (async () => {
      const what = `${this.registry}/v2/`;
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await this.once({ method: 'GET', path: '/v2/', ok: [200], what }, undefined);
          await res.body.dump();
          if (res.statusCode === 401) auth.setChallenge(parseChallenge(header(res, 'www-authenticate')));
          return;
        } catch (e) {
          if (isStall(e)) {
            this.stalls.stalled(what, e);
            if (this.stalls.givenUp) return; // every request now reports it
            continue;
          }
          const err = this.networkError(e, what);
          if (err.code === MirrorError.REGISTRY_TLS || attempt >= this.retry.attempts) {
            if (
              err instanceof RegistryError &&
              (err.code === MirrorError.REGISTRY_TLS || err.code === MirrorError.REGISTRY_UNREACHABLE)
            )
              this.unreachable = err;
            return; // anything else: the real request reports it with its own context
          }
          await this.backoff(attempt);
        }
      }
    })();
    return this.learned;
  }

  /**
   * One request with auth, redirects and retries (a replayable body only: network errors, 408, 429
   * and 5xx). A 401 goes to `auth`; any other status not in `req.ok` becomes a RegistryError.
   */
  async send(req: RegistryRequest, auth: Authorizer): Promise<Response> {
    await this.firstContact(auth);
    if (this.unreachable || this.stalls.givenUp) {
      const u = (this.unreachable ?? this.stalls.givenUp)!;
      throw new RegistryError(u.code, u.message, {
        registry: this.registry,
        temporary: u.temporary,
        where: req.what,
        hint: u.hint,
        cause: u,
      });
    }
    const replayable = req.body === undefined || typeof req.body === 'string' || Buffer.isBuffer(req.body);
    let authRetried = false;
    let stallRetried = false;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      let authorization: string | undefined;
      try {
        authorization = await auth.header(req);
        res = await this.once(req, authorization);
      } catch (e) {
        if (e instanceof AirgapError) throw e;
        if (isStall(e)) {
          // A silence is waited out once per request, not once per attempt: the stall count of
          // the registry, not the retry budget, decides when to stop asking it.
          const err = this.stalls.stalled(req.what, e);
          if (this.stalls.givenUp || !replayable || stallRetried) throw err;
          stallRetried = true;
          attempt--;
          continue;
        }
        if (replayable && attempt < this.retry.attempts && isRetryableRequestError(e)) {
          await this.backoff(attempt);
          continue;
        }
        throw this.networkError(e, req.what);
      }
      if (req.ok.includes(res.statusCode)) return res;
      if (res.statusCode === 401) {
        await auth.refused(req, res, authorization, !authRetried && replayable);
        // Learn the scheme (first contact) or refresh an expired/insufficient token: once.
        authRetried = true;
        attempt--;
        continue;
      }
      if (isRetryableStatus(res.statusCode) && replayable && attempt < this.retry.attempts) {
        const retryAfter = res.headers['retry-after'];
        await res.body.dump();
        await this.backoff(attempt, retryAfter);
        continue;
      }
      throw await statusError(this.registry, res, req);
    }
  }

  /** One exchange, redirects followed; AIRGAP_DEBUG=http logs it. */
  async once(req: RegistryRequest, auth: string | undefined): Promise<Response> {
    const shown = () => this.url(req.path).replace(/_state=[^&]+/, '_state=…');
    if (DEBUG_HTTP) process.stderr.write(`http: ${req.method} ${shown()} …\n`);
    const res = await this.follow(req, auth);
    if (DEBUG_HTTP) process.stderr.write(`http: ${req.method} ${shown()} → ${res.statusCode}\n`);
    this.watchBody(res, req.what);
    return res;
  }

  /** A body read to its end means the registry answers; one that stalls (or is too slow) counts. */
  private watchBody(res: Response, what: string): void {
    const body = res.body;
    body.once('end', () => this.stalls.answered());
    body.once('error', (e: unknown) => {
      if (isStall(e)) this.stalls.stalled(what, e);
    });
  }

  private async follow(req: RegistryRequest, auth: string | undefined): Promise<Response> {
    const headers: Record<string, string> = { 'user-agent': this.userAgent, ...req.headers };
    if (auth) headers.authorization = auth;
    let url = this.url(req.path);
    for (let hops = 0; ; hops++) {
      const res = await requestOn(this.agent, url, {
        method: req.method,
        headers,
        body: req.body as Dispatcher.RequestOptions['body'],
      });
      const follow = !req.noRedirect && (req.method === 'GET' || req.method === 'HEAD') && hops <= 5;
      if (!follow || !REDIRECT_STATUS.has(res.statusCode)) return res;
      const loc = header(res, 'location');
      await res.body.dump();
      if (!loc) return res;
      const next = new URL(loc, url);
      // Never forward credentials to another origin: another host (blob storage redirects), or
      // the same host over another scheme (https → http would send them in clear).
      if (next.origin !== new URL(url).origin) delete headers.authorization;
      url = next.toString();
    }
  }
}
