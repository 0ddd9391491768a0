/**
 * The registry's filesystem storage measured as it lies on disk: every entry under the data
 * directory by lstat (symbolic links are never followed), and the blobs distribution keeps under
 * docker/registry/v2/blobs/sha256/<2 hex>/<64 hex>/data.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isNotFound } from '../util/fs.js';

export interface StorageStats {
  /** Bytes of the regular files (blob data, link files, upload state). */
  bytes: number;
  /** Bytes allocated on disk to every entry, directories included (what `du` counts). */
  diskBytes: number;
  /** Blobs in docker/registry/v2/blobs/sha256. */
  blobs: number;
}

/** Where distribution keeps blobs, relative to the storage root. */
const BLOBS_DIR = join('docker', 'registry', 'v2', 'blobs', 'sha256');

const BLOB_DATA_RE = new RegExp(
  `^${BLOBS_DIR.split(sep).join('\\/')}\\/[0-9a-f]{2}\\/([0-9a-f]{64})\\/data$`,
);

async function entries(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (isNotFound(e)) return []; // gone meanwhile, or never made (an empty registry)
    throw e;
  }
}

/** Measure the storage under `dataDir` (none there: all zero); also each blob's data size by digest. */
export async function measureStorage(
  dataDir: string,
): Promise<{ stats: StorageStats; blobSizes: Map<string, number> }> {
  const stats: StorageStats = { bytes: 0, diskBytes: 0, blobs: 0 };
  const blobSizes = new Map<string, number>();
  const walk = async (dir: string): Promise<void> => {
    for (const ent of await entries(dir)) {
      const path = join(dir, ent.name);
      let st;
      try {
        st = await lstat(path);
      } catch (e) {
        if (isNotFound(e)) continue;
        throw e;
      }
      stats.diskBytes += st.blocks * 512;
      if (st.isDirectory()) await walk(path);
      else if (st.isFile()) {
        stats.bytes += st.size;
        const m = BLOB_DATA_RE.exec(relative(dataDir, path).split(sep).join('/'));
        if (m) blobSizes.set(`sha256:${m[1]}`, st.size);
      }
    }
  };
  await walk(dataDir);
  for (const prefix of await entries(join(dataDir, BLOBS_DIR)))
    if (prefix.isDirectory())
      stats.blobs += (await entries(join(dataDir, BLOBS_DIR, prefix.name))).filter((e) =>
        e.isDirectory(),
      ).length;
  return { stats, blobSizes };
}

/** The summed size of `digests` in `sizes`, and those it does not hold. */
export function sizeOf(sizes: Map<string, number>, digests: string[]): { bytes: number; missing: string[] } {
  let bytes = 0;
  const missing: string[] = [];
  for (const d of digests) {
    const n = sizes.get(d);
    if (n === undefined) missing.push(d);
    else bytes += n;
  }
  return { bytes, missing };
}
