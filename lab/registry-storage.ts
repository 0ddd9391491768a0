/**
 * Seed a lab registry by writing its storage instead of pushing: what distribution's filesystem
 * driver would have written after the pushes, made from an OCI layout in a fraction of the time.
 * Pushing 15,000 small images through TLS took more than 15 minutes on two cores; a benchmark
 * that measures reading them must not wait for that.
 *
 * The layout (distribution 2.x, `registry/storage/paths.go`), below `docker/registry/v2/`:
 *   blobs/sha256/<hex[0:2]>/<hex>/data                          every blob and manifest
 *   repositories/<repo>/_layers/sha256/<hex>/link               config and layers of the repo
 *   repositories/<repo>/_manifests/revisions/sha256/<hex>/link  every manifest of the repo
 *   repositories/<repo>/_manifests/tags/<tag>/current/link      what the tag points at
 *   repositories/<repo>/_manifests/tags/<tag>/index/sha256/<hex>/link
 * Each link file holds the digest. Safe while the registry runs with no blob-descriptor cache
 * (the lab configures none): every request reads the files.
 */
import { copyFile, link, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OciLayout } from '../src/mirror/layout/store.js';

export interface StorageEntry {
  repo: string;
  /** A tag, or the digest itself for an image kept by digest only. */
  ref: string;
  digest: string;
}

interface Node {
  mediaType?: string;
  manifests?: { digest: string }[];
  config?: { digest: string };
  layers?: { digest: string }[];
}

/** Write `entries` (and everything their manifests name) into the storage; returns bytes of unique blobs. */
export async function writeRegistryStorage(
  storageDir: string,
  layout: OciLayout,
  entries: StorageEntry[],
): Promise<number> {
  const v2 = join(storageDir, 'docker', 'registry', 'v2');
  const blobsDone = new Map<string, Promise<number>>();
  const linksDone = new Set<string>();
  const hex = (d: string) => d.slice('sha256:'.length);

  const blob = (digest: string): Promise<number> => {
    let p = blobsDone.get(digest);
    if (!p) {
      p = (async () => {
        const dir = join(v2, 'blobs', 'sha256', hex(digest).slice(0, 2), hex(digest));
        await mkdir(dir, { recursive: true });
        const from = layout.blobPath(digest);
        // Same file system (both in the temporary directory): a hard link; else a copy.
        await link(from, join(dir, 'data')).catch(() => copyFile(from, join(dir, 'data')));
        return (await stat(from)).size;
      })();
      blobsDone.set(digest, p);
    }
    return p;
  };
  const linkFile = async (path: string, digest: string): Promise<void> => {
    if (linksDone.has(path)) return;
    linksDone.add(path);
    await mkdir(path, { recursive: true });
    await writeFile(join(path, 'link'), digest);
  };
  const repoDir = (repo: string) => join(v2, 'repositories', ...repo.split('/'));

  const manifest = async (repo: string, digest: string): Promise<void> => {
    await blob(digest);
    await linkFile(join(repoDir(repo), '_manifests', 'revisions', 'sha256', hex(digest)), digest);
    const doc = JSON.parse((await layout.readBytes(digest)).toString('utf8')) as Node;
    for (const child of doc.manifests ?? []) await manifest(repo, child.digest);
    for (const d of [doc.config, ...(doc.layers ?? [])]) {
      if (!d) continue;
      await blob(d.digest);
      await linkFile(join(repoDir(repo), '_layers', 'sha256', hex(d.digest)), d.digest);
    }
  };

  const BATCH = 64;
  for (let i = 0; i < entries.length; i += BATCH) {
    await Promise.all(
      entries.slice(i, i + BATCH).map(async (e) => {
        await manifest(e.repo, e.digest);
        if (e.ref !== e.digest) {
          const tag = join(repoDir(e.repo), '_manifests', 'tags', e.ref);
          await mkdir(join(tag, 'current'), { recursive: true });
          await writeFile(join(tag, 'current', 'link'), e.digest);
          await linkFile(join(tag, 'index', 'sha256', hex(e.digest)), e.digest);
        }
      }),
    );
  }
  let bytes = 0;
  for (const p of blobsDone.values()) bytes += await p;
  return bytes;
}
