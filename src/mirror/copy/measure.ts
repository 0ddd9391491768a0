/**
 * What a copy would move, without moving it: for each pair, the manifests are read from the source
 * (children of an index too, filtered by architecture like the engine) and the destination is asked
 * whether the image, or each of its blobs, is already there. Blobs shared by images count once.
 */
import { isAirgapError, messageOf } from '../../util/errors.js';
import { Limiter } from '../../util/limit.js';
import { blobsOf, matchesArch, parseManifest } from '../manifest.js';
import type { CopyPair } from './engine.js';

export interface PairMeasure {
  /** Bytes of the image's blobs (manifests excluded), shared ones included. */
  bytes: number;
  blobs: number;
  /** The destination tag already points at the pinned digest: nothing to do. */
  present: boolean;
  error?: string;
}

export interface PlanMeasure {
  images: PairMeasure[];
  /** Unique blobs and their bytes across the whole plan. */
  blobs: number;
  bytes: number;
  /** Unique blobs already in their destination repository (or in an image already there). */
  presentBlobs: number;
  presentBytes: number;
  presentImages: number;
  /** What a run would send: bytes minus presentBytes. */
  bytesToMove: number;
}

/** Measure pairs; a pair whose source cannot be read gets an `error` and counts nothing. */
export async function measurePairs(
  pairs: CopyPair[],
  opts: { arches?: string[]; parallel?: number } = {},
): Promise<PlanMeasure> {
  const limit = new Limiter(opts.parallel ?? 8);
  const sizes = new Map<string, number>();
  const present = new Set<string>();
  const images = await Promise.all(
    pairs.map((p) =>
      limit.run(async (): Promise<PairMeasure> => {
        try {
          const done =
            p.digest !== undefined &&
            (await p.dest.endpoint.headManifest(p.dest.repo, p.dest.ref, true)) === p.digest;
          const top = await p.source.endpoint.getManifest(p.source.repo, p.source.ref, true);
          const parsed = parseManifest(top.bytes, top.mediaType, p.source.ref);
          const manifests =
            parsed.kind === 'index'
              ? await Promise.all(
                  parsed.manifests
                    .filter((d) => matchesArch(d, opts.arches))
                    .map(async (d) => {
                      const m = await p.source.endpoint.getManifest(p.source.repo, d.digest, false);
                      return parseManifest(m.bytes, m.mediaType, d.digest);
                    }),
                )
              : [parsed];
          let bytes = 0;
          let blobs = 0;
          for (const m of manifests) {
            if (m.kind !== 'image') continue;
            for (const b of blobsOf(m)) {
              bytes += b.size;
              blobs++;
              sizes.set(b.digest, b.size);
              if (done || present.has(b.digest)) present.add(b.digest);
              else if (await p.dest.endpoint.hasBlob(p.dest.repo, b.digest).catch(() => false))
                present.add(b.digest);
            }
          }
          return { bytes, blobs, present: done };
        } catch (e) {
          return { bytes: 0, blobs: 0, present: false, error: isAirgapError(e) ? e.message : messageOf(e) };
        }
      }),
    ),
  );
  let bytes = 0;
  let presentBytes = 0;
  for (const [d, n] of sizes) {
    bytes += n;
    if (present.has(d)) presentBytes += n;
  }
  return {
    images,
    blobs: sizes.size,
    bytes,
    presentBlobs: present.size,
    presentBytes,
    presentImages: images.filter((i) => i.present).length,
    bytesToMove: bytes - presentBytes,
  };
}
