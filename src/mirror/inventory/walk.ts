/**
 * Taking an inventory: every repository at or below the prefix (the registry's catalog, or the
 * repositories a workspace plan names where the registry does not serve its catalog), every tag,
 * each tag's manifest and, for an index, each child; every manifest's blobs with their sizes.
 *
 * Each manifest is read once per repository (by tag to learn its digest, then never again by that
 * digest), every request bounded by one limiter. Only "not there" (404) is absence: a tag deleted
 * during the walk, a child an --arch copy left out. Any other failed read is a problem, named in
 * the document (complete: false), and the walk goes on with the rest.
 */
import { AirgapError, messageOf } from '../../util/errors.js';
import { Limiter, Once } from '../../util/limit.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import { blobsOf, parseManifest, type ManifestData } from '../manifest.js';
import type { RegistryClient } from '../registry/client.js';
import { MirrorError } from '../errors.js';
import { RegistryError } from '../registry/errors.js';
import { inventoryDocument, type InventoryDocument, type InventoryFindings } from './format.js';

/** Problems listed one by one; past this many, one line counts the rest (a registry that refuses everything). */
const MAX_PROBLEMS = 200;

export interface InventoryWalkOptions {
  client: RegistryClient;
  /** `docker://host[:port][/prefix]`: what the document says it was taken of. */
  destination: string;
  /** The prefix below which repositories are read ('' for the whole registry). */
  prefix: string;
  /** Requests in flight at once (default 16). */
  parallel?: number;
  progress?: ProgressSink;
  /**
   * Where the registry does not list its repositories to us (401/403/404/405 on the catalog): the
   * repositories to read instead (a workspace plan's, at this destination) and the note saying so.
   * Without it such a registry cannot be walked (INVENTORY_INCOMPLETE, with how to give a plan).
   */
  catalogRefused?: (e: RegistryError) => Promise<{ repositories: string[]; note: string }>;
  /** The airgap release (takenBy). */
  version?: string;
}

export interface InventoryTaken {
  document: InventoryDocument;
  /** What the reader should know that is not a failed read (the catalog refused, the plan used instead). */
  notes: string[];
  /** The first read that failed, as it was thrown (the document's problems say them all). */
  firstFailure?: unknown;
}

type FoundManifest = InventoryFindings['manifests'] extends Iterable<infer M> ? M : never;

const notFound = (e: unknown) => e instanceof RegistryError && e.status === 404;
const firstLine = (e: unknown) => messageOf(e).split('\n')[0]!;

