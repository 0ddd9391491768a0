/**
 * Problems found in an image set configuration, each with its field path and file:line:column.
 * All of them are collected, then thrown as one AirgapError (code of the first, one line each).
 */
import { usageError, type AirgapError } from '../util/errors.js';
import { parentPath, type PositionMap, type SourcePosition } from './positions.js';

/** The stable error codes of this module. */
export const IscErrorCode = {
  /** The file could not be read. */
  Read: 'ISC_READ',
  /** The YAML itself does not parse. */
  Yaml: 'ISC_YAML',
  /** `kind` is missing or not one we read. */
  Kind: 'ISC_KIND',
  /** `apiVersion` is missing or not one we read. */
  ApiVersion: 'ISC_API_VERSION',
  /** A key oc-mirror does not know (it decodes with DisallowUnknownFields). */
  UnknownField: 'ISC_UNKNOWN_FIELD',
  /** A required field is missing or empty. */
  Required: 'ISC_REQUIRED',
  /** A wrong type or a bad value (semver, regexp, path component, enum). */
  Invalid: 'ISC_INVALID',
  /** The same catalog, package, or channel twice. */
  Duplicate: 'ISC_DUPLICATE',
  /** Two settings that cannot be used together. */
  Conflict: 'ISC_CONFLICT',
  /** Content this release of airgap does not handle yet. */
  Unsupported: 'ISC_UNSUPPORTED',
} as const;

export type IscErrorCode = (typeof IscErrorCode)[keyof typeof IscErrorCode];

/** One problem. `where` is `file:line:column`. */
export interface IscProblem {
  code: IscErrorCode;
  path: string;
  message: string;
  hint?: string;
  where: string;
  line?: number;
  column?: number;
}

/** Which part of a field a problem points at: the key (unknown field) or the value (bad value). */
export type FieldPart = 'key' | 'value';

/** The position of `path` (its key or its value), falling back to the nearest ancestor that has one. */
export function lookupPosition(
  positions: PositionMap,
  path: string,
  part: FieldPart,
): SourcePosition | undefined {
  const exact = positions.get(path);
  if (exact) return part === 'key' ? (exact.key ?? exact.value) : exact.value;
  // A field that is not in the source (missing, defaulted): point at the nearest ancestor.
  for (let p = parentPath(path); p !== undefined; p = parentPath(p)) {
    const found = positions.get(p);
    if (found) return found.key ?? found.value;
  }
  return undefined;
}

const MAX_LISTED = 50;

/** Collects problems while a configuration is decoded and validated. */
export class Problems {
  readonly list: IscProblem[] = [];

  constructor(
    readonly file: string,
    readonly positions: PositionMap,
  ) {}

  /** The position of a field (its key or its value), or of its nearest ancestor in the file. */
  position(path: string, part: FieldPart = 'value'): SourcePosition | undefined {
    return lookupPosition(this.positions, path, part);
  }

  /** Record a problem at `path`, placed at the field's value (or its key, for unknown fields). */
  add(
    code: IscErrorCode,
    path: string,
    message: string,
    options: { hint?: string; part?: FieldPart } = {},
  ): void {
    const pos = this.position(path, options.part ?? 'value');
    this.list.push({
      code,
      path,
      message,
      ...(options.hint ? { hint: options.hint } : {}),
      where: pos ? `${this.file}:${pos.line}:${pos.column}` : this.file,
      ...(pos ? { line: pos.line, column: pos.column } : {}),
    });
  }

  /** Throw everything collected as one usage error; do nothing when there is nothing. */
  throwIfAny(): void {
    if (this.list.length > 0) throw problemsError(this.file, this.list);
  }
}

/**
 * One AirgapError for a list of problems, sorted by position, with the code of the first. A single
 * problem keeps its own `where` and hint; several are listed one per line (`file:line:col: message — hint`).
 */
export function problemsError(
  file: string,
  problems: readonly (Omit<IscProblem, 'code'> & { code: string })[],
): AirgapError {
  const sorted = [...problems].sort(
    (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
  );
  const first = sorted[0];
  const details = { file, problems: sorted };
  if (sorted.length === 1) {
    return usageError(first.code, first.message, { where: first.where, hint: first.hint, details });
  }
  const lines = sorted
    .slice(0, MAX_LISTED)
    .map((p) => `  ${p.where}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
  if (sorted.length > MAX_LISTED) lines.push(`  … and ${sorted.length - MAX_LISTED} more`);
  // Each line has its own place; `where` names the file (describe() appends it after the last line).
  return usageError(first.code, `${sorted.length} problems in ${file}:\n${lines.join('\n')}`, {
    where: file,
    details,
  });
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[s.length][t.length];
}

/** The closest candidates to `word` (at most two), or none when nothing is close. */
export function suggest(word: string, candidates: readonly string[]): string[] {
  const lower = word.toLowerCase();
  const scored = candidates
    .map((c) => {
      const cl = c.toLowerCase();
      const prefix = lower.length >= 3 && (cl.startsWith(lower) || lower.startsWith(cl));
      const distance = prefix ? Math.min(1, editDistance(word, c)) : editDistance(word, c);
      return { c, distance, ok: prefix || distance <= Math.max(2, Math.floor(c.length / 2)) };
    })
    .filter((s) => s.ok && s.distance < Math.max(word.length, 1));
  if (scored.length === 0) return [];
  const best = Math.min(...scored.map((s) => s.distance));
  return scored
    .filter((s) => s.distance === best)
    .map((s) => s.c)
    .slice(0, 2);
}

/** `did you mean x?` / `did you mean x or y?`, or undefined. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const found = suggest(word, candidates);
  return found.length > 0 ? `did you mean ${found.join(' or ')}?` : undefined;
}
