import { AirgapError, isAirgapError, messageOf } from '../../util/errors.js';
import { explainFsError } from '../../util/fs-errors.js';
import { Limiter } from '../../util/limit.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import { blobsOf, matchesPlatform, parseManifest, type Descriptor, type ManifestData } from '../manifest.js';
import type { Endpoint } from './endpoints.js';
import type { Journal } from './journal.js';
import { ResumableReader } from './reader.js';
import { RegistryError } from '../registry/errors.js';
import { MirrorError } from '../errors.js';
import type { Digest } from '../digest.js';

/** One side of one image copy. `ref` is a tag or a digest. */
export interface ImageSide {
  endpoint: Endpoint;
  repo: string;
  ref: string;
}

export interface CopyPair {
  source: ImageSide;
  /** `ref` is the tag to write, or the source digest for a digest-only destination. */
  dest: ImageSide;
  /** Digest the source is pinned to, when known (lets an unchanged image be skipped without reading the source). */
  digest?: Digest;
  /** Not to be copied (a policy refused it): reported failed with this reason, the source never read. */
  refused?: { code: string; message: string; hint?: string };
  /**
   * The index of an earlier pair this one belongs to (a signature: the image it signs). It starts
   * after that pair ends, and when that pair had to be copied, nothing of this one can be at the
   * destination yet, so it is copied without asking.
   */
  after?: number;
  /**
   * The children of an index to copy (`linux/amd64`, or an architecture): the ImageSetConfiguration's
   * `platforms` for this image; default the run's --arch. The index itself is pushed unchanged.
   */
  platforms?: string[];
}

export type ImageStatus = 'copied' | 'present' | 'failed';

export interface ImageResult {
  source: string;
  destination: string;
  status: ImageStatus;
  digest?: Digest;
  /** Bytes this image caused to move (blobs shared with other images count once, for the first). */
  bytes: number;
  blobs: { transferred: number; mounted: number; present: number };
  error?: { code: string; message: string; hint?: string };
}

export interface CopyOptions {
  /** Blob transfers in flight at once, across all images. */
  parallel?: number;
  /** Images resolved at once (manifest requests). */
  parallelImages?: number;
  /** Keep only these architectures of multi-arch indexes (the index itself is copied unchanged). */
  arches?: string[];
  journal?: Journal;
  progress?: ProgressSink;
  /** Attempts per blob when content is corrupt or a session is lost. */
  blobAttempts?: number;
  /** The window of a blob read's minimum rate (reader.ts); the registries' own stall deadline. */
  stallTimeoutMs?: number;
}

export interface CopySummary {
  images: ImageResult[];
  copied: number;
  present: number;
  failed: number;
  bytes: number;
  durationMs: number;
  blobs: { transferred: number; mounted: number; present: number };
}

interface BlobHome {
  repo: string;
  done: Promise<void>;
}

const RETRYABLE_BLOB = new Set<string>([
  MirrorError.MIRROR_DIGEST_MISMATCH,
  MirrorError.MIRROR_SIZE_MISMATCH,
  MirrorError.MIRROR_UPLOAD_RESTART,
  MirrorError.MIRROR_READ_FAILED,
  MirrorError.REGISTRY_NETWORK,
  MirrorError.REGISTRY_ERROR,
]);

/** A blob at a destination endpoint: its home, and its place in the progress total, are kept by this. */
function blobKey(p: CopyPair, digest: string): string {
  return `${p.dest.endpoint.id}|${digest}`;
}

/**
 * Manifests still to be resolved before the progress total is whole: when none is left, the total
 * is said to be known (once), and the bar shows an ETA. Each count is added before the one that
 * found it is taken away, so the count reaches zero only at the end.
 */
class Unresolved {
  private left = 0;
  private said = false;
  constructor(private readonly known: () => void) {}
  add(n: number): void {
    this.left += n;
  }
  done(): void {
    this.left--;
    if (this.left === 0 && !this.said) {
      this.said = true;
      this.known();
    }
  }
}

/**
 * The copy engine: one blob-level scheduler across every image of a run.
 *
 * - Each unique blob is read from the source once per destination: the first image that needs it
 *   checks the destination (HEAD) and transfers it; every other repository that needs it waits for
 *   that and then mounts it (`?mount=&from=`) instead of uploading again.
 * - A manifest is pushed only after every blob it references is present; an index only after its
 *   children. Digest-pinned images already at the destination are skipped without reading the source.
 * - One image failing never stops the others: each ends with its own result and reason.
 */
