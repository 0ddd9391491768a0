/**
 * Large files over plain HTTP(S), on the one HTTP layer (http.ts: CA files, certs.d, TLS opt-out,
 * proxy, backoff): a GET that follows redirects, and {@link downloadVerified}, a download that is
 * checked against a known sha256 while it streams, resumes with `Range` after a break (in this run
 * or a later one), and only ever puts a verified file under its final name.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Dispatcher } from 'undici';
import { AirgapError, usageError } from '../util/errors.js';
import { backoffMs, createAgent, isTlsError, netErrorCode, retryAfterMs, type TlsOptions } from './http.js';

/** An HTTP response as undici gives it. */
export type HttpResponse = Dispatcher.ResponseData;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** A URL without its credentials, for messages. */
export function shownUrl(u: URL): string {
  const c = new URL(u.href);
  c.username = '';
  c.password = '';
  return c.href;
}

/** One dispatcher per host for the length of a download (one connection each), closed together. */
export class AgentPool {
  private readonly agents = new Map<string, Dispatcher>();

  constructor(private readonly tls: TlsOptions = {}) {}

  get(host: string): Dispatcher {
    let a = this.agents.get(host);
    if (!a) {
      a = createAgent(host, { ...this.tls, connections: 1 });
      this.agents.set(host, a);
    }
    return a;
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    // destroy, not close: a body abandoned after a fault must not keep close() waiting.
    await Promise.all(all.map((a) => a.destroy().catch(() => undefined)));
  }
}

/** Options of {@link getFollowingRedirects}. */
export interface GetOptions {
  headers?: Record<string, string>;
  /** Time limit for the response headers and for any pause in the body, in ms. */
  timeoutMs: number;
  /** Redirects followed before the last answer is returned as it is; default 5. */
  maxRedirects?: number;
  /** `<prefix>_TLS` is the code of a certificate failure. */
  errorPrefix: string;
}

/**
 * GET `target`, following redirects (the request headers, `Range` included, go to every hop). A
 * certificate failure is final: `<prefix>_TLS` naming the host and the CA flags. Any other network
 * error is returned as `{ error }` for the caller to retry. The response body must be consumed or
 * destroyed by the caller.
 */
