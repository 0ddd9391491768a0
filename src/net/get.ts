/**
 * A GET that follows redirects (a download's mirror, GitHub's release assets, a store behind a
 * CDN), with one undici Agent per host from the shared HTTP layer (http.ts), and a URL that is
 * safe to show (no credentials).
 */
import type { Dispatcher } from 'undici';
import { AirgapError } from '../util/errors.js';
import { DownloadFailure, downloadCode } from './errors.js';
import { createAgent, type TlsOptions } from './http.js';
import { netErrorCode, isTlsError } from './retry.js';
import { shownUrl } from './url.js';

/** An HTTP response as undici gives it. */
export type HttpResponse = Dispatcher.ResponseData;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export { shownUrl };

/** One dispatcher per host for the length of a download (one connection each), closed together. */
export class AgentPool {
  private readonly agents = new Map<string, Dispatcher>();

  constructor(private readonly tls: TlsOptions = {}) {}

  get(host: string): Dispatcher {
    let a = this.agents.get(host);
    if (!a) {
      a = createAgent(host, { ...this.tls, connections: 1 });
      this.agents.set(host, a);
    }
    return a;
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    // destroy, not close: a body abandoned after a fault must not keep close() waiting.
    await Promise.all(all.map((a) => a.destroy().catch(() => undefined)));
  }
}

/** Options of {@link getFollowingRedirects}. */
export interface GetOptions {
  headers?: Record<string, string>;
  /** Time limit for the response headers and for any pause in the body, in ms. */
  timeoutMs: number;
  /** Redirects followed before the last answer is returned as it is; default 5. */
  maxRedirects?: number;
  /** `<prefix>_TLS` is the code of a certificate failure. */
  errorPrefix: string;
}

/**
 * GET `target`, following redirects (the request headers, `Range` included, go to every hop). A
 * certificate failure is final: `<prefix>_TLS` naming the host and the CA flags. Any other network
 * error is returned as `{ error }` for the caller to retry. The response body must be consumed or
 * destroyed by the caller.
 */
export async function getFollowingRedirects(
  target: URL,
  agents: AgentPool,
  opts: GetOptions,
): Promise<{ res: HttpResponse; url: URL } | { error: string }> {
  let current = target;
  for (let hop = 0; ; hop++) {
    let res: HttpResponse;
    try {
      res = await agents.get(current.host).request({
        origin: current.origin,
        path: `${current.pathname}${current.search}`,
        method: 'GET',
        headers: opts.headers ?? {},
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
    } catch (e) {
      if (isTlsError(e)) {
        throw new AirgapError(
          downloadCode(opts.errorPrefix, DownloadFailure.TLS),
          `TLS verification failed for ${shownUrl(current)}: ${netErrorCode(e)}`,
          {
            where: shownUrl(current),
            cause: e,
            hint: `trust the CA that signed ${current.host}: install it into the system store (update-ca-trust), or give --ca-file or certs.d/${current.host}/ca.crt`,
          },
        );
      }
      return { error: `${netErrorCode(e) ?? (e as Error).name}: ${(e as Error).message}` };
    }
    const location = res.headers.location;
    if (REDIRECTS.has(res.statusCode) && location && hop < (opts.maxRedirects ?? 5)) {
      await res.body.dump().catch(() => undefined); // a redirect's body is only drained
      current = new URL(Array.isArray(location) ? location[0]! : location, current);
      continue;
    }
    return { res, url: current };
  }
}
