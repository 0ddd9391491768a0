/**
 * The one place that knows where the reference material is: the real CRDs and real samples in the
 * `realdata` directory of `../shared` beside the repository. It exists on the maintainers' machines
 * and in CI, is never copied into the repository, and is absent from a plain clone: everything that
 * reads it asks here whether it is present, and says why not when it is not.
 *
 * - AIRGAP_REALDATA: the realdata directory elsewhere (a path that does not exist simulates a clone
 *   without it).
 * - AIRGAP_CRD_DIR: the CRDs alone, elsewhere (default: `crds` in the realdata directory).
 *
 * The lab (the hub simulator) and the tests use it; the product (src/) never does.
 */
import { statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const REALDATA_ENV = 'AIRGAP_REALDATA';
export const CRD_DIR_ENV = 'AIRGAP_CRD_DIR';

/** The repository root: the nearest directory above this file with a package.json (lab/ or build/lab/). */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!isFile(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
  return dir;
}

/** Whether `path` exists as `kind`; only "not there" is false, any other failure (EACCES…) is thrown. */
function exists(path: string, kind: 'file' | 'directory'): boolean {
  try {
    const st = statSync(path);
    return kind === 'file' ? st.isFile() : st.isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw e;
  }
}
const isFile = (path: string) => exists(path, 'file');

/** Where the realdata is beside the repository at `root` (this one by default): `../shared/realdata`. */
export function realdataBeside(root = repoRoot()): string {
  return resolve(root, '..', 'shared', 'realdata');
}

/** The realdata directory: AIRGAP_REALDATA, else `../shared/realdata` beside the repository. */
function realdataDir(): string {
  const env = process.env[REALDATA_ENV];
  return env ? resolve(env) : realdataBeside();
}

/** A path in the realdata directory: `realdata('samples', 'coreos', 'x.json')`. */
export function realdata(...parts: string[]): string {
  return join(realdataDir(), ...parts);
}

/** The directory of the real CRDs: AIRGAP_CRD_DIR, else `crds` in the realdata directory. */
export function crdDir(): string {
  const env = process.env[CRD_DIR_ENV];
  return env ? resolve(env) : realdata('crds');
}

/** Whether the realdata directory (real samples and CRDs) is here. */
export function hasRealdata(): boolean {
  return exists(realdataDir(), 'directory');
}

/** Whether the directory of the real CRDs is here. */
export function hasRealCrds(): boolean {
  return exists(crdDir(), 'directory');
}

/** A path as people see it: relative to the repository when it is near it (`../shared/realdata`). */
function shownPath(path: string): string {
  const rel = relative(repoRoot(), path);
  return rel.startsWith(`..${sep}..`) || rel === '' || resolve(rel) === rel ? path : rel;
}

/** Where the realdata is looked for, as people see it (`../shared/realdata`, or the AIRGAP_REALDATA path). */
export function realdataWhere(): string {
  return shownPath(realdataDir());
}

/** Where the real CRDs are looked for, as people see it. */
export function crdWhere(): string {
  return shownPath(crdDir());
}

/** Why the realdata is not used, in one line; undefined when it is here. */
export function realdataAbsence(): string | undefined {
  if (hasRealdata()) return undefined;
  return `${realdataWhere()} (the real CRDs and samples) is not here; put it beside the repository or set ${REALDATA_ENV} to where it is`;
}

/** Why the real CRDs are not used, in a few words (`../shared/realdata/crds is not here`); undefined when they are here. */
export function realCrdsAbsence(): string | undefined {
  return hasRealCrds() ? undefined : `${crdWhere()} is not here`;
}

/** How to use the real CRDs, in one line. */
export function realCrdsHowTo(): string {
  const beside = shownPath(realdataBeside());
  return `set ${CRD_DIR_ENV} to a directory of the real CRDs, or put the realdata beside the repository (${beside}) or set ${REALDATA_ENV} to where it is`;
}
