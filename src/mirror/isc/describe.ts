/**
 * Questions a command asks of a parsed configuration: where is this field, and which of the
 * content it asks for can this release not handle yet ("mirror.platform (isc.yaml:4) is not
 * supported yet").
 */
import { usageError } from '../../util/errors.js';
import { childPath, itemPath, lookupPosition, type FieldPart } from '../../config/positions.js';
import { IscErrorCode } from './errors.js';
import { sourceOf } from './source.js';
import type { AnyImageSetConfig } from './types.js';

/** A field's place in its file. `where` is `file:line:column`. */
export interface FieldLocation {
  file: string;
  line: number;
  column: number;
  where: string;
}

/** A field that is set in the configuration. `where` is `file:line:column` (or just the file). */
export interface SetField {
  path: string;
  where: string;
  location?: FieldLocation;
}

/**
 * Where `path` (like `mirror.additionalImages[1].name`) is in the file `config` was parsed from:
 * its key by default, or its value. A field that is not in the file (a default) gets the place of
 * its nearest ancestor. Undefined for a config that was not parsed by this module.
 */
export function positionOf(
  config: AnyImageSetConfig,
  path: string,
  part: FieldPart = 'key',
): FieldLocation | undefined {
  const source = sourceOf(config);
  if (!source) return undefined;
  const pos = lookupPosition(source.positions, path, part);
  if (!pos) return undefined;
  return {
    file: source.file,
    line: pos.line,
    column: pos.column,
    where: `${source.file}:${pos.line}:${pos.column}`,
  };
}

/** `mirror.operators[2].packages[0]` → `mirror.operators[].packages[]`. */
export function pathPattern(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}

// Values the parser fills in that the file may not have: not "set" unless written.
const DEFAULTED: ReadonlyArray<[RegExp, unknown]> = [[/\.channels\[\]\.type$/, 'ocp']];

/**
 * The topmost fields that are set (non-empty, not false) and not covered by `supported`, in file
 * order. `supported` holds path patterns (`mirror.additionalImages`, `mirror.platform.channels[].name`);
 * a pattern covers the field and everything under it. A pattern starting with `!` takes a
 * sub-field back out (`!mirror.additionalImages[].platforms`). `kind` and `apiVersion` are never
 * reported.
 */
export function describeUnsupported(
  config: AnyImageSetConfig,
  supportedPatterns: Iterable<string>,
): SetField[] {
  const supported = new Set(supportedPatterns);
  const negative = new Set([...supported].filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
  const positive = [...supported].filter((p) => !p.startsWith('!'));
  // The patterns that have a positive (or negative) pattern strictly below them.
  const abovePositive = ancestorPatterns(positive);
  const aboveNegative = ancestorPatterns(negative);
  const source = sourceOf(config);
  const found: SetField[] = [];

  // The path being visited, as segments (a key or an item index); its string is only made when
  // needed. `pattern` is pathPattern(path), kept alongside; child patterns are made once each.
  const segments: Array<string | number> = [];
  const pathNow = () =>
    segments.reduce<string>(
      (p, s, i) => (i === 0 ? String(s) : typeof s === 'number' ? itemPath(p, s) : childPath(p, s)),
      '',
    );
  const childPatterns = new Map<string, Map<string, string>>();
  const childPattern = (pattern: string, key: string): string => {
    let children = childPatterns.get(pattern);
    if (!children) childPatterns.set(pattern, (children = new Map()));
    let child = children.get(key);
    if (child === undefined) children.set(key, (child = childPath(pattern, key)));
    return child;
  };

  const visit = (value: unknown, pattern: string, covered: boolean): void => {
    if (!isSet(value)) return;
    if (
      source &&
      DEFAULTED.some(([re, d]) => d === value && re.test(pattern)) &&
      !source.positions.has(pathNow())
    )
      return;
    const state = supported.has(pattern) ? true : negative.has(pattern) ? false : covered;
    const mixed = state ? aboveNegative.has(pattern) : abovePositive.has(pattern);
    if (!mixed) {
      if (!state) {
        const path = pathNow();
        const location = positionOf(config, path);
        found.push({
          path,
          where: location?.where ?? source?.file ?? path,
          ...(location ? { location } : {}),
        });
      }
      return;
    }
    if (Array.isArray(value)) {
      const items = `${pattern}[]`;
      for (let i = 0; i < value.length; i++) {
        segments.push(i);
        visit(value[i], items, state);
        segments.pop();
      }
    } else if (value !== null && typeof value === 'object') {
      const fields = value as Record<string, unknown>;
      for (const k in fields) {
        if (!Object.hasOwn(fields, k)) continue;
        segments.push(k);
        visit(fields[k], childPattern(pattern, k), state);
        segments.pop();
      }
    }
  };
  for (const [key, value] of Object.entries(config)) {
    if (key === 'kind' || key === 'apiVersion') continue;
    segments.push(key);
    visit(value, pathPattern(key), false);
    segments.pop();
  }
  return found.sort((a, b) => (a.location?.line ?? 0) - (b.location?.line ?? 0));
}

/**
 * Throw one usage error (ISC_UNSUPPORTED) naming every set field `supported` does not cover, e.g.
 * `mirror.platform (isc.yaml:4) is not supported yet`. Does nothing when all is covered.
 */
export function assertSupported(config: AnyImageSetConfig, supported: Iterable<string>): void {
  const fields = describeUnsupported(config, supported);
  if (fields.length === 0) return;
  const at = (f: SetField) => `${f.path}${f.location ? ` (${f.location.file}:${f.location.line})` : ''}`;
  const message =
    fields.length === 1
      ? `${at(fields[0])} is not supported yet`
      : `these parts of the configuration are not supported yet:\n${fields.map((f) => `  ${at(f)}`).join('\n')}`;
  throw usageError(IscErrorCode.Unsupported, message, {
    where: fields[0].where,
    hint: 'remove these fields from the configuration, or mirror that content with oc-mirror for now',
    details: { fields: fields.map((f) => ({ path: f.path, where: f.where })) },
  });
}

/** Every pattern a field of `patterns` is below: `a.b[].c` → `a`, `a.b`, `a.b[]`. */
function ancestorPatterns(patterns: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of patterns) {
    for (let i = 1; i < p.length; i++) if (p[i] === '.' || p[i] === '[') out.add(p.slice(0, i));
  }
  return out;
}

/** Whether a value asks for anything: not absent, false, empty string, or empty list/mapping. */
function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.some(isSet);
  if (typeof value === 'object') {
    const fields = value as Record<string, unknown>;
    for (const k in fields) if (Object.hasOwn(fields, k) && isSet(fields[k])) return true;
    return false;
  }
  return true;
}
