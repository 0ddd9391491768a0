/**
 * The read buffers every download of one boot-image server shares, so that memory stays flat
 * however many clients download at once (chunk size × buffers, 32 MiB by default).
 */

/**
 * The read buffers of every download of one app: at most `max` buffers of `size` bytes, allocated
 * when first needed and kept (so memory stays flat at its peak instead of churning the GC). A
 * download waits its turn (first come, first served) when all are in use.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];
  private readonly waiters: ((b: Buffer) => void)[] = [];
  private allocated = 0;

  constructor(
    readonly size: number,
    readonly max: number,
  ) {}

  /** Downloads waiting for a buffer. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** A buffer now if one is free or may be made and nobody waits; else undefined. */
  tryAcquire(): Buffer | undefined {
    if (this.waiters.length > 0) return undefined;
    const b = this.free.pop();
    if (b) return b;
    if (this.allocated < this.max) {
      this.allocated++;
      return Buffer.allocUnsafeSlow(this.size);
    }
    return undefined;
  }

  /** A buffer, waiting for one if all are in use. */
  acquire(): Promise<Buffer> {
    const b = this.tryAcquire();
    return b ? Promise.resolve(b) : new Promise((resolve) => this.waiters.push(resolve));
  }

  release(b: Buffer): void {
    const next = this.waiters.shift();
    if (next) next(b);
    else this.free.push(b);
  }
}
