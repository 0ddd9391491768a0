/**
 * A file-system failure said as its cause, with the path: a read-only file system, a permission,
 * a full disk, too many open files. Node reports some of these under another name: a recursive
 * mkdir below a read-only mount fails with ENOENT, so a missing path is checked against its nearest
 * existing ancestor before it is called missing. Used where an error leaves airgap (cli/command.ts)
 * and where one image's failure is recorded (the copy engine), so no such failure is ever an
 * INTERNAL error or a bare errno.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { AirgapError, CommonError } from './errors.js';

/**
 * `e` with `path` recorded when it is a file-system error that names none (a write to an open file
 * or handle: ENOSPC, EIO), so whoever explains it can say where. Returns `e` itself.
 */
export function withPath(e: unknown, path: string): unknown {
  const x = e as NodeJS.ErrnoException | undefined;
  if (x && typeof x === 'object' && typeof x.code === 'string' && typeof x.syscall === 'string' && !x.path)
    x.path = path;
  return e;
}

type Errno = NodeJS.ErrnoException & { path?: string; dest?: string; syscall?: string };

function errnoOf(e: unknown): Errno | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const x = cur as Errno;
    if (typeof x.code === 'string' && typeof x.syscall === 'string') return x;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The nearest ancestor of `path` that exists, and why it cannot be written to (undefined: it can). */
function ancestorProblem(path: string): { dir: string; code?: string } {
  let dir = dirname(path);
  for (let i = 0; i < 64; i++) {
    try {
      statSync(dir);
      try {
        accessSync(dir, constants.W_OK);
        return { dir };
      } catch (e) {
        return { dir, code: (e as NodeJS.ErrnoException).code };
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Only a directory that is not there sends the search up; anything else is the problem here.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { dir, code };
      const up = dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  return { dir };
}

const WRITES = new Set([
  'mkdir',
  'open',
  'write',
  'rename',
  'copyfile',
  'link',
  'symlink',
  'unlink',
  'rmdir',
]);

/**
 * The AirgapError a file-system failure stands for, or undefined when `e` is not one. The path
 * comes from the error ({@link withPath}).
 */
export function explainFsError(e: unknown): AirgapError | undefined {
  const x = errnoOf(e);
  if (!x) return undefined;
  const path = x.path ?? '(a file whose path the system did not say)';
  const make = (code: string, message: string, hint: string) =>
    new AirgapError(code, message, { hint, cause: e });
  let code = x.code;
  let at = path;
  if (code === 'ENOENT' && x.syscall && WRITES.has(x.syscall) && x.path) {
    // A recursive mkdir under a read-only mount says ENOENT: ask the directory that exists.
    const anc = ancestorProblem(x.path);
    if (anc.code) {
      code = anc.code;
      at = anc.dir;
    }
  }
  switch (code) {
    case 'EROFS':
      return make(
        CommonError.FS_READ_ONLY,
        `${at} is on a read-only file system (cannot ${x.syscall} ${path})`,
        'choose a directory on a writable file system, or remount it read-write',
      );
    case 'EACCES':
    case 'EPERM':
      return make(
        CommonError.FS_PERMISSION,
        `permission denied: cannot ${x.syscall} ${at === path ? path : `${path} (in ${at})`}`,
        'check the owner and mode of the directory (and any immutable attribute), or choose one this user can write',
      );
    case 'ENOSPC':
    case 'EDQUOT':
      return make(
        CommonError.FS_NO_SPACE,
        `no space left on the device holding ${path}${code === 'EDQUOT' ? ' (disk quota exceeded)' : ''}`,
        'free space there (df -h shows how much) or choose a larger file system; the run resumes where it stopped',
      );
    case 'EMFILE':
    case 'ENFILE':
      return make(
        CommonError.FS_TOO_MANY_FILES,
        `too many open files (${x.syscall} ${path})`,
        'raise the limit (ulimit -n 65536) or lower --parallel',
      );
    case 'EIO':
      return make(
        CommonError.FS_IO,
        `an I/O error on the device holding ${path}`,
        'the disk or its connection is failing; check dmesg',
      );
    case 'ENOENT':
      return make(CommonError.FS_PATH, `${path} does not exist`, 'check the path');
    case 'ENOTDIR':
      return make(CommonError.FS_PATH, `a part of ${path} is a file, not a directory`, 'check the path');
    case 'EISDIR':
      return make(CommonError.FS_PATH, `${path} is a directory, not a file`, 'check the path');
    default:
      return undefined;
  }
}