export async function getFollowingRedirects(
  target: URL,
  agents: AgentPool,
  opts: GetOptions,
): Promise<{ res: HttpResponse; url: URL } | { error: string }> {
  let current = target;
  for (let hop = 0; ; hop++) {
    let res: HttpResponse;
    try {
      res = await agents.get(current.host).request({
        origin: current.origin,
        path: `${current.pathname}${current.search}`,
        method: 'GET',
        headers: opts.headers ?? {},
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
    } catch (e) {
      if (isTlsError(e)) {
        throw new AirgapError(
          `${opts.errorPrefix}_TLS`,
          `TLS verification failed for ${shownUrl(current)}: ${netErrorCode(e)}`,
          {
            where: shownUrl(current),
            cause: e,
            hint: `trust the CA that signed ${current.host} with --ca-file or certs.d/${current.host}/ca.crt`,
          },
        );
      }
      return { error: `${netErrorCode(e) ?? (e as Error).name}: ${(e as Error).message}` };
    }
    const location = res.headers.location;
    if (REDIRECTS.has(res.statusCode) && location && hop < (opts.maxRedirects ?? 5)) {
      await res.body.dump().catch(() => undefined);
      current = new URL(Array.isArray(location) ? location[0]! : location, current);
      continue;
    }
    return { res, url: current };
  }
}

// ------------------------------------------------------------------------------ downloadVerified

/** Options of {@link downloadVerified}. */
export interface DownloadVerifiedOptions {
  /** The expected sha256: 64 hex characters, or `sha256:<hex>`. */
  sha256: string;
  /** The expected size in bytes, when the metadata gives one (CoreOS streams do not). */
  size?: number;
  /** TLS for the URL's host (and redirect targets); the proxy comes from the environment. */
  tls?: TlsOptions;
  /**
   * Attempts in a row that may fail without receiving a byte (network errors, 408, 429, 5xx), after
   * the first; default 5. An attempt that moved the download forward resets the count, so a long
   * download over a link that drops now and then keeps going.
   */
  retries?: number;
  /** First backoff in ms, doubled per failed attempt with jitter (Retry-After wins); default 500. */
  baseDelayMs?: number;
  /** Time limit for the response headers and for any pause in the body, in ms; default 60 s. */
  timeoutMs?: number;
  /** Bytes received from the network, as they arrive. */
  onBytes?: (bytes: number) => void;
  /** Bytes this call expects to receive, announced as responses tell (never withdrawn). */
  onPlanned?: (bytes: number) => void;
  /** Prefix of the error codes: `<prefix>_DIGEST_MISMATCH`, `_UNREACHABLE`, …; default `DOWNLOAD`. */
  errorPrefix?: string;
  /** Hint for a server that cannot be reached or keeps failing. */
  unreachableHint?: string;
}

/** What {@link downloadVerified} did. */
export interface DownloadVerifiedResult {
  /** The URL asked for, without credentials. */
  url: string;
  path: string;
  size: number;
  /** Lowercase hex, as verified. */
  sha256: string;
  /** false: `dest` already held the verified file and nothing was fetched. */
  downloaded: boolean;
  /** Bytes received over the network by this call. */
  received: number;
  /** Where the first request started: the size of a partial file left by an earlier run, else 0. */
  resumedFrom: number;
  /** Requests re-opened with `Range` after a break during this call. */
  resumes: number;
  /** `dest` held a file that did not verify; it was removed and fetched again. */
  replaced: boolean;
}

/** Where a download in progress is kept: a hidden `.partial` beside the final name. */
export function partialPathFor(dest: string): string {
  return join(dirname(dest), `.${basename(dest)}.partial`);
}

/** Feed a file through `hash` (a new sha256 when omitted); returns the hash and the bytes read. */
export async function hashFile(
  path: string,
  hash: Hash = createHash('sha256'),
): Promise<{ hash: Hash; size: number }> {
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash, size };
}

/** The sha256 of a file, lowercase hex. */
export async function sha256OfFile(path: string): Promise<{ sha256: string; size: number }> {
  const { hash, size } = await hashFile(path);
  return { sha256: hash.digest('hex'), size };
}

/** `sha256:<hex>` or `<hex>` → lowercase hex, or undefined when it is neither. */
export function sha256Hex(value: string): string | undefined {
  const hex = value.startsWith('sha256:') ? value.slice(7) : value;
  return /^[0-9a-fA-F]{64}$/.test(hex) ? hex.toLowerCase() : undefined;
}

/** `bytes 10-99/100` → { start, total }; `bytes *\/100` (a 416 answer) → { total }. */
function contentRange(v: string | string[] | undefined): { start?: number; total?: number } | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(s.trim());
  if (!m) return undefined;
  return {
    ...(m[1] !== undefined ? { start: Number(m[1]) } : {}),
    ...(m[3] !== '*' ? { total: Number(m[3]) } : {}),
  };
}

function headerNumber(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || !/^\d+$/.test(s.trim())) return undefined;
  return Number(s);
}

/** A failure of the disk, not the network: final. */
class WriteError extends Error {}

/**
 * Download `url` to `dest`, verified against `opts.sha256`.
 *
 * - `dest` already holding a file with that sha256: nothing is fetched (`downloaded: false`). A file
 *   there that does not match is removed first, so a bad file never stays under the final name.
 * - Bytes go to a hidden `.<name>.partial` beside `dest` and through sha256 as they arrive. After a
 *   break the request is re-opened with `Range: bytes=<n>-`; the answer's `Content-Range` must
 *   start at n, and a server that ignores Range (200) is read again from byte 0. A partial file left
 *   by an earlier run is hashed again and continued the same way.
 * - The whole file matching: fsync, then rename to `dest`. Not matching: the partial file is removed
 *   and `<prefix>_DIGEST_MISMATCH` names the URL and both digests (a mismatch after continuing an
 *   earlier run's partial file first starts once more from byte 0, since that file may be stale).
 * - Network errors, 408, 429 and 5xx are retried with jittered backoff honouring Retry-After; the
 *   partial file stays, so running again later resumes. Redirects are followed.
 *
 * Errors (each naming the URL): `<prefix>_URL_INVALID` (exit 2), `_TLS`, `_STATUS` (another HTTP
 * status), `_SIZE_MISMATCH`, `_DIGEST_MISMATCH`, `_UNREACHABLE`, `_WRITE_FAILED`. Two calls must
 * not download to the same `dest` at once (callers lock the directory).
 */
