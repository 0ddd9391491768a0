/**
 * Conditional and range requests against one file (RFC 9110 §13 and §14): a strong ETag from size,
 * mtime and inode; If-Match and If-Unmodified-Since (412), If-None-Match and If-Modified-Since
 * (304); the `Range` header, single or several ranges, and `If-Range` with an ETag or a date.
 * Pure functions of the headers and the file's stat, so each rule can be tested alone.
 */
import type { Stats } from 'node:fs';
import type http from 'node:http';

/** At most this many ranges in one request; more, or ranges that add up past the file size, get the whole file. */
const MAX_RANGES = 64;

/** A strong validator from size, mtime and inode: it changes whenever the file is rewritten or replaced. */
export function etagOf(st: Pick<Stats, 'size' | 'mtimeMs' | 'ino'>): string {
  return `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}-${st.ino.toString(16)}"`;
}

/** The entity tags of an If-Match / If-None-Match header (`*` stays `*`). */
function etagList(header: string): string[] {
  return header.match(/(?:W\/)?"[^"]*"|\*/g) ?? [];
}

const strongMatch = (tag: string, etag: string) => !tag.startsWith('W/') && tag === etag;
const weakMatch = (tag: string, etag: string) => tag.replace(/^W\//, '') === etag;

/** An HTTP date in whole seconds since the epoch, or undefined when it does not parse. */
function httpDate(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/**
 * What the preconditions of a request say, in the order of RFC 9110 §13.2.2, for a file whose
 * ETag is `etag` and whose mtime is `mtime` (whole seconds): 412 with why (for the access log),
 * 304, or undefined when the request goes on.
 */
export function checkPreconditions(
  h: http.IncomingHttpHeaders,
  etag: string,
  mtime: number,
): { status: 412; problem: string } | { status: 304 } | undefined {
  if (h['if-match'] !== undefined) {
    const tags = etagList(h['if-match']);
    if (!tags.some((t) => t === '*' || strongMatch(t, etag)))
      return { status: 412, problem: 'If-Match does not match' };
  } else {
    const ius = httpDate(h['if-unmodified-since']);
    if (ius !== undefined && mtime > ius)
      return { status: 412, problem: 'modified since If-Unmodified-Since' };
  }
  if (h['if-none-match'] !== undefined) {
    const tags = etagList(h['if-none-match']);
    if (tags.some((t) => t === '*' || weakMatch(t, etag))) return { status: 304 };
  } else {
    const ims = httpDate(h['if-modified-since']);
    if (ims !== undefined && mtime <= ims) return { status: 304 };
  }
  return undefined;
}

export type RangeResult =
  { kind: 'none' } | { kind: 'unsatisfiable' } | { kind: 'ranges'; ranges: { start: number; end: number }[] };

/**
 * A `Range` header against a file of `size` bytes (RFC 9110 §14.1.2): `none` when it is absent,
 * not in bytes, malformed, or asks for too much (then the whole file is sent), `unsatisfiable`
 * when no range overlaps the file (416), else the ranges in the order asked, each clipped to the
 * file (`end` inclusive).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return { kind: 'none' };
  const specs = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length === 0 || specs.length > MAX_RANGES) return { kind: 'none' };
  const ranges: { start: number; end: number }[] = [];
  for (const spec of specs) {
    const r = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
    if (!r || (r[1] === '' && r[2] === '')) return { kind: 'none' };
    if (r[1] === '') {
      const suffix = Number(r[2]);
      if (suffix > 0 && size > 0) ranges.push({ start: Math.max(0, size - suffix), end: size - 1 });
      continue;
    }
    const start = Number(r[1]);
    const last = r[2] === '' ? Infinity : Number(r[2]);
    if (last < start) return { kind: 'none' };
    if (start < size) ranges.push({ start, end: Math.min(last, size - 1) });
  }
  if (ranges.length === 0) return { kind: 'unsatisfiable' };
  const total = ranges.reduce((n, r) => n + r.end - r.start + 1, 0);
  if (ranges.length > 1 && total > size) return { kind: 'none' };
  return { kind: 'ranges', ranges };
}

/**
 * The ranges of a request to serve: `Range` applies to GET only, and an `If-Range` that does not
 * match the file (by strong ETag or by date) means the whole file.
 */
export function rangeToServe(
  req: http.IncomingMessage,
  size: number,
  etag: string,
  mtime: number,
): RangeResult {
  const h = req.headers;
  const range: RangeResult = req.method === 'GET' ? parseRange(h.range, size) : { kind: 'none' };
  const ifRange = h['if-range'];
  if (range.kind !== 'none' && ifRange !== undefined) {
    const v = String(ifRange).trim();
    const fresh = v.startsWith('"') || v.startsWith('W/') ? strongMatch(v, etag) : httpDate(v) === mtime;
    if (!fresh) return { kind: 'none' };
  }
  return range;
}
