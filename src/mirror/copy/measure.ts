/**
 * What a copy would move, without moving it: for each pair, the manifests are read from the source
 * (children of an index too, filtered by architecture like the engine) and the destination is asked
 * whether the image, or each of its blobs, is already there. Blobs shared by images count once.
 * A channel with full: true measures 15,000 images: see measurePairs for how few questions that takes.
 */
import { AirgapError, isAirgapError, messageOf } from '../../util/errors.js';
import { Limiter, Once } from '../../util/limit.js';
import { blobsOf, matchesPlatform, parseManifest, type ManifestData } from '../manifest.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import type { CopyPair } from './engine.js';

export interface PairMeasure {
  /** Bytes of the image's blobs (manifests excluded), shared ones included. */
  bytes: number;
  blobs: number;
  /** The destination tag already points at the pinned digest: nothing to do. */
  present: boolean;
  /** Bytes of the image's blobs the far side is known to hold (the inventory, earlier archives). */
  covered?: number;
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
  /**
   * Unique blobs (not at the destination) the far side is known to hold: an archive leaves them
   * out (`--inventory`, earlier archives). Counted only when the run says what is known there.
   */
  coveredBlobs?: number;
  coveredBytes?: number;
  /** What a run would send (or carry): bytes minus presentBytes and coveredBytes. */
  bytesToMove: number;
  /**
   * Images that could not be measured (their `error` says why: the source could not be read, or the
   * destination could not say whether it holds a blob). Their blobs are in no count above.
   */
  unmeasured: number;
}

/** The number of reads at once when the caller gives none: the copy engine's image parallelism. */
const DEFAULT_PARALLEL = 16;

/**
 * Measure pairs; a pair whose source cannot be read, or whose destination does not answer whether
 * it holds a blob (a refusal, a 5xx: only 404 means "not there"), gets an `error` and counts nothing.
 *
 * Every question is asked once per run, `parallel` at a time: a source manifest by its digest
 * (a channel's releases share components), a destination blob by repository and digest (images
 * share base layers), a destination repository's tags by one listing. A tag the listing does not
 * hold is absent without a request of its own; a repository with no tag at all (a first run) is
 * taken to hold none of the blobs, so an empty destination costs one request per repository
 * instead of one per blob (an interrupted first run may have left some: the copy finds and skips
 * those, so the plan's bytes to move can only be high, never low).
 */
