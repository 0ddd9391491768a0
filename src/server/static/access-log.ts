/**
 * The boot-image server's access log: one structured entry per response, and its line in combined
 * log format (what web server log tools read). Query strings are never logged, and every field is
 * escaped so that a line stays one line whatever a client sends.
 */

/** One served request, for the access log. */
export interface AccessLogEntry {
  /** When the request arrived. */
  time: Date;
  /** Client address (IPv4-mapped IPv6 addresses shown as IPv4). */
  remote: string;
  method: string;
  /** The request path without its query string. */
  path: string;
  httpVersion: string;
  status: number;
  /** Body bytes sent (less than the length announced when the client went away). */
  bytes: number;
  durationMs: number;
  userAgent?: string;
  referer?: string;
  /** The connection closed before the response was complete. */
  aborted: boolean;
  /** Why the answer is an error, for the operator (never sent to the client). */
  problem?: string;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `[10/Oct/2000:13:55:36 +0000]`, in UTC. */
function clfDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** Quote a log field: control characters, `"`, `\` and non-ASCII as \xHH, so a line stays one line. */
function logField(s: string | undefined): string {
  if (!s) return '-';
  return s.replace(/[^\x20-\x7e]|["\\]/g, (c) => {
    const code = c.charCodeAt(0);
    return code < 256
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * One line in combined log format, then the duration in seconds, then `aborted` when the client
 * went away, then the problem in quotes when there is one:
 * `127.0.0.1 - - [22/Nov/2026:04:03:21 +0000] "GET /images/x.iso HTTP/1.1" 206 1024 "-" "curl/7.88.1" 0.002`
 */
export function formatAccessLog(e: AccessLogEntry): string {
  const extra = `${e.aborted ? ' aborted' : ''}${e.problem ? ` "${logField(e.problem)}"` : ''}`;
  return `${e.remote} - - [${clfDate(e.time)}] "${logField(e.method)} ${logField(e.path)} HTTP/${e.httpVersion}" ${e.status} ${e.bytes || '-'} "${logField(e.referer)}" "${logField(e.userAgent)}" ${(e.durationMs / 1000).toFixed(3)}${extra}`;
}
