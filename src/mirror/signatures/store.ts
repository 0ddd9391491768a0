/**
 * The release signature store the cluster version operator reads: `<store>/sha256=<hex>/signature-<n>`,
 * n = 1, 2, … until the store has no more (containers/image docs/signature-protocols.md). oc-mirror
 * v2 reads the same store (overridable with OCP_SIGNATURE_URL); so does airgap (--signature-url).
 * The requests, retries and TLS are the net kit's (getBytes).
 */
import { open } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { getBytes, type TlsOptions } from '../../net/http.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** oc-mirror v2's default store (internal/pkg/release/signature.go). */
export const DEFAULT_SIGNATURE_URL =
  'https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release';

/** What a store answers for a missing object: 404, and 403 from buckets served by GCS. */
const ABSENT = [404, 403];

/** The largest signature file read from disk (containers/image's limit for a signature body). */
const MAX_SIGNATURE_BYTES = 4 * 1024 * 1024;

/** How many signatures of one digest are read at most (the store holds one or two). */
const MAX_SIGNATURES = 16;

const STORE_HINT =
  'point --signature-url (or OCP_SIGNATURE_URL) at a reachable signature store, or at a copy of it on this side of the air gap';

/** `<base>/sha256=<hex>/signature-<n>`. */
export function signatureUrl(base: string, digest: string, n: number): string {
  const [algo, hex] = digest.split(':') as [string, string];
  return `${base.replace(/\/+$/, '')}/${algo}=${hex}/signature-${n}`;
}

/** A store URL as messages show it: without any user or password it carries. */
export function shownStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    // Not a URL, so no credentials in it to hide: shown as given.
    return url;
  }
}

/** Options of {@link fetchReleaseSignatures}. */
export interface SignatureStoreOptions {
  /** The store (--signature-url, OCP_SIGNATURE_URL, or {@link DEFAULT_SIGNATURE_URL}). */
  baseUrl: string;
  /** CA files, certs.d and the TLS opt-out, as for registries. */
  tls?: TlsOptions;
  /** Stop after this many signatures; default 16. */
  maxSignatures?: number;
  /** Retries per request after the first attempt (the net kit's default: 4). */
  retries?: number;
  /** First backoff between attempts, in ms (the net kit's default: 250). */
  baseDelayMs?: number;
}

/** A usage error unless `base` is an http(s) URL. */
function checkStoreUrl(base: string): void {
  let url: URL | undefined;
  try {
    url = new URL(base);
  } catch {
    url = undefined; // not a URL: refused below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw usageError(
      MirrorError.SIGNATURE_URL_INVALID,
      `the signature store ${JSON.stringify(shownStoreUrl(base))} is not an http(s) URL`,
      {
        hint: `give --signature-url (or OCP_SIGNATURE_URL) as https://host/path, e.g. ${DEFAULT_SIGNATURE_URL}`,
      },
    );
}

/**
 * Every signature the store holds for a release digest, in order (none is an empty list, not an
 * error). A store that cannot be reached, fails TLS, or keeps answering an error after the retries
 * is SIGNATURE_STORE_UNREACHABLE naming the URL.
 */
export async function fetchReleaseSignatures(digest: string, o: SignatureStoreOptions): Promise<Buffer[]> {
  checkStoreUrl(o.baseUrl);
  return fetchSignatureSeries((n) => signatureUrl(o.baseUrl, digest, n), o, {
    what: `the release signatures of ${digest} from the signature store`,
    hint: STORE_HINT,
    store: o.baseUrl,
  });
}

/**
 * Signatures `urlFor(1)`, `urlFor(2)`, … until the first that is absent: the numbering of the
 * release store and of a registries.d lookaside alike. `file://` URLs are read from disk (as
 * containers/image reads a file lookaside); anything else with the net kit.
 */
export async function fetchSignatureSeries(
  urlFor: (n: number) => string,
  o: Omit<SignatureStoreOptions, 'baseUrl'>,
  say: { what: string; hint: string; store: string },
): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let n = 1; n <= (o.maxSignatures ?? MAX_SIGNATURES); n++) {
    const url = urlFor(n);
    let body: Buffer | undefined;
    try {
      body = url.startsWith('file:')
        ? await readLocal(url)
        : await getBytes(url, {
            ...o.tls,
            absent: ABSENT,
            errorPrefix: 'SIGNATURE_STORE',
            maxBytes: MAX_SIGNATURE_BYTES,
            ...(o.retries !== undefined ? { retries: o.retries } : {}),
            ...(o.baseDelayMs !== undefined ? { baseDelayMs: o.baseDelayMs } : {}),
          });
    } catch (e) {
      if (!(e instanceof AirgapError)) throw e;
      // The net kit names the URL in its message; its hint (the CA for a TLS failure) comes first.
      throw new AirgapError(
        MirrorError.SIGNATURE_STORE_UNREACHABLE,
        `cannot read ${say.what}: ${e.message}`,
        {
          where: shownStoreUrl(url),
          cause: e,
          hint: e.hint ? `${e.hint}; or ${say.hint}` : say.hint,
          details: { store: shownStoreUrl(say.store), ...(e.details ?? {}) },
        },
      );
    }
    if (body === undefined) break;
    out.push(body);
  }
  return out;
}

/** A signature file of a `file://` store; undefined when there is none. */
async function readLocal(url: string): Promise<Buffer | undefined> {
  const path = fileURLToPath(url);
  try {
    const fh = await open(path, 'r');
    try {
      if ((await fh.stat()).size > MAX_SIGNATURE_BYTES)
        throw new AirgapError(
          MirrorError.SIGNATURE_STORE_UNREACHABLE,
          `${path} is over ${MAX_SIGNATURE_BYTES} bytes: not a signature`,
        );
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw new AirgapError(
      MirrorError.SIGNATURE_STORE_UNREACHABLE,
      `cannot read ${path}: ${(e as Error).message}`,
    );
  }
}
