/**
 * Disk → mirror, before anything is pushed: every blob an image needs is either in the unpacked
 * archive or already at the destination. An archive cut against an inventory or the workspace's
 * history (a delta) leaves blobs out because the far side was said to hold them; that word is
 * checked here, by asking the destination (in parallel, each blob once per repository), not
 * trusted. An image whose blob is in neither place fails alone, before any of its blobs or
 * manifests is sent, with the blobs named; the others go on. A blob the inventory placed in another
 * repository of the same registry is mounted from there (the image is then whole) just before the
 * copy. A question the destination cannot answer (a refusal, a 5xx) fails the image with that
 * answer: it is never read as "not there", nor as "there".
 */
import { isAirgapError, messageOf } from '../../util/errors.js';
import { Limiter, Once } from '../../util/limit.js';
import type { CopyPair } from '../copy/engine.js';
import { MirrorError } from '../errors.js';
import { blobsOf, matchesPlatform, parseManifest, type Descriptor } from '../manifest.js';
import type { ArchiveManifest } from './archive.js';
import { parseLocation } from '../location.js';

export interface PreflightResult {
  /** Blobs the images need that the archive does not carry (the delta's expectation of the destination). */
  expected: number;
  /** Of those, the ones the destination does not hold (in no repository the archive named). */
  missing: string[];
  /** Images refused before anything was pushed (their pair now carries `refused`). */
  failed: number;
  /** Blobs mounted from another repository of the destination, where the inventory placed them. */
  mounted: number;
}

/** One image's needs: its manifests (from the layout) and every blob they reference. */
interface Needs {
  blobs: Descriptor[];
  /** Child manifests the archive does not carry, which must be at the destination. */
  manifests: string[];
}

/**
 * Check every pair whose source is the unpacked archive; a pair that cannot be pushed whole gets
 * `refused` (MIRROR_BLOB_UNAVAILABLE), so the copy engine reports it failed without reading it.
 */
