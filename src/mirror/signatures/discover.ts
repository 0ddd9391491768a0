/**
 * Finding the Sigstore signatures of a plan's images at the source, so they can be copied next to
 * the images (a cluster's ClusterImagePolicy makes CRI-O look for `sha256-<hex>.sig` in the
 * repository it pulls from: the mirror).
 *
 * A plan holds hundreds of images in a handful of repositories, and most images are unsigned, so
 * asking for each `.sig` tag would cost a request per image, mostly answered 404. Instead each
 * source repository's tag list is read once and matched against the planned digests; only a
 * signature that exists costs more (its manifest, and one blob per signature layer).
 *
 * OCI 1.1 referrers (cosign's `--registry-referrers-mode=oci-1-1`, notation, SBOMs) are found the
 * same way where a registry keeps them under the referrers tag schema (`sha256-<hex>`, an index of
 * the artifacts whose `subject` is the image), which is how they are stored in every registry
 * without the referrers API; that index is copied whole, its artifacts with it.
 *
 * A signature is only kept for an image when one of its payloads names that image's digest: a
 * `.sig` tag whose payloads name another digest is reported and never copied as this image's; a
 * referrers index is only kept when every artifact in it has the image as its subject and every
 * signature in them names the image.
 * Nothing is verified here (no key is needed to mirror); a repository whose tags cannot be listed
 * is a warning, never a stop.
 */
import { AirgapError } from '../../util/errors.js';
import { Limiter } from '../../util/limit.js';
import { BUILD_SOURCE, type PlanEntry } from '../plan.js';
import { parseReference } from '../reference.js';
import type { RegistryClient } from '../registry/client.js';
import { RegistryError } from '../registry/errors.js';
import { COSIGN_SIGNATURE_MEDIA_TYPE, COSIGN_TAG_SUFFIX, cosignTag, readCosignSignatures } from './cosign.js';
import { parseManifest } from '../manifest.js';
import { COSIGN_SIGNATURE_TYPE, claimProblem } from './simple-signing.js';
import type { Digest } from '../digest.js';

/** What was found for one image digest: its `.sig`, or its referrers index. */
export interface SignedImage {
  /** `sha256-<hex>.sig`, or the referrers tag `sha256-<hex>`. */
  tag: string;
  /** The digest of that tag's manifest at the source. */
  manifestDigest: Digest;
  /** How many of its signatures name this digest (a referrers index may hold none: an SBOM). */
  signatures: number;
}

/** The most artifacts read from one referrers index: more is refused, not followed. */
const MAX_REFERRERS = 64;

/** The referrers tag schema's tag for `sha256:<hex>`: `sha256-<hex>` (OCI distribution spec 1.1). */
export function referrersTag(digest: string): string {
  return cosignTag(digest).slice(0, -COSIGN_TAG_SUFFIX.length);
}

export interface DiscoveredSignatures {
  /** One `signature` entry per signed image and destination repository, to append to the plan. */
  entries: PlanEntry[];
  /** Signed image digests. */
  signed: Map<string, SignedImage>;
  warnings: string[];
  /** The checks this run relied on (reused or new): what to remember for the next. */
  checks: SignatureChecks;
}

/**
 * What reading a `.sig` manifest's payloads concluded for one image digest, remembered by the
 * manifest's digest (its content never changes): a later run that finds the same manifest need not
 * read its payloads again.
 */
export interface SignatureCheck {
  /** Signatures naming the image digest. */
  matching: number;
  /** Why it is not copied: no signature names the digest, or a referrer has another subject. */
  why?: string;
}

/** Checks remembered between runs, by `<registry>/<repository>@<tag's manifest digest>><image digest>`. */
export type SignatureChecks = Map<string, SignatureCheck>;

export interface DiscoverOptions {
  /** Checks of earlier runs, to reuse. */
  checks?: SignatureChecks;
  /** Requests in flight at once (default 16). */
  concurrency?: number;
  /** Tags asked for per page of a tag listing (default the client's, 1000). */
  pageSize?: number;
}

/** The planned images of one source repository. */
interface SourceRepo {
  registry: string;
  repository: string;
  /** Planned entries by image digest (one digest may go to several destinations). */
  byDigest: Map<string, PlanEntry[]>;
}

/** What reading one `.sig` gave: the signature to copy, or why not. */
type SigOutcome = { ok: true; found: SignedImage } | { ok: false; warning: string };

/** Plan order of an outcome: `.sig` before referrers, warnings first. */
function order(o: SigOutcome): number {
  return o.ok ? (o.found.tag.endsWith(COSIGN_TAG_SUFFIX) ? 1 : 2) : 0;
}

/** The two attachments a tag listing can show for an image. */
type Attachment = 'sig' | 'referrers';

