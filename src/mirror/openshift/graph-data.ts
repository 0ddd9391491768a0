/**
 * The graph data of the OpenShift Update Service: the tarball the update service publishes
 * (`/api/upgrades_info/graph-data`, a tar.gz of the cincinnati-graph-data repository), found from
 * the graph endpoint (so --graph-url and UPDATE_URL_OVERRIDE move it too) and downloaded the way
 * every other airgap download is: proxy from the environment, TLS options, redirects, retries with
 * backoff. The bytes are checked as they stream (gzip magic first, then the whole tar) and land
 * atomically, so a proxy's HTML page or a truncated body never replaces a good tarball. The graph
 * image is built from it (graph-image.ts).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';
import { AirgapError, messageOf, usageError } from '../../util/errors.js';
import { writeStreamAtomic } from '../../util/fs.js';
import { AgentPool, getFollowingRedirects, shownUrl } from '../../net/get.js';
import type { TlsOptions } from '../../net/http.js';
import { backoffMs, isRetryableStatus, netErrorCode, retryAfterMs } from '../../net/retry.js';
import { OCP_UPDATE_URL } from './graph.js';
import { MirrorError } from '../errors.js';
import { openTar } from '../tar-read.js';

/** The graph-data tarball of the public update service. */
export const OCP_GRAPH_DATA_URL = 'https://api.openshift.com/api/upgrades_info/graph-data';

const GRAPH_DATA_PATH = '/api/upgrades_info/graph-data';

/**
 * The graph-data tarball URL for a graph endpoint: a trailing `/v1/graph` becomes `/graph-data`
 * (`https://api.openshift.com/api/upgrades_info/v1/graph` → `…/api/upgrades_info/graph-data`), so
 * UPDATE_URL_OVERRIDE and --graph-url move the graph-data download too. Any other endpoint keeps
 * its scheme and host with the public path, which is what oc-mirror does with UPDATE_URL_OVERRIDE
 * (graphURLFromUpdateURL). The endpoint's query is not carried over.
 */
export function graphDataUrl(graphEndpoint: string = OCP_UPDATE_URL): string {
  let u: URL;
  try {
    u = new URL(graphEndpoint);
  } catch {
    // new URL fails only on a string that is not a URL: said so.
    throw usageError(MirrorError.GRAPH_URL_INVALID, `the update graph URL is not a URL: ${graphEndpoint}`, {
      hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
    });
  }
  u.search = '';
  u.hash = '';
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith('/v1/graph')
    ? `${path.slice(0, -'/v1/graph'.length)}/graph-data`
    : GRAPH_DATA_PATH;
  return u.href;
}

/** Options of {@link downloadGraphData}: TLS as for every other endpoint; the proxy comes from the environment. */
export interface DownloadGraphDataOptions extends TlsOptions {
  /** Retries after the first attempt on network errors, 408, 429 and 5xx; default 4. */
  retries?: number;
  /** First backoff in ms; default 250. */
  baseDelayMs?: number;
  /** Time limit for the response headers and for any pause in the body, in ms; default 60 s. */
  timeoutMs?: number;
}

/** What {@link downloadGraphData} fetched. */
export interface GraphDataDownload {
  /** The URL finally read (after redirects), without credentials. */
  url: string;
  bytes: number;
  /** sha256 of the tarball as downloaded. */
  digest: string;
}

const MAX_REDIRECTS = 5;

const UNREACHABLE_HINT =
  'check the network, or the proxy (HTTPS_PROXY, NO_PROXY); or point --graph-url / UPDATE_URL_OVERRIDE at an ' +
  'update service that serves /api/upgrades_info/graph-data';

/** GRAPH_DATA_INVALID: the graph data at `where` (a URL, or a file on disk) is not a usable tar.gz. */
export function invalidData(where: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError(
    MirrorError.GRAPH_DATA_INVALID,
    `the graph data at ${where} is not a tar.gz: ${why}`,
    {
      where,
      cause,
      hint:
        'check that --graph-url / UPDATE_URL_OVERRIDE points at an OpenShift update service (a proxy or captive ' +
        'portal may answer with a page of its own)',
    },
  );
}

/** A printable excerpt of the first bytes of a body that should have been gzip. */
export function excerpt(b: Buffer): string {
  return JSON.stringify(b.subarray(0, 40).toString('latin1'));
}

/**
 * Checks bytes as they stream past: the gzip magic on the first two bytes (so an HTML page fails
 * at once), then the whole archive through the tar reader (tar-read.ts: inflated within the limits
 * of graph data, up to the tar's end) and a tar parser, so a truncated or corrupt tarball never
 * replaces a good one.
 */
class TarGzCheck {
  private head = Buffer.alloc(0);
  /** The body as it arrives, read by {@link run}. */
  private readonly feed = new PassThrough();
  private error: unknown;
  private entries = 0;
  private readonly done: Promise<void>;

  constructor(private readonly where: string) {
    this.feed.on('error', () => undefined); // a failed check is said by write() and finish()
    this.done = this.run().catch((e: unknown) => {
      this.error ??= e;
    });
  }

