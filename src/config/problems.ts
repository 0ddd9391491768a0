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

/** At most this many problems are listed in the message; the error's details hold them all. */
const MAX_LISTED = 50;

/** Collects problems while a configuration is decoded and checked. */
export class Problems<C extends string = string> {
  readonly list: Problem<C>[] = [];

  constructor(
    readonly file: string,
    readonly positions: PositionMap,
  ) {}

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
    if (this.list.length > 0) throw problemsError(this.file, this.list);
  }
}

/**
 * One AirgapError for a list of problems, sorted by position, with the code of the first. A single
 * problem keeps its own `where` and hint; several are listed one per line (`file:line:col: message — hint`).
 */
export function problemsError(file: string, problems: readonly Problem[]): AirgapError {
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