/** Walk the registry below the prefix into an inventory document. */
export async function takeInventory(o: InventoryWalkOptions): Promise<InventoryTaken> {
  const progress = o.progress ?? noProgress;
  const takenAt = new Date();
  const limit = new Limiter(o.parallel ?? 16);
  const notes: string[] = [];
  const problems: string[] = [];
  let untold = 0;
  let firstFailure: unknown;
  const failed = (what: string, e: unknown) => {
    firstFailure ??= e;
    if (problems.length < MAX_PROBLEMS) problems.push(`${what}: ${firstLine(e)}`);
    else untold++;
  };
  progress({ type: 'phase', name: 'inventory', detail: o.destination });
  const candidates = await repositoriesOf(o, notes);
  progress({ type: 'items-total', total: candidates.length });

  const repositories: string[] = [];
  const manifests: FoundManifest[] = [];
  const tags: { repository: string; tag: string; digest: string }[] = [];
  const seen = new Once<string | undefined>();

  /** Record one manifest read (and its children, read by digest); its digest. */
  const record = async (repo: string, m: ManifestData, what: string): Promise<void> => {
    let parsed;
    try {
      parsed = parseManifest(m.bytes, m.mediaType, what);
    } catch (e) {
      failed(what, e);
      return;
    }
    if (parsed.kind === 'image') {
      const blobs = blobsOf(parsed).map((b) => ({ digest: b.digest, size: b.size }));
      manifests.push({ repository: repo, digest: m.digest, size: m.bytes.length, blobs, children: [] });
      return;
    }
    const children = await Promise.all(
      parsed.manifests.map((c) => byDigest(repo, c.digest)), // undefined: not there, or a problem said
    );
    manifests.push({
      repository: repo,
      digest: m.digest,
      size: m.bytes.length,
      blobs: [],
      children: children.filter((c): c is string => c !== undefined),
    });
  };

  /** A manifest by digest, read and recorded once per repository; undefined when it is not there or unreadable. */
  const byDigest = (repo: string, digest: string): Promise<string | undefined> =>
    seen.get(`${repo}@${digest}`, async () => {
      const what = `${repo}@${digest}`;
      let m: ManifestData;
      try {
        m = await limit.run(() => o.client.getManifest(repo, digest));
      } catch (e) {
        if (!notFound(e)) failed(what, e); // 404: a sparse copy left it out
        return undefined;
      }
      await record(repo, m, what);
      return digest;
    });

  const byTag = async (repo: string, tag: string): Promise<void> => {
    const what = `${repo}:${tag}`;
    let m: ManifestData;
    try {
      m = await limit.run(() => o.client.getManifest(repo, tag));
    } catch (e) {
      if (!notFound(e)) failed(what, e); // 404: deleted since its tag was listed
      return;
    }
    await seen.get(`${repo}@${m.digest}`, async () => {
      await record(repo, m, what);
      return m.digest;
    });
    tags.push({ repository: repo, tag, digest: m.digest });
  };

  await Promise.all(
    candidates.map(async (repo) => {
      let list: string[];
      try {
        list = await limit.run(() => o.client.listTags(repo));
      } catch (e) {
        // 404: a repository deleted since the catalog was read, or one a plan names that is not here.
        if (!notFound(e)) failed(`${repo}: the tag list`, e);
        progress({ type: 'item-done', ok: notFound(e), name: repo });
        return;
      }
      repositories.push(repo);
      await Promise.all(list.map((tag) => byTag(repo, tag)));
      progress({ type: 'item-done', ok: true, name: repo });
    }),
  );
  if (untold > 0) problems.push(`… and ${untold} more failed read(s) like those`);
  // A manifest whose record failed (unparseable) is not in `manifests`: its tag is dropped by
  // inventoryDocument, and the problem says which.
  return {
    document: inventoryDocument({
      destination: o.destination,
      takenAt,
      ...(o.version ? { takenBy: `airgap ${o.version}` } : {}),
      problems,
      repositories,
      manifests,
      tags,
    }),
    notes,
    ...(firstFailure !== undefined ? { firstFailure } : {}),
  };
}

/**
 * The repositories to walk: the catalog's at or below the prefix; where the registry does not
 * serve the catalog to us, those `catalogRefused` gives (with its note), and without it, an error.
 */
async function repositoriesOf(o: InventoryWalkOptions, notes: string[]): Promise<string[]> {
  const under = (r: string) => !o.prefix || r === o.prefix || r.startsWith(`${o.prefix}/`);
  try {
    return (await o.client.listRepositories(o.prefix || 'airgap')).filter(under).sort();
  } catch (e) {
    // Only a refusal of the catalog leaves the walk to the plan; any other failure stops it.
    if (!(e instanceof RegistryError && [401, 403, 404, 405].includes(e.status ?? 0))) throw e;
    if (!o.catalogRefused) {
      throw new AirgapError(
        MirrorError.INVENTORY_INCOMPLETE,
        `${o.client.registry} does not list its repositories to these credentials (${firstLine(e)}): the inventory cannot know what it holds`,
        {
          hint: 'give the workspace that mirrored to it (--workspace file://<dir>) or its plan (--plan <plan.json>): their repositories are read instead; or credentials allowed to read the catalog (registry:catalog:*)',
          cause: e,
        },
      );
    }
    const instead = await o.catalogRefused(e);
    notes.push(instead.note);
    return [...new Set(instead.repositories.filter(under))].sort();
  }
}
