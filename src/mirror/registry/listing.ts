/**
 * The registry's paged listings: a repository's tags (`/v2/<repo>/tags/list`) and the catalog of
 * repositories (`/v2/_catalog`, token scope `registry:catalog:*`). Each page is read bounded,
 * parsed as JSON, and the next one followed through the `Link` header, on the same server only.
 */
import { AirgapError } from '../../util/errors.js';
import { readBounded } from '../../net/body.js';
import { MirrorError } from '../errors.js';
import { RegistryError } from './errors.js';
import { header, type RegistryRequest, type Response } from './transport.js';

/** The largest page of a listing read (a page of 1,000 long names is well under 1 MiB). */
const MAX_PAGE = 8 * 1024 * 1024;

/** A JSON body, or REGISTRY_ERROR saying whose it was. */
function parseJsonBody(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new AirgapError(MirrorError.REGISTRY_ERROR, `${what} is not JSON: ${(e as Error).message}`);
  }
}

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
  maxPages: number;
}

/** Every name of a paged listing, at most `maxPages` pages; `complete` when it reached its end. */
export async function listPages(
  send: (req: RegistryRequest) => Promise<Response>,
  o: ListingRequest,
): Promise<{ names: string[]; complete: boolean }> {
  const names: string[] = [];
  let path: string | undefined = o.path;
  for (let pages = 0; path; pages++) {
    if (pages >= o.maxPages) return { names, complete: false };
    const res = await send({ method: 'GET', path, ...o.auth, ok: [200], what: o.what });
    const page = await readBounded(res.body, MAX_PAGE);
    if (!page)
      throw new RegistryError(
        MirrorError.REGISTRY_ERROR,
        `${o.what}: a page is over ${MAX_PAGE / 1024 / 1024} MiB`,
        { registry: o.registry, status: res.statusCode },
      );
    const doc = parseJsonBody(page, o.what) as Record<string, string[] | null | undefined>;
    names.push(...(doc[o.field] ?? []));
    const link = header(res, 'link');
    const m = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
    const next = m ? new URL(m[1]!, o.base) : undefined;
    // The next page is on this registry, or the listing ends: a Link elsewhere is not followed.
    if (next && next.origin !== new URL(o.base).origin)
      throw new RegistryError(
        MirrorError.REGISTRY_ERROR,
        `${o.what} continues at ${next.origin}, another server; it is not followed`,
        { registry: o.registry, status: res.statusCode },
      );
    path = next ? `${next.pathname}${next.search}` : undefined;
  }
  return { names, complete: true };
}
