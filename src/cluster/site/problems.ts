/**
 * Problems found in a site file, each with its field path and `file:line:column`. All of them are
 * collected, then thrown as one usage error (exit 2), the way image set configurations are checked
 * (src/mirror/isc/problems.ts, whose position lookup and "did you mean" this reuses).
 */
import { lookupPosition, problemsError, type FieldPart } from '../../config/problems.js';
import type { PositionMap } from '../../config/positions.js';
import type { AirgapError } from '../../util/errors.js';

export { didYouMean } from '../../config/problems.js';

/** The stable error codes of the site file. */
export const SiteErrorCode = {
  /** The file could not be read. */
  Read: 'SITE_READ',
  /** The YAML itself does not parse. */
  Yaml: 'SITE_YAML',
  /** `apiVersion` or `kind` is missing or not a Site. */
  Kind: 'SITE_KIND',
  /** A key the schema does not know. */
  UnknownField: 'SITE_UNKNOWN_FIELD',
  /** A required field is missing or empty. */
  Required: 'SITE_REQUIRED',
  /** A wrong type or a bad value. */
  Invalid: 'SITE_INVALID',
  /** The same host name or MAC address twice. */
  Duplicate: 'SITE_DUPLICATE',
  /** Two settings that cannot be used together. */
  Conflict: 'SITE_CONFLICT',
  /** A file the site names is missing or unreadable. */
  File: 'SITE_FILE',
} as const;
export type SiteErrorCode = (typeof SiteErrorCode)[keyof typeof SiteErrorCode];

/** One problem. `where` is `file:line:column`. */
export interface SiteProblem {
  code: SiteErrorCode;
  path: string;
  message: string;
  hint?: string;
  where: string;
  line?: number;
  column?: number;
}

/** Collects problems while a site file is decoded and checked. */
export class SiteProblems {
  readonly list: SiteProblem[] = [];

  constructor(
    readonly file: string,
    readonly positions: PositionMap,
  ) {}

  /** `file:line:column` of a field (its value, or its key), or of its nearest ancestor. */
  where(path: string, part: FieldPart = 'value'): { where: string; line?: number; column?: number } {
    const pos = lookupPosition(this.positions, path, part);
    return pos
      ? { where: `${this.file}:${pos.line}:${pos.column}`, line: pos.line, column: pos.column }
      : { where: this.file };
  }

  /** Record a problem at `path`. The message should start with the field path. */
  add(
    code: SiteErrorCode,
    path: string,
    message: string,
    options: { hint?: string; part?: FieldPart } = {},
  ): void {
    this.list.push({
      code,
      path,
      message,
      ...(options.hint ? { hint: options.hint } : {}),
      ...this.where(path, options.part ?? 'value'),
    });
  }

  /** Throw everything collected as one usage error; nothing when there is nothing. */
  throwIfAny(): void {
    if (this.list.length > 0) throw siteProblemsError(this.file, this.list);
  }
}

/**
 * One AirgapError for a list of problems, sorted by position, with the code of the first. A single
 * problem keeps its own `where` and hint; several are listed one per line
 * (`file:line:column: message — hint`).
 */
export function siteProblemsError(file: string, problems: SiteProblem[]): AirgapError {
  return problemsError(file, problems);
}
