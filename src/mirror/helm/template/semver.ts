/**
 * Semantic versions and constraints as Masterminds/semver v3 (sprig's semver, semverCompare)
 * reads them: lenient versions (`v1.2`, `1`), and constraints with `||` alternatives, comma- or
 * space-separated conjunctions, `=`, `!=`, `>`, `<`, `>=`, `<=`, `~`, `~>`, `^`, `x`/`*` wildcards
 * and hyphen ranges. A pre-release version satisfies a constraint only if the constraint itself
 * names a pre-release (`>=1.21-0`), as in Masterminds.
 */
import { GoStruct } from './values.js';

export interface Version {
  major: number;
  minor: number;
  patch: number;
  pre: string;
  meta: string;
  original: string;
}

const VERSION_RE =
  /^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function parseVersion(s: string): Version | undefined {
  const m = VERSION_RE.exec(s);
  if (!m) return undefined;
  // A numeric pre-release identifier has no leading zero (semver 2.0.0, as NewVersion checks).
  if (m[4]?.split('.').some((id) => /^0[0-9]+$/.test(id))) return undefined;
  return {
    major: Number(m[1]),
    minor: Number(m[2] ?? 0),
    patch: Number(m[3] ?? 0),
    pre: m[4] ?? '',
    meta: m[5] ?? '',
    original: s,
  };
}

function comparePre(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^[0-9]+$/.test(x);
    const ny = /^[0-9]+$/.test(y);
    if (nx && ny) {
      const d = Number(x) - Number(y);
      if (d !== 0) return Math.sign(d);
    } else if (nx) return -1;
    else if (ny) return 1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function compareVersions(a: Version, b: Version): number {
  return (
    Math.sign(a.major - b.major) ||
    Math.sign(a.minor - b.minor) ||
    Math.sign(a.patch - b.patch) ||
    comparePre(a.pre, b.pre)
  );
}

function formatVersion(v: Version): string {
  return `${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}${v.meta ? `+${v.meta}` : ''}`;
}

interface Constraint {
  op: string;
  con: Version;
  minorDirty: boolean;
  patchDirty: boolean;
  dirty: boolean;
}

const isX = (s: string | undefined) => s === 'x' || s === 'X' || s === '*';

const CONSTRAINT_RE =
  /^(=|!=|>=|=>|<=|=<|>|<|~>|~|\^)?\s*v?(\*|x|X|[0-9]+)(?:\.(\*|x|X|[0-9]+))?(?:\.(\*|x|X|[0-9]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-.]+))?$/;

function parseConstraint(text: string): Constraint {
  const m = CONSTRAINT_RE.exec(text.trim());
  if (!m) throw new Error(`improper constraint: ${text}`);
  const [, op = '', maj, min, pat, pre = '', meta = ''] = m;
  let minorDirty = false;
  let patchDirty = false;
  // As Masterminds: a wildcard major is 0.0.0 with neither part dirty (`~*` admits everything).
  if (!isX(maj)) {
    if (min === undefined || isX(min)) minorDirty = true;
    else if (pat === undefined || isX(pat)) patchDirty = true;
  }
  const num = (s: string | undefined) => (s === undefined || isX(s) ? 0 : Number(s));
  const con: Version = {
    major: num(maj),
    minor: num(min),
    patch: num(pat),
    pre,
    meta,
    original: text,
  };
  return { op, con, minorDirty, patchDirty, dirty: isX(maj) || minorDirty || patchDirty };
}

/** Masterminds' `!=`: a wildcard constraint excludes every version it would match. */
function notEqual(c: Constraint, v: Version): boolean {
  const { con } = c;
  if (c.dirty) {
    if (v.pre !== '' && con.pre === '') return false;
    if (con.major !== v.major) return true;
    if (con.minor !== v.minor && !c.minorDirty) return true;
    if (c.minorDirty) return false;
    if (con.patch !== v.patch && !c.patchDirty) return true;
    if (c.patchDirty) return (v.pre !== '' || con.pre !== '') && comparePre(v.pre, con.pre) !== 0;
  }
  return compareVersions(v, con) !== 0;
}

