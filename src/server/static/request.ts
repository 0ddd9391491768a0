/**
 * One request of the boot-image server in flight: what the access log needs, filled in as the
 * answer goes out and logged once when the response closes (finished or not), and the small text
 * answers (errors, health) every part of the server sends the same way.
 */
import type http from 'node:http';
import type { AccessLogEntry } from './access-log.js';
import type { ReadAheadBuffers } from './pump.js';

/** What every request of one app shares: the served root, how it serves, the access log. */
export interface Ctx {
  root: string;
  /** Bytes per read from a file and write to a socket (each download has its own buffer of this size). */
  chunkBytes: number;
  /** The few buffers downloads may borrow to read ahead, never waited for. */
  readAhead: ReadAheadBuffers;
  /** Directories are listed (else a directory is 404). */
  directoryListing: boolean;
  log: (e: AccessLogEntry) => void;
}

/** One request in flight: what the access log needs, filled as it goes. */
export interface Req {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  started: number;
  time: Date;
  path: string;
  bytes: number;
  problem?: string;
}

/** Start a request: its access-log entry is written when the response closes. */
export function begin(req: http.IncomingMessage, res: http.ServerResponse, ctx: Ctx): Req {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const rr: Req = {
    req,
    res,
    started: performance.now(),
    time: new Date(),
    path: q < 0 ? url : url.slice(0, q),
    bytes: 0,
  };
  res.once('close', () => {
    const remote = req.socket.remoteAddress ?? '-';
    ctx.log({
      time: rr.time,
      remote: remote.startsWith('::ffff:') ? remote.slice(7) : remote,
      method: req.method ?? '-',
      path: rr.path,
      httpVersion: req.httpVersion,
      status: res.statusCode,
      bytes: rr.bytes,
      durationMs: performance.now() - rr.started,
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      ...(req.headers.referer ? { referer: req.headers.referer } : {}),
      aborted: !res.writableFinished,
      ...(rr.problem ? { problem: rr.problem } : {}),
    });
  });
  return rr;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
};

/** A small text response (errors, health), with a body only for GET. */
export function sendText(rr: Req, status: number, text: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(`${text}\n`);
  rr.res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(body.length),
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  if (rr.req.method === 'HEAD') {
    rr.res.end();
    return;
  }
  rr.bytes = body.length;
  rr.res.end(body);
}

/** An error answer: the status's reason phrase to the client, `problem` to the access log only. */
export function fail(rr: Req, status: number, problem: string): void {
  rr.problem = problem;
  sendText(rr, status, REASONS[status] ?? 'Error');
}
