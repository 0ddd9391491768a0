/**
 * A Docker registry token server for integration tests (the "token" auth of distribution): HTTPS on
 * 127.0.0.1 with the test PKI, users with passwords and per-repository ACLs, and JWTs that a real
 * distribution 2.8 registry verifies. It implements the two forms of the token endpoint:
 *
 * - `GET /token?service=S&scope=A&scope=B` with Basic credentials (or none: anonymous) answers
 *   `{ token, access_token, expires_in, issued_at }` (docs/spec/auth/token.md);
 * - `POST /token` with a form body, `grant_type=password` (username, password) or
 *   `grant_type=refresh_token` (an identity token this server issued), plus `service`, `client_id`
 *   and space-separated `scope`, answers `{ access_token, expires_in, issued_at, scope,
 *   refresh_token? }` (docs/spec/auth/oauth.md; `access_type=offline` asks for a refresh token).
 *
 * Grants are the intersection of the requested and the allowed actions; a partial or empty grant is
 * a token with less in it, never an error (the registry refuses what the token lacks). Tokens are
 * RS256 JWTs whose header carries `x5c: [leaf DER]`, a signing certificate issued by the test CA,
 * so the registry's `auth.token.rootcertbundle` (the CA) is all it needs to trust them. Claims:
 * iss, sub, aud (the service), exp, nbf, iat, jti, access: [{ type, name, actions }].
 *
 * Every request is logged (`log`, `count`) without any secret, for assertions.
 */
import { createSign, randomBytes, timingSafeEqual, X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { issueSigningCert, type CertKeyPair } from '../../src/certs/mint.js';
import { testCertificates } from './tls.js';

/** Repository actions as distribution names them; `*` allows every action. */
export type RepoAction = 'pull' | 'push' | 'delete' | '*';

/**
 * Repository pattern → allowed actions. In a pattern `*` matches any run of characters, `/`
 * included (`dst/*` covers `dst/app` and `dst/ns/app`); anything else matches itself. The actions of
 * every matching pattern add up.
 */
export type Acl = Record<string, RepoAction[]>;

export interface TokenUser {
  password: string;
  acl: Acl;
}

export interface TokenServerOptions {
  users: Record<string, TokenUser>;
  /** The service name the registry is configured with; becomes the token's `aud`. Default 'airgap-test'. */
  service?: string;
  /** The token's `iss`; the registry's `auth.token.issuer`. Default 'airgap-test-issuer'. */
  issuer?: string;
  /** Lifetime of issued tokens (`exp - iat`, and `expires_in`). Default 300. Changeable: `setTokenTtl`. */
  tokenTtlSeconds?: number;
  /** What requests without credentials may do. Without this option they get a 401. */
  anonymous?: Acl;
  /** Called for every request once it is answered. */
  onRequest?: (entry: TokenRequestLog) => void;
  /** The CA that issues the token signing certificate. Default: the test CA (lab/pki.ts). */
  ca?: CertKeyPair;
  /** The HTTPS certificate (must cover 127.0.0.1). Default: the test server certificate. */
  tls?: CertKeyPair;
}

/** One `access` entry of a token. */
export interface ResourceAccess {
  type: string;
  name: string;
  actions: string[];
}

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  nbf: number;
  iat: number;
  jti: string;
  access: ResourceAccess[];
}

/** One request to the token endpoint, as the server saw it. Never holds a password or token. */
export interface TokenRequestLog {
  method: string;
  /** How the client authenticated: GET with Basic, GET without, or the POST grant type. */
  grant: 'basic' | 'anonymous' | 'password' | 'refresh_token' | 'unknown';
  /** The user, once authenticated (or as claimed in a refused Basic/password request). */
  user?: string;
  service?: string;
  clientId?: string;
  /** Requested scopes, one per entry (`repository:dst/app:pull,push`), in the order received. */
  scopes: string[];
  /** HTTP status answered. */
  status: number;
  /** The claims of the issued token (status 200). */
  claims?: TokenClaims;
  /** Whether a refresh (identity) token was issued with it. */
  refreshTokenIssued?: boolean;
}

