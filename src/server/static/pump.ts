/**
 * Streaming a file to a client: bytes go from the open file descriptor to the socket in chunks,
 * read into a buffer that belongs to this download alone. A client that reads slowly or not at all
 * holds its own buffer and never delays another download.
 *
 * - Each download has one buffer of one chunk (`ctx.chunkBytes`, or less when the whole answer is
 *   smaller, so a small file costs a small buffer), made when it starts and reused chunk after
 *   chunk: it is read into again only once the socket has taken what it held (backpressure; no
 *   allocation per chunk).
 * - To read the next chunk while the socket is still taking the previous one, a download may also
 *   borrow one read-ahead buffer from the app's few ({@link ReadAheadBuffers}), but only if one is
 *   free at that moment: nobody ever waits for one, and a download without one goes on with its
 *   own buffer alone. Reading ahead saves a single fast download some 10–15% of its CPU per
 *   byte (measured on loopback); with many downloads at once, they keep the CPU busy anyway.
 * - So a stalled client costs one chunk (two for the few holding a read-ahead buffer) until the
 *   idle timeout closes it, and memory is at most chunkBytes × (downloads + read-ahead buffers).
 * - When the client goes away, every wait ends at once, and a read-ahead buffer goes back once no
 *   write holds it.
 */
import { read } from 'node:fs';
import type { Ctx, Req } from './request.js';

/** A byte range of a file, `end` inclusive. */
export interface ByteRange {
  start: number;
  end: number;
}

/** The multipart/byteranges framing: a header before each range, and the closing tail. */
export interface MultipartFraming {
  parts: Buffer[];
  tail: Buffer;
}

/**
 * The read-ahead buffers of one app: at most `max` of `size` bytes, made when first taken and kept
 * for the next download (so that none is allocated per download). Taking one never waits.
 */
export class ReadAheadBuffers {
  private readonly free: Buffer[] = [];
  private made = 0;

  constructor(
    readonly size: number,
    readonly max: number,
  ) {}

  /** A free buffer, or undefined when all are taken (the download goes on without). */
  take(): Buffer | undefined {
    const b = this.free.pop();
    if (b) return b;
    if (this.made >= this.max) return undefined;
    this.made++;
    return Buffer.allocUnsafeSlow(this.size);
  }

  give(b: Buffer): void {
    this.free.push(b);
  }
}

function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))),
  );
}

const GONE = Symbol('gone');

/**
 * Stream `ranges` of `fd` to the response, in chunks of at most `ctx.chunkBytes` (see the module
 * comment). Between ranges, the multipart headers. Stops when the client goes away; `done` is
 * called exactly once, when the descriptor may be closed.
 */
export function pump(
  rr: Req,
  ctx: Ctx,
  fd: number,
  ranges: ByteRange[],
  multipart: MultipartFraming | undefined,
  done: () => void,
): void {
  const total = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
  const own = Buffer.allocUnsafeSlow(Math.max(1, Math.min(ctx.chunkBytes, total)));
  // Reading ahead only pays when there is more than one chunk to send.
  const readAhead = total > ctx.chunkBytes && ctx.readAhead.size === own.length ? ctx.readAhead : undefined;
  new Download(rr, fd, own, readAhead).start(ranges, multipart, done);
}

/** One download in flight: its buffers, and the write the socket has not finished. */
class Download {
  /** The client went away. */
  private gone = false;
  /** Ends the current wait when the client goes away. */
  private wake: (() => void) | undefined;
  /** The write the socket has not finished, and the buffer it holds (none for multipart headers). */
  private inflight: { done: Promise<void>; buf?: Buffer } | undefined;
  /** Buffers of this download that no write uses: its own, and the read-ahead one it borrowed. */
  private readonly spare: Buffer[];
  /** The read-ahead buffer borrowed, given back when the download ends. */
  private borrowed: Buffer | undefined;

  constructor(
    private readonly rr: Req,
    private readonly fd: number,
    own: Buffer,
    private readonly readAhead: ReadAheadBuffers | undefined,
  ) {
    this.spare = [own];
    // No wait below outlives the client: 'close' wakes whatever waits. (One callback per wait, not
    // a race against one long-lived promise, whose reactions would pile up chunk after chunk.)
    rr.res.once('close', () => {
      this.gone = true;
      this.wake?.();
    });
  }

