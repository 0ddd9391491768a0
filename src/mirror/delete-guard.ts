/**
 * The delete phase's last look before it acts. In distribution, deleting a manifest by digest
 * removes every tag of that repository that points to it, so a tag moved onto a listed digest
 * since the list was written (a re-push, another workspace, a hand-made tag) would silently go with
 * it. Just before deleting, every repository the list touches is listed once and each of its tags
 * read: a listed manifest that a tag outside the list now points to (directly, or as a child of
 * the index the tag names) is kept, with that tag named. Any read that fails stops the delete
 * before anything is deleted: the view it would act on is incomplete.
 */
import { Limiter } from '../util/limit.js';
import { isDigest } from './digest.js';
import { parseManifest } from './manifest.js';
import type { ImageReference } from './reference.js';
import type { RegistryClient } from './registry/client.js';
import { RegistryError } from './registry/errors.js';

/** A listed manifest, parsed, with the destination tags the list means to remove with it. */
export interface GuardedItem {
  ref: ImageReference;
  /** Tags of its repository that the list deletes (they point to it now, and go with it). */
  tags: readonly string[];
}

/** The manifests a tag names: its own digest and, for an index, its children's. */
async function namedBy(client: RegistryClient, repo: string, tag: string): Promise<string[] | undefined> {
  let m;
  try {
    m = await client.getManifest(repo, tag);
  } catch (e) {
    if (e instanceof RegistryError && e.status === 404) return undefined; // untagged since the listing
    throw e;
  }
  const parsed = parseManifest(m.bytes, m.mediaType, `${repo}:${tag}`);
  return [m.digest, ...(parsed.kind === 'index' ? parsed.manifests.map((c) => c.digest) : [])];
}

/**
 * For each listed manifest (`repo@digest`) a tag outside the list now keeps, that tag
 * (`repo:tag`). One tag listing per repository touched and one manifest read per other tag.
 */
export async function tagsKeeping(
  client: RegistryClient,
  items: readonly GuardedItem[],
  parallel = 8,
): Promise<Map<string, string>> {
  const byRepo = new Map<string, { digests: Set<string>; tags: Set<string> }>();
  for (const { ref, tags } of items) {
    const r = byRepo.get(ref.repository) ?? { digests: new Set<string>(), tags: new Set<string>() };
    r.digests.add(ref.digest!);
    for (const t of tags) r.tags.add(t);
    byRepo.set(ref.repository, r);
  }
  const keeping = new Map<string, string>();
  const limit = new Limiter(parallel);
  await Promise.all(
    [...byRepo].map(async ([repo, listed]) => {
      let tags: string[];
      try {
        tags = await client.listTags(repo);
      } catch (e) {
        if (e instanceof RegistryError && e.status === 404) return; // the repository is gone: nothing left to keep
        throw e;
      }
      await Promise.all(
        tags
          .filter((t) => !listed.tags.has(t) && !isDigest(t))
          .map((tag) =>
            limit.run(async () => {
              for (const d of (await namedBy(client, repo, tag)) ?? []) {
                if (listed.digests.has(d) && !keeping.has(`${repo}@${d}`))
                  keeping.set(`${repo}@${d}`, `${repo}:${tag}`);
              }
            }),
          ),
      );
    }),
  );
  return keeping;
}
