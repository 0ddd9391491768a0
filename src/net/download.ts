/**
 * Large files over plain HTTP(S), on the one HTTP layer (http.ts: CA files, certs.d, TLS opt-out,
 * proxy, backoff; get.ts: the GET that follows redirects): {@link downloadVerified}, a download that is
 * checked against a known sha256 while it streams, resumes with `Range` after a break (in this run
 * or a later one), and only ever puts a verified file under its final name.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AirgapError, usageError } from '../util/errors.js';
import { statIfExists } from '../util/fs.js';
import { DownloadFailure, downloadCode } from './errors.js';
import type { TlsOptions } from './http.js';
import { AgentPool, getFollowingRedirects, type HttpResponse } from './get.js';
import { parseHttpUrl, shownUrl } from './url.js';
import { isRetryableStatus, netErrorCode, waitBeforeRetry } from './retry.js';

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
async function hashFile(
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
async function sha256OfFile(path: string): Promise<{ sha256: string; size: number }> {
  const { hash, size } = await hashFile(path);
  return { sha256: hash.digest('hex'), size };
}

/** `sha256:<hex>` or `<hex>` → lowercase hex, or undefined when it is neither. */
function sha256Hex(value: string): string | undefined {
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

function diskFailure(e: unknown): never {
  throw new WriteError((e as Error).message, { cause: e });
}

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
  const { target, expected } = checkDownloadRequest(url, opts.sha256, prefix);
  await mkdir(dirname(dest), { recursive: true });
  const present = await reuseVerifiedDest(dest, expected, opts.size, prefix);
  if (present.kept) {
    const fetched = { downloaded: false, received: 0, resumedFrom: 0, resumes: 0, replaced: false };
    return { url: shownUrl(target), path: dest, size: present.size, sha256: expected, ...fetched };
  }
  const download = new VerifiedDownload(target, dest, expected, opts, prefix);
  const resumedFrom = await download.resumePartial();
  await download.run();
  return {
    url: download.shown,
    path: dest,
    size: download.offset,
    sha256: expected,
    downloaded: true,
    received: download.received,
    resumedFrom,
    resumes: download.resumes,
    replaced: present.replaced,
  };
}

/** The URL (http or https) and the expected sha256 (lowercase hex), or a usage error. */
function checkDownloadRequest(
  url: string,
  sha256: string,
  prefix: string,
): { target: URL; expected: string } {
  const target = parseHttpUrl(url, prefix, 'give an http:// or https:// URL');
  const expected = sha256Hex(sha256);
  if (!expected)
    throw usageError(
      downloadCode(prefix, DownloadFailure.SHA256_INVALID),
      `the expected sha256 of ${shownUrl(target)} is not 64 hex characters`,
    );
  return { target, expected };
}

/**
 * Step 1: `dest` already holding the verified file is kept (and a leftover partial file removed);
 * a file there that does not verify is removed, so a bad file never stays under the final name.
 */
async function reuseVerifiedDest(
  dest: string,
  expected: string,
  size: number | undefined,
  prefix: string,
): Promise<{ kept: true; size: number } | { kept: false; replaced: boolean }> {
  const present = await statIfExists(dest);
  if (present && !present.isFile())
    throw usageError(downloadCode(prefix, DownloadFailure.DEST_INVALID), `${dest} exists and is not a file`, {
      hint: 'move it out of the way',
    });
  if (!present) return { kept: false, replaced: false };
  if (size === undefined || present.size === size) {
    const have = await sha256OfFile(dest);
    if (have.sha256 === expected) {
      await rm(partialPathFor(dest), { force: true });
      return { kept: true, size: have.size };
    }
  }
  await rm(dest, { force: true });
  return { kept: false, replaced: true };
}

/** One download in progress: the partial file, its running hash, and the retry bookkeeping. */
class VerifiedDownload {
  readonly shown: string;
  private readonly partial: string;
  private readonly retries: number;
  private readonly agents: AgentPool;
  private hash = createHash('sha256');
  /** Bytes in the partial file (and through `hash`). */
  offset = 0;
  /** Set while `offset` bytes of the partial file came from an earlier run, not from this call. */
  private inherited = false;
  /** The whole length, once a response or the metadata tells. */
  private total: number | undefined;
  received = 0;
  resumes = 0;
  private announced = 0;
  /** Failed attempts in a row (reset by an attempt that moved the download forward). */
  private failures = 0;
  private attempts = 0;
  /** Why the last attempt failed, for the final error. */
  private last = '';

  constructor(
    private readonly target: URL,
    private readonly dest: string,
    private readonly expected: string,
    private readonly opts: DownloadVerifiedOptions,
    private readonly prefix: string,
  ) {
    this.shown = shownUrl(target);
    this.partial = partialPathFor(dest);
    this.retries = opts.retries ?? 5;
    this.total = opts.size;
    this.agents = new AgentPool(opts.tls);
  }

