/** Every error code src/net raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const NetError = {
  /** cannot read … …: … (net/http.ts) */
  TLS_FILE_UNREADABLE: 'TLS_FILE_UNREADABLE',
  /** … is written with a user name and password; they were not sent (net/url.ts) */
  URL_CREDENTIALS: 'URL_CREDENTIALS',
} as const;
export type NetError = (typeof NetError)[keyof typeof NetError];

/**
 * What can go wrong in a download. Each caller names its own prefix (`IMAGES_DOWNLOAD`,
 * `STREAM_URL`, `GRAPH_DATA`; `DOWNLOAD` by default), so the codes a person sees are
 * `<prefix>_<failure>`: `IMAGES_DOWNLOAD_DIGEST_MISMATCH`, `GRAPH_DATA_TLS`, …
 */
export const DownloadFailure = {
  /** Not an http(s) URL (exit 2). */
  URL_INVALID: 'URL_INVALID',
  /** The expected sha256 is not 64 hex digits (exit 2). */
  SHA256_INVALID: 'SHA256_INVALID',
  /** The destination exists and is not a file (exit 2). */
  DEST_INVALID: 'DEST_INVALID',
  /** The server's certificate was refused. */
  TLS: 'TLS',
  /** The server answered with a status other than 200/206. */
  STATUS: 'STATUS',
  /** The partial file could not be written. */
  WRITE_FAILED: 'WRITE_FAILED',
  /** The bytes do not hash to the expected sha256. */
  DIGEST_MISMATCH: 'DIGEST_MISMATCH',
  /** The server could not be reached, after retries. */
  UNREACHABLE: 'UNREACHABLE',
  /** More or fewer bytes than the expected size. */
  SIZE_MISMATCH: 'SIZE_MISMATCH',
} as const;
export type DownloadFailure = (typeof DownloadFailure)[keyof typeof DownloadFailure];

/** The code of a download failure under a caller's prefix: `downloadCode('GRAPH_DATA', 'TLS')` is `GRAPH_DATA_TLS`. */
export function downloadCode(prefix: string, failure: DownloadFailure): string {
  return `${prefix}_${failure}`;
}
