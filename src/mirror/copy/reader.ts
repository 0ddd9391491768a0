import { setTimeout as sleep } from 'node:timers/promises';
import { AirgapError, hasCode, messageOf } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** Opens a blob at an offset; `start` is where the returned body really begins (≤ offset). */
export type BlobOpener = (offset: number) => Promise<{ body: AsyncIterable<Buffer>; start: number }>;

/**
 * Reads a blob of known size as one continuous byte stream, re-opening the source with a Range
 * request at the current position whenever the connection breaks or ends early. `seek` moves back
 * (an upload chunk to resend) or forward (a partial file already on disk).
 */
export class ResumableReader {
  position = 0;
  resumes = 0;
  private it?: AsyncIterator<Buffer>;
  /** The open response body, destroyed (not just abandoned) when the reader lets go of it. */
  private body?: AsyncIterable<Buffer>;
  private leftover?: Buffer;
  /**
   * Bumped by every seek/close. A `read` started before a seek may still be pulled by an HTTP
   * request that already failed; it must neither consume nor move anything once stale.
   */
  private generation = 0;

  constructor(
    private readonly open: BlobOpener,
    readonly size: number,
    readonly what: string,
    private readonly maxStalls = 6,
  ) {}

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
    let stalls = 0;
    for (;;) {
      try {
        if (!this.it) {
          const { body, start } = await this.open(this.position);
          if (gen !== this.generation) {
            (body as { destroy?: () => void }).destroy?.();
            return undefined;
          }
          this.body = body;
          this.it = body[Symbol.asyncIterator]();
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
        const r = await this.it.next();
        if (gen !== this.generation) return undefined;
        if (r.done) throw new Error(`source ended at byte ${this.position} of ${this.size}`);
        if (r.value.length > 0) return r.value;
      } catch (e) {
        if (gen !== this.generation) return undefined;
        this.closeIterator();
        if (
          e instanceof AirgapError &&
          !hasCode(
            e,
            MirrorError.REGISTRY_NETWORK,
            MirrorError.REGISTRY_ERROR,
            MirrorError.REGISTRY_RATE_LIMITED,
          )
        )
          throw e;
        stalls++;
        if (stalls > this.maxStalls) {
          throw new AirgapError(
            MirrorError.MIRROR_READ_FAILED,
            `${this.what}: reading stopped at byte ${this.position} of ${this.size} after ${stalls} attempts: ${messageOf(e)}`,
            {
              hint: 'the source keeps dropping the connection; retry the run (it resumes), or check the network',
              cause: e,
            },
          );
        }
        this.resumes++;
        await sleep(Math.min(5_000, 100 * 2 ** stalls));
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
