/**
 * Answering for one regular file: its Content-Type, the validators (ETag, Last-Modified), the
 * preconditions (412, 304), and then the body as a whole (200), one range (206 with
 * Content-Range), several ranges (206 multipart/byteranges) or none that fits (416 with
 * `Content-Range: bytes *\/size`). The bytes themselves are streamed by pump.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { extname } from 'node:path';
import { checkPreconditions, etagOf, rangeToServe } from './conditional.js';
import { pump, type ByteRange } from './pump.js';
import type { Ctx, Req } from './request.js';

const CONTENT_TYPES: Record<string, string> = {
  '.iso': 'application/x-iso9660-image',
  '.img': 'application/octet-stream',
  '.raw': 'application/octet-stream',
  '.qcow2': 'application/octet-stream',
  '.json': 'application/json',
  '.ign': 'application/vnd.coreos.ignition+json',
  '.txt': 'text/plain; charset=utf-8',
  '.sha256': 'text/plain; charset=utf-8',
  '.sha256sum': 'text/plain; charset=utf-8',
  '.sig': 'application/pgp-signature',
  '.asc': 'application/pgp-signature',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.html': 'text/html; charset=utf-8',
  '.pem': 'application/x-pem-file',
  '.crt': 'application/x-pem-file',
  '.gz': 'application/gzip',
  '.xz': 'application/x-xz',
  '.zst': 'application/zstd',
  '.tar': 'application/x-tar',
};

/** The Content-Type of a file name: `.iso` is `application/x-iso9660-image`, `.img` and unknown ones `application/octet-stream`. */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** The framing of a multipart/byteranges body: a header before each range, a closing tail, and the total length. */
function multipartFraming(
  ranges: ByteRange[],
  type: string,
  size: number,
): { boundary: string; parts: Buffer[]; tail: Buffer; length: number } {
  const boundary = `airgap-${randomBytes(12).toString('hex')}`;
  const parts = ranges.map((r) =>
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Type: ${type}\r\nContent-Range: bytes ${r.start}-${r.end}/${size}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = ranges.reduce((n, r, i) => n + parts[i]!.length + r.end - r.start + 1, tail.length);
  return { boundary, parts, tail, length };
}

/**
 * Answer a request for the regular file open as `fd` (its stat `st`). `done` is called exactly
 * once, when the descriptor may be closed.
 */
export function sendFile(rr: Req, ctx: Ctx, fd: number, st: Stats, type: string, done: () => void): void {
  const { req, res } = rr;
  const size = st.size;
  const etag = etagOf(st);
  const mtime = Math.floor(st.mtimeMs / 1000);
  const base: Record<string, string> = {
    ETag: etag,
    'Last-Modified': st.mtime.toUTCString(),
    'Accept-Ranges': 'bytes',
  };
  const finish = (status: number, headers: Record<string, string>) => {
    res.writeHead(status, { ...base, ...headers });
    res.end();
    done();
  };
  const precondition = checkPreconditions(req.headers, etag, mtime);
  if (precondition?.status === 412) {
    rr.problem = precondition.problem;
    return finish(412, { 'Content-Length': '0' });
  }
  if (precondition?.status === 304) return finish(304, {});

  const range = rangeToServe(req, size, etag, mtime);
  if (range.kind === 'unsatisfiable') {
    rr.problem = `Range ${req.headers.range} outside ${size} bytes`;
    return finish(416, { 'Content-Range': `bytes */${size}`, 'Content-Length': '0' });
  }
  if (range.kind === 'none') {
    res.writeHead(200, { ...base, 'Content-Type': type, 'Content-Length': String(size) });
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return done();
    }
    return pump(rr, ctx, fd, [{ start: 0, end: size - 1 }], undefined, done);
  }
  if (range.ranges.length === 1) {
    const r = range.ranges[0]!;
    res.writeHead(206, {
      ...base,
      'Content-Type': type,
      'Content-Range': `bytes ${r.start}-${r.end}/${size}`,
      'Content-Length': String(r.end - r.start + 1),
    });
    return pump(rr, ctx, fd, [r], undefined, done);
  }
  const { boundary, parts, tail, length } = multipartFraming(range.ranges, type, size);
  res.writeHead(206, {
    ...base,
    'Content-Type': `multipart/byteranges; boundary=${boundary}`,
    'Content-Length': String(length),
  });
  pump(rr, ctx, fd, range.ranges, { parts, tail }, done);
}
