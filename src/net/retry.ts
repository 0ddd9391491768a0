/**
 * When an HTTP request is worth trying again, and how long to wait first: the one retry rule of
 * every HTTP user in airgap (the registry client, downloads, JSON GETs, the Kubernetes client), so
 * that a 503 or a dropped connection means the same everywhere.
 *
 * - Statuses: 408, 429 and the 5xx a busy or restarting server answers ({@link isRetryableStatus}).
 * - Network errors: a request airgap sends itself through undici is retried on every failure but a
 *   TLS verification failure ({@link isRetryableRequestError}); a client whose errors mix network
 *   and other failures (the Kubernetes client) retries only the connection codes in
 *   {@link RETRYABLE_NETWORK_CODES} ({@link hasRetryableNetworkCode}).
 * - Waiting: exponential backoff with jitter, a server's Retry-After (seconds or an HTTP date)
 *   winning when longer ({@link backoffMs}, {@link waitBeforeRetry}).
 */

/** HTTP statuses a later attempt may get past: timeout, rate limit, a server busy or restarting. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** True for an HTTP status worth another attempt ({@link RETRYABLE_STATUSES}). */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** Codes of a connection that was refused, reset, cut or timed out: another attempt may get through. */
const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** The error code of a network error (undici wraps the socket error in `cause`). */
export function netErrorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('UND_ERR')) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  const top = (e as { code?: unknown })?.code;
  return typeof top === 'string' ? top : undefined;
}

/** A certificate the peer sent did not verify: final, no later attempt changes that. */
export function isTlsError(e: unknown): boolean {
  const code = netErrorCode(e);
  return (
    code !== undefined && (TLS_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL'))
  );
}

/**
 * For a request airgap sent itself (undici), where every failure comes from the network: worth
 * another attempt unless the certificate did not verify (DNS hiccups, timeouts and resets pass).
 */
export function isRetryableRequestError(e: unknown): boolean {
  return !isTlsError(e);
}

/** True when the error (or the socket error it wraps) has a code in {@link RETRYABLE_NETWORK_CODES}. */
export function hasRetryableNetworkCode(e: unknown): boolean {
  const code = netErrorCode(e);
  return code !== undefined && RETRYABLE_NETWORK_CODES.has(code);
}

/** How long to wait between attempts. */
export interface BackoffOptions {
  /** The first wait (attempt 1), doubled per attempt. */
  baseMs: number;
  /** The longest wait of our own. */
  maxMs: number;
  /** The longest Retry-After honoured; default 60 s. */
  maxRetryAfterMs?: number;
}

/**
 * The one backoff rule: exponential from `baseMs` (attempt 1 waits about `baseMs`), capped at
 * `maxMs`, with jitter (half fixed, half random); a server's Retry-After wins when longer, up to
 * `maxRetryAfterMs`.
 */
export function backoffMs(attempt: number, o: BackoffOptions & { retryAfterMs?: number }): number {
  const exp = Math.min(o.maxMs, o.baseMs * 2 ** (attempt - 1));
  const jittered = exp / 2 + Math.random() * (exp / 2);
  if (o.retryAfterMs === undefined) return jittered;
  return Math.min(o.maxRetryAfterMs ?? 60_000, Math.max(o.retryAfterMs, jittered));
}

/** A Retry-After header (seconds or an HTTP date) in ms, or undefined. */
export function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Sleep before attempt `attempt + 1`: {@link backoffMs}, honouring the answer's Retry-After when given. */
export async function waitBeforeRetry(
  attempt: number,
  o: BackoffOptions,
  retryAfter?: string | string[],
): Promise<void> {
  const ms = backoffMs(attempt, { ...o, retryAfterMs: retryAfterMs(retryAfter) });
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** undici's codes for a phase that got nothing in time: connecting, the response headers, the next body bytes. */
const STALL_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * The code of the phase deadline that passed (`UND_ERR_HEADERS_TIMEOUT`, …) when a peer accepted
 * us and then sent nothing in time, as opposed to a connection that was refused or broke: found on
 * the error or one it wraps; undefined for any other error.
 */
export function stallCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && STALL_CODES.has(code)) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}
