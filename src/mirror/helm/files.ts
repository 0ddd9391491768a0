/**
 * Helm's `.Files` (engine.files): a map of the chart's other files (name → bytes) with methods
 * Get, GetBytes, Glob, Lines, AsConfig, AsSecrets. Being a map, it ranges (`range $path, $bytes :=
 * .Files.Glob "x/*"`), indexes, has a length and is false when empty.
 *
 * Glob patterns are gobwas/glob's with '/' as the separator: `*` any run of characters but '/',
 * `**` any run at all, `?` one character but '/', `[abc]` `[!abc]` `[a-z]` `[!a-z]` one character
 * (a list or one range, not both), `{a,b*}` alternatives (nesting), `\` escapes the next character.
 * A pattern gobwas cannot compile matches every file, as Helm falls back to `**`.
 */
import { RE2JS } from 're2js';
import type { ChartFile } from './archive.js';
import { GoStruct, type GoMap } from './template/values.js';
import { writeYaml } from './yaml.js';

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const escapeClass = (s: string): string => s.replace(/[[\]\\^-]/g, '\\$&');

/** One `[...]` of a pattern from `i` (just after '['): its regex and where it ends, or undefined. */
function charClass(p: string[], i: number): { re: string; end: number } | undefined {
  let not = false;
  if (p[i] === '!') {
    not = true;
    i++;
  }
  if (i >= p.length) return undefined;
  if (p[i + 1] === '-' && i + 2 < p.length) {
    // A range: exactly lo-hi then ']'.
    const lo = p[i]!;
    const hi = p[i + 2]!;
    if (p[i + 3] !== ']' || hi.codePointAt(0)! < lo.codePointAt(0)!) return undefined;
    return { re: `[${not ? '^' : ''}${escapeClass(lo)}-${escapeClass(hi)}]`, end: i + 4 };
  }
  let chars = '';
  let escaped = false;
  for (; i < p.length; i++) {
    const c = p[i]!;
    if (!escaped && c === '\\') escaped = true;
    else if (!escaped && c === ']') break;
    else {
      chars += c;
      escaped = false;
    }
  }
  if (i >= p.length || chars === '') return undefined;
  return { re: `[${not ? '^' : ''}${escapeClass(chars)}]`, end: i + 1 };
}

/**
 * A gobwas/glob pattern (separator '/') as a matcher, or undefined if gobwas rejects it. The
 * pattern is the chart's: it is matched by RE2 (re2js, as the chart's regex functions are), in
 * time linear in the name, where a backtracking RegExp of `*a*a*a…b` would run for hours.
 */
function globMatcher(pattern: string): RE2JS | undefined {
  const p = [...pattern];
  let re = '';
  let depth = 0;
  for (let i = 0; i < p.length;) {
    const c = p[i]!;
    if (c === '*') {
      const sup = p[i + 1] === '*';
      re += sup ? '.*' : '[^/]*';
      i += sup ? 2 : 1;
    } else if (c === '?') {
      re += '[^/]';
      i++;
    } else if (c === '[') {
      const cls = charClass(p, i + 1);
      if (!cls) return undefined;
      re += cls.re;
      i = cls.end;
    } else if (c === '{') {
      re += '(?:';
      depth++;
      i++;
    } else if (c === '}' && depth > 0) {
      re += ')';
      depth--;
      i++;
    } else if (c === ',' && depth > 0) {
      re += '|';
      i++;
    } else if (c === '\\') {
      // An escape: the next character as it is (a trailing '\' is nothing).
      if (i + 1 < p.length) re += escapeRe(p[i + 1]!);
      i += 2;
    } else {
      re += escapeRe(c);
      i++;
    }
  }
  // gobwas closes alternatives left open at the end of the pattern.
  re += ')'.repeat(depth);
  return RE2JS.compile(`^${re}$`, RE2JS.DOTALL);
}

const basename = (n: string): string => n.slice(n.lastIndexOf('/') + 1);

/** Helm's toYAML of a map of strings: sorted keys, no final newline; `{}` when empty. */
const asYaml = (m: GoMap): string => writeYaml(m).replace(/\n$/, '');

/** Helm's `.Files` over a chart's files. */
export function filesObject(files: readonly ChartFile[]): GoStruct {
  const byName = new Map(files.map((f) => [f.name, f.data]));
  const entries: GoMap = {};
  // Views of the files' bytes, not copies: templates cannot change them.
  for (const f of files) entries[f.name] = new Uint8Array(f.data.buffer, f.data.byteOffset, f.data.length);
  const asMap = (enc: (b: Buffer) => string): string => {
    const m: GoMap = {};
    for (const f of files) m[basename(f.name)] = enc(f.data);
    return asYaml(m);
  };
  return new GoStruct(
    'engine.files',
    {},
    {
      Get: (n: unknown) => byName.get(String(n))?.toString('utf8') ?? '',
      GetBytes: (n: unknown) => new Uint8Array(byName.get(String(n)) ?? []),
      Lines: (n: unknown) => {
        const data = byName.get(String(n));
        if (data === undefined) return [];
        if (data.length === 0)
          throw new Error(`${String(n)} is empty, and Helm's .Files.Lines fails on an empty file`);
        const t = data.toString('utf8');
        return (t.endsWith('\n') ? t.slice(0, -1) : t).split('\n');
      },
      Glob: (p: unknown) => {
        const glob = globMatcher(String(p));
        return filesObject(glob ? files.filter((f) => glob.matches(f.name)) : files);
      },
      AsConfig: () => asMap((b) => b.toString('utf8')),
      AsSecrets: () => asMap((b) => b.toString('base64')),
    },
    undefined,
    entries,
  );
}