  /** Step 2: a partial file from an earlier run is hashed and continued after; returns its size. */
  async resumePartial(): Promise<number> {
    const old = await statIfExists(this.partial);
    const size = this.opts.size;
    if (old?.isFile() && (size === undefined || old.size <= size) && old.size > 0) {
      this.offset = (await hashFile(this.partial, this.hash)).size;
    } else if (old) {
      await rm(this.partial, { force: true, recursive: true });
    }
    this.inherited = this.offset > 0;
    return this.offset;
  }

  /** Requests until the file is complete and verified under its final name, or a final error. */
  async run(): Promise<void> {
    try {
      for (;;) {
        if (this.total !== undefined && this.offset === this.total && this.offset > 0) {
          if ((await this.finish()) === 'done') return;
          continue;
        }
        this.attempts++;
        if (this.failures > this.retries || this.attempts > (this.retries + 1) * 50) throw this.unreachable();
        if (this.attempts > 1 && this.offset > 0) this.resumes++;
        const opened = await this.open();
        if (opened === 'again') continue;
        const { res, start } = opened;
        if (this.opts.size !== undefined && this.total !== undefined && this.total !== this.opts.size) {
          await res.body.dump().catch(() => undefined); // the size is the failure; the body is only drained
          await this.restart();
          throw this.sizeMismatch(this.total);
        }
        this.announce(start, this.total);
        if (!(await this.stream(res))) continue;
        if (this.total === undefined) this.total = this.offset;
        if ((await this.finish()) === 'done') return;
      }
    } finally {
      await this.agents.close();
    }
  }

  /**
   * Step 3: the request for the bytes from `offset` (`Range` when there are some already). Returns
   * the response and where its body starts, or 'again' when this attempt is over (a network error
   * or a retryable status, backed off; an answer that makes the partial file complete or stale).
   */
  private async open(): Promise<{ res: HttpResponse; start: number } | 'again'> {
    const got = await getFollowingRedirects(this.target, this.agents, {
      headers: {
        accept: '*/*',
        'accept-encoding': 'identity',
        ...(this.offset > 0 ? { range: `bytes=${this.offset}-` } : {}),
      },
      timeoutMs: this.opts.timeoutMs ?? 60_000,
      errorPrefix: this.prefix,
    });
    if ('error' in got) {
      await this.failed(got.error);
      return 'again';
    }
    const res = got.res;
    if (isRetryableStatus(res.statusCode)) {
      await res.body.dump().catch(() => undefined); // the status is the failure; the body is only drained
      await this.failed(`HTTP ${res.statusCode}`, res.headers['retry-after']);
      return 'again';
    }
    if (res.statusCode === 416 && this.offset > 0) {
      // The partial file reaches (or passes) the end: complete if it is exactly the length. (The
      // body of a 416 says nothing more: drained, whatever happens to it.)
      await res.body.dump().catch(() => undefined);
      const length = contentRange(res.headers['content-range'])?.total;
      if (length === this.offset) this.total = length;
      else await this.restart();
      return 'again';
    }
    if (res.statusCode === 206 && this.offset > 0) return this.continued(res);
    if (res.statusCode === 200) {
      if (this.offset > 0) await this.restart(); // the server ignored Range: the body is the whole file
      const len = headerNumber(res.headers['content-length']);
      if (len !== undefined) this.total = len;
      return { res, start: 0 };
    }
    const text = await res.body.text().catch(() => ''); // the status is the failure; the body only adds words
    throw new AirgapError(
      downloadCode(this.prefix, DownloadFailure.STATUS),
      `${this.shown} answered HTTP ${res.statusCode}: ${text.slice(0, 200).trim() || '(empty body)'}`,
      {
        where: this.shown,
        details: { status: res.statusCode },
        hint:
          res.statusCode === 404
            ? 'the server does not have this file: check that it serves the build the metadata names'
            : 'check the URL and that the server serves this file',
      },
    );
  }

  /** A 206 answer: its Content-Range must start at `offset`, else the download starts over. */
  private async continued(res: HttpResponse): Promise<{ res: HttpResponse; start: number } | 'again'> {
    const range = contentRange(res.headers['content-range']);
    if (range?.start !== this.offset) {
      // An answer for another range than asked: start over from byte 0.
      await res.body.dump().catch(() => undefined);
      this.last = `the server answered Range bytes=${this.offset}- with ${String(res.headers['content-range'])}`;
      await this.restart();
      this.failures++;
      return 'again';
    }
    if (range.total !== undefined) this.total = range.total;
    else {
      const len = headerNumber(res.headers['content-length']);
      if (len !== undefined) this.total = this.offset + len;
    }
    return { res, start: this.offset };
  }

