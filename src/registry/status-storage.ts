/**
 * The registry's storage on disk: the bytes under its data directory (as `du` counts them: blocks
 * allocated, each hard-linked file once, symlinks not followed) and the space left on its
 * filesystem. The walk goes one directory at a time with a bounded number of lstat calls in flight.
 */
import { lstat, opendir, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound } from '../util/fs.js';
import { messageOf } from '../util/errors.js';

export interface StorageStatus {
  dataDir: string;
  /** False when the data directory does not exist. */
  exists: boolean;
  /** Bytes allocated under it (a lower bound when `complete` is false). */
  usedBytes: number;
  files: number;
  /** Every directory and file under it was read. */
  complete: boolean;
  error?: string;
  free: { availableBytes: number; totalBytes: number } | null;
  freeError?: string;
}

/** lstat calls in flight at once. */
const LSTAT_BATCH = 32;

/** Bytes allocated under `dir` (see the file comment); the first error ends the walk as incomplete. */
async function diskUsage(
  dir: string,
): Promise<{ exists: boolean; usedBytes: number; files: number; error?: string }> {
  try {
    const top = await lstat(dir);
    if (!top.isDirectory())
      return { exists: true, usedBytes: 0, files: 0, error: `${dir} is not a directory` };
  } catch (e) {
    if (isNotFound(e)) return { exists: false, usedBytes: 0, files: 0 };
    return { exists: true, usedBytes: 0, files: 0, error: messageOf(e) };
  }
  const seen = new Set<string>();
  const stack = [dir];
  let usedBytes = 0;
  let files = 0;
  try {
    while (stack.length) {
      const d = stack.pop()!;
      const names: string[] = [];
      try {
        for await (const entry of await opendir(d)) names.push(entry.name);
      } catch (e) {
        // A directory the registry removed while we walked (an upload finished): gone, not unread.
        if (isNotFound(e) && d !== dir) continue;
        throw e;
      }
      for (let i = 0; i < names.length; i += LSTAT_BATCH) {
        const batch = names.slice(i, i + LSTAT_BATCH).map((n) => join(d, n));
        const stats = await Promise.all(
          batch.map((p) =>
            lstat(p, { bigint: false }).catch((e: unknown) => {
              if (isNotFound(e)) return undefined;
              throw e;
            }),
          ),
        );
        stats.forEach((s, k) => {
          if (!s) return;
          if (s.nlink > 1 && !s.isDirectory()) {
            const id = `${s.dev}:${s.ino}`;
            if (seen.has(id)) return;
            seen.add(id);
          }
          usedBytes += s.blocks * 512;
          if (s.isDirectory()) stack.push(batch[k]!);
          else files++;
        });
      }
    }
  } catch (e) {
    return { exists: true, usedBytes, files, error: messageOf(e) };
  }
  return { exists: true, usedBytes, files };
}

/** The data directory's usage and its filesystem's free space. */
export async function measureStorage(dataDir: string): Promise<StorageStatus> {
  const [used, free] = await Promise.all([
    diskUsage(dataDir),
    statfs(dataDir).then(
      (s) => ({ availableBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize }),
      (e: unknown) => (isNotFound(e) ? null : new Error(messageOf(e))),
    ),
  ]);
  return {
    dataDir,
    exists: used.exists,
    usedBytes: used.usedBytes,
    files: used.files,
    complete: !used.error,
    ...(used.error ? { error: used.error } : {}),
    free: free instanceof Error ? null : free,
    ...(free instanceof Error ? { freeError: free.message } : {}),
  };
}