/** Registry-sourced, pinned images that are not signatures themselves, grouped by source repository. */
function groupBySourceRepo(images: PlanEntry[]): Map<string, SourceRepo> {
  const repos = new Map<string, SourceRepo>();
  for (const e of images) {
    if (e.kind === 'signature' || e.unresolved || e.source.startsWith(BUILD_SOURCE)) continue;
    if (!/^sha256:[0-9a-f]{64}$/.test(e.digest)) continue; // unpinned, or a digest cosign's tags do not name
    let registry: string;
    let repository: string;
    try {
      ({ registry, repository } = parseReference(e.source));
    } catch {
      continue; // not a registry reference: nothing to look up
    }
    const key = `${registry}/${repository}`;
    let repo = repos.get(key);
    if (!repo) repos.set(key, (repo = { registry, repository, byDigest: new Map() }));
    const same = repo.byDigest.get(e.digest);
    if (same) same.push(e);
    else repo.byDigest.set(e.digest, [e]);
  }
  return repos;
}

/** Read one `.sig` or referrers index and decide whether it belongs to `digest`. */
async function readAttachment(
  client: RegistryClient,
  repo: SourceRepo,
  digest: string,
  kind: Attachment,
  images: PlanEntry[],
  checks: { earlier: SignatureChecks; now: SignatureChecks },
  probing = false,
): Promise<SigOutcome | undefined> {
  const tag = kind === 'sig' ? cosignTag(digest) : referrersTag(digest);
  const at = `${repo.registry}/${repo.repository}:${tag}`;
  const origins = [...new Set(images.map((e) => e.origin))].join(', ');
  try {
    const m = await client.getManifest(repo.repository, tag);
    const key = `${repo.registry}/${repo.repository}@${m.digest}>${digest}`;
    const check =
      checks.now.get(key) ??
      checks.earlier.get(key) ??
      (kind === 'sig'
        ? await checkPayloads(client, repo, m.bytes, digest, at)
        : await checkReferrers(client, repo, m.bytes, digest, at));
    checks.now.set(key, check);
    if (check.why === undefined)
      return { ok: true, found: { tag, manifestDigest: m.digest, signatures: check.matching } };
    const what = kind === 'sig' ? 'a signature' : 'the referrers';
    return {
      ok: false,
      warning: `${origins}: ${at} is not ${what} of ${digest} (${check.why}); it is not copied`,
    };
  } catch (e) {
    if (!(e instanceof AirgapError)) throw e;
    // Asked for without a listing: no such tag means the image is not signed.
    if (probing && e instanceof RegistryError && e.status === 404) return undefined;
    const what = kind === 'sig' ? 'Sigstore signature' : 'referrers index';
    return { ok: false, warning: `${origins}: cannot read its ${what} ${at}: ${e.message}` };
  }
}

/**
 * A referrers index belongs to `digest` when every artifact in it has `digest` as its subject and
 * every simple-signing signature among them names `digest`. Counts those signatures.
 */
async function checkReferrers(
  client: RegistryClient,
  repo: SourceRepo,
  indexBytes: Uint8Array,
  digest: string,
  at: string,
): Promise<SignatureCheck> {
  const index = parseManifest(Buffer.from(indexBytes), undefined, at);
  if (index.kind !== 'index')
    return { matching: 0, why: 'it is an image manifest, not an index of referrers' };
  if (index.manifests.length > MAX_REFERRERS)
    return {
      matching: 0,
      why: `it lists ${index.manifests.length} artifacts, more than the ${MAX_REFERRERS} read`,
    };
  let matching = 0;
  for (const d of index.manifests) {
    const m = await client.getManifest(repo.repository, d.digest);
    const artifact = parseManifest(m.bytes, m.mediaType || d.mediaType, `${at} artifact ${d.digest}`);
    if (artifact.kind !== 'image' || artifact.subject?.digest !== digest) {
      const subject = artifact.kind === 'image' ? (artifact.subject?.digest ?? 'none') : 'an index';
      return { matching: 0, why: `its artifact ${d.digest} has the subject ${subject}` };
    }
    const sigs = await checkPayloads(client, repo, m.bytes, digest, `${at} artifact ${d.digest}`);
    const hasSignatures = artifact.layers.some((l) => l.mediaType === COSIGN_SIGNATURE_MEDIA_TYPE);
    if (hasSignatures && sigs.why !== undefined) return { matching: 0, why: sigs.why };
    matching += sigs.matching;
  }
  return { matching };
}

/** Read a `.sig` manifest's payloads and count those that name `digest`. */
async function checkPayloads(
  client: RegistryClient,
  repo: SourceRepo,
  manifest: Uint8Array,
  digest: string,
  at: string,
): Promise<SignatureCheck> {
  const sigs = await readCosignSignatures(
    manifest,
    (d, size) => client.getBlobBytes(repo.repository, d, size),
    at,
  );
  const problems: string[] = [];
  let matching = 0;
  for (const s of sigs) {
    const problem = s.claim
      ? claimProblem(s.claim, { digest, type: COSIGN_SIGNATURE_TYPE })
      : (s.claimError ?? 'no claim');
    if (problem === undefined) matching++;
    else problems.push(problem);
  }
  if (matching > 0) return { matching };
  return {
    matching: 0,
    why: problems.length > 0 ? [...new Set(problems)].join('; ') : 'it holds no simple-signing layer',
  };
}

