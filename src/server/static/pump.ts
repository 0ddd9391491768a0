/**
 * Streaming a file to a client: bytes go from the open file descriptor to the socket in chunks
 * read into buffers of the app's pool (buffer-pool.ts). A download reads its next chunk while the
 * previous one is written when the pool has a buffer to spare, and a buffer is reused only once the
 * socket has taken it (backpressure; no allocation per chunk). When the client goes away, every
 * wait ends at once and the buffers go back to the pool.
 */
import { read } from 'node:fs';
import type { BufferPool } from './buffer-pool.js';
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

function readAt(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))),
  );
}

const GONE = Symbol('gone');

/**
 * Stream `ranges` of `fd` to the response, in chunks read into buffers of the app's pool. While
 * chunk k is being written, chunk k+1 is read into a second buffer if the pool has one to spare;
 * a buffer goes back to the pool (or to the next chunk) only once the socket has taken it, and is
 * handed to a waiting download between chunks. Between ranges, the multipart headers. Stops when
 * the client goes away; `done` is called exactly once, when the descriptor may be closed.
 */
export function pump(
  rr: Req,
  ctx: Ctx,
  fd: number,
  ranges: ByteRange[],
  multipart: MultipartFraming | undefined,
  done: () => void,
): void {
  new Download(rr, ctx.pool, fd).start(ranges, multipart, done);
}

/** One download in flight: the write the socket has not finished, and the pool buffers it holds. */
class Download {
  /** The client went away. */
  private gone = false;
  /** Ends the current wait when the client goes away. */
  private wake: (() => void) | undefined;
  /** The write the socket has not finished, and the pool buffer it holds (none for multipart headers). */
  private inflight: { done: Promise<void>; buf?: Buffer } | undefined;
  /** Pool buffers this download holds that no write uses. */
  private readonly spare: Buffer[] = [];

  constructor(
    private readonly rr: Req,
    private readonly pool: BufferPool,
    private readonly fd: number,
  ) {
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
        return this.settle(done);
      },
    );
  }

  /** `p`, or GONE as soon as the client goes away (or `p` fails: the connection is going). */
  private async orGone<T>(p: Promise<T>): Promise<T | typeof GONE> {
    if (this.gone) return GONE;
    const r = await new Promise<T | typeof GONE>((resolve) => {
      this.wake = () => resolve(GONE);
      p.then(resolve, () => resolve(GONE)); // a failed write: the connection is going
    });
    this.wake = undefined;
    return r;
  }

  /** Wait for the write in flight; false when the client went away meanwhile. */
  private async drained(): Promise<boolean> {
    if (!this.inflight) return !this.gone;
    const w = this.inflight;
    if ((await this.orGone(w.done)) === GONE) return false;
    this.inflight = undefined;
    if (w.buf) {
      if (this.pool.waiting > 0) this.pool.release(w.buf);
      else this.spare.push(w.buf);
    }
    return !this.gone;
  }

  /** Write `data` (held in the pool buffer `buf`, if any); it is in flight until the socket takes it. */
  private send(data: Buffer, buf?: Buffer): void {
    // The callback is the moment the socket has taken the bytes (node drops it for a socket
    // already destroyed; 'close' then ends the wait).
    const w = new Promise<void>((resolve, reject) => {
      this.rr.res.write(data, (err) => (err ? reject(err) : resolve()));
    });
    w.catch(() => undefined); // seen by the next wait, or as 'close'; never an unhandled rejection
    this.inflight = { done: w, ...(buf ? { buf } : {}) };
    this.rr.bytes += data.length;
  }

  /** A buffer to read the next chunk into, or undefined when the client went away. */
  private async nextBuffer(): Promise<Buffer | undefined> {
    const own = this.spare.pop();
    if (own) return own;
    if (this.inflight) {
      const extra = this.pool.tryAcquire();
      if (extra) return extra;
      if (!(await this.drained())) return undefined;
      const again = this.spare.pop();
      if (again) return again;
    }
    const acquiring = this.pool.acquire();
    const b = await this.orGone(acquiring);
    if (b !== GONE) return b;
    // Still in the queue: pass the buffer on when it comes.
    void acquiring.then((x) => this.pool.release(x));
    return undefined;
  }

  /** Read up to `length` bytes at `pos` into `buf` (kept as spare when the read fails). */
  private async readChunk(buf: Buffer, length: number, pos: number, end: number): Promise<number> {
    let n: number;
    try {
      n = await readAt(this.fd, buf, length, pos);
    } catch (e) {
      this.spare.push(buf);
      throw e;
    }
    if (n === 0) {
      this.spare.push(buf);
      throw new Error(`the file ended at byte ${pos}, before ${end + 1} (it shrank while served)`);
    }
    return n;
  }

  /** Send one range chunk by chunk; false when the client went away. */
  private async sendRange({ start, end }: ByteRange): Promise<boolean> {
    let pos = start;
    while (pos <= end) {
      const buf = await this.nextBuffer();
      if (!buf) return false;
      const n = await this.readChunk(buf, Math.min(buf.length, end - pos + 1), pos, end);
      if (!(await this.drained())) {
        this.spare.push(buf);
        return false;
      }
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

  /** Give every buffer back to the pool, then call `done`. */
  private async settle(done: () => void): Promise<void> {
    for (const b of this.spare.splice(0)) this.pool.release(b);
    const buf = this.inflight?.buf;
    // A buffer still in a write goes back once the write is done or the socket is closed: after
    // 'close' the socket's handle is closed, and nothing reads the buffer any more.
    if (buf && this.inflight) await this.orGone(this.inflight.done);
    if (buf) this.pool.release(buf);
    done();
  }
}
