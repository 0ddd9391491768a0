import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A temp name beside `path`, so the final rename stays on one filesystem and is atomic. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
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
    throw e;
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
    throw e;
  }
}
