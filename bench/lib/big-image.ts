/**
 * An image with one very large layer, generated straight to disk: a tar archive holding one file
 * of random bytes, written and hashed chunk by chunk into an OCI layout, so building a 2 GiB layer
 * never holds more than one chunk in memory.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { randomTarChunks, type BuiltImage } from '../../lab/images.js';
import type { OciLayout } from '../../src/mirror/layout/store.js';
import { MediaType } from '../../src/mirror/media-types.js';

const CHUNK = 4 * 1024 * 1024;

/** Stream a `size`-byte random tar layer into the layout's blob store; returns its descriptor. */
async function writeBigLayer(layout: OciLayout, size: number): Promise<{ digest: string; size: number }> {
  const tmp = join(layout.dir, 'big-layer.partial');
  const out = createWriteStream(tmp);
  const hash = createHash('sha256');
  let written = 0;
  for (const chunk of randomTarChunks(size, 'big.bin', CHUNK)) {
    hash.update(chunk);
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
  const digest = `sha256:${hash.digest('hex')}`;
  await rename(tmp, layout.blobPath(digest));
  return { digest, size: written };
}

/** Build `repo:tag`, an OCI image whose only layer is `size` bytes, into `layout`. */
export async function buildBigImage(
  layout: OciLayout,
  repo: string,
  tag: string,
  size: number,
): Promise<BuiltImage> {
  const layer = await writeBigLayer(layout, size);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      created: '2026-01-01T00:00:00Z',
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
    }),
  );
  const configDigest = await layout.putBytes(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      config: { mediaType: MediaType.OciConfig, digest: configDigest, size: config.length },
      layers: [{ mediaType: MediaType.OciLayer, digest: layer.digest, size: layer.size }],
    }),
  );
  const digest = await layout.putBytes(manifest);
  await layout.setEntry(`${repo}:${tag}`, { bytes: manifest, digest, mediaType: MediaType.OciManifest });
  return { repo, tag, digest, mediaType: MediaType.OciManifest, bytes: layer.size + config.length };
}