function check(c: Constraint, v: Version): boolean {
  const { con } = c;
  // Pre-releases only match constraints that name a pre-release.
  if (v.pre !== '' && con.pre === '' && c.op !== '!=') return false;
  const cmp = compareVersions(v, con);
  const tilde = (): boolean => {
    if (cmp < 0) return false;
    if (con.major === 0 && con.minor === 0 && con.patch === 0 && !c.minorDirty && !c.patchDirty) return true;
    if (v.major !== con.major) return false;
    return !(v.minor !== con.minor && !c.minorDirty);
  };
  switch (c.op) {
    case '':
    case '=':
      return c.dirty ? tilde() : cmp === 0;
    case '!=':
      return notEqual(c, v);
    case '>':
      if (!c.dirty) return cmp > 0;
      if (v.major !== con.major) return v.major > con.major;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > con.minor;
      return cmp > 0;
    case '<':
      return cmp < 0;
    case '>=':
    case '=>':
      return cmp >= 0;
    case '<=':
    case '=<':
      if (!c.dirty) return cmp <= 0;
      if (v.major > con.major) return false;
      return !(v.major === con.major && v.minor > con.minor && !c.minorDirty);
    case '~':
    case '~>':
      return tilde();
    case '^': {
      if (cmp < 0) return false;
      if (con.major > 0 || c.minorDirty) return v.major === con.major;
      if (con.minor > 0 || c.patchDirty) return v.major === 0 && v.minor === con.minor;
      return v.major === 0 && v.minor === 0 && v.patch === con.patch;
    }
    default:
      return false;
  }
}

/** Whether `version` satisfies `constraint`; throws for a malformed constraint. */
export function satisfies(constraint: string, version: Version): boolean {
  return constraint.split('||').some((group) => {
    const text = group
      .trim()
      .replace(/\s*([0-9A-Za-z.*+-]+)\s+-\s+([0-9A-Za-z.*+-]+)/g, '>=$1,<=$2') // hyphen ranges
      .replace(/(=|!=|>=|=>|<=|=<|>|<|~>|~|\^)\s+/g, '$1');
    const parts = text.split(/[\s,]+/).filter((p) => p !== '');
    if (parts.length === 0) throw new Error(`improper constraint: ${group}`);
    return parts.map(parseConstraint).every((c) => check(c, version));
  });
}

/** sprig's semverCompare. */
export function semverCompare(constraint: string, version: string): boolean {
  const v = parseVersion(version);
  if (!v) throw new Error('Invalid Semantic Version');
  return satisfies(constraint, v);
}

/** The version a method is given: a semver value, or (leniently) its text. */
function otherVersion(o: unknown): Version {
  const ov =
    o instanceof GoStruct ? parseVersion(String(o.fields['Original'] ?? '')) : parseVersion(String(o));
  if (!ov) throw new Error('Invalid Semantic Version');
  return ov;
}

/** A version with its `v` prefix kept, as Masterminds' Inc* and Set* write `original`. */
const withPrefix = (old: Version, next: Omit<Version, 'original'>): Version => {
  const v = { ...next, original: '' };
  v.original = `${old.original.startsWith('v') ? 'v' : ''}${formatVersion(v)}`;
  return v;
};

/** A semver.Version (or `*semver.Version`) as templates see it: its methods, printed as String(). */
function versionStruct(v: Version, typeName: string): GoStruct {
  const cmp = (o: unknown) => compareVersions(v, otherVersion(o));
  const next = (n: Omit<Version, 'original'>) => versionStruct(withPrefix(v, n), 'semver.Version');
  const checked = (what: string, s: unknown, re: RegExp) => {
    const t = String(s);
    if (t !== '' && !re.test(t)) throw new Error(`Invalid ${what} string`);
    return t;
  };
  return new GoStruct(
    typeName,
    { Original: v.original },
    {
      Major: () => BigInt(v.major),
      Minor: () => BigInt(v.minor),
      Patch: () => BigInt(v.patch),
      Prerelease: () => v.pre,
      Metadata: () => v.meta,
      Original: () => v.original,
      String: () => formatVersion(v),
      Compare: (o: unknown) => BigInt(cmp(o)),
      LessThan: (o: unknown) => cmp(o) < 0,
      LessThanEqual: (o: unknown) => cmp(o) <= 0,
      GreaterThan: (o: unknown) => cmp(o) > 0,
      GreaterThanEqual: (o: unknown) => cmp(o) >= 0,
      Equal: (o: unknown) => cmp(o) === 0,
      IncPatch: () => next({ ...v, pre: '', meta: '', patch: v.pre ? v.patch : v.patch + 1 }),
      IncMinor: () => next({ ...v, pre: '', meta: '', patch: 0, minor: v.minor + 1 }),
      IncMajor: () => next({ ...v, pre: '', meta: '', patch: 0, minor: 0, major: v.major + 1 }),
      SetPrerelease: (p: unknown) =>
        next({ ...v, pre: checked('Prerelease', p, /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/) }),
      SetMetadata: (m: unknown) =>
        next({ ...v, meta: checked('Metadata', m, /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/) }),
    },
    () => formatVersion(v),
  );
}

/** sprig's semver: a *semver.Version with its methods. */
export function semverObject(text: string): GoStruct {
  const v = parseVersion(text);
  if (!v) throw new Error('Invalid Semantic Version');
  return versionStruct(v, '*semver.Version');
}