  private async run(): Promise<void> {
    const opened = await openTar(this.feed, {
      kind: 'graph-data',
      what: `the graph data at ${this.where}`,
      zstd: () => invalidData(this.where, 'it is zstd-compressed'),
    });
    const parser = new Parser({ strict: true });
    let failure: unknown;
    parser.on('entry', (e: ReadEntry) => {
      this.entries++;
      e.resume();
    });
    parser.on('error', (e: unknown) => (failure ??= e));
    parser.on('abort', (e: unknown) => (failure ??= e));
    try {
      for await (const chunk of opened.tar) {
        parser.write(chunk);
        if (failure !== undefined) throw failure;
      }
      await new Promise<void>((resolve) => parser.end(resolve));
      if (failure !== undefined) throw failure;
      await opened.rest(); // past the tar's end: consumed, not inflated nor parsed
    } finally {
      opened.destroy();
    }
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.head.length < 2) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 64)]);
      if (this.head.length >= 2 && (this.head[0] !== 0x1f || this.head[1] !== 0x8b)) {
        throw invalidData(this.where, `the body is not gzip (it starts with ${excerpt(this.head)})`);
      }
    }
    this.rethrow();
    if (!this.feed.write(chunk)) await Promise.race([once(this.feed, 'drain'), this.done]);
    this.rethrow();
  }

  private rethrow(): void {
    const e = this.error;
    if (e instanceof AirgapError) throw e;
    if (e) throw invalidData(this.where, messageOf(e), e);
  }

  /** The download broke off: stop reading (what was fed is not checked further). */
  abandon(): void {
    this.feed.destroy();
  }

  async finish(): Promise<void> {
    if (this.head.length < 2)
      throw invalidData(this.where, `the body is empty or too short (${excerpt(this.head)})`);
    this.feed.end();
    await this.done;
    this.rethrow();
    if (this.entries === 0) throw invalidData(this.where, 'the archive holds no entries');
  }
}

/** The graph-data URL parsed; GRAPH_URL_INVALID unless it is an http(s) URL. */
function downloadTarget(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    // new URL fails only on a string that is not a URL: said so.
    throw usageError(MirrorError.GRAPH_URL_INVALID, `the graph-data URL is not a URL: ${url}`, {
      hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
    });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw usageError(
      MirrorError.GRAPH_URL_INVALID,
      `the graph-data URL is not http(s): ${shownUrl(target)}`,
      {
        hint: `set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ${OCP_UPDATE_URL}`,
      },
    );
  }
  return target;
}

/**
 * Download the graph-data tarball to `dest`: streamed to a temp file beside it, checked (gzip, a
 * readable tar), then renamed, so `dest` is either the previous file or a complete new one.
 * Redirects are followed; network errors, 408, 429 and 5xx are retried with backoff. Failures:
 * GRAPH_DATA_UNREACHABLE (network, HTTP status), GRAPH_DATA_TLS, GRAPH_DATA_INVALID (not a tar.gz),
 * each naming the URL.
 */
export async function downloadGraphData(
  url: string,
  dest: string,
  opts: DownloadGraphDataOptions = {},
): Promise<GraphDataDownload> {
  const target = downloadTarget(url);
  const first = shownUrl(target);
  const retries = opts.retries ?? 4;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const backoff = (attempt: number, retryAfter?: number) =>
    backoffMs(attempt + 1, { baseMs: opts.baseDelayMs ?? 250, maxMs: 15_000, retryAfterMs: retryAfter });
  let last = '';
  for (let attempt = 0; attempt <= retries; attempt++) {
    const agents = new AgentPool(opts);
    try {
      const got = await getFollowingRedirects(target, agents, {
        headers: { accept: 'application/gzip, application/x-gzip, application/octet-stream, */*' },
        timeoutMs,
        maxRedirects: MAX_REDIRECTS,
        errorPrefix: 'GRAPH_DATA',
      });
      if ('error' in got) {
        last = got.error;
        if (attempt < retries) await sleep(backoff(attempt));
        continue;
      }
      const res = got.res;
      const where = shownUrl(got.url);
      if (isRetryableStatus(res.statusCode)) {
        await res.body.dump().catch(() => undefined); // the status is the failure; its body is only drained
        last = `HTTP ${res.statusCode}`;
        if (attempt < retries) await sleep(backoff(attempt, retryAfterMs(res.headers['retry-after'])));
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const text = await res.body.text().catch(() => ''); // the status is the failure; the body only adds words
        throw new AirgapError(
          MirrorError.GRAPH_DATA_UNREACHABLE,
          `${where} answered HTTP ${res.statusCode}: ${text.slice(0, 200).trim() || '(empty body)'}`,
          { where, hint: UNREACHABLE_HINT, details: { status: res.statusCode } },
        );
      }
      const check = new TarGzCheck(where);
      const hash = createHash('sha256');
      let bytes = 0;
      const body = res.body;
      async function* checked(): AsyncGenerator<Buffer> {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          await check.write(chunk);
          hash.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      }
      try {
        await writeStreamAtomic(dest, Readable.from(checked()), { check: () => check.finish() });
      } catch (e) {
        body.destroy();
        check.abandon();
        if (e instanceof AirgapError) throw e;
        last = `the download broke off: ${netErrorCode(e) ?? (e as Error).message}`;
        if (attempt < retries) await sleep(backoff(attempt));
        continue;
      }
      return { url: where, bytes, digest: `sha256:${hash.digest('hex')}` };
    } finally {
      await agents.close();
    }
  }
  throw new AirgapError(
    MirrorError.GRAPH_DATA_UNREACHABLE,
    `cannot download the graph data from ${first} after ${retries + 1} attempts: ${last}`,
    { where: first, hint: UNREACHABLE_HINT },
  );
}
