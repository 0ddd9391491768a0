import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { AirgapError, messageOf } from '../../util/errors.js';
import { findCredential, type Credential, type CredentialOptions } from '../auth/credentials.js';
import { DigestVerifier, sha256Digest } from '../digest.js';
import { MANIFEST_ACCEPT } from '../media-types.js';
import type { ManifestData } from '../manifest.js';
import {
  backoffMs,
  createAgent,
  isTlsError,
  netErrorCode,
  retryAfterMs,
  type AgentOptions,
} from '../../net/http.js';
import { parseChallenge, type Challenge } from './challenge.js';

export interface RetryOptions {
  /** Attempts per request, including the first. */
  attempts?: number;
  /** First backoff in ms; doubles each attempt, with jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Longest Retry-After we honour, in ms. */
  maxRetryAfterMs?: number;
}

export interface RegistryClientOptions extends AgentOptions {
  credentials?: CredentialOptions;
  retry?: RetryOptions;
  /** Blobs up to this size are uploaded with one PUT; larger ones in PATCH chunks of `chunkSize`. */
  monolithicMax?: number;
  chunkSize?: number;
  userAgent?: string;
}

type Action = 'pull' | 'pull,push';

interface Req {
  method: Dispatcher.HttpMethod;
  /** `/v2/...` or an absolute URL (upload Location). */
  path: string;
  repo?: string;
  action?: Action;
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

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_MANIFEST = 8 * 1024 * 1024;
/** AIRGAP_DEBUG=http logs every registry request (never headers or bodies, so never a secret). */
const DEBUG_HTTP = (process.env.AIRGAP_DEBUG ?? '').split(',').includes('http');

interface Token {
  value: string;
  expiresAt: number;
}

/** A registry's error body: `{"errors":[{"code","message"}]}`. */
async function registryErrorText(res: Response): Promise<string> {
  try {
    const text = await res.body.text();
    const doc = JSON.parse(text) as { errors?: { code?: string; message?: string; detail?: unknown }[] };
    if (doc.errors?.length)
      return doc.errors.map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim()).join('; ');
    return text.slice(0, 200);
  } catch {
    return '';
  }
}