  start(ranges: ByteRange[], multipart: MultipartFraming | undefined, done: () => void): void {
    this.run(ranges, multipart).then(
      () => this.settle(done),
      (e: Error) => {
        if (!this.gone) {
          this.rr.problem = `read failed: ${e.message}`;
          this.rr.res.destroy(e);
        }
        this.settle(done);
      },
    );
  }

  /**
   * No read is in flight once run() settles: the descriptor may be closed. The read-ahead buffer
   * goes back at once, or, if a write still holds it (a read failed and the response is being
   * destroyed), once the socket is closed and nothing reads it any more.
   */
  private settle(done: () => void): void {
    const b = this.borrowed;
    if (b && this.readAhead) {
      const ra = this.readAhead;
      if (this.inflight?.buf === b && !this.gone) this.rr.res.once('close', () => ra.give(b));
      else ra.give(b);
    }
    done();
  }

  /** Wait for the write in flight; false when the client went away meanwhile (or the write failed: the connection is going). */
  private async drained(): Promise<boolean> {
    const w = this.inflight;
    if (!w || this.gone) return !this.gone;
    const r = await new Promise<void | typeof GONE>((resolve) => {
      this.wake = () => resolve(GONE);
      // A failed write means the connection is going: handled as the client gone (see `done` above).
      w.done.then(resolve, () => resolve(GONE));
    });
    this.wake = undefined;
    if (r === GONE) return false;
    this.inflight = undefined;
    if (w.buf) this.spare.push(w.buf);
    return !this.gone;
  }

  /** Write `data` (held in `buf`, if any); it is in flight until the socket takes it. */
  private send(data: Buffer, buf?: Buffer): void {
    // The callback is the moment the socket has taken the bytes (node drops it for a socket
    // already destroyed; 'close' then ends the wait).
    const done = new Promise<void>((resolve, reject) => {
      this.rr.res.write(data, (err) => (err ? reject(err) : resolve()));
    });
    done.catch(() => undefined); // seen by the next wait, or as 'close'; never an unhandled rejection
    this.inflight = { done, ...(buf ? { buf } : {}) };
    this.rr.bytes += data.length;
  }

  /**
   * A buffer to read the next chunk into: a spare one; while the socket takes the last chunk, a
   * read-ahead buffer if one is free; else the one in flight once the socket has taken it.
   * Undefined when the client went away.
   */
  private async nextBuffer(): Promise<Buffer | undefined> {
    const spare = this.spare.pop();
    if (spare) return spare;
    if (this.inflight?.buf && !this.borrowed && this.readAhead) {
      this.borrowed = this.readAhead.take();
      if (this.borrowed) return this.borrowed;
    }
    if (!(await this.drained())) return undefined;
    return this.spare.pop();
  }

  /** Send one range chunk by chunk; false when the client went away. */
  private async sendRange({ start, end }: ByteRange): Promise<boolean> {
    let pos = start;
    while (pos <= end) {
      const buf = await this.nextBuffer();
      if (!buf) return false;
      const n = await readAt(this.fd, buf, Math.min(buf.length, end - pos + 1), pos);
      if (n === 0)
        throw new Error(`the file ended at byte ${pos}, before ${end + 1} (it shrank while served)`);
      // The chunk before this one must be in the socket first.
      if (!(await this.drained())) return false;
      this.send(n === buf.length ? buf : buf.subarray(0, n), buf);
      pos += n;
    }
    return true;
  }

  /** Every range (each after its multipart header), the tail, then the end; false when the client went away. */
  private async run(ranges: ByteRange[], multipart: MultipartFraming | undefined): Promise<boolean> {
    for (let i = 0; i < ranges.length; i++) {
      if (multipart) {
        if (!(await this.drained())) return false;
        this.send(multipart.parts[i]!);
      }
      if (!(await this.sendRange(ranges[i]!))) return false;
    }
    if (multipart) {
      if (!(await this.drained())) return false;
      this.send(multipart.tail);
    }
    if (!(await this.drained())) return false;
    this.rr.res.end();
    return true;
  }
}
