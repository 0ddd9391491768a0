/**
 * A path segment built from outside input: a chart's name and version from a repository index, a
 * host from a URL, a file name from a listing. Like a Digest, a name from outside becomes part of
 * a file path only as a PathSegment: one file or directory name, never a separator, `.` or `..`, a
 * NUL, a control character or nothing at all. It is checked where it enters ({@link pathSegment})
 * and again where a path is made ({@link joinSegments}, which also checks that the path it makes
 * stays below its base), so a name from an index can never write outside the workspace.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AirgapError, CommonError } from './errors.js';

declare const validSegment: unique symbol;

/** One file or directory name known to stay where it is joined. */
export type PathSegment = string & { readonly [validSegment]: true };

/** The longest file name Linux file systems take (bytes). */
const MAX_SEGMENT_BYTES = 255;

/** Why `v` cannot be one path segment, or undefined when it can. */
export function segmentProblem(v: unknown): string | undefined {
  if (typeof v !== 'string') return 'it is not a string';
  if (v === '') return 'it is empty';
  if (v === '.' || v === '..') return `"${v}" names a directory, not a file`;
  if (v.includes('/') || v.includes('\\')) return 'it holds a path separator';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(v)) return 'it holds a NUL or control character';
  if (Buffer.byteLength(v) > MAX_SEGMENT_BYTES) return `it is over ${MAX_SEGMENT_BYTES} bytes`;
  return undefined;
}

/** Whether `v` is one safe path segment. */
export function isPathSegment(v: unknown): v is PathSegment {
  return segmentProblem(v) === undefined;
}

/** `v` shown for an error: JSON-quoted and cut short (it came from outside). */
export function shownInput(v: unknown, max = 80): string {
  return JSON.stringify(typeof v === 'string' && v.length > max ? `${v.slice(0, max)}…` : v) ?? String(v);
}

/**
 * `v` as a PathSegment, or PATH_SEGMENT_INVALID naming `where` (`helm repository "x" index.yaml
 * entries["…"]`) and why.
 */
export function pathSegment(v: unknown, where: string): PathSegment {
  const problem = segmentProblem(v);
  if (problem === undefined) return v as PathSegment;
  throw new AirgapError(
    CommonError.PATH_SEGMENT_INVALID,
    `${where}: ${shownInput(v)} cannot name a file: ${problem}`,
    { hint: 'the input that names it was refused; nothing was written for it' },
  );
}

/**
 * `base` joined with checked segments: each is checked again here, and the result must lie below
 * `base` (PATH_SEGMENT_INVALID otherwise). The one way a name from outside becomes a path.
 */
export function joinSegments(base: string, ...segments: PathSegment[]): string {
  for (const s of segments) pathSegment(s, 'a path below ' + base);
  const path = join(base, ...segments);
  const rel = relative(resolve(base), resolve(path));
  if (segments.length > 0 && (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel))) {
    throw new AirgapError(CommonError.PATH_SEGMENT_INVALID, `${path} is not below ${base}`, {
      hint: 'the input that names it was refused; nothing was written for it',
    });
  }
  return path;
}