function header(res: Response, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A client for one registry (host[:port]) speaking the OCI distribution API over undici:
 * ping, Basic and Bearer auth (token cache per scope, refresh on 401, identity tokens), manifests
 * by exact bytes, blobs streamed and verified, chunked and monolithic uploads, cross-repository
 * mounts, tag listing, and retries with jittered backoff that honour Retry-After.
 */
export class RegistryClient {
  readonly registry: string;
  readonly base: string;
  private readonly agent: Dispatcher;
  private readonly retry: Required<RetryOptions>;
  readonly monolithicMax: number;
  readonly chunkSize: number;
  private challenge?: Challenge;
  /** The first contact: GET /v2/ once, so that concurrent requests do not each collect a 401. */
  private learned?: Promise<void>;
  /** Set when first contact failed for good: every request reports this instead of retrying. */
  private unreachable?: AirgapError;
  private readonly tokens = new Map<string, Token>();
  /** Token requests in flight, by scope set: concurrent requests wait for one instead of each asking. */
  private readonly pendingTokens = new Map<string, Promise<Token>>();
  private readonly creds = new Map<string, Promise<Credential | undefined>>();
  private readonly userAgent: string;

  constructor(
    registry: string,
    private readonly opts: RegistryClientOptions = {},
  ) {
    this.registry = registry;
    this.base = `https://${registry === 'docker.io' ? 'registry-1.docker.io' : registry}`;
    this.agent = createAgent(registry, opts);
    this.retry = {
      attempts: opts.retry?.attempts ?? 6,
      baseDelayMs: opts.retry?.baseDelayMs ?? 250,
      maxDelayMs: opts.retry?.maxDelayMs ?? 15_000,
      maxRetryAfterMs: opts.retry?.maxRetryAfterMs ?? 60_000,
    };
    this.monolithicMax = opts.monolithicMax ?? 8 * 1024 * 1024;
    this.chunkSize = opts.chunkSize ?? 16 * 1024 * 1024;
    this.userAgent = opts.userAgent ?? 'airgap/0.1';
  }

  /**
   * Release the connections. The run is over when this is called, so anything still open (a read
   * abandoned after a fault) is cut rather than waited for.
   */
  async close(): Promise<void> {
    await this.agent.destroy();
  }

  // ---------------------------------------------------------------- auth

  private credentialFor(repo: string): Promise<Credential | undefined> {
    let c = this.creds.get(repo);
    if (!c) {
      c = findCredential(this.registry, repo, this.opts.credentials);
      this.creds.set(repo, c);
    }
    return c;
  }

  private scopesFor(req: Req): string[] {
    if (!req.repo) return [];
    const scopes = [`repository:${req.repo}:${req.action ?? 'pull'}`];
    if (req.mountFrom && req.mountFrom !== req.repo) scopes.push(`repository:${req.mountFrom}:pull`);
    return scopes;
  }

  private static credentialSource(cred: Credential | undefined): string {
    return cred ? `credentials from ${cred.source}` : 'no credentials (none found in the auth file chain)';
  }

  private unauthorized(message: string, cred: Credential | undefined, where?: string): AirgapError {
    return new AirgapError(
      'REGISTRY_UNAUTHORIZED',
      `${this.registry} refused access: ${message}; used ${RegistryClient.credentialSource(cred)}`,
      {
        where,
        hint: cred
          ? 'check the user and password for this registry (podman login, or --authfile)'
          : `log in first (podman login ${this.registry}) or pass --authfile with an entry for ${this.registry}`,
      },
    );
  }

  /** A valid token that lacks the access asked for (`error="insufficient_scope"`): a permission problem. */
  private insufficientScope(req: Req, cred: Credential | undefined): AirgapError {
    const scopes = this.scopesFor(req).join(' ');
    return new AirgapError(
      'REGISTRY_DENIED',
      `${this.registry} denied ${req.what}: the token service did not grant ${scopes || 'the access needed'}; used ${RegistryClient.credentialSource(cred)}`,
      {
        details: { status: 401, registry: this.registry },
        hint: cred
          ? 'the account lacks permission for this repository (push needs write access); ask for access or use another account'
          : `log in first (podman login ${this.registry}) or pass --authfile with an entry for ${this.registry}`,
      },
    );
  }

  private async authHeader(req: Req): Promise<string | undefined> {
    const ch = this.challenge;
    if (!ch) return undefined;
    const cred = req.repo ? await this.credentialFor(req.repo) : undefined;
    if (ch.scheme === 'basic') {
      if (!cred?.username || cred.password === undefined) return undefined;
      return `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
    }
    const scopes = this.scopesFor(req);
    const key = scopes.join(' ');
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt > Date.now() + 5_000) return `Bearer ${cached.value}`;
    let pending = this.pendingTokens.get(key);
    if (!pending) {
      pending = (async () => {
        try {
          const token = await this.fetchToken(ch, scopes, cred, req.what);
          this.tokens.set(key, token);
          return token;
        } finally {
          this.pendingTokens.delete(key);
        }
      })();
      this.pendingTokens.set(key, pending);
    }
    return `Bearer ${(await pending).value}`;
  }

  /** Forget the cached token for `req`'s scopes if it is the one `auth` carried (not a newer one). */
  private dropToken(req: Req, auth: string | undefined): void {
    const key = this.scopesFor(req).join(' ');
    const cached = this.tokens.get(key);
    if (cached && auth === `Bearer ${cached.value}`) this.tokens.delete(key);
  }

  private async fetchToken(
    ch: Challenge,
    scopes: string[],
    cred: Credential | undefined,
    what: string,
  ): Promise<Token> {
    const realm = ch.params.realm;
    if (!realm)
      throw new AirgapError(
        'REGISTRY_AUTH_INVALID',
        `${this.registry} sent a Bearer challenge without a realm`,
      );
    const url = new URL(realm);
    let res: Response;
    for (let attempt = 1; ; attempt++) {
      try {
        if (cred?.identityToken) {
          const form = new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: cred.identityToken,
            client_id: 'airgap',
            ...(ch.params.service ? { service: ch.params.service } : {}),
            ...(scopes.length ? { scope: scopes.join(' ') } : {}),
          });
          res = await request(url, {
            method: 'POST',
            dispatcher: this.agent,
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': this.userAgent },
            body: form.toString(),
          });
        } else {
          if (ch.params.service) url.searchParams.set('service', ch.params.service);
          for (const s of scopes) url.searchParams.append('scope', s);
          const headers: Record<string, string> = { 'user-agent': this.userAgent };
          if (cred?.username && cred.password !== undefined) {
            headers.authorization = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
          }
          res = await request(url, { method: 'GET', dispatcher: this.agent, headers });
        }
      } catch (e) {
        if (attempt < this.retry.attempts && !isTlsError(e)) {
          await this.backoff(attempt);
          continue;
        }
        throw this.networkError(e, `token for ${what}`);
      }
      if (RETRY_STATUS.has(res.statusCode) && attempt < this.retry.attempts) {
        await res.body.dump();
        await this.backoff(attempt, retryAfterMs(res.headers['retry-after']));
        continue;
      }
      break;
    }
    if (res.statusCode === 401 || res.statusCode === 403) {
      const text = await registryErrorText(res);
      throw this.unauthorized(
        `the token service ${url.origin} answered ${res.statusCode} ${text}`.trim(),
        cred,
        what,
      );
    }
    if (res.statusCode !== 200) {
      const text = await registryErrorText(res);
      throw new AirgapError(
        'REGISTRY_AUTH_FAILED',
        `token service of ${this.registry} answered ${res.statusCode} ${text}`,
        {
          where: what,
        },
      );
    }
    const doc = (await res.body.json()) as { token?: string; access_token?: string; expires_in?: number };
    const value = doc.token ?? doc.access_token;
    if (!value)
      throw new AirgapError('REGISTRY_AUTH_FAILED', `token service of ${this.registry} returned no token`);
    return { value, expiresAt: Date.now() + Math.max(60, doc.expires_in ?? 60) * 1000 };
  }

  // ---------------------------------------------------------------- transport

  private async backoff(attempt: number, retryAfter?: number): Promise<void> {
    const r = this.retry;
    await sleep(
      backoffMs(attempt, {
        baseMs: r.baseDelayMs,
        maxMs: r.maxDelayMs,
        maxRetryAfterMs: r.maxRetryAfterMs,
        retryAfterMs: retryAfter,
      }),
    );
  }

  private networkError(e: unknown, what: string): AirgapError {
    if (e instanceof AirgapError) return e;
    const code = netErrorCode(e);
    if (isTlsError(e)) {
      return new AirgapError(
        'REGISTRY_TLS',
        `TLS verification of ${this.registry} failed: ${code ?? messageOf(e)}`,
        {
          where: what,
          hint: `trust the registry's CA with --ca-file or /etc/containers/certs.d/${this.registry}/ca.crt (or, knowingly, turn verification off with --dest-tls-verify=false / --src-tls-verify=false)`,
          cause: e,
        },
      );
    }
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
      return new AirgapError('REGISTRY_UNREACHABLE', `cannot reach ${this.registry}: ${code}`, {
        where: what,
        hint: 'check the host and port, DNS, and that the registry is running',
        cause: e,
      });
    }
    return new AirgapError('REGISTRY_NETWORK', `network error talking to ${this.registry}: ${messageOf(e)}`, {
      where: what,
      cause: e,
    });
  }

  private url(path: string): string {
    return path.startsWith('http://') || path.startsWith('https://') ? path : `${this.base}${path}`;
  }

  /** One request with auth, redirects and retries. Non-`ok` statuses become AirgapErrors. */
  /**
   * First contact, once per client: GET /v2/ (with retries) learns the auth scheme, so concurrent
   * requests do not each collect a 401. A registry that cannot be reached at all (connection
   * refused, unknown host, TLS rejected) is remembered, and every request then fails at once with
   * that reason instead of retrying on its own.
   */
  private learnChallenge(): Promise<void> {
    this.learned ??= (async () => {
      const what = `${this.registry}/v2/`;
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await this.once({ method: 'GET', path: '/v2/', ok: [200], what }, undefined);
          await res.body.dump();
          if (res.statusCode === 401) this.challenge = parseChallenge(header(res, 'www-authenticate'));
          return;
        } catch (e) {
          const err = this.networkError(e, what);
          if (err.code === 'REGISTRY_TLS' || attempt >= this.retry.attempts) {
            if (err.code === 'REGISTRY_TLS' || err.code === 'REGISTRY_UNREACHABLE') this.unreachable = err;
            return; // anything else: the real request reports it with its own context
          }
          await this.backoff(attempt);
        }
      }
    })();
    return this.learned;
  }

  async send(req: Req): Promise<Response> {
    await this.learnChallenge();
    if (this.unreachable) {
      const u = this.unreachable;
      throw new AirgapError(u.code, u.message, { where: req.what, hint: u.hint, cause: u });
    }
    const replayable = req.body === undefined || typeof req.body === 'string' || Buffer.isBuffer(req.body);
    let authRetried = false;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      let auth: string | undefined;
      try {
        auth = await this.authHeader(req);
        res = await this.once(req, auth);
      } catch (e) {
        if (e instanceof AirgapError) throw e;
        if (replayable && attempt < this.retry.attempts && !isTlsError(e)) {
          await this.backoff(attempt);
          continue;
        }
        throw this.networkError(e, req.what);
      }
      if (req.ok.includes(res.statusCode)) return res;
      if (res.statusCode === 401) {
        const fresh = parseChallenge(header(res, 'www-authenticate'));
        const text = await registryErrorText(res);
        const cred = req.repo ? await this.credentialFor(req.repo) : undefined;
        // The registry refused the token we sent (expired, revoked, or short of scope): never send it
        // again, even when this request cannot be replayed (its caller's retry gets a fresh one).
        const retryAuth = req.authRetry !== false;
        if (retryAuth && fresh?.scheme === 'bearer') this.dropToken(req, auth);
        if (retryAuth && !authRetried && replayable && fresh) {
          // Learn the scheme (first contact) or refresh an expired/insufficient token.
          authRetried = true;
          this.challenge = fresh;
          if (fresh.scheme === 'basic' && !cred)
            throw this.unauthorized(text || 'authentication required', cred, req.what);
          attempt--;
          continue;
        }
        if (fresh?.scheme === 'bearer' && fresh.params.error === 'insufficient_scope')
          throw this.insufficientScope(req, cred);
        throw this.unauthorized(text || 'unauthorized', cred, req.what);
      }
      if (RETRY_STATUS.has(res.statusCode) && replayable && attempt < this.retry.attempts) {
        const ra = retryAfterMs(res.headers['retry-after']);
        await res.body.dump();
        await this.backoff(attempt, ra);
        continue;
      }
      throw await this.statusError(res, req);
    }
  }

  private async statusError(res: Response, req: Req): Promise<AirgapError> {
    const text = await registryErrorText(res);
    const s = res.statusCode;
    const details = { status: s, registry: this.registry };
    if (s === 404)
      return new AirgapError('REGISTRY_NOT_FOUND', `${req.what} does not exist (${text || '404'})`, {
        details,
        hint: 'check the repository, tag or digest',
      });
    if (s === 403)
      return new AirgapError('REGISTRY_DENIED', `${this.registry} denied ${req.what} (${text || '403'})`, {
        details,
        hint: 'the account lacks permission for this repository (push needs write access)',
      });
    if (s === 429)
      return new AirgapError('REGISTRY_RATE_LIMITED', `${this.registry} kept rate-limiting ${req.what}`, {
        details,
        hint: 'retry later or lower --parallel',
      });
    return new AirgapError(
      'REGISTRY_ERROR',
      `${this.registry} answered ${s} to ${req.method} for ${req.what}${text ? `: ${text}` : ''}`,
      { details },
    );
  }

  private async once(req: Req, auth: string | undefined): Promise<Response> {
    const res = await this.onceInner(req, auth);
    if (DEBUG_HTTP)
      process.stderr.write(
        `http: ${req.method} ${this.url(req.path).replace(/_state=[^&]+/, '_state=…')} → ${res.statusCode}\n`,
      );
    return res;
  }

  private async onceInner(req: Req, auth: string | undefined): Promise<Response> {
    if (DEBUG_HTTP)
      process.stderr.write(
        `http: ${req.method} ${this.url(req.path).replace(/_state=[^&]+/, '_state=…')} …\n`,
      );
    const headers: Record<string, string> = { 'user-agent': this.userAgent, ...req.headers };
    if (auth) headers.authorization = auth;
    let url = this.url(req.path);
    for (let hops = 0; ; hops++) {
      const res = await request(url, {
        method: req.method,
        dispatcher: this.agent,
        headers,
        body: req.body as Dispatcher.RequestOptions['body'],
      });
      const follow = !req.noRedirect && (req.method === 'GET' || req.method === 'HEAD') && hops <= 5;
      if (!follow || !REDIRECT_STATUS.has(res.statusCode)) return res;
      const loc = header(res, 'location');
      await res.body.dump();
      if (!loc) return res;
      const next = new URL(loc, url);
      // Never forward credentials to another host (blob storage redirects).
      if (next.host !== new URL(url).host) delete headers.authorization;
      url = next.toString();
    }
  }

  // ---------------------------------------------------------------- API

  /** GET /v2/ — checks reachability, TLS and credentials in one call. */
  async ping(repo = 'library/airgap-ping'): Promise<void> {
    const res = await this.send({
      method: 'GET',
      path: '/v2/',
      repo,
      ok: [200],
      what: `${this.registry}/v2/`,
    });
    await res.body.dump();
  }

  /** Fetch a manifest's exact bytes, verified against the digest asked for (or the one the registry states). */
  async getManifest(repo: string, ref: string, action: Action = 'pull'): Promise<ManifestData> {
    const what = `manifest ${this.registry}/${repo}${ref.includes(':') ? '@' : ':'}${ref}`;
    const res = await this.send({
      method: 'GET',
      path: `/v2/${repo}/manifests/${ref}`,
      repo,
      action,
      headers: { accept: MANIFEST_ACCEPT },
      ok: [200],
      what,
    });
    const length = Number(header(res, 'content-length') ?? 0);
    if (length > MAX_MANIFEST) {
      await res.body.dump();
      throw new AirgapError('MIRROR_MANIFEST_TOO_LARGE', `${what} is ${length} bytes, over the 8 MiB limit`);
    }
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const digest = sha256Digest(bytes);
    const expected = ref.startsWith('sha256:') ? ref : header(res, 'docker-content-digest');
    if (expected && expected.startsWith('sha256:') && expected !== digest) {
      throw new AirgapError(
        'MIRROR_DIGEST_MISMATCH',
        `${what}: content hashes to ${digest}, expected ${expected}`,
        {
          hint: 'the registry or a proxy altered the manifest; nothing was stored',
        },
      );
    }
    const mediaType = (header(res, 'content-type') ?? '').split(';')[0]!.trim();
    return { bytes, digest, mediaType };
  }

  /**
   * The digest a manifest reference points at, or undefined when absent. A GET, not a HEAD: undici
   * closes the connection after every HEAD, and a new TLS handshake costs more than a manifest.
   */
  async headManifest(
    repo: string,
    ref: string,
  ): Promise<{ digest: string; mediaType: string; size: number } | undefined> {
    try {
      const m = await this.getManifest(repo, ref, 'pull,push');
      return { digest: m.digest, mediaType: m.mediaType, size: m.bytes.length };
    } catch (e) {
      if (e instanceof AirgapError && e.code === 'REGISTRY_NOT_FOUND') return undefined;
      throw e;
    }
  }

  /** PUT a manifest byte for byte; the registry's digest must equal ours. */
  async putManifest(repo: string, ref: string, m: ManifestData): Promise<void> {
    const what = `manifest ${this.registry}/${repo}${ref.includes(':') ? '@' : ':'}${ref}`;
    const res = await this.send({
      method: 'PUT',
      path: `/v2/${repo}/manifests/${ref}`,
      repo,
      action: 'pull,push',
      headers: { 'content-type': m.mediaType },
      body: m.bytes,
      ok: [200, 201, 202],
      what,
    });
    await res.body.dump();
    const stated = header(res, 'docker-content-digest');
    if (stated && stated !== m.digest) {
      throw new AirgapError(
        'MIRROR_DIGEST_MISMATCH',
        `${what}: the registry stored ${stated}, expected ${m.digest}`,
        {
          hint: 'the destination rewrote the manifest; mirror to a registry that stores manifests as pushed',
        },
      );
    }
  }

  /**
   * Whether a blob is in a repository. A one-byte ranged GET rather than a HEAD, so the connection
   * stays open (see headManifest); a redirect to blob storage also means it exists.
   */
  async hasBlob(repo: string, digest: string, action: Action = 'pull'): Promise<boolean> {
    const res = await this.send({
      method: 'GET',
      path: `/v2/${repo}/blobs/${digest}`,
      repo,
      action,
      headers: { range: 'bytes=0-0' },
      ok: [200, 206, 307, 302, 404],
      noRedirect: true,
      what: `blob ${this.registry}/${repo}@${digest}`,
    });
    if (res.statusCode === 200)
      res.body.destroy(); // a registry that ignores Range: do not download it all
    else await res.body.dump();
    return res.statusCode !== 404;
  }

  /**
   * Open a blob for reading from `offset`. Returns the body and the offset the server actually
   * starts at (a server that ignores Range starts at 0; the reader skips what it already has).
   */
  async openBlob(
    repo: string,
    digest: string,
    offset = 0,
  ): Promise<{ body: AsyncIterable<Buffer>; start: number; size?: number }> {
    const res = await this.send({
      method: 'GET',
      path: `/v2/${repo}/blobs/${digest}`,
      repo,
      headers: offset > 0 ? { range: `bytes=${offset}-` } : {},
      ok: [200, 206],
      what: `blob ${this.registry}/${repo}@${digest}`,
    });
    let start = 0;
    if (res.statusCode === 206) {
      const m = /bytes (\d+)-/.exec(header(res, 'content-range') ?? '');
      if (!m) {
        await res.body.dump();
        throw new AirgapError(
          'REGISTRY_ERROR',
          `${this.registry} answered a range request for ${digest} without Content-Range`,
        );
      }
      start = Number(m[1]);
    }
    const len = header(res, 'content-length');
    return {
      body: res.body as AsyncIterable<Buffer>,
      start,
      size: len === undefined ? undefined : start + Number(len),
    };
  }

  /**
   * Start an upload session, trying a cross-repository mount first when `mountFrom` is given.
   * Returns 'mounted' or the session Location.
   */
  async startUpload(
    repo: string,
    digest: string,
    mountFrom?: string,
  ): Promise<{ mounted: true } | { mounted: false; location: string }> {
    const q = mountFrom ? `?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(mountFrom)}` : '';
    const res = await this.send({
      method: 'POST',
      path: `/v2/${repo}/blobs/uploads/${q}`,
      repo,
      action: 'pull,push',
      mountFrom,
      headers: { 'content-length': '0' },
      body: '',
      ok: [201, 202],
      what: `upload of ${digest} to ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode === 201 && mountFrom) return { mounted: true };
    const loc = header(res, 'location');
    if (!loc)
      throw new AirgapError('REGISTRY_ERROR', `${this.registry} started an upload without a Location header`);
    return { mounted: false, location: new URL(loc, this.base + '/').toString() };
  }

  /**
   * Where an interrupted upload session stands: bytes committed and the Location to continue with
   * (distribution signs the offset into it), or undefined when the session is gone.
   */
  async uploadStatus(
    repo: string,
    location: string,
  ): Promise<{ committed: number; location: string } | undefined> {
    const res = await this.send({
      method: 'GET',
      path: location,
      repo,
      action: 'pull,push',
      ok: [204, 404, 400],
      what: `upload status in ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode !== 204) return undefined;
    const m = /^(?:bytes=)?0-(\d+)$/.exec(header(res, 'range') ?? '');
    const loc = header(res, 'location');
    // distribution answers "0-0" both for an empty upload and for one byte; take it as empty (a
    // wrong guess costs a 416 and a fresh session, never wrong bytes).
    return {
      committed: m && m[1] !== '0' ? Number(m[1]) + 1 : 0,
      location: loc ? new URL(loc, this.base + '/').toString() : location,
    };
  }

  /** PATCH one chunk; returns the next Location. The body is streamed; the caller retries. */
  async patchChunk(
    repo: string,
    location: string,
    offset: number,
    length: number,
    body: AsyncIterable<Buffer>,
  ): Promise<string> {
    const res = await this.send({
      method: 'PATCH',
      path: location,
      repo,
      action: 'pull,push',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(length),
        'content-range': `${offset}-${offset + length - 1}`,
      },
      body,
      ok: [202, 204, 416],
      what: `chunk ${offset}-${offset + length - 1} of an upload to ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode === 416) {
      throw new AirgapError(
        'MIRROR_UPLOAD_RESTART',
        `${this.registry} refused chunk ${offset}- of an upload to ${repo} (416)`,
      );
    }
    const loc = header(res, 'location');
    return loc ? new URL(loc, this.base + '/').toString() : location;
  }

  /**
   * Finish an upload with PUT ?digest=, optionally carrying the whole blob (monolithic). A streamed
   * body is sent once (the caller retries with a new session); the registry verifies the digest.
   */
  async finishUpload(
    repo: string,
    location: string,
    digest: string,
    body?: AsyncIterable<Buffer>,
    length = 0,
  ): Promise<void> {
    const u = new URL(location);
    u.searchParams.set('digest', digest);
    const res = await this.send({
      method: 'PUT',
      path: u.toString(),
      repo,
      action: 'pull,push',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(body ? length : 0),
      },
      body: body ?? '',
      ok: [201, 204],
      what: `blob ${digest} in ${this.registry}/${repo}`,
    });
    await res.body.dump();
  }

  /** Cancel an upload session (best effort). */
  async cancelUpload(repo: string, location: string): Promise<void> {
    try {
      const res = await this.send({
        method: 'DELETE',
        path: location,
        repo,
        action: 'pull,push',
        ok: [204, 404, 400, 405],
        what: 'upload cancel',
        authRetry: false,
      });
      await res.body.dump();
    } catch {
      /* best effort */
    }
  }

  /** All tags of a repository, following Link pagination. */
  async listTags(repo: string, pageSize = 1000): Promise<string[]> {
    const tags: string[] = [];
    let path: string | undefined = `/v2/${repo}/tags/list?n=${pageSize}`;
    while (path) {
      const res = await this.send({
        method: 'GET',
        path,
        repo,
        ok: [200],
        what: `tags of ${this.registry}/${repo}`,
      });
      const doc = (await res.body.json()) as { tags?: string[] | null };
      tags.push(...(doc.tags ?? []));
      const link = header(res, 'link');
      const m = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
      path = m ? new URL(m[1]!, this.base).toString() : undefined;
    }
    return tags;
  }

  /** Read a whole blob into memory, verified (configs, small files). */
  async getBlobBytes(repo: string, digest: string, size?: number): Promise<Buffer> {
    const v = new DigestVerifier(digest, size);
    const { body } = await this.openBlob(repo, digest);
    const parts: Buffer[] = [];
    for await (const c of body) {
      v.update(c);
      parts.push(c);
    }
    v.verify(`blob ${this.registry}/${repo}@${digest}`);
    return Buffer.concat(parts);
  }
}