export class CopyEngine {
  private readonly blobLimit: Limiter;
  private readonly imageLimit: Limiter;
  private readonly homes = new Map<string, BlobHome>();
  private readonly inRepo = new Map<string, Promise<void>>();
  private readonly progress: ProgressSink;
  /** Blobs (destination endpoint | digest) in the progress total, and those that moved bytes. */
  private readonly inTotal = new Set<string>();
  private readonly moved = new Set<string>();

  constructor(private readonly opts: CopyOptions = {}) {
    this.blobLimit = new Limiter(opts.parallel ?? 10);
    this.imageLimit = new Limiter(opts.parallelImages ?? 16);
    this.progress = opts.progress ?? noProgress;
  }

  async run(pairs: CopyPair[]): Promise<CopySummary> {
    const started = Date.now();
    this.progress({ type: 'items-total', total: pairs.length });
    // Images that wait for another (a signature after its image) are small and join the total
    // when they start; every other image is resolved early, and then the total is known.
    const unresolved = new Unresolved(() => this.progress({ type: 'total-known' }));
    const waits = (p: CopyPair, i: number) => p.after !== undefined && p.after < i;
    unresolved.add(pairs.filter((p, i) => !waits(p, i)).length + 1);
    const running: Promise<ImageResult>[] = [];
    pairs.forEach((p, i) => {
      const before = waits(p, i) ? running[p.after!] : undefined;
      running.push(
        // The image limit holds only while an image is resolved (copyImage): every image is
        // resolved early, so the progress total is the whole run's from its start.
        before
          ? before.then((r) => this.copyImage(p, r?.status === 'copied'))
          : this.copyImage(p, false, unresolved),
      );
    });
    unresolved.done(); // the one added for the loop: no image ends the count while it runs
    const images = await Promise.all(running);
    const sum = (k: keyof ImageResult['blobs']) => images.reduce((a, r) => a + r.blobs[k], 0);
    return {
      images,
      copied: images.filter((r) => r.status === 'copied').length,
      present: images.filter((r) => r.status === 'present').length,
      failed: images.filter((r) => r.status === 'failed').length,
      bytes: images.reduce((a, r) => a + r.bytes, 0),
      durationMs: Date.now() - started,
      blobs: { transferred: sum('transferred'), mounted: sum('mounted'), present: sum('present') },
    };
  }

  /** The children of an index this pair copies: its own platforms, else the run's --arch. */
  private readonly filterOfPair = (p: CopyPair) => p.platforms ?? this.opts.arches;

