/**
 * A chart directory's `.helmignore`, read as Helm's loader reads it (pkg/ignore) when it loads a
 * chart from a directory (`helm template DIR`, `helm package`); archives are not filtered again.
 *
 * One pattern a line, trimmed; blank lines and `#` lines are skipped. A pattern is a Go
 * `filepath.Match` glob (`*`, `?`, `[a-z]`, `[^a-z]`, `\x`), whole-name, and `*` never crosses `/`.
 * `**` is refused. A trailing `/` matches directories only. A pattern without `/` is matched against
 * the last name of the path, one with a `/` against the whole path from the chart's root (a leading
 * `/` is dropped). Rules are tried in order and the first that matches ignores the path. A `!` rule
 * is Helm's, not git's: it ignores every path it does NOT match (a file, for `!dir/`), and lets a
 * path it matches on to the next rule. Helm always adds `templates/.?*` last.
 */
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** The largest `.helmignore` read (a real one is under 1 KiB). */
export const MAX_HELMIGNORE_BYTES = 64 * 1024;
/** The most rules a `.helmignore` may hold. */
const MAX_HELMIGNORE_RULES = 1000;

type Token = { star: true } | { any: true } | { chars: [number, number][]; negated: boolean };

interface Rule {
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the whole path (else against its last name). */
  whole: boolean;
  /** One token list per `/`-separated part. */
  parts: Token[][];
}

export type IgnoreRules = (path: string, isDir: boolean) => boolean;

function bad(where: string, line: number, why: string): AirgapError {
  return new AirgapError(
    MirrorError.HELM_CHART_INVALID,
    `${where}/.helmignore line ${line}: ${why}; fix or remove the line (helm refuses it too)`,
    { where: `${where}/.helmignore`, exitCode: 2 },
  );
}

/** One character of a class, `\` escapes included; null if the pattern is malformed there. */
function classChar(p: string, i: number): [number, number] | null {
  if (i >= p.length) return null;
  if (p[i] === '\\') return i + 1 < p.length ? [p.codePointAt(i + 1)!, i + 2] : null;
  if (p[i] === '-' || p[i] === ']') return null;
  return [p.codePointAt(i)!, i + 1];
}

/** Go's `filepath.Match` pattern as tokens, or null when Go would say ErrBadPattern. */
function tokensOf(p: string): Token[] | null {
  const out: Token[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '*') {
      out.push({ star: true });
      i++;
    } else if (c === '?') {
      out.push({ any: true });
      i++;
    } else if (c === '[') {
      i++;
      const negated = p[i] === '^';
      if (negated) i++;
      const chars: [number, number][] = [];
      while (!(p[i] === ']' && chars.length > 0)) {
        const lo = classChar(p, i);
        if (!lo) return null;
        let hi = lo;
        if (p[lo[1]] === '-') {
          hi = classChar(p, lo[1] + 1) ?? [-1, 0];
          if (hi[0] < lo[0]) return null;
        }
        chars.push([lo[0], hi[0]]);
        i = hi[1];
      }
      out.push({ chars, negated });
      i++;
    } else {
      const at = c === '\\' ? i + 1 : i;
      if (at >= p.length) return null;
      const cp = p.codePointAt(at)!;
      out.push({ chars: [[cp, cp]], negated: false });
      i = at + String.fromCodePoint(cp).length;
    }
  }
  return out;
}

function one(t: Token, c: number): boolean {
  if ('star' in t) return false;
  if ('any' in t) return true;
  return t.chars.some(([lo, hi]) => c >= lo && c <= hi) !== t.negated;
}

/** A name (no `/`) against tokens: the linear wildcard walk, backing up only to the last `*`. */
function matchPart(tokens: Token[], name: string): boolean {
  const s = [...name].map((c) => c.codePointAt(0)!);
  let ti = 0;
  let si = 0;
  let starT = -1;
  let starS = 0;
  while (si < s.length) {
    const t = tokens[ti];
    if (t && 'star' in t) {
      starT = ti++;
      starS = si;
    } else if (t && one(t, s[si]!)) {
      ti++;
      si++;
    } else if (starT >= 0) {
      ti = starT + 1;
      si = ++starS;
    } else return false;
  }
  while (ti < tokens.length && 'star' in tokens[ti]!) ti++;
  return ti === tokens.length;
}

function matches(rule: Rule, path: string): boolean {
  const names = rule.whole ? path.split('/') : [path.slice(path.lastIndexOf('/') + 1)];
  return names.length === rule.parts.length && rule.parts.every((t, i) => matchPart(t, names[i]!));
}

function ruleOf(text: string, where: string, line: number): Rule {
  if (text.includes('**')) throw bad(where, line, `"${text}": double-star (**) syntax is not supported`);
  let p = text;
  const negate = p.startsWith('!');
  if (negate) p = p.slice(1);
  const dirOnly = p.endsWith('/');
  if (dirOnly) p = p.slice(0, -1);
  const whole = p.includes('/');
  if (p.startsWith('/')) p = p.slice(1);
  const parts = (whole ? p.split('/') : [p]).map(tokensOf);
  if (tokensOf(text) === null || parts.some((t) => t === null))
    throw bad(where, line, `"${text}" is not a valid pattern`);
  return { negate, dirOnly, whole, parts: parts as Token[][] };
}

/** The rules of a `.helmignore` (its text; `where` is the chart directory, for messages), plus Helm's default. */
export function parseHelmignore(text: string, where: string): IgnoreRules {
  const rules: Rule[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    if (rules.length >= MAX_HELMIGNORE_RULES)
      throw bad(where, i + 1, `more than ${MAX_HELMIGNORE_RULES} rules`);
    rules.push(ruleOf(line, where, i + 1));
  });
  rules.push(ruleOf('templates/.?*', where, 0));
  return (path, isDir) => {
    for (const r of rules) {
      if (r.negate) {
        if ((r.dirOnly && !isDir) || !matches(r, path)) return true;
      } else if ((!r.dirOnly || isDir) && matches(r, path)) return true;
    }
    return false;
  };
}
