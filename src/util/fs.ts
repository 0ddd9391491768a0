import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Dirent, Stats } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { withPath } from './fs-errors.js';
import { processAlive } from './lock.js';

/**
 * Whether `e` says the path does not exist (ENOENT): the one file-system failure that means
 * "not there". A permission, an I/O error or a path through a file (ENOTDIR) is not absence.
 */
export function isNotFound(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * The status of `path`, or undefined when nothing is there (ENOENT). Any other failure (a
 * permission, an I/O error) is thrown as it is, with its path: never read as "absent".
 */
export async function statIfExists(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** A temp name beside `path`, so the final rename stays on one filesystem and is atomic. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** A temp name {@link tempPathFor} made, with the pid of its writer. */
const TEMP_NAME = /^\..+\.tmp-(\d+)-[0-9a-f]{8}$/;

/**
 * Remove the temp files {@link tempPathFor} left in `dir` by writers that are gone (a run killed
 * with -9 between write and rename); a live process's are left alone. A directory that does not
 * exist has none. Returns how many were removed.
 */
export async function sweepStaleTemps(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw withPath(e, dir);
  }
  let removed = 0;
  for (const name of names) {
    const pid = Number(TEMP_NAME.exec(name)?.[1] ?? 0);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    await rm(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

export interface WriteOptions {
  /** File mode; use 0o600 for anything holding a secret. */
  mode?: number;
}

/** Write a whole file atomically: temp file, fsync, rename. Nothing half-written survives a crash. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteOptions = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await writeFile(tmp, data, { mode: options.mode ?? 0o644 });
    const fh = await open(tmp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw withPath(e, path);
  }
}

/** Stream into a file atomically. `check` runs after the data is flushed and before the rename; throw to discard. */
export async function writeStreamAtomic(
  path: string,
  source: Readable,
  options: WriteOptions & { check?: () => void | Promise<void> } = {},
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  try {
    await pipeline(source, createWriteStream(tmp, { mode: options.mode ?? 0o644 }));
    await options.check?.();
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw withPath(e, path);
  }
}

/** One file of a set written together by {@link writeFilesAtomic}. */
export interface FileToWrite {
  path: string;
  data: string | Uint8Array;
  /** 0o600 for anything holding a secret. */
  mode?: number;
}

/**
 * Write several files as one step: refuse (before writing anything) when one exists and `force` is
 * not set, write every file to a temp name, then rename them all. A failure removes the temps, so a
 * set is never left half-written (a crash between two renames can leave some new files beside old
 * ones, never a partial file).
 */
export async function writeFilesAtomic(
  files: readonly FileToWrite[],
  opts: { force?: boolean; onExisting?: (path: string) => Error } = {},
): Promise<void> {
  if (!opts.force) {
    for (const f of files) {
      if (await statIfExists(f.path)) throw opts.onExisting?.(f.path) ?? new Error(`${f.path} exists`);
    }
  }
  const temps: { tmp: string; path: string }[] = [];
  try {
    for (const f of files) {
      await mkdir(dirname(f.path), { recursive: true });
      const tmp = tempPathFor(f.path);
      temps.push({ tmp, path: f.path });
      await writeFile(tmp, f.data, { mode: f.mode ?? 0o644 });
      await chmod(tmp, f.mode ?? 0o644); // the mode even where a umask would widen or narrow it
      const fh = await open(tmp, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
    for (const t of temps) await rename(t.tmp, t.path);
  } catch (e) {
    for (const t of temps) await rm(t.tmp, { force: true });
    throw e;
  }
}

/** An entry a tree from outside must not hold: a symbolic link, or anything not a file or directory. */
export interface UnsafeEntry {
  path: string;
  kind: 'symbolic link' | 'special file';
}

/**
 * Every symbolic link and special file (FIFO, socket, device) in a tree, without following any:
 * what must be refused before writing into (or reading from) a directory that came from outside.
 * A missing `dir` has none. Stops after `limit` findings.
 */
export async function findUnsafeEntries(dir: string, limit = 20): Promise<UnsafeEntry[]> {
  const found: UnsafeEntry[] = [];
  const visit = async (path: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    for (const e of entries) {
      if (found.length >= limit) return;
      const p = join(path, e.name);
      if (e.isSymbolicLink()) found.push({ path: p, kind: 'symbolic link' });
      else if (e.isDirectory()) await visit(p);
      else if (!e.isFile()) found.push({ path: p, kind: 'special file' });
    }
  };
  let top;
  try {
    top = await lstat(dir);
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
  if (top.isSymbolicLink()) return [{ path: dir, kind: 'symbolic link' }];
  if (!top.isDirectory()) return top.isFile() ? [] : [{ path: dir, kind: 'special file' }];
  await visit(dir);
  return found;
}
