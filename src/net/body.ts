/**
 * Reading a response body into memory with a bound on the bytes actually read: a server that
 * sends no Content-Length (chunked), or lies in it, or never stops, costs at most `limit` bytes
 * and is then cut off. Every body airgap buffers goes through here; large content is streamed.
 */

/** A body we can read and, when it is too large, drop. */
export interface Body extends AsyncIterable<Uint8Array> {
  destroy?(error?: Error): unknown;
}

/** The bytes of `body`, or undefined once more than `limit` arrived (the rest is not read). */
export async function readBounded(body: Body, limit: number): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > limit) {
      body.destroy?.();
      return undefined;
    }
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(parts, read);
}

/** The text of a body for a message (an error page): at most `limit` bytes of it, never throwing. */
export async function readSnippet(body: Body, limit = 64 * 1024): Promise<string> {
  const parts: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of body) {
      const room = limit - read;
      parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(room, chunk.byteLength)));
      read += Math.min(room, chunk.byteLength);
      if (read >= limit) {
        body.destroy?.();
        break;
      }
    }
  } catch {
    /* what arrived is enough for a message */
  }
  return Buffer.concat(parts).toString('utf8');
}

/** How much a {@link chunksOf} reader holds before it pauses the stream. */
const CHUNKS_HIGH_WATER = 1024 * 1024;

/**
 * The chunks of a readable stream one by one, as the stream delivers them. Node's own async
 * iterator reads with `read()`, which joins every chunk buffered since the last read into a new
 * buffer: streaming a blob from one registry into another, that copied most of the bytes once
 * more and left the copies to the garbage collector (a tenth of a run's CPU). Here the stream
 * flows into a short queue and is paused above 1 MiB, so backpressure still reaches the socket.
 * Ends like Node's iterator: the stream's error is thrown; a stream destroyed before its end
 * throws ERR_STREAM_PREMATURE_CLOSE; `return()` destroys the stream.
 */
export function chunksOf(
  stream: NodeJS.ReadableStream & { destroy(error?: Error): unknown },
): AsyncIterableIterator<Buffer> {
  const queue: (Buffer | undefined)[] = [];
  let head = 0;
  let queued = 0;
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  stream.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= CHUNKS_HIGH_WATER) stream.pause();
    signal();
  });
  stream.on('end', () => {
    ended = true;
    signal();
  });
  stream.on('error', (e: unknown) => {
    failure ??= e;
    signal();
  });
  stream.on('close', () => {
    if (!ended && failure === undefined)
      failure = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    signal();
  });
  const it: AsyncIterableIterator<Buffer> = {
    async next(): Promise<IteratorResult<Buffer>> {
      for (;;) {
        if (head < queue.length) {
          const chunk = queue[head]!;
          queue[head++] = undefined;
          if (head === queue.length) queue.length = head = 0;
          queued -= chunk.length;
          if (queued < CHUNKS_HIGH_WATER && stream.isPaused() && !ended) stream.resume();
          return { value: chunk, done: false };
        }
        if (failure !== undefined) throw failure;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return(): Promise<IteratorResult<Buffer>> {
      ended = true;
      stream.destroy();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}