export async function measurePairs(
  pairs: CopyPair[],
  opts: {
    arches?: string[];
    parallel?: number;
    progress?: ProgressSink;
    /** Blobs the far side is known to hold (an archive would leave them out). */
    covered?: (digest: string, size: number) => boolean;
  } = {},
): Promise<PlanMeasure> {
  const progress = opts.progress ?? noProgress;
  progress({ type: 'items-total', total: pairs.length });
  const limit = new Limiter(opts.parallel ?? DEFAULT_PARALLEL);
  const sizes = new Map<string, number>();
  const present = new Set<string>();
  const covered = new Set<string>();
  const manifests = new Once<ManifestData>();
  const blobChecks = new Once<boolean>();
  const tagLists = new Once<Set<string> | undefined>();

  const sourceManifest = (p: CopyPair, ref: string, top: boolean) =>
    manifests.get(`${p.source.endpoint.id}|${p.source.repo}|${ref}|${top}`, () =>
      limit.run(() => p.source.endpoint.getManifest(p.source.repo, ref, top)),
    );
  const destTags = (p: CopyPair) =>
    tagLists.get(`${p.dest.endpoint.id}|${p.dest.repo}`, () =>
      limit.run(() => p.dest.endpoint.tags(p.dest.repo)),
    );
  /** Whether the destination tag already names the pinned digest. */
  const alreadyThere = async (p: CopyPair): Promise<boolean> => {
    if (p.digest === undefined) return false;
    const listed = p.dest.ref.startsWith('sha256:') ? undefined : await destTags(p);
    if (listed && !listed.has(p.dest.ref)) return false;
    return (await limit.run(() => p.dest.endpoint.headManifest(p.dest.repo, p.dest.ref, true))) === p.digest;
  };
  const blobThere = async (p: CopyPair, digest: string): Promise<boolean> => {
    const listed = await destTags(p);
    if (listed && listed.size === 0) return false; // nothing was ever pushed here
    return blobChecks.get(`${p.dest.endpoint.id}|${p.dest.repo}|${digest}`, () =>
      limit
        .run(() => p.dest.endpoint.hasBlob(p.dest.repo, digest))
        .catch((e: unknown) => {
          throw unchecked(e, p.dest.endpoint.display(p.dest.repo, digest));
        }),
    );
  };

  const measurePair = async (p: CopyPair): Promise<PairMeasure> => {
    try {
      const [done, top] = await Promise.all([alreadyThere(p), sourceManifest(p, p.source.ref, true)]);
      const parsed = parseManifest(top.bytes, top.mediaType, p.source.ref);
      const images =
        parsed.kind === 'index'
          ? await Promise.all(
              parsed.manifests
                .filter((d) => matchesPlatform(d, p.platforms ?? opts.arches))
                .map(async (d) => {
                  const m = await sourceManifest(p, d.digest, false);
                  return parseManifest(m.bytes, m.mediaType, d.digest);
                }),
            )
          : [parsed];
      const blobs = images.flatMap((m) => (m.kind === 'image' ? blobsOf(m) : []));
      const there = await Promise.all(
        blobs.map((b) => (done || present.has(b.digest) ? true : blobThere(p, b.digest))),
      );
      // Counted only once every question about the image was answered.
      for (const b of blobs) sizes.set(b.digest, b.size);
      blobs.forEach((b, i) => there[i] && present.add(b.digest));
      const known = opts.covered ? blobs.filter((b, i) => !there[i] && opts.covered!(b.digest, b.size)) : [];
      for (const b of known) covered.add(b.digest);
      return {
        bytes: blobs.reduce((n, b) => n + b.size, 0),
        blobs: blobs.length,
        present: done,
        ...(opts.covered ? { covered: known.reduce((n, b) => n + b.size, 0) } : {}),
      };
    } catch (e) {
      return { bytes: 0, blobs: 0, present: false, error: isAirgapError(e) ? e.message : messageOf(e) };
    }
  };

  const images = await Promise.all(
    pairs.map(async (p): Promise<PairMeasure> => {
      const m = await measurePair(p);
      progress({
        type: 'item-done',
        ok: m.error === undefined,
        name: p.dest.endpoint.display(p.dest.repo, p.dest.ref),
        ...(m.error ? { message: m.error } : {}),
      });
      return m;
    }),
  );
  let bytes = 0;
  let presentBytes = 0;
  let coveredBytes = 0;
  let coveredBlobs = 0;
  for (const [d, n] of sizes) {
    bytes += n;
    if (present.has(d)) presentBytes += n;
    else if (covered.has(d)) {
      coveredBytes += n;
      coveredBlobs++;
    }
  }
  return {
    images,
    blobs: sizes.size,
    bytes,
    presentBlobs: present.size,
    presentBytes,
    presentImages: images.filter((i) => i.present).length,
    ...(opts.covered ? { coveredBlobs, coveredBytes } : {}),
    bytesToMove: bytes - presentBytes - coveredBytes,
    unmeasured: images.filter((i) => i.error !== undefined).length,
  };
}

/** The destination could not say whether it holds a blob: named, with the registry's answer as the cause. */
function unchecked(e: unknown, blob: string): unknown {
  if (!isAirgapError(e)) return e;
  return new AirgapError(e.code, `cannot tell whether the destination holds ${blob}: ${e.message}`, {
    ...(e.hint ? { hint: e.hint } : {}),
    cause: e,
  });
}