export async function downloadVerified(
  url: string,
  dest: string,
  opts: DownloadVerifiedOptions,
): Promise<DownloadVerifiedResult> {
  const prefix = opts.errorPrefix ?? 'DOWNLOAD';
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw usageError(`${prefix}_URL_INVALID`, `not a URL: ${url}`, {
      hint: 'give an http:// or https:// URL',
    });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw usageError(`${prefix}_URL_INVALID`, `not an http(s) URL: ${shownUrl(target)}`, {
      hint: 'give an http:// or https:// URL',
    });
  const shown = shownUrl(target);
  const expected = sha256Hex(opts.sha256);
  if (!expected)
    throw usageError(`${prefix}_SHA256_INVALID`, `the expected sha256 of ${shown} is not 64 hex characters`);
  const retries = opts.retries ?? 5;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const partial = partialPathFor(dest);
  await mkdir(dirname(dest), { recursive: true });

  // 1. Already there and verified?
  let replaced = false;
  const present = await stat(dest).catch(() => undefined);
  if (present && !present.isFile())
    throw usageError(`${prefix}_DEST_INVALID`, `${dest} exists and is not a file`, {
      hint: 'move it out of the way',
    });
  if (present) {
    if (opts.size === undefined || present.size === opts.size) {
      const have = await sha256OfFile(dest);
      if (have.sha256 === expected) {
        await rm(partial, { force: true });
        return {
          url: shown,
          path: dest,
          size: have.size,
          sha256: expected,
          downloaded: false,
          received: 0,
          resumedFrom: 0,
          resumes: 0,
          replaced: false,
        };
      }
    }
    await rm(dest, { force: true });
    replaced = true;
  }

  // 2. A partial file from an earlier run: hash what it holds, continue after it.
  let hash = createHash('sha256');
  let offset = 0;
  const old = await stat(partial).catch(() => undefined);
  if (old?.isFile() && (opts.size === undefined || old.size <= opts.size) && old.size > 0) {
    offset = (await hashFile(partial, hash)).size;
  } else if (old) {
    await rm(partial, { force: true, recursive: true });
  }
  const resumedFrom = offset;
  /** Set while `offset` bytes of the partial file came from an earlier run, not from this call. */
  let inherited = offset > 0;

  let received = 0;
  let announced = 0;
  let resumes = 0;
  let failures = 0;
  let attempts = 0;
  let last = '';
  let total: number | undefined = opts.size;

  const restart = async (): Promise<void> => {
    await rm(partial, { force: true });
    hash = createHash('sha256');
    offset = 0;
    inherited = false;
  };

  const mismatch = (got: string, size: number): AirgapError =>
    new AirgapError(
      `${prefix}_DIGEST_MISMATCH`,
      `${shown} does not match its sha256: expected ${expected}, got ${got} (${size} bytes); the download was discarded`,
      {
        where: shown,
        hint: 'the server holds a different or corrupted file: check that the stream metadata and the server belong together, then run again',
        details: { url: shown, expected, actual: got, size },
      },
    );

  /** The file is complete: verify, then rename into place (or restart once, or throw). */
  const finish = async (): Promise<'done' | 'again'> => {
    const got = hash.digest('hex');
    if (got === expected) {
      await rename(partial, dest);
      return 'done';
    }
    const wasInherited = inherited;
    const size = offset;
    await restart();
    if (wasInherited) return 'again'; // the earlier run's bytes may be stale: once more from 0
    throw mismatch(got, size);
  };

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const backoff = (retryAfter?: number) =>
    sleep(backoffMs(failures, { baseMs: opts.baseDelayMs ?? 500, maxMs: 30_000, retryAfterMs: retryAfter }));
  const announce = (start: number, length: number | undefined) => {
    if (length === undefined) return;
    const need = received + (length - start);
    if (need > announced) {
      opts.onPlanned?.(need - announced);
      announced = need;
    }
  };
  const sizeMismatch = (got: number) =>
    new AirgapError(
      `${prefix}_SIZE_MISMATCH`,
      `${shown} is ${got} bytes, but the metadata says ${opts.size}; nothing was kept`,
      {
        where: shown,
        hint: 'the server holds a different file than the metadata describes; check that they belong together',
      },
    );

  const agents = new AgentPool(opts.tls);
  try {
    for (;;) {
      if (total !== undefined && offset === total && offset > 0) {
        if ((await finish()) === 'done') break;
        continue;
      }
      attempts++;
      if (failures > retries || attempts > (retries + 1) * 50) {
        throw new AirgapError(
          `${prefix}_UNREACHABLE`,
          `cannot download ${shown}: ${attempts - 1} attempts, the last: ${last}`,
          {
            where: shown,
            hint:
              opts.unreachableHint ??
              'check the network and the proxy (HTTPS_PROXY, NO_PROXY); run again to continue where it stopped',
            details: { bytes: offset },
          },
        );
      }
      if (attempts > 1 && offset > 0) resumes++;
      const got = await getFollowingRedirects(target, agents, {
        headers: {
          accept: '*/*',
          'accept-encoding': 'identity',
          ...(offset > 0 ? { range: `bytes=${offset}-` } : {}),
        },
        timeoutMs,
        errorPrefix: prefix,
      });
      if ('error' in got) {
        last = got.error;
        failures++;
        if (failures <= retries) await backoff();
        continue;
      }
      const res = got.res;
      if (RETRYABLE.has(res.statusCode)) {
        await res.body.dump().catch(() => undefined);
        last = `HTTP ${res.statusCode}`;
        failures++;
        if (failures <= retries) await backoff(retryAfterMs(res.headers['retry-after']));
        continue;
      }
      if (res.statusCode === 416 && offset > 0) {
        // The partial file reaches (or passes) the end: complete if it is exactly the length.
        await res.body.dump().catch(() => undefined);
        const length = contentRange(res.headers['content-range'])?.total;
        if (length === offset) {
          total = length;
          continue;
        }
        await restart();
        continue;
      }
      let start: number;
      if (res.statusCode === 206 && offset > 0) {
        const range = contentRange(res.headers['content-range']);
        if (range?.start !== offset) {
          // An answer for another range than asked: start over from byte 0.
          await res.body.dump().catch(() => undefined);
          last = `the server answered Range bytes=${offset}- with ${String(res.headers['content-range'])}`;
          await restart();
          failures++;
          continue;
        }
        start = offset;
        if (range.total !== undefined) total = range.total;
        else {
          const len = headerNumber(res.headers['content-length']);
          if (len !== undefined) total = offset + len;
        }
      } else if (res.statusCode === 200) {
        if (offset > 0) {
          await restart(); // the server ignored Range: the body is the whole file
        }
        start = 0;
        const len = headerNumber(res.headers['content-length']);
        if (len !== undefined) total = len;
      } else {
        const text = await res.body.text().catch(() => '');
        throw new AirgapError(
          `${prefix}_STATUS`,
          `${shown} answered HTTP ${res.statusCode}: ${text.slice(0, 200).trim() || '(empty body)'}`,
          {
            where: shown,
            details: { status: res.statusCode },
            hint:
              res.statusCode === 404
                ? 'the server does not have this file: check that it serves the build the metadata names'
                : 'check the URL and that the server serves this file',
          },
        );
      }
      if (opts.size !== undefined && total !== undefined && total !== opts.size) {
        await res.body.dump().catch(() => undefined);
        await restart();
        throw sizeMismatch(total);
      }
      announce(start, total);

      // Stream the body: disk first, then the hash, so the two always agree.
      const before = offset;
      let fh: FileHandle | undefined;
      let broke: unknown;
      try {
        fh = await open(partial, offset === 0 ? 'w' : 'a', 0o644).catch((e: unknown) => {
          throw new WriteError((e as Error).message, { cause: e });
        });
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (opts.size !== undefined && offset + chunk.length > opts.size) {
            res.body.destroy();
            await fh.close();
            fh = undefined;
            await restart();
            throw sizeMismatch(offset + chunk.length);
          }
          await fh.write(chunk).catch((e: unknown) => {
            throw new WriteError((e as Error).message, { cause: e });
          });
          hash.update(chunk);
          offset += chunk.length;
          received += chunk.length;
          opts.onBytes?.(chunk.length);
        }
        await fh.sync().catch((e: unknown) => {
          throw new WriteError((e as Error).message, { cause: e });
        });
      } catch (e) {
        if (e instanceof AirgapError) throw e;
        if (e instanceof WriteError) {
          res.body.destroy();
          throw new AirgapError(`${prefix}_WRITE_FAILED`, `cannot write ${partial}: ${e.message}`, {
            where: partial,
            cause: e,
            hint: 'check the free space and the permissions of the directory',
          });
        }
        broke = e;
      } finally {
        await fh?.close().catch(() => undefined);
      }
      if (offset > before) failures = 0;
      if (broke !== undefined || (total !== undefined && offset < total)) {
        last =
          broke !== undefined
            ? `the download broke off at byte ${offset}: ${netErrorCode(broke) ?? (broke as Error).message}`
            : `the body ended at byte ${offset} of ${total}`;
        res.body.destroy();
        failures++;
        if (failures <= retries) await backoff();
        continue;
      }
      if (total === undefined) total = offset;
      if ((await finish()) === 'done') break;
    }
  } finally {
    await agents.close();
  }
  return {
    url: shown,
    path: dest,
    size: offset,
    sha256: expected,
    downloaded: true,
    received,
    resumedFrom,
    resumes,
    replaced,
  };
}
