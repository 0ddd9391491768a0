import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  RETRYABLE_STATUSES,
  backoffMs,
  hasRetryableNetworkCode,
  isRetryableRequestError,
  isRetryableStatus,
  isTlsError,
  netErrorCode,
  retryAfterMs,
  waitBeforeRetry,
} from '../../src/net/retry.js';

/** An error as undici throws it: its own code, the socket's error as `cause`. */
function undiciError(code: string, cause?: { code: string }): Error {
  return Object.assign(new Error(`failed: ${code}`), { code, ...(cause ? { cause } : {}) });
}

describe('net/retry: which failures are retried', () => {
  it('retries 408, 429 and the 5xx of a busy server, nothing else', () => {
    for (const s of [408, 429, 500, 502, 503, 504]) expect(isRetryableStatus(s)).toBe(true);
    for (const s of [200, 301, 400, 401, 403, 404, 405, 409, 416, 422, 501, 505])
      expect(isRetryableStatus(s)).toBe(false);
    expect([...RETRYABLE_STATUSES].sort()).toEqual([408, 429, 500, 502, 503, 504]);
  });

  it('retries connection codes (directly or wrapped by undici) and not others', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'])
      expect(hasRetryableNetworkCode(undiciError(code))).toBe(true);
    expect(hasRetryableNetworkCode(undiciError('UND_ERR_SOCKET'))).toBe(true);
    expect(hasRetryableNetworkCode(undiciError('UND_ERR_SOCKET', { code: 'ECONNRESET' }))).toBe(true);
    expect(hasRetryableNetworkCode(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))).toBe(
      true,
    );
    for (const code of ['ENOTFOUND', 'EACCES', 'ERR_INVALID_ARG_TYPE', 'CERT_HAS_EXPIRED'])
      expect(hasRetryableNetworkCode(undiciError(code))).toBe(false);
    expect(hasRetryableNetworkCode(new Error('no code'))).toBe(false);
  });

  it('a request of our own is retried on any network failure but a TLS one', () => {
    expect(isRetryableRequestError(undiciError('ENOTFOUND'))).toBe(true);
    expect(isRetryableRequestError(undiciError('UND_ERR_HEADERS_TIMEOUT'))).toBe(true);
    expect(isRetryableRequestError(undiciError('UND_ERR_SOCKET', { code: 'ECONNRESET' }))).toBe(true);
    for (const code of [
      'SELF_SIGNED_CERT_IN_CHAIN',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_SSL_WRONG_VERSION_NUMBER',
    ]) {
      expect(isTlsError(undiciError(code))).toBe(true);
      expect(isRetryableRequestError(undiciError('UND_ERR_CONNECT', { code }))).toBe(false);
    }
  });

  it('netErrorCode finds the socket code under undici codes', () => {
    expect(netErrorCode(undiciError('UND_ERR_SOCKET', { code: 'EPIPE' }))).toBe('EPIPE');
    expect(netErrorCode(undiciError('UND_ERR_BODY_TIMEOUT'))).toBe('UND_ERR_BODY_TIMEOUT');
    expect(netErrorCode(new Error('plain'))).toBeUndefined();
  });
});

describe('net/retry: Retry-After and backoff', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('reads Retry-After in seconds', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs(['2', '9'])).toBe(2000);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('')).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('reads Retry-After as an HTTP date, relative to now (never negative)', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z'), toFake: ['Date'] });
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:07 GMT')).toBe(7000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT')).toBe(0);
  });

  it('backs off exponentially with jitter, capped', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(backoffMs(1, { baseMs: 100, maxMs: 1000 })).toBe(50);
    expect(backoffMs(3, { baseMs: 100, maxMs: 1000 })).toBe(200);
    expect(backoffMs(10, { baseMs: 100, maxMs: 1000 })).toBe(500);
    vi.spyOn(Math, 'random').mockReturnValue(0.999999);
    expect(backoffMs(1, { baseMs: 100, maxMs: 1000 })).toBeCloseTo(100, 3);
  });

  it('a longer Retry-After wins, up to its limit; a shorter one does not shorten the backoff', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const o = { baseMs: 100, maxMs: 1000, maxRetryAfterMs: 5000 };
    expect(backoffMs(1, { ...o, retryAfterMs: 2000 })).toBe(2000);
    expect(backoffMs(1, { ...o, retryAfterMs: 60_000 })).toBe(5000);
    expect(backoffMs(3, { ...o, retryAfterMs: 10 })).toBe(200);
    expect(backoffMs(1, { baseMs: 100, maxMs: 1000, retryAfterMs: 90_000 })).toBe(60_000); // default limit
  });

  it('waitBeforeRetry sleeps for the Retry-After header, seconds or date', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const o = { baseMs: 10, maxMs: 100 };
    for (const header of ['2', () => new Date(Date.now() + 2000).toUTCString()]) {
      let done = false;
      const p = waitBeforeRetry(1, o, typeof header === 'string' ? header : header()).then(
        () => (done = true),
      );
      await vi.advanceTimersByTimeAsync(1999);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await p;
      expect(done).toBe(true);
    }
    let quick = false;
    const p = waitBeforeRetry(1, o).then(() => (quick = true));
    await vi.advanceTimersByTimeAsync(5);
    await p;
    expect(quick).toBe(true);
  });
});
