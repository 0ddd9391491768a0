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
