import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunksOf } from '../../net/body.js';
import { AirgapError, hasCode, messageOf } from '../../util/errors.js';
import { DEFAULT_STALL_TIMEOUT_MS } from '../../net/http.js';
import { formatBytes } from '../../util/progress.js';
import { MirrorError } from '../errors.js';
import { isStall, stallReason } from '../registry/stalls.js';

/** Opens a blob at an offset; `start` is where the returned body really begins (≤ offset). */
export type BlobOpener = (offset: number) => Promise<{ body: AsyncIterable<Buffer>; start: number }>;

/** How a reader treats a source that breaks, stalls or trickles. */
export interface ReaderLimits {
  /** Re-opens after a broken or short connection before giving up; default 6. */
  maxResumes?: number;
  /** Re-opens after a stall (nothing in time, or too slow) before giving up; default 1. */
  maxStallResumes?: number;
  /** The window of the minimum rate: this much time spent waiting on the source; default 60 s. */
  stallMs?: number;
  /** Below this many bytes per second of waiting, over `stallMs`, the source is too slow; default 1 KiB/s. */
  minBytesPerSecond?: number;
}

/** The slowest source a blob read accepts (curl's --speed-limit idea): 1 KiB/s. */
const DEFAULT_MIN_BYTES_PER_SECOND = 1024;

/**
 * The rate a source really sends at: bytes over the time spent waiting for them. Time the
 * consumer spends elsewhere (a slow destination) is not counted, so backpressure is never
 * mistaken for a slow source.
 */
class RateFloor {
  private waitedMs = 0;
  private bytes = 0;
  constructor(
    private readonly windowMs: number,
    private readonly minBytesPerSecond: number,
  ) {}

  /** A wait of `ms` brought `n` bytes: what is wrong when a full window ran below the floor. */
  add(ms: number, n: number): string | undefined {
    this.waitedMs += ms;
    this.bytes += n;
    if (this.waitedMs < this.windowMs) return undefined;
    const secs = this.waitedMs / 1000;
    const low = this.bytes / secs < this.minBytesPerSecond;
    const what = `the source sent ${formatBytes(this.bytes)} in ${secs.toFixed(1)} s, below the minimum ${formatBytes(this.minBytesPerSecond)}/s`;
    this.reset();
    return low ? what : undefined;
  }

  reset(): void {
    this.waitedMs = 0;
    this.bytes = 0;
  }
}

/**
 * Reads a blob of known size as one continuous byte stream, re-opening the source with a Range
 * request at the current position whenever the connection breaks or ends early. `seek` moves back
 * (an upload chunk to resend) or forward (a partial file already on disk). A source that stalls
 * (the agent's phase deadlines) or sends below a minimum rate is re-opened once, then given up
 * with MIRROR_SOURCE_STALLED: a stall is never retried at every layer.
 */
export class ResumableReader {
  position = 0;
  resumes = 0;
  /** Stalls of this blob's reads, over its whole life: the budget is per blob, not per chunk. */
  private stalls = 0;
  private it?: AsyncIterator<Buffer>;
  /** The open response body, destroyed (not just abandoned) when the reader lets go of it. */
  private body?: AsyncIterable<Buffer>;
  private leftover?: Buffer;
  /**
   * Bumped by every seek/close. A `read` started before a seek may still be pulled by an HTTP
   * request that already failed; it must neither consume nor move anything once stale.
   */
  private generation = 0;

  private readonly maxResumes: number;
  private readonly maxStallResumes: number;
  private readonly rate: RateFloor;
  private readonly stallMs: number;

  constructor(
    private readonly open: BlobOpener,
    readonly size: number,
    readonly what: string,
    limits: ReaderLimits = {},
  ) {
    this.maxResumes = limits.maxResumes ?? 6;
    this.maxStallResumes = limits.maxStallResumes ?? 1;
    this.stallMs = limits.stallMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.rate = new RateFloor(this.stallMs, limits.minBytesPerSecond ?? DEFAULT_MIN_BYTES_PER_SECOND);
  }

  /** Continue from `offset`: a no-op when the stream is already there (the next chunk of an upload). */
  seek(offset: number): void {
    if (offset === this.position) return;
    this.restart(offset);
  }

  /**
   * Start over from `offset` after a failed request, even if the position looks right: a read
   * handed to that request may still be pulling bytes, and must not share the stream with the next.
   */
  restart(offset: number): void {
    this.drop();
    this.position = offset;
  }

  /** Seek or close: every read in flight becomes stale. */
  private drop(): void {
    this.generation++;
    this.closeIterator();
  }

