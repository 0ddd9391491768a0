/**
 * From a request target to an open file of the served tree, refusing everything that could leave
 * it. The path is checked before the filesystem is touched: percent-decoding per segment, and `..`,
 * `.`, encoded `/` or `\`, NUL bytes and non-origin-form targets are 400. Names starting with `.`
 * are not served (half-written downloads live there). The resolved file is then checked with
 * realpath to be inside the root, and opened with O_NOFOLLOW, so a symlink that leaves the root is
 * 404 like a file that does not exist.
 */
import { close, constants as fsc, fstat, open, type Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { usageError } from '../../util/errors.js';
import { ServerError } from '../errors.js';

/**
 * The directory to serve, as its real path. A usage error (exit 2) when it does not exist, is not
 * a directory or cannot be read.
 */
export async function resolveServeRoot(dir: string, flag = '--dir'): Promise<string> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw usageError(
      ServerError.SERVE_DIR_MISSING,
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `the directory ${dir} does not exist`
        : `cannot open the directory ${dir}: ${(e as Error).message}`,
      { where: `${flag} ${dir}`, hint: 'give the directory that holds the boot images (its images/ folder)' },
    );
  }
  const st = await stat(real);
  if (!st.isDirectory())
    throw usageError(ServerError.SERVE_DIR_NOT_DIR, `${dir} is not a directory`, {
      where: `${flag} ${dir}`,
      hint: 'give the directory that holds the files, not a file in it',
    });
  try {
    await readdir(real);
  } catch (e) {
    throw usageError(
      ServerError.SERVE_DIR_UNREADABLE,
      `cannot read the directory ${dir}: ${(e as Error).message}`,
      {
        where: `${flag} ${dir}`,
        hint: 'check its permissions for the user that runs airgap',
      },
    );
  }
  return real;
}

/** The path segments of a request target, decoded and checked; or why it is refused (400). */
export function parseTarget(
  url: string,
): { ok: true; segments: string[]; trailingSlash: boolean; query: string } | { ok: false; problem: string } {
  if (!url.startsWith('/')) return { ok: false, problem: 'not an origin-form request target' };
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    if (raw === '') continue; // leading, trailing and repeated slashes
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      // A malformed percent escape (URIError): refused, said so.
      return { ok: false, problem: 'bad percent-encoding in the path' };
    }
    if (s.includes('\0')) return { ok: false, problem: 'NUL byte in the path' };
    if (s.includes('/') || s.includes('\\')) return { ok: false, problem: 'encoded slash in the path' };
    if (s === '.' || s === '..') return { ok: false, problem: 'dot segment in the path (traversal)' };
    segments.push(s);
  }
  return { ok: true, segments, trailingSlash: rawPath.endsWith('/'), query };
}

/** Whether the real path `real` is `root` or below it. */
export function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root === sep ? root : root + sep);
}

/** errno of a filesystem error → status and what the operator reads. */
export function fsFailure(e: unknown, what: string): [number, string] {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG')
    return [404, `${what}: ${code}`];
  if (code === 'EACCES' || code === 'EPERM') return [403, `${what}: permission denied (${code})`];
  return [500, `${what}: ${(e as Error).message}`];
}

const openFlags = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK; // libuv adds O_CLOEXEC

const openFd = (path: string) =>
  new Promise<number>((resolve, reject) =>
    open(path, openFlags, (err, fd) => (err ? reject(err) : resolve(fd))),
  );
export const statFd = (fd: number) =>
  new Promise<Stats>((resolve, reject) => fstat(fd, (err, st) => (err ? reject(err) : resolve(st))));
export const closeFd = (fd: number) => close(fd, () => undefined);

/**
 * Open what the checked `segments` name under `root`: its real path and a descriptor, or the
 * status and problem to answer with (hidden names, a path that does not resolve or leaves the root,
 * a file that cannot be opened).
 */
export async function openTarget(
  root: string,
  segments: string[],
): Promise<{ ok: true; real: string; fd: number } | { ok: false; status: number; problem: string }> {
  if (segments.some((s) => s.startsWith('.')))
    return { ok: false, status: 404, problem: 'hidden name (starting with a dot) in the path' };
  let real: string;
  try {
    real = await realpath(join(root, ...segments));
  } catch (e) {
    const [status, problem] = fsFailure(e, 'resolving the path');
    return { ok: false, status, problem };
  }
  if (!isInside(root, real))
    return { ok: false, status: 404, problem: `resolves outside the served directory (${real})` };
  try {
    // O_NOFOLLOW: the real path has no symlink left; O_NONBLOCK: a FIFO must not block the open.
    return { ok: true, real, fd: await openFd(real) };
  } catch (e) {
    const [status, problem] = fsFailure(e, 'opening the file');
    return { ok: false, status, problem };
  }
}