  /**
   * Copy one pair; `fresh` when the pair it follows was just copied (so this one cannot be
   * present). `unresolved` counts this image (and its children) until resolved.
   */
  private async copyImage(p: CopyPair, fresh: boolean, unresolved?: Unresolved): Promise<ImageResult> {
    // This image's own resolution, settled once, with the children it found added first.
    let pending = unresolved;
    const resolvedWith = (children: number) => {
      pending?.add(children);
      pending?.done();
      pending = undefined;
    };
    const src = p.source.endpoint.display(p.source.repo, p.source.ref);
    const dst = p.dest.endpoint.display(p.dest.repo, p.dest.ref);
    const result: ImageResult = {
      source: src,
      destination: dst,
      status: 'copied',
      bytes: 0,
      blobs: { transferred: 0, mounted: 0, present: 0 },
    };
    if (p.refused) {
      resolvedWith(0);
      result.status = 'failed';
      result.error = p.refused;
      return this.finish(result);
    }
    try {
      const resolved = await this.imageLimit.run(() => this.resolveImage(p, fresh, result, src));
      if (!resolved) {
        resolvedWith(0);
        return this.finish(result);
      }
      const { top, parsed } = resolved;
      if (parsed.kind === 'index') {
        const filter = this.filterOfPair(p);
        const children = parsed.manifests.filter((d) => matchesPlatform(d, filter));
        const count = unresolved && pending ? unresolved : undefined;
        resolvedWith(children.length);
        if (children.length === 0) {
          throw new AirgapError(
            MirrorError.MIRROR_NO_PLATFORM,
            `${src} has no manifest for ${filter?.join(', ')}`,
            {
              hint: `check the ${p.platforms ? 'platforms of the ImageSetConfiguration' : '--arch values'} against \`skopeo inspect --raw\` of the image`,
            },
          );
        }
        await Promise.all(children.map((c) => this.copyManifest(p, c, result, count)));
      } else {
        resolvedWith(0);
        await this.copyBlobsOf(p, parsed, result);
      }
      const sparse =
        parsed.kind === 'index' && parsed.manifests.some((d) => !matchesPlatform(d, this.filterOfPair(p)));
      try {
        await p.dest.endpoint.putManifest(
          p.dest.repo,
          p.dest.ref,
          { ...top, mediaType: parsed.mediaType },
          true,
          src,
        );
      } catch (e) {
        if (
          sparse &&
          e instanceof RegistryError &&
          e.hasRegistryCode('MANIFEST_BLOB_UNKNOWN', 'MANIFEST_INVALID')
        ) {
          throw new AirgapError(
            MirrorError.MIRROR_SPARSE_INDEX_REFUSED,
            `${dst} refused the multi-arch index because ${p.platforms ? 'platforms' : '--arch'} left some of its architectures out`,
            {
              hint: 'the index keeps its digest only if pushed unchanged; mirror every architecture (drop --arch, or the platforms of the ImageSetConfiguration), or use a registry that accepts sparse indexes (distribution 3 with validation.manifests.indexes.platforms: none, Quay)',
              cause: e,
            },
          );
        }
        throw e;
      }
      return this.finish(result);
    } catch (caught) {
      resolvedWith(0);
      const e = explainFsError(caught) ?? caught; // a full disk or a read-only layout, said so
      result.status = 'failed';
      result.error = isAirgapError(e)
        ? { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) }
        : { code: MirrorError.MIRROR_FAILED, message: messageOf(e) };
      return this.finish(result);
    }
  }

  /**
   * The image's manifest, or undefined when the destination already holds it (result says so).
   * A destination tag that already points at the image's digest means it is done; for a
   * digest-pinned image that is known before the source is even asked. A single image's blobs
   * join the progress total here.
   */
  private async resolveImage(
    p: CopyPair,
    fresh: boolean,
    result: ImageResult,
    src: string,
  ): Promise<{ top: ManifestData; parsed: ReturnType<typeof parseManifest> } | undefined> {
    const presentAt = async (digest: string) =>
      (await p.dest.endpoint.headManifest(p.dest.repo, p.dest.ref, true)) === digest;
    if (p.digest && !fresh && (await presentAt(p.digest))) {
      result.status = 'present';
      result.digest = p.digest;
      return undefined;
    }
    const top = await p.source.endpoint.getManifest(p.source.repo, p.source.ref, true);
    if (p.digest && top.digest !== p.digest) {
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_MISMATCH,
        `${src} resolved to ${top.digest}, expected ${p.digest}`,
      );
    }
    result.digest = top.digest;
    if (!p.digest && !fresh && (await presentAt(top.digest))) {
      result.status = 'present';
      return undefined;
    }
    const parsed = parseManifest(top.bytes, top.mediaType, src);
    if (parsed.kind === 'image') this.addToTotal(p, parsed);
    return { top, parsed };
  }

  /** Count an image's blobs in the progress total (each once per destination). */
  private addToTotal(p: CopyPair, parsed: ReturnType<typeof parseManifest> & { kind: 'image' }): void {
    for (const b of blobsOf(parsed)) {
      const key = blobKey(p, b.digest);
      if (this.inTotal.has(key)) continue;
      this.inTotal.add(key);
      this.progress({ type: 'bytes-planned', bytes: b.size });
    }
  }

  /** A blob counted in the total turned out to be there already: it leaves the total. */
  private notMoved(p: CopyPair, d: Descriptor): void {
    const key = blobKey(p, d.digest);
    if (!this.inTotal.has(key) || this.moved.has(key)) return;
    this.inTotal.delete(key);
    this.progress({ type: 'bytes-planned', bytes: -d.size });
  }

  private finish(r: ImageResult): ImageResult {
    if (r.status !== 'failed' && r.digest) this.opts.journal?.recordImage(r.destination, r.digest);
    this.progress({
      type: 'item-done',
      ok: r.status !== 'failed',
      name: r.destination,
      ...(r.error ? { message: r.error.message } : {}),
    });
    return r;
  }

  /** A child of an index: skip it when the destination has it, else its blobs then itself. */
  private async copyManifest(
    p: CopyPair,
    d: Descriptor,
    result: ImageResult,
    unresolved?: Unresolved,
  ): Promise<void> {
    let found = 0;
    const child = await this.imageLimit
      .run(async () => {
        if (await p.dest.endpoint.headManifest(p.dest.repo, d.digest, false)) return undefined;
        const m: ManifestData = await p.source.endpoint.getManifest(p.source.repo, d.digest, false);
        const parsed = parseManifest(
          m.bytes,
          m.mediaType || d.mediaType,
          p.source.endpoint.display(p.source.repo, d.digest),
        );
        if (parsed.kind === 'image') this.addToTotal(p, parsed);
        else found = parsed.manifests.length;
        return { m, parsed };
      })
      .finally(() => {
        unresolved?.add(found);
        unresolved?.done();
      });
    if (!child) return;
    const { m, parsed } = child;
    if (parsed.kind === 'index') {
      await Promise.all(parsed.manifests.map((c) => this.copyManifest(p, c, result, unresolved)));
    } else {
      await this.copyBlobsOf(p, parsed, result);
    }
    await p.dest.endpoint.putManifest(p.dest.repo, d.digest, { ...m, mediaType: parsed.mediaType }, false);
  }

  private async copyBlobsOf(
    p: CopyPair,
    parsed: ReturnType<typeof parseManifest> & { kind: 'image' },
    result: ImageResult,
  ): Promise<void> {
    const outcomes = await Promise.allSettled(blobsOf(parsed).map((b) => this.ensureBlob(p, b, result)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Make blob `d` present in the destination repository. The first repository of a destination
   * endpoint to ask becomes its home (HEAD, then transfer); later repositories mount from the home.
   */
  private ensureBlob(p: CopyPair, d: Descriptor, result: ImageResult): Promise<void> {
    const dest = p.dest.endpoint;
    const repoKey = `${dest.id}|${p.dest.repo}|${d.digest}`;
    const existing = this.inRepo.get(repoKey);
    if (existing) return existing;
    const homeKey = blobKey(p, d.digest);
    const home = this.homes.get(homeKey);
    let done: Promise<void>;
    if (!home) {
      done = this.place(p, d, result);
      this.homes.set(homeKey, { repo: p.dest.repo, done });
    } else {
      done = home.done.then(
        async () => {
          if (await dest.mount(p.dest.repo, d.digest, home.repo)) {
            if (!dest.id.startsWith('layout:')) result.blobs.mounted++;
            else result.blobs.present++;
            this.progress({ type: 'blob-done', how: 'mounted', size: d.size });
            return;
          }
          await this.place(p, d, result);
        },
        // The home's transfer failed: try ourselves, from our own source.
        () => this.place(p, d, result),
      );
    }
    this.inRepo.set(repoKey, done);
    return done;
  }

  /** HEAD the destination, then mount from the same registry or transfer, with retries for bad content. */
  private async place(p: CopyPair, d: Descriptor, result: ImageResult): Promise<void> {
    const dest = p.dest.endpoint;
    if (p.source.endpoint.id === dest.id && (await dest.mount(p.dest.repo, d.digest, p.source.repo))) {
      result.blobs.mounted++;
      this.notMoved(p, d);
      this.progress({ type: 'blob-done', how: 'mounted', size: d.size });
      return;
    }
    const countKey = blobKey(p, d.digest);
    const plan = () => {
      // Counted when its image was resolved; a blob that was not (or left the total) is now.
      if (this.moved.has(countKey)) return;
      this.moved.add(countKey);
      if (this.inTotal.has(countKey)) return;
      this.inTotal.add(countKey);
      this.progress({ type: 'bytes-planned', bytes: d.size });
    };
    await this.blobLimit.run(async () => {
      const attempts = this.opts.blobAttempts ?? 4;
      for (let attempt = 1; ; attempt++) {
        const reader = new ResumableReader(
          p.source.endpoint.opener(p.source.repo, d.digest),
          d.size,
          `blob ${d.digest} of ${p.source.endpoint.display(p.source.repo, p.source.ref)}`,
          { stallMs: this.opts.stallTimeoutMs },
        );
        let sent = 0;
        try {
          const outcome = await dest.receive(p.dest.repo, d, reader, (n) => {
            plan();
            sent += n;
            this.progress({ type: 'bytes', bytes: n });
          });
          if (outcome === 'present') {
            result.blobs.present++;
            this.notMoved(p, d);
            this.progress({ type: 'blob-done', how: 'present', size: d.size });
            return;
          }
          result.bytes += d.size;
          result.blobs.transferred++;
          this.progress({
            type: 'blob-done',
            how: dest.id.startsWith('layout:') ? 'downloaded' : 'uploaded',
            size: d.size,
          });
          return;
        } catch (e) {
          // Bytes of a failed attempt will be sent again; keep the progress total honest.
          if (sent > 0) this.progress({ type: 'bytes-planned', bytes: sent });
          const code = isAirgapError(e) ? e.code : MirrorError.REGISTRY_NETWORK;
          if (attempt >= attempts || !RETRYABLE_BLOB.has(code)) throw e;
          this.progress({
            type: 'warning',
            message: `retrying blob ${d.digest.slice(0, 19)}…: ${messageOf(e).split('\n')[0]}`,
          });
        } finally {
          reader.close();
        }
      }
    });
  }
}