/** The plan entry that copies a found signature next to one destination of the image. */
function signatureEntry(repo: SourceRepo, image: PlanEntry, found: SignedImage): PlanEntry {
  const name = `${repo.registry}/${repo.repository}`;
  return {
    kind: 'signature',
    origin: `${name}:${found.tag}`,
    source: `${name}@${found.manifestDigest}`,
    digest: found.manifestDigest,
    destRepo: image.destRepo,
    destTag: found.tag,
    byTag: false,
    byDigest: false,
    context: `${found.tag.endsWith(COSIGN_TAG_SUFFIX) ? 'signature' : 'referrers'} of ${image.context}`,
    signs: image.digest || undefined, // only resolved images are looked up
  };
}

/**
 * Look up the Sigstore signatures of a plan's images: one tag listing per source repository, then
 * the matched `.sig` manifests. Returns the signature entries (one per image digest and destination
 * repository, by source repository in plan order), the signed digests, and warnings for
 * repositories that refused their tag list and for `.sig` tags that are not signatures of the image
 * they are named after.
 */
export async function discoverSignatures(
  images: PlanEntry[],
  clientFor: (registry: string) => RegistryClient,
  opts: DiscoverOptions = {},
): Promise<DiscoveredSignatures> {
  const limit = new Limiter(opts.concurrency ?? 16);
  const checks = {
    earlier: opts.checks ?? new Map<string, SignatureCheck>(),
    now: new Map<string, SignatureCheck>(),
  };
  const repos = [...groupBySourceRepo(images).values()];
  const perRepo = await Promise.all(
    repos.map(async (repo) => {
      const client = clientFor(repo.registry);
      // One listing finds every signature of the repository; but a listing of more pages than there
      // are images to look up costs more than asking for each image's `.sig` tag, so stop there.
      let tags: Set<string> | undefined;
      try {
        const listed = await limit.run(() =>
          client.listTagPages(repo.repository, opts.pageSize ?? 1000, repo.byDigest.size),
        );
        tags = listed.complete ? new Set(listed.tags) : undefined;
      } catch (e) {
        if (!(e instanceof AirgapError)) throw e;
        // A repository whose images were all pushed by digest has no tags, and distribution says
        // NAME_UNKNOWN for its tag list: then it has no `.sig` tag either.
        if (e instanceof RegistryError && e.hasRegistryCode('NAME_UNKNOWN'))
          return { repo, outcomes: new Map<string, SigOutcome[]>(), warning: undefined };
        const n = repo.byDigest.size;
        return {
          repo,
          outcomes: new Map<string, SigOutcome[]>(),
          warning:
            `${repo.registry}/${repo.repository}: its tags cannot be listed, so the Sigstore signatures of its ` +
            `${n} image${n === 1 ? '' : 's'} were not looked up: ${e.message}`,
        };
      }
      // Each image's `.sig` and referrers index, when the listing shows them (probed: the `.sig` only).
      const wanted: [string, PlanEntry[], Attachment][] = [];
      for (const [digest, planned] of repo.byDigest) {
        if (!tags || tags.has(cosignTag(digest))) wanted.push([digest, planned, 'sig']);
        if (tags?.has(referrersTag(digest))) wanted.push([digest, planned, 'referrers']);
      }
      const outcomes = new Map<string, SigOutcome[]>();
      await Promise.all(
        wanted.map(async ([digest, planned, kind]) => {
          const outcome = await limit.run(() =>
            readAttachment(client, repo, digest, kind, planned, checks, !tags),
          );
          if (outcome) outcomes.set(digest, [...(outcomes.get(digest) ?? []), outcome]);
        }),
      );
      return { repo, outcomes, warning: undefined };
    }),
  );

  const result: DiscoveredSignatures = { entries: [], signed: new Map(), warnings: [], checks: checks.now };
  const destinations = new Set<string>();
  for (const { repo, outcomes, warning } of perRepo) {
    if (warning) result.warnings.push(warning);
    for (const [digest, planned] of repo.byDigest) {
      // `.sig` first, then the referrers index: the plan's order does not depend on timing.
      const found = (outcomes.get(digest) ?? []).sort((a, b) => order(a) - order(b));
      for (const outcome of found) {
        if (!outcome.ok) {
          result.warnings.push(outcome.warning);
          continue;
        }
        if (outcome.found.signatures > 0 && !result.signed.has(digest))
          result.signed.set(digest, outcome.found);
        for (const image of planned) {
          const key = `${image.destRepo}@${outcome.found.tag}`;
          if (destinations.has(key)) continue; // the same image twice in one repository: one tag
          destinations.add(key);
          result.entries.push(signatureEntry(repo, image, outcome.found));
        }
      }
    }
  }
  return result;
}
