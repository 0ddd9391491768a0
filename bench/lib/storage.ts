/**
 * What a registry holds, read from its filesystem storage (distribution's layout under
 * `docker/registry/v2`): the bytes of its blob store and every `repository:tag` with the digest it
 * points at. Independent of any client, so two destinations written by different tools can be
 * compared in full.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

const V2 = join('docker', 'registry', 'v2');

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Bytes of every blob (layers, configs, manifests) in the registry's store, each counted once. */
export async function storedBlobBytes(storageDir: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const e of await entries(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name === 'data') total += (await stat(p)).size;
    }
  };
  await walk(join(storageDir, V2, 'blobs'));
  return total;
}

/** Every tag in the registry: `repository:tag` → the manifest digest it points at. */
export async function storedTags(storageDir: string): Promise<Map<string, string>> {
  const tags = new Map<string, string>();
  const walk = async (dir: string, repo: string): Promise<void> => {
    for (const e of await entries(dir)) {
      if (!e.isDirectory()) continue;
      if (e.name === '_manifests') {
        const tagDir = join(dir, e.name, 'tags');
        for (const t of await entries(tagDir)) {
          const link = join(tagDir, t.name, 'current', 'link');
          tags.set(`${repo}:${t.name}`, (await readFile(link, 'utf8')).trim());
        }
      } else if (!e.name.startsWith('_')) {
        await walk(join(dir, e.name), repo ? `${repo}/${e.name}` : e.name);
      }
    }
  };
  await walk(join(storageDir, V2, 'repositories'), '');
  return tags;
}