  /**
   * Step 4: stream the body to the partial file, disk first, then the hash, so the two always
   * agree. Returns true when the body ended complete; false after a break (backed off, to resume).
   */
  private async stream(res: HttpResponse): Promise<boolean> {
    const before = this.offset;
    const size = this.opts.size;
    let fh: FileHandle | undefined;
    let broke: unknown;
    try {
      fh = await open(this.partial, this.offset === 0 ? 'w' : 'a', 0o644).catch(diskFailure);
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (size !== undefined && this.offset + chunk.length > size) {
          res.body.destroy();
          await fh.close();
          fh = undefined;
          await this.restart();
          throw this.sizeMismatch(this.offset + chunk.length);
        }
        await fh.write(chunk).catch(diskFailure);
        this.hash.update(chunk);
        this.offset += chunk.length;
        this.received += chunk.length;
        this.opts.onBytes?.(chunk.length);
      }
      await fh.sync().catch(diskFailure);
    } catch (e) {
      if (e instanceof AirgapError) throw e;
      if (e instanceof WriteError) {
        res.body.destroy();
        throw new AirgapError(
          downloadCode(this.prefix, DownloadFailure.WRITE_FAILED),
          `cannot write ${this.partial}: ${e.message}`,
          {
            where: this.partial,
            cause: e,
            hint: 'check the free space and the permissions of the directory',
          },
        );
      }
      broke = e;
    } finally {
      // After the fsync, or after the failure that is reported: a failed close loses no byte (the
      // final hash checks every one).
      await fh?.close().catch(() => undefined);
    }
    if (this.offset > before) this.failures = 0;
    if (broke === undefined && (this.total === undefined || this.offset >= this.total)) return true;
    res.body.destroy();
    await this.failed(
      broke !== undefined
        ? `the download broke off at byte ${this.offset}: ${netErrorCode(broke) ?? (broke as Error).message}`
        : `the body ended at byte ${this.offset} of ${this.total}`,
    );
    return false;
  }

  /**
   * Step 5: the file is complete: verify, then rename into place. Not matching: the partial file is
   * removed, and the download starts once more when its first bytes came from an earlier run (they
   * may be stale), else `<prefix>_DIGEST_MISMATCH`.
   */
  private async finish(): Promise<'done' | 'again'> {
    const got = this.hash.digest('hex');
    if (got === this.expected) {
      await rename(this.partial, this.dest);
      return 'done';
    }
    const wasInherited = this.inherited;
    const size = this.offset;
    await this.restart();
    if (wasInherited) return 'again'; // the earlier run's bytes may be stale: once more from 0
    throw new AirgapError(
      downloadCode(this.prefix, DownloadFailure.DIGEST_MISMATCH),
      `${this.shown} does not match its sha256: expected ${this.expected}, got ${got} (${size} bytes); the download was discarded`,
      {
        where: this.shown,
        hint: 'the server holds a different or corrupted file: check that the stream metadata and the server belong together, then run again',
        details: { url: this.shown, expected: this.expected, actual: got, size },
      },
    );
  }

  /** Start over from byte 0: no partial file, a fresh hash. */
  private async restart(): Promise<void> {
    await rm(this.partial, { force: true });
    this.hash = createHash('sha256');
    this.offset = 0;
    this.inherited = false;
  }

  /** An attempt failed for `why`: count it and back off (Retry-After honoured) unless out of retries. */
  private async failed(why: string, retryAfter?: string | string[]): Promise<void> {
    this.last = why;
    this.failures++;
    if (this.failures <= this.retries)
      await waitBeforeRetry(
        this.failures,
        { baseMs: this.opts.baseDelayMs ?? 500, maxMs: 30_000 },
        retryAfter,
      );
  }

  /** Tell `onPlanned` about bytes a response promises beyond those announced already. */
  private announce(start: number, length: number | undefined): void {
    if (length === undefined) return;
    const need = this.received + (length - start);
    if (need > this.announced) {
      this.opts.onPlanned?.(need - this.announced);
      this.announced = need;
    }
  }

  private unreachable(): AirgapError {
    return new AirgapError(
      downloadCode(this.prefix, DownloadFailure.UNREACHABLE),
      `cannot download ${this.shown}: ${this.attempts - 1} attempts, the last: ${this.last}`,
      {
        where: this.shown,
        hint:
          this.opts.unreachableHint ??
          'check the network and the proxy (HTTPS_PROXY, NO_PROXY); run again to continue where it stopped',
        details: { bytes: this.offset },
      },
    );
  }

  private sizeMismatch(got: number): AirgapError {
    return new AirgapError(
      downloadCode(this.prefix, DownloadFailure.SIZE_MISMATCH),
      `${this.shown} is ${got} bytes, but the metadata says ${this.opts.size}; nothing was kept`,
      {
        where: this.shown,
        hint: 'the server holds a different file than the metadata describes; check that they belong together',
      },
    );
  }
}
