/**
 * Semantic versions (semver.org 2.0.0): `parseSemver` is strict (MAJOR.MINOR.PATCH with optional
 * -prerelease and +build); `parseVersion` reads versions the way oc-mirror does (a leading `v` and
 * missing minor/patch numbers allowed), and is what the ImageSetConfiguration checks use.
 */

/** A parsed version. `prerelease` holds the dot-separated identifiers (bigints where numeric). */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: (string | bigint)[];
  build: string[];
  raw: string;
}

const NUM = '0|[1-9]\\d*';
const PRE_ID = `(?:${NUM}|\\d*[A-Za-z-][0-9A-Za-z-]*)`;
const SEMVER = new RegExp(
  `^(${NUM})\\.(${NUM})\\.(${NUM})` +
    `(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?` +
    `(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$`,
);

/** Parse a strict semantic version, or undefined. */
export function parseSemver(input: string): SemVer | undefined {
  const m = SEMVER.exec(input);
  if (!m) return undefined;
  const [major, minor, patch] = [m[1], m[2], m[3]].map(Number);
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  const prerelease = m[4] ? m[4].split('.').map((id) => (/^\d+$/.test(id) ? BigInt(id) : id)) : [];
  return { major, minor, patch, prerelease, build: m[5] ? m[5].split('.') : [], raw: input };
}

const LOOSE = /^v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?((?:-|\+).*)?$/;

/**
 * Parse a version the way oc-mirror reads `minVersion`/`maxVersion` (Masterminds `semver.NewVersion`):
 * a leading `v` and missing minor or patch numbers are accepted (`v4.18` → 4.18.0); what follows
 * the core must still be a valid semver prerelease/build.
 */
export function parseVersion(input: string): SemVer | undefined {
  const strict = parseSemver(input);
  if (strict) return strict;
  const m = LOOSE.exec(input);
  if (!m) return undefined;
  const normalized = parseSemver(`${m[1]}.${m[2] ?? '0'}.${m[3] ?? '0'}${m[4] ?? ''}`);
  return normalized ? { ...normalized, raw: input } : undefined;
}

/** Why a string is not a strict semantic version, as a hint a person can act on. */
export function semverHint(input: string): string {
  const fixed = input.replace(/^[vV]/, '');
  if (fixed !== input && parseSemver(fixed)) return `drop the "v": ${fixed}`;
  const partial = /^(\d+)(?:\.(\d+))?$/.exec(fixed);
  if (partial) return `write a full version: ${partial[1]}.${partial[2] ?? '0'}.0`;
  if (/(^|[.-])0\d/.test(fixed)) return 'numbers must not have leading zeros (semver.org)';
  return 'write MAJOR.MINOR.PATCH, optionally with -prerelease and +build, e.g. 4.18.1 or 5.8.0-rc.1';
}

/** Semver precedence: negative if a < b, 0 if equal (build metadata ignored), positive if a > b. */
export function compareSemver(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length); // a release ranks above its prereleases
  }
  const n = Math.max(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < n; i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : 1;
    if (typeof x === 'bigint') return -1; // numeric identifiers rank below alphanumeric ones
    if (typeof y === 'bigint') return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
