/**
 * The registry's paged listings: a repository's tags (`/v2/<repo>/tags/list`) and the catalog of
 * repositories (`/v2/_catalog`, token scope `registry:catalog:*`). Each page is read bounded,
 * parsed as JSON, and the next one followed through the `Link` header, on the same server only.
 *
 * A listing is bounded and complete, or it stops: every name must be a tag (or a repository path),
 * each page must bring names not seen before, a next link seen before is a loop, and the whole
 * listing has limits of pages, names, bytes and time. Past any of them REGISTRY_LISTING_INVALID
 * names the registry and the listing; nothing a caller does is based on part of it unless the
 * caller asked for part of it (`maxPages`, and then `complete` says so).
 */
import { readBounded } from '../../net/body.js';
import { MirrorError } from '../errors.js';
import { isValidRepository, isValidTag } from '../reference.js';
import { RegistryError } from './errors.js';
import { header, type RegistryRequest, type Response } from './transport.js';

/** The largest page of a listing read (a page of 1,000 long names is well under 1 MiB). */
const MAX_PAGE = 8 * 1024 * 1024;

/** What one listing may cost at most, whatever the registry sends. */
export const LISTING_LIMITS = {
  /** Pages (quay's largest repositories list some 100k tags: 100 pages of 1,000). */
  pages: 10_000,
  /** Names in all (a catalog of every repository of a large mirror is some 100k). */
  names: 1_000_000,
  /** Bytes of every page together. */
  bytes: 256 * 1024 * 1024,
  /** Time from the first request to the last page. */
  ms: 10 * 60 * 1000,
};

export interface ListingRequest {
  /** The registry's name and base URL (`https://host:port`). */
  registry: string;
  base: string;
  /** The first page: `/v2/<repo>/tags/list?n=1000` or `/v2/_catalog?n=1000`. */
  path: string;
  /** The field of each page that holds the names: `tags` or `repositories`. */
  field: 'tags' | 'repositories';
  /** What is listed, in words: `the tag list of host/repo`. */
  what: string;
  /** The request's auth: its repository (for credentials) and, for the catalog, its scope. */
  auth: Pick<RegistryRequest, 'repo' | 'scope'>;
  /** The pages a caller wants at most (then `complete` is false); the listing's own bounds apply anyway. */
  maxPages: number;
  /** The listing's bounds (tests make them small); default {@link LISTING_LIMITS}. */
  limits?: Partial<typeof LISTING_LIMITS>;
}

/** Every name of a paged listing, at most `maxPages` pages; `complete` when it reached its end. */
export async function listPages(
  send: (req: RegistryRequest) => Promise<Response>,
  o: ListingRequest,
): Promise<{ names: string[]; complete: boolean }> {
  const limits = { ...LISTING_LIMITS, ...o.limits };
  const stop = (why: string, status?: number): never => {
    throw new RegistryError(
      MirrorError.REGISTRY_LISTING_INVALID,
      `${o.what} ${why}; the listing was stopped`,
      {
        registry: o.registry,
        ...(status !== undefined ? { status } : {}),
      },
    );
  };
  const names = new Set<string>();
  const seenPaths = new Set<string>();
  const started = Date.now();
  let bytes = 0;
  let path: string | undefined = o.path;
  for (let pages = 0; path; pages++) {
    if (pages >= o.maxPages) return { names: [...names], complete: false };
    if (pages >= limits.pages) stop(`goes on past ${limits.pages} pages`);
    if (Date.now() - started > limits.ms) stop(`goes on past ${Math.round(limits.ms / 1000)} s`);
    seenPaths.add(path);
    const res = await send({ method: 'GET', path, ...o.auth, ok: [200], what: o.what });
    const page = await readBounded(res.body, MAX_PAGE);
    if (!page) stop(`has a page over ${MAX_PAGE / 1024 / 1024} MiB`, res.statusCode);
    bytes += page!.length;
    if (bytes > limits.bytes) stop(`is over ${limits.bytes / 1024 / 1024} MiB`, res.statusCode);
    let doc: unknown;
    try {
      doc = JSON.parse(page!.toString('utf8'));
    } catch (e) {
      stop(`sent a page that is not JSON (${(e as Error).message})`, res.statusCode);
    }
    const added = addNames(names, doc, o, stop);
    if (names.size > limits.names) stop(`lists over ${limits.names} names`, res.statusCode);
    const next = nextPage(res, o, stop);
    if (next && added === 0) stop('sent a page with no new name and a link to another', res.statusCode);
    if (next && seenPaths.has(next)) stop(`links back to a page it already sent (${next})`, res.statusCode);
    path = next;
  }
  return { names: [...names], complete: true };
}

/** The names of one page added to `names` (each a tag or a repository path); how many were new. */
function addNames(names: Set<string>, doc: unknown, o: ListingRequest, stop: (why: string) => never): number {
  const list = (doc as Record<string, unknown> | null)?.[o.field];
  if (list === null || list === undefined) return 0;
  if (!Array.isArray(list)) return stop(`has a "${o.field}" that is not a list`);
  const valid = o.field === 'tags' ? isValidTag : isValidRepository;
  const before = names.size;
  for (const n of list) {
    if (typeof n !== 'string' || !valid(n)) {
      const shown = JSON.stringify(typeof n === 'string' && n.length > 80 ? `${n.slice(0, 80)}…` : n);
      stop(`lists ${shown}, which is not a ${o.field === 'tags' ? 'tag' : 'repository path'}`);
    }
    names.add(n as string);
  }
  return names.size - before;
}

/** The path of the next page from the `Link` header, on this registry only; undefined at the end. */
function nextPage(
  res: Response,
  o: ListingRequest,
  stop: (why: string, status?: number) => never,
): string | undefined {
  const link = header(res, 'link');
  const m = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
  if (!m) return undefined;
  const next = URL.canParse(m[1]!, o.base) ? new URL(m[1]!, o.base) : undefined;
  if (!next) return stop(`has a next link that is not a URL`, res.statusCode);
  // The next page is on this registry, or the listing ends: a Link elsewhere is not followed.
  if (next.origin !== new URL(o.base).origin)
    return stop(`continues at ${next.origin}, another server; it is not followed`, res.statusCode);
  return `${next.pathname}${next.search}`;
}
