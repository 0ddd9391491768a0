/**
 * Problems found in a YAML configuration file (an image set configuration, a site file), each with
 * its field path and `file:line:column`. A loader collects all of them, then throws them as one
 * usage error (code of the first, one line each), so that one run reports everything to fix.
 * Each domain names its own stable codes (IscErrorCode, SiteErrorCode); this kit knows none.
 */
import { usageError, type AirgapError } from '../util/errors.js';
import { lookupPosition, type FieldPart, type PositionMap, type SourcePosition } from './positions.js';

/** One problem. `where` is `file:line:column` (or just the file when the field has no place). */
export interface Problem<C extends string = string> {
  code: C;
  /** The field path, like `mirror.operators[0].catalog`; `` for the document. */
  path: string;
  message: string;
  hint?: string;
  where: string;
  line?: number;
  column?: number;
}

/** At most this many problems are listed in the message; the error's details hold all that were kept. */
const MAX_LISTED = 50;

/**
 * At most this many problems are kept, each with its place; any more are only counted. A hostile
 * file can hold a problem in every line, and a million problems would cost more than the file.
 */
const MAX_KEPT_PROBLEMS = 1000;

/** Collects problems while a configuration is decoded and checked. */
export class Problems<C extends string = string> {
  readonly list: Problem<C>[] = [];
  /** Problems found after MAX_KEPT_PROBLEMS were kept: counted, not placed or kept. */
  omitted = 0;

  constructor(
    readonly file: string,
    readonly positions: PositionMap,
  ) {}

  /**
   * Whether no more problems are kept (they are only counted): whoever finds one can skip working
   * out its hint and places.
   */
  get full(): boolean {
    return this.list.length >= MAX_KEPT_PROBLEMS;
  }

  /** The position of a field (its key or its value), or of its nearest ancestor in the file. */
  position(path: string, part: FieldPart = 'value'): SourcePosition | undefined {
    return lookupPosition(this.positions, path, part);
  }

  /** `file:line:column` of a field (its value, or its key), or of its nearest ancestor. */
  where(path: string, part: FieldPart = 'value'): { where: string; line?: number; column?: number } {
    const pos = this.position(path, part);
    return pos
      ? { where: `${this.file}:${pos.line}:${pos.column}`, line: pos.line, column: pos.column }
      : { where: this.file };
  }

  /** Record a problem at `path`, placed at the field's value (or its key, for unknown fields). */
  add(code: C, path: string, message: string, options: { hint?: string; part?: FieldPart } = {}): void {
    if (this.list.length >= MAX_KEPT_PROBLEMS) {
      this.omitted++;
      return;
    }
    this.list.push({
      code,
      path,
      message,
      ...(options.hint ? { hint: options.hint } : {}),
      ...this.where(path, options.part ?? 'value'),
    });
  }

  /** Throw everything collected as one usage error; do nothing when there is nothing. */
  throwIfAny(): void {
    if (this.list.length > 0) throw problemsError(this.file, this.list, this.omitted);
  }
}

/**
 * One AirgapError for a list of problems, sorted by position, with the code of the first. A single
 * problem keeps its own `where` and hint; several are listed one per line (`file:line:col: message — hint`).
 * `omitted` counts problems found beyond `problems` (counted in the total, not in the details).
 */
export function problemsError(file: string, problems: readonly Problem[], omitted = 0): AirgapError {
  const sorted = [...problems].sort(
    (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
  );
  const first = sorted[0];
  const total = sorted.length + omitted;
  const details = { file, problems: sorted, ...(omitted > 0 ? { omitted } : {}) };
  if (total === 1) {
    return usageError(first.code, first.message, { where: first.where, hint: first.hint, details });
  }
  const lines = sorted
    .slice(0, MAX_LISTED)
    .map((p) => `  ${p.where}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
  if (total > lines.length) lines.push(`  … and ${total - lines.length} more`);
  // Each line has its own place; `where` names the file (describe() appends it after the last line).
  return usageError(first.code, `${total} problems in ${file}:\n${lines.join('\n')}`, {
    where: file,
    details,
  });
}
