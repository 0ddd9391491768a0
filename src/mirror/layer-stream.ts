import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

/** An opened layer: its tar bytes, whether it was gzipped, and how to stop reading it. */
export interface LayerTar {
  /** The uncompressed tar bytes. */
  tar: AsyncIterable<Buffer>;
  gzip: boolean;
  /** The blob had no bytes at all. */
  empty: boolean;
  /** Settles when decompression has consumed the whole blob (undefined when not compressed). */
  done?: Promise<void>;
  /** Stop reading (destroys the streams down to the blob's source). */
  destroy(): void;
}

/**
 * The tar inside a layer blob. Compression is detected from the first bytes, as containers/image
 * does, not trusted from the media type: gzip is inflated, a plain tar passes through, and zstd
 * (not readable yet) throws `zstd()`'s error before anything is read further.
 */
export async function openLayerTar(
  bytes: AsyncIterator<Buffer> & AsyncIterable<Buffer>,
  zstd: () => Error,
): Promise<LayerTar> {
  const first = await bytes.next();
  const head = first.done ? Buffer.alloc(0) : first.value;
  if (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) throw zstd();
  const gzip = head[0] === 0x1f && head[1] === 0x8b;
  const source = Readable.from(
    (async function* () {
      if (head.length) yield head;
      yield* bytes;
    })(),
    { objectMode: false },
  );
  if (!gzip) return { tar: source, gzip, empty: head.length === 0, destroy: () => source.destroy() };
  const gunzip = createGunzip();
  const done = pipeline(source, gunzip);
  done.catch(() => undefined); // surfaces through the iteration of `tar`, or moot after an early stop
  return { tar: gunzip, gzip, empty: false, done, destroy: () => source.destroy() };
}