export async function preflightArchive(
  pairs: CopyPair[],
  archive: Pick<ArchiveManifest, 'inventory' | 'homes' | 'previouslyArchived'>,
  o: { arches?: string[]; parallel?: number; destinationRegistry?: string },
): Promise<PreflightResult> {
  const limit = new Limiter(o.parallel ?? 16);
  const atDest = new Once<boolean>();
  const expected = new Set<string>();
  const missing = new Set<string>();
  const toMount: { pair: CopyPair; digest: string; from: string }[] = [];
  // The inventory's repositories name places in its own registry; elsewhere they mean nothing.
  const homes =
    archive.inventory &&
    o.destinationRegistry &&
    registryOfLocation(archive.inventory.destination) === o.destinationRegistry
      ? (archive.homes ?? {})
      : {};
  // What the connected side left out because the far side was said to hold it.
  const leftOnPurpose = new Set(archive.previouslyArchived ?? []);
  let failed = 0;
  await Promise.all(
    pairs.map(async (p) => {
      if (p.refused) return;
      try {
        const needs = await needsOf(p, o.arches, limit);
        const inLayout = await Promise.all(
          needs.blobs.map((b) => limit.run(() => p.source.endpoint.hasBlob(p.source.repo, b.digest))),
        );
        const leftOut = needs.blobs.filter((_, i) => !inLayout[i]);
        if (leftOut.length === 0 && needs.manifests.length === 0) return; // the archive carries it all
        for (const b of leftOut) expected.add(b.digest);
        for (const d of needs.manifests) expected.add(d);
        const top = await limit.run(() => p.dest.endpoint.headManifest(p.dest.repo, p.dest.ref, true));
        if (p.digest && top === p.digest) return; // the image is there: whatever it needs is there
        const lacking: string[] = [];
        const mounts: { digest: string; from: string }[] = [];
        const inDest = (repo: string, digest: string) =>
          atDest.get(`${repo}|${digest}`, () => limit.run(() => p.dest.endpoint.hasBlob(repo, digest)));
        await Promise.all([
          ...leftOut.map(async (b) => {
            if (await inDest(p.dest.repo, b.digest)) return;
            const home = homes[b.digest];
            if (home && home !== p.dest.repo && (await inDest(home, b.digest))) {
              mounts.push({ digest: b.digest, from: home });
              return;
            }
            lacking.push(b.digest);
          }),
          ...needs.manifests.map(async (d) => {
            if (!(await limit.run(() => p.dest.endpoint.headManifest(p.dest.repo, d, false))))
              lacking.push(d);
          }),
        ]);
        if (lacking.length === 0) {
          for (const m of mounts) toMount.push({ pair: p, ...m });
          return;
        }
        lacking.sort();
        for (const d of lacking) missing.add(d);
        failed++;
        p.refused = {
          code: MirrorError.MIRROR_BLOB_UNAVAILABLE,
          message: `${p.dest.endpoint.display(p.dest.repo, p.dest.ref)} needs ${lacking.length} blob(s) neither the archive nor the destination holds: ${lacking.join(', ')}; nothing of it was pushed`,
          hint: lacking.some((d) => !leftOnPurpose.has(d))
            ? 'the archive neither carries these nor left them out on purpose: it is incomplete (`airgap mirror verify` names what it lacks); make it again on the connected side'
            : archive.inventory
              ? `the archive was cut against the inventory ${archive.inventory.sha256} of ${archive.inventory.destination} (taken ${archive.inventory.takenAt}); this registry does not hold what it listed: take an inventory of this registry (airgap mirror inventory) and cut a new archive against it`
              : 'an earlier archive carried these blobs (archive-history.txt of the connected workspace); push that archive here first, or cut a new archive with --since or --inventory',
        };
      } catch (e) {
        failed++;
        p.refused = {
          code: isAirgapError(e) ? e.code : MirrorError.MIRROR_FAILED,
          message: `${p.dest.endpoint.display(p.dest.repo, p.dest.ref)}: could not check that the destination holds what the archive left out: ${messageOf(e)}`,
        };
      }
    }),
  );
  // Each blob mounted once per repository: the images of a repository share their base layers.
  let mounted = 0;
  const mounts = new Once<boolean>();
  await Promise.all(
    toMount.map(async ({ pair: p, digest, from }) => {
      const what = p.dest.endpoint.display(p.dest.repo, p.dest.ref);
      let refused: NonNullable<CopyPair['refused']> | undefined;
      try {
        const done = await mounts.get(`${p.dest.repo}|${digest}`, () =>
          limit.run(async () => {
            const ok = await p.dest.endpoint.mount(p.dest.repo, digest, from);
            if (ok) mounted++;
            return ok;
          }),
        );
        if (!done)
          refused = {
            code: MirrorError.MIRROR_BLOB_UNAVAILABLE,
            message: `${what} needs ${digest}, which ${from} holds but the registry would not mount into ${p.dest.repo}; nothing of it was pushed`,
          };
      } catch (e) {
        refused = {
          code: isAirgapError(e) ? e.code : MirrorError.MIRROR_FAILED,
          message: `${what}: mounting ${digest} from ${from}: ${messageOf(e)}`,
        };
      }
      if (!refused || p.refused) return; // an image is refused (and counted) once
      p.refused = refused;
      failed++;
    }),
  );
  return { expected: expected.size, missing: [...missing].sort(), failed, mounted };
}

/** The registry (`host[:port]`, as on the wire) of a `docker://host[:port]/prefix` location. */
function registryOfLocation(location: string): string | undefined {
  const l = parseLocation(location, 'destination'); // checked when the archive manifest was read
  return l.kind === 'registry' ? l.registry : undefined;
}

/**
 * The blobs of an image as the archive's layout holds its manifests: an index's children by the
 * pair's platforms (or the run's --arch), as the copy engine picks them. A child the layout lacks
 * is one the archive expects at the destination.
 */
async function needsOf(p: CopyPair, arches: string[] | undefined, limit: Limiter): Promise<Needs> {
  const src = p.source.endpoint;
  const out: Needs = { blobs: [], manifests: [] };
  const walk = async (ref: string, top: boolean): Promise<void> => {
    const m = await limit.run(() => src.getManifest(p.source.repo, ref, top));
    const parsed = parseManifest(m.bytes, m.mediaType, src.display(p.source.repo, ref));
    if (parsed.kind === 'image') {
      out.blobs.push(...blobsOf(parsed));
      return;
    }
    await Promise.all(
      parsed.manifests
        .filter((d) => matchesPlatform(d, p.platforms ?? arches))
        .map(async (d) => {
          if (await limit.run(() => src.hasBlob(p.source.repo, d.digest))) return walk(d.digest, false);
          out.manifests.push(d.digest);
        }),
    );
  };
  await walk(p.source.ref, true);
  return out;
}