  /** Forget the current connection (it broke); reads in flight go on from the same position. */
  private closeIterator(): void {
    const it = this.it;
    const body = this.body;
    this.it = undefined;
    this.body = undefined;
    this.leftover = undefined;
    // Destroy the stream itself: `return()` waits behind a pending `next()`, and a response left
    // half-read keeps its connection busy (an Agent's close() would wait on it forever).
    (body as { destroy?: () => void } | undefined)?.destroy?.();
    // The connection broke and its failure is handled above: closing what is left of it cannot add one.
    void it?.return?.().catch(() => undefined);
  }

  close(): void {
    this.drop();
  }

  private async nextChunk(gen: number): Promise<Buffer | undefined> {
    if (gen !== this.generation) return undefined;
    if (this.leftover) {
      const l = this.leftover;
      this.leftover = undefined;
      return l;
    }
    let failures = 0; // in a row, without a chunk in between
    for (;;) {
      try {
        if (!this.it) {
          this.rate.reset();
          const { body, start } = await this.open(this.position);
          if (gen !== this.generation) {
            (body as { destroy?: () => void }).destroy?.();
            return undefined;
          }
          this.body = body;
          // A stream is read chunk by chunk as it arrives (no joined copies: chunksOf says why).
          this.it = body instanceof Readable ? chunksOf(body) : body[Symbol.asyncIterator]();
          let skip = this.position - start;
          while (skip > 0) {
            const r = await this.it.next();
            if (r.done) throw new Error('source ended before the resume point');
            if (r.value.length <= skip) skip -= r.value.length;
            else {
              this.leftover = r.value.subarray(skip);
              skip = 0;
            }
          }
          if (this.leftover) {
            const l = this.leftover;
            this.leftover = undefined;
            return l;
          }
        }
        const waitStart = performance.now();
        const r = await this.it.next();
        if (gen !== this.generation) return undefined;
        if (r.done) throw new Error(`source ended at byte ${this.position} of ${this.size}`);
        const tooSlow = this.rate.add(performance.now() - waitStart, r.value.length);
        if (tooSlow) {
          const err = new AirgapError(MirrorError.MIRROR_SOURCE_TOO_SLOW, tooSlow);
          // Destroyed with the reason, so the registry's stall count (registry/stalls.ts) sees it.
          (this.body as { destroy?: (e: Error) => void } | undefined)?.destroy?.(err);
          throw err;
        }
        if (r.value.length > 0) return r.value;
      } catch (e) {
        if (gen !== this.generation) return undefined;
        this.closeIterator();
        if (hasCode(e, MirrorError.REGISTRY_NOT_ANSWERING)) throw e;
        const stalled = isStall(e);
        if (
          !stalled &&
          e instanceof AirgapError &&
          !hasCode(
            e,
            MirrorError.REGISTRY_NETWORK,
            MirrorError.REGISTRY_ERROR,
            MirrorError.REGISTRY_RATE_LIMITED,
          )
        )
          throw e;
        if (stalled && ++this.stalls > this.maxStallResumes) {
          throw new AirgapError(
            MirrorError.MIRROR_SOURCE_STALLED,
            `${this.what}: the source stopped sending at byte ${this.position} of ${this.size}: ${stallReason(e, this.stallMs)}`,
            {
              hint: 'the source accepted the request and then sent nothing (or too little) in time; the other images go on. Re-run to resume, or raise --stall-timeout for a slow link',
              cause: e,
            },
          );
        }
        if (!stalled && ++failures > this.maxResumes) {
          throw new AirgapError(
            MirrorError.MIRROR_READ_FAILED,
            `${this.what}: reading stopped at byte ${this.position} of ${this.size} after ${failures} attempts: ${messageOf(e)}`,
            {
              hint: 'the source keeps dropping the connection; retry the run (it resumes), or check the network',
              cause: e,
            },
          );
        }
        this.resumes++;
        await sleep(Math.min(5_000, 100 * 2 ** (failures + this.stalls)));
      }
    }
  }

  /** Yield exactly `length` bytes from the current position. */
  async *read(length: number): AsyncGenerator<Buffer> {
    const gen = this.generation;
    let remaining = length;
    while (remaining > 0) {
      const c = await this.nextChunk(gen);
      if (!c || gen !== this.generation) return; // stale: a seek happened while we waited
      if (c.length > remaining) {
        this.leftover = c.subarray(remaining);
        const out = c.subarray(0, remaining);
        this.position += remaining;
        remaining = 0;
        yield out;
      } else {
        this.position += c.length;
        remaining -= c.length;
        yield c;
      }
    }
  }
}
