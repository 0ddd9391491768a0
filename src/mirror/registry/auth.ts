/** The largest token service answer read (JWTs with many scopes are a few KiB). */
const MAX_TOKEN_RESPONSE = 1024 * 1024;

/**
 * Authentication to one registry, as the transport asks for it: Basic from the auth file chain, or
 * Bearer tokens from the registry's token service (GET with Basic credentials, or POST with an
 * identity token), cached per scope set, asked for once when concurrent requests need the same one,
 * and dropped or refreshed when the registry refuses them (401). Parsing WWW-Authenticate is
 * challenge.ts; the failures are RegistryErrors naming where the credentials came from, never them.
 */
import { requestOn } from '../../net/http.js';
import { isRetryableRequestError, isRetryableStatus } from '../../net/retry.js';
import { Once } from '../../util/limit.js';
import { readBounded } from '../../net/body.js';
import { findCredential, type Credential, type CredentialOptions } from '../auth/credentials.js';
import { parseChallenge, type Challenge } from './challenge.js';
import { RegistryError, readErrorBody, type RegistryErrorEntry } from './errors.js';
import {
  header,
  type Authorizer,
  type RegistryRequest,
  type RegistryTransport,
  type Response,
} from './transport.js';
import { MirrorError } from '../errors.js';

interface Token {
  value: string;
  expiresAt: number;
}

