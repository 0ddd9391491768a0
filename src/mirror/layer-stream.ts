import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { DigestVerifier } from './digest.js';
import type { Descriptor } from './manifest.js';
import type { RegistryClient } from './registry/client.js';

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

/**
 * A layer blob read from a registry, hashed as it streams: `verify(what)` (after the whole blob
 * was read) throws when its bytes are not its digest.
 */
export async function registryLayer(
  client: RegistryClient,
  repo: string,
  layer: Descriptor,
): Promise<{ bytes: AsyncGenerator<Buffer>; verify(what: string): void }> {
  const verifier = new DigestVerifier(layer.digest, layer.size);
  const { body } = await client.openBlob(repo, layer.digest);
  const bytes = (async function* () {
    for await (const c of body) {
      verifier.update(c);
      yield c;
    }
  })();
  return { bytes, verify: (what) => verifier.verify(what) };
}
