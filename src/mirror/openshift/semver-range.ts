/**
 * Version ranges as OLM reads them in `olm.package.required` (blang/semver v4 `ParseRange`, which
 * operator-registry and the OLM resolver both call): comparators `<`, `<=`, `>`, `>=`, `=`/`==`/none,
 * `!`/`!=`, each followed by a strict semantic version; space-separated comparators are ANDed, `||`
 * separates alternatives. `x` wildcards are expanded the way blang does (`4.x` → `>=4.0.0 <5.0.0`,
 * `<=1.2.x` → `<1.3.0`, and its quirks: `1.x.x` is a patch wildcard, so `>=1.0.0 <1.1.0`).
 * Prereleases are ordinary versions here (blang has no npm-style prerelease exclusion), and build
 * metadata is ignored when comparing.
 */
import { compareSemver, parseSemver, type SemVer } from '../isc/semver.js';

/** A parsed range: true when the version satisfies it. */
export type SemverRange = (v: SemVer) => boolean;

/** Why a range cannot be read; the message quotes the part that is wrong. */
export class RangeSyntaxError extends Error {}

const COMPARATORS: Record<string, (c: number) => boolean> = {
  '': (c) => c === 0,
  '=': (c) => c === 0,
  '==': (c) => c === 0,
  '!': (c) => c !== 0,
  '!=': (c) => c !== 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
};

/** Tokens split at spaces; a space right after `<`, `>` or `=` does not split (`>= 1.0.0` is one). */
function tokens(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (const ch of text.trim()) {
    if (/\s/.test(ch)) {
      if (cur !== '' && !/[<>=]$/.test(cur)) {
        out.push(cur);
        cur = '';
      }
      continue;
    }
    cur += ch;
  }
  if (cur !== '') out.push(cur);
  return out;
}

/** `>=1.2.0` → [">=", "1.2.0"]: the operator is everything before the first digit. */
function splitComparator(part: string): [string, string] {
  const i = part.search(/\d/);
  if (i < 0) throw new RangeSyntaxError(`${JSON.stringify(part)} has no version`);
  return [part.slice(0, i), part.slice(i)];
}

function bump(version: string, index: 0 | 1): string {
  const parts = version.split('.');
  parts[index] = String(Number(parts[index]) + 1);
  return parts.join('.');
}

/** blang `expandWildcardVersion`: one comparator with an `x` becomes one or two without. */
function expandWildcard(part: string): string[] {
  if (!part.includes('.x')) return [part];
  const [op, version] = splitComparator(part);
  const pieces = version.split('.');
  const kind = pieces[pieces.length - 1] === 'x' ? pieces.length : 0; // 2: minor, 3: patch wildcard
  let flat = version.replace('.x.x', '.x').replace('.x', '.0');
  if (flat.split('.').length === 2) flat += '.0';
  const next = (): string => (kind === 3 ? bump(flat, 1) : kind === 2 ? bump(flat, 0) : '');
  switch (op) {
    case '>':
      return [`>=${next()}`];
    case '>=':
      return [`>=${flat}`];
    case '<':
      return [`<${flat}`];
    case '<=':
      return [`<${next()}`];
    case '':
    case '=':
    case '==':
      return [`>=${flat}`, `<${next()}`];
    case '!':
    case '!=':
      // blang ANDs these two, so `!=1.x` matches nothing; OLM does the same.
      return [`<${flat}`, `>=${next()}`];
    default:
      throw new RangeSyntaxError(`unknown comparator ${JSON.stringify(op)} in ${JSON.stringify(part)}`);
  }
}

function comparator(part: string): SemverRange {
  const [op, raw] = splitComparator(part);
  const test = COMPARATORS[op];
  if (!test)
    throw new RangeSyntaxError(`unknown comparator ${JSON.stringify(op)} in ${JSON.stringify(part)}`);
  const bound = parseSemver(raw);
  if (!bound) throw new RangeSyntaxError(`${JSON.stringify(raw)} is not a semantic version`);
  return (v) => test(compareSemver(v, bound));
}

/**
 * Parse a blang/semver v4 range (`>=4.18.0 <4.19.0`, `<2.0.0 || >=3.0.0`, `4.x`). Throws
 * RangeSyntaxError for what OLM would refuse too (an empty range, a dangling `||`, a version that is
 * not strict semver, an unknown comparator).
 */
export function parseSemverRange(text: string): SemverRange {
  const parts = tokens(text);
  if (parts.length === 0) throw new RangeSyntaxError('the range is empty');
  const alternatives: string[][] = [[]];
  for (const p of parts) {
    if (p === '||') {
      if (alternatives[alternatives.length - 1]!.length === 0)
        throw new RangeSyntaxError('"||" has nothing on one side');
      alternatives.push([]);
    } else alternatives[alternatives.length - 1]!.push(p);
  }
  if (alternatives[alternatives.length - 1]!.length === 0)
    throw new RangeSyntaxError('"||" has nothing on one side');
  const ors = alternatives.map((and) => and.flatMap(expandWildcard).map(comparator));
  return (v) => ors.some((and) => and.every((c) => c(v)));
}