function basic(cred: Credential): string {
  return `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
}

/** The credentials and tokens of one registry client. */
export class RegistryAuth implements Authorizer {
  private challenge?: Challenge;
  private readonly tokens = new Map<string, Token>();
  /** Token requests in flight, by scope set: concurrent requests wait for one instead of each asking. */
  private readonly pendingTokens = new Map<string, Promise<Token>>();
  private readonly creds = new Once<Credential | undefined>();

  constructor(
    private readonly registry: string,
    private readonly transport: RegistryTransport,
    private readonly credentials?: CredentialOptions,
  ) {}

  setChallenge(challenge: Challenge | undefined): void {
    this.challenge = challenge;
  }

  async header(req: RegistryRequest): Promise<string | undefined> {
    const ch = this.challenge;
    if (!ch) return undefined;
    const cred = req.repo ? await this.credentialFor(req.repo) : undefined;
    if (ch.scheme === 'basic') {
      if (!cred?.username || cred.password === undefined) return undefined;
      return basic(cred);
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

  async refused(
    req: RegistryRequest,
    res: Response,
    auth: string | undefined,
    mayRetry: boolean,
  ): Promise<void> {
    const fresh = parseChallenge(header(res, 'www-authenticate'));
    const { text, registryErrors } = await readErrorBody(res);
    const cred = req.repo ? await this.credentialFor(req.repo) : undefined;
    // The registry refused the token we sent (expired, revoked, or short of scope): never send it
    // again, even when this request cannot be replayed (its caller's retry gets a fresh one).
    const retryAuth = req.authRetry !== false;
    if (retryAuth && fresh?.scheme === 'bearer') this.dropToken(req, auth);
    if (retryAuth && mayRetry && fresh) {
      // Learn the scheme (first contact) or refresh an expired/insufficient token.
      this.challenge = fresh;
      if (fresh.scheme === 'basic' && !cred)
        throw this.unauthorized(text || 'authentication required', cred, req.what, 401, registryErrors);
      return;
    }
    if (fresh?.scheme === 'bearer' && fresh.params.error === 'insufficient_scope')
      throw this.insufficientScope(req, cred, registryErrors);
    throw this.unauthorized(text || 'unauthorized', cred, req.what, 401, registryErrors);
  }

  private credentialFor(repo: string): Promise<Credential | undefined> {
    return this.creds.get(repo, () => findCredential(this.registry, repo, this.credentials));
  }

  private scopesFor(req: RegistryRequest): string[] {
    if (req.scope) return [req.scope];
    if (!req.repo) return [];
    const scopes = [`repository:${req.repo}:${req.action ?? 'pull'}`];
    if (req.mountFrom && req.mountFrom !== req.repo) scopes.push(`repository:${req.mountFrom}:pull`);
    return scopes;
  }

  /** Forget the cached token for `req`'s scopes if it is the one `auth` carried (not a newer one). */
  private dropToken(req: RegistryRequest, auth: string | undefined): void {
    const key = this.scopesFor(req).join(' ');
    const cached = this.tokens.get(key);
    if (cached && auth === `Bearer ${cached.value}`) this.tokens.delete(key);
  }

  private static credentialSource(cred: Credential | undefined): string {
    return cred ? `credentials from ${cred.source}` : 'no credentials (none found in the auth file chain)';
  }

  private unauthorized(
    message: string,
    cred: Credential | undefined,
    where: string | undefined,
    status: number,
    registryErrors: RegistryErrorEntry[],
  ): RegistryError {
    return new RegistryError(
      MirrorError.REGISTRY_UNAUTHORIZED,
      `${this.registry} refused access: ${message}; used ${RegistryAuth.credentialSource(cred)}`,
      {
        registry: this.registry,
        status,
        registryErrors,
        where,
        hint: cred
          ? 'check the user and password for this registry (podman login, or --authfile)'
          : `log in first (podman login ${this.registry}) or pass --authfile with an entry for ${this.registry}`,
      },
    );
  }

  /** A valid token that lacks the access asked for (`error="insufficient_scope"`): a permission problem. */
  private insufficientScope(
    req: RegistryRequest,
    cred: Credential | undefined,
    registryErrors: RegistryErrorEntry[],
  ): RegistryError {
    const scopes = this.scopesFor(req).join(' ');
    return new RegistryError(
      MirrorError.REGISTRY_DENIED,
      `${this.registry} denied ${req.what}: the token service did not grant ${scopes || 'the access needed'}; used ${RegistryAuth.credentialSource(cred)}`,
      {
        registry: this.registry,
        status: 401,
        registryErrors,
        details: { status: 401, registry: this.registry },
        hint: cred
          ? 'the account lacks permission for this repository (push needs write access); ask for access or use another account'
          : `log in first (podman login ${this.registry}) or pass --authfile with an entry for ${this.registry}`,
      },
    );
  }

  /** A token for `scopes` from the challenge's realm: the request (with retries), then its answer. */
  private async fetchToken(
    ch: Challenge,
    scopes: string[],
    cred: Credential | undefined,
    what: string,
  ): Promise<Token> {
    const realm = ch.params.realm;
    if (!realm)
      throw new RegistryError(
        MirrorError.REGISTRY_AUTH_INVALID,
        `${this.registry} sent a Bearer challenge without a realm`,
        { registry: this.registry, temporary: false },
      );
    const url = URL.canParse(realm) ? new URL(realm) : undefined;
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
      throw new RegistryError(
        MirrorError.REGISTRY_AUTH_INVALID,
        `${this.registry} names a token service that is not an http(s) URL`,
        { registry: this.registry, temporary: false },
      );
    this.checkRealmTransport(url, cred);
    const res = await this.requestToken(url, ch, scopes, cred, what);
    if (res.statusCode === 401 || res.statusCode === 403) {
      const { text, registryErrors } = await readErrorBody(res);
      throw this.unauthorized(
        `the token service ${url.origin} answered ${res.statusCode} ${text}`.trim(),
        cred,
        what,
        res.statusCode,
        registryErrors,
      );
    }
    if (res.statusCode !== 200) {
      const { text, registryErrors } = await readErrorBody(res);
      throw new RegistryError(
        MirrorError.REGISTRY_AUTH_FAILED,
        `token service of ${this.registry} answered ${res.statusCode} ${text}`,
        { registry: this.registry, status: res.statusCode, registryErrors, where: what },
      );
    }
    // A token response is a few KiB; more is not a token service.
    const body = await readBounded(res.body, MAX_TOKEN_RESPONSE);
    let doc: { token?: string; access_token?: string; expires_in?: number } = {};
    try {
      doc = body ? (JSON.parse(body.toString('utf8')) as typeof doc) : {};
    } catch {
      /* no token: reported below */
    }
    const value = doc.token ?? doc.access_token;
    if (!value)
      throw new RegistryError(
        MirrorError.REGISTRY_AUTH_FAILED,
        `token service of ${this.registry} returned no token`,
        {
          registry: this.registry,
          status: res.statusCode,
          temporary: false,
        },
      );
    return { value, expiresAt: Date.now() + Math.max(60, doc.expires_in ?? 60) * 1000 };
  }

  /**
   * Credentials go to a token service over https only; over plain http only to the registry's own
   * host, when the registry itself was reached over http by the user's choice (a lab registry). A
   * realm elsewhere over http gets no password: REGISTRY_AUTH_INSECURE, before anything is sent.
   */
  private checkRealmTransport(url: URL, cred: Credential | undefined): void {
    if (url.protocol === 'https:' || !(cred?.password !== undefined || cred?.identityToken)) return;
    const base = new URL(this.transport.base);
    if (base.protocol === 'http:' && url.host === base.host) return;
    throw new RegistryError(
      MirrorError.REGISTRY_AUTH_INSECURE,
      `${this.registry} sends clients to its token service at ${url.protocol}//${url.host}${url.pathname}, over plain http${base.protocol === 'http:' ? ' on another host' : ' although the registry is reached over https'}: the credentials from ${cred!.source} were not sent`,
      {
        registry: this.registry,
        temporary: false,
        hint: "serve the token service over https (the realm in the registry's auth configuration), or ask the registry's owner to",
      },
    );
  }

  /**
   * Ask the token service, retrying network errors (not TLS) and the statuses every HTTP user
   * retries: POST grant_type=refresh_token with an identity token, else GET with Basic credentials.
   */
  private async requestToken(
    url: URL,
    ch: Challenge,
    scopes: string[],
    cred: Credential | undefined,
    what: string,
  ): Promise<Response> {
    const t = this.transport;
    if (!cred?.identityToken) {
      if (ch.params.service) url.searchParams.set('service', ch.params.service);
      for (const s of scopes) url.searchParams.append('scope', s);
    }
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        if (cred?.identityToken) {
          const form = new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: cred.identityToken,
            client_id: 'airgap',
            ...(ch.params.service ? { service: ch.params.service } : {}),
            ...(scopes.length ? { scope: scopes.join(' ') } : {}),
          });
          res = await requestOn(t.agent, url, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': t.userAgent },
            body: form.toString(),
          });
        } else {
          const headers: Record<string, string> = { 'user-agent': t.userAgent };
          if (cred?.username && cred.password !== undefined) headers.authorization = basic(cred);
          res = await requestOn(t.agent, url, { method: 'GET', headers });
        }
      } catch (e) {
        if (attempt < t.attempts && isRetryableRequestError(e)) {
          await t.backoff(attempt);
          continue;
        }
        throw t.networkError(e, `token for ${what}`);
      }
      if (isRetryableStatus(res.statusCode) && attempt < t.attempts) {
        const retryAfter = res.headers['retry-after'];
        await res.body.dump();
        await t.backoff(attempt, retryAfter);
        continue;
      }
      return res;
    }
  }
}