export interface TokenServer {
  /** `https://127.0.0.1:PORT`. */
  url: string;
  /** `https://127.0.0.1:PORT/token`: the registry's `auth.token.realm`. */
  realm: string;
  service: string;
  issuer: string;
  /** The signing certificate (PEM) whose DER goes into every token's `x5c`. */
  signingCertPem: string;
  /** Every request so far (oldest first), until `clearLog`. */
  readonly log: readonly TokenRequestLog[];
  /** Answered (200) requests whose requested scope set equals `scopes` (order and duplicates ignored). */
  count(scopes: string[]): number;
  clearLog(): void;
  /** Issue an identity (refresh) token for `user`, as `docker login` stores in `identitytoken`. */
  identityToken(user: string): string;
  /**
   * Issue the next `n` tokens already expired: `exp` two minutes in the past (beyond distribution's
   * 60 s leeway) while `expires_in` still says the full lifetime. The registry refuses them with 401
   * `invalid_token`, as it would a token revoked, or minted by a clock that is off, before the client
   * thinks it expired.
   */
  expireNext(n: number): void;
  setTokenTtl(seconds: number): void;
  /** Decode (without verifying) the claims of a token. */
  decode(token: string): TokenClaims;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;
/** distribution 2.8 `token.Leeway`: exp and nbf are checked with this much slack. */
const REGISTRY_LEEWAY_SECONDS = 60;

/**
 * Seconds since the epoch by the real clock. Not `Date.now()`: a test may fake Date to move the
 * client's clock, and the registry (another process) still judges tokens by the real one.
 */
function realNowSeconds(): number {
  return Math.floor((performance.timeOrigin + performance.now()) / 1000);
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** `type:name:actions` or `type(class):name:actions`; the name is everything between the first and last colon. */
function parseScope(scope: string): { type: string; name: string; actions: string[] } | undefined {
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first <= 0 || last <= first) return undefined;
  return {
    type: scope.slice(0, first).replace(/\(.*\)$/, ''),
    name: scope.slice(first + 1, last),
    actions: scope
      .slice(last + 1)
      .split(',')
      .filter((a) => a !== ''),
  };
}

function allowedActions(acl: Acl, name: string): Set<string> {
  const allowed = new Set<string>();
  for (const [pattern, actions] of Object.entries(acl)) {
    if (globToRegExp(pattern).test(name)) for (const a of actions) allowed.add(a);
  }
  return allowed;
}

/** The grant: requested ∩ allowed per repository; repositories with nothing left are left out. */
function grantFor(acl: Acl, scopes: string[]): ResourceAccess[] {
  const byName = new Map<string, Set<string>>();
  for (const s of scopes) {
    const parsed = parseScope(s);
    if (!parsed || parsed.type !== 'repository') continue; // registry:catalog:* and others: never
    const allowed = allowedActions(acl, parsed.name);
    const set = byName.get(parsed.name) ?? new Set<string>();
    for (const a of parsed.actions) if (allowed.has(a) || allowed.has('*')) set.add(a);
    byName.set(parsed.name, set);
  }
  return [...byName]
    .filter(([, actions]) => actions.size > 0)
    .map(([name, actions]) => ({ type: 'repository', name, actions: [...actions] }));
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function scopeKey(scopes: string[]): string {
  return [...new Set(scopes)].sort().join(' ');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy(new Error('body too large'));
      else parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Start a token server on a free port of 127.0.0.1. */
export async function startTokenServer(opts: TokenServerOptions): Promise<TokenServer> {
  const service = opts.service ?? 'airgap-test';
  const issuer = opts.issuer ?? 'airgap-test-issuer';
  let ttl = opts.tokenTtlSeconds ?? 300;
  let expiredToIssue = 0;
  const pki = testCertificates();
  const ca = opts.ca ?? pki.ca;
  const tls = opts.tls ?? pki.server;
  const signing = await issueSigningCert({ ca, commonName: 'airgap test token signer', days: 30 });
  const x5c = [new X509Certificate(signing.certPem).raw.toString('base64')];
  const log: TokenRequestLog[] = [];
  /** identity token → user */
  const identityTokens = new Map<string, string>();

  const newIdentityToken = (user: string): string => {
    const t = randomBytes(24).toString('hex');
    identityTokens.set(t, user);
    return t;
  };

  const sign = (user: string, access: ResourceAccess[]): { token: string; claims: TokenClaims } => {
    const now = realNowSeconds();
    const expired = expiredToIssue > 0;
    if (expired) expiredToIssue--;
    const iat = expired ? now - 2 * REGISTRY_LEEWAY_SECONDS - ttl : now;
    const claims: TokenClaims = {
      iss: issuer,
      sub: user,
      aud: service,
      exp: expired ? now - 2 * REGISTRY_LEEWAY_SECONDS : iat + ttl,
      nbf: iat,
      iat,
      jti: randomBytes(12).toString('hex'),
      access,
    };
    const signingInput = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c }))}.${b64url(JSON.stringify(claims))}`;
    const signature = createSign('RSA-SHA256').update(signingInput).sign(signing.keyPem);
    return { token: `${signingInput}.${b64url(signature)}`, claims };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<TokenRequestLog> => {
    const url = new URL(req.url ?? '/', 'https://token.invalid');
    const entry: TokenRequestLog = { method: req.method ?? '', grant: 'unknown', scopes: [], status: 0 };
    const answer = (status: number, doc: unknown, headers: Record<string, string> = {}): TokenRequestLog => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
      res.end(JSON.stringify(doc));
      return entry;
    };
    const refuse = (status: number, code: string, message: string): TokenRequestLog =>
      answer(
        status,
        { errors: [{ code, message }] },
        status === 401 ? { 'www-authenticate': `Basic realm="${issuer}"` } : {},
      );
    if (url.pathname !== '/token') return refuse(404, 'NOT_FOUND', 'no such endpoint');

    if (req.method === 'GET') {
      entry.service = url.searchParams.get('service') ?? undefined;
      entry.scopes = url.searchParams.getAll('scope').flatMap((s) => s.split(' ').filter(Boolean));
      let acl: Acl;
      const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
      if (m) {
        entry.grant = 'basic';
        const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        const user = colon < 0 ? decoded : decoded.slice(0, colon);
        entry.user = user;
        const known = opts.users[user];
        if (!known || colon < 0 || !sameSecret(decoded.slice(colon + 1), known.password))
          return refuse(401, 'UNAUTHORIZED', 'invalid username or password');
        acl = known.acl;
      } else {
        entry.grant = 'anonymous';
        if (!opts.anonymous) return refuse(401, 'UNAUTHORIZED', 'authentication required');
        acl = opts.anonymous;
      }
      if (entry.service !== service)
        return refuse(400, 'INVALID_REQUEST', `unknown service ${JSON.stringify(entry.service ?? '')}`);
      const { token, claims } = sign(entry.user ?? '', grantFor(acl, entry.scopes));
      entry.claims = claims;
      return answer(200, {
        token,
        access_token: token,
        expires_in: ttl,
        issued_at: new Date(claims.iat * 1000).toISOString(),
      });
    }

    if (req.method === 'POST') {
      if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? ''))
        return refuse(400, 'INVALID_REQUEST', 'expected a form body');
      const form = new URLSearchParams(await readBody(req));
      const grantType = form.get('grant_type');
      entry.grant = grantType === 'password' || grantType === 'refresh_token' ? grantType : 'unknown';
      entry.service = form.get('service') ?? undefined;
      entry.clientId = form.get('client_id') ?? undefined;
      entry.scopes = (form.get('scope') ?? '').split(' ').filter(Boolean);
      let user: string | undefined;
      if (grantType === 'password') {
        const name = form.get('username') ?? '';
        entry.user = name;
        const known = opts.users[name];
        if (!known || !sameSecret(form.get('password') ?? '', known.password))
          return refuse(401, 'UNAUTHORIZED', 'invalid username or password');
        user = name;
      } else if (grantType === 'refresh_token') {
        user = identityTokens.get(form.get('refresh_token') ?? '');
        entry.user = user;
        if (!user || !opts.users[user]) return refuse(401, 'UNAUTHORIZED', 'invalid refresh token');
      } else {
        return refuse(400, 'UNSUPPORTED', 'grant_type must be password or refresh_token');
      }
      // Both are required by the OAuth2 form of the spec.
      if (!entry.clientId) return refuse(400, 'INVALID_REQUEST', 'client_id is required');
      if (entry.service !== service)
        return refuse(400, 'INVALID_REQUEST', `unknown service ${JSON.stringify(entry.service ?? '')}`);
      const { token, claims } = sign(user, grantFor(opts.users[user]!.acl, entry.scopes));
      entry.claims = claims;
      const offline = grantType === 'password' && form.get('access_type') === 'offline';
      entry.refreshTokenIssued = offline;
      return answer(200, {
        access_token: token,
        expires_in: ttl,
        issued_at: new Date(claims.iat * 1000).toISOString(),
        scope: entry.scopes.join(' '),
        ...(offline ? { refresh_token: newIdentityToken(user) } : {}),
      });
    }
    return refuse(405, 'UNSUPPORTED', 'GET or POST');
  };

  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    handle(req, res).then(
      (entry) => {
        log.push(entry);
        opts.onRequest?.(entry);
      },
      () => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    realm: `${url}/token`,
    service,
    issuer,
    signingCertPem: signing.certPem,
    log,
    count: (scopes) => {
      const key = scopeKey(scopes);
      return log.filter((e) => e.status === 200 && scopeKey(e.scopes) === key).length;
    },
    clearLog: () => {
      log.length = 0;
    },
    identityToken: (user) => {
      if (!opts.users[user]) throw new Error(`no such user: ${user}`);
      return newIdentityToken(user);
    },
    expireNext: (n) => {
      expiredToIssue = n;
    },
    setTokenTtl: (seconds) => {
      ttl = seconds;
    },
    decode: (token) =>
      JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as TokenClaims,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
