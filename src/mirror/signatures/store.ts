/**
 * The release signature store the cluster version operator reads: `<store>/sha256=<hex>/signature-<n>`,
 * n = 1, 2, … until the store has no more. oc-mirror v2 reads the same store (overridable with
 * OCP_SIGNATURE_URL); so does airgap (--signature-url).
 */
import { getBytes, type TlsOptions } from '../../net/http.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** oc-mirror v2's default store. */
export const DEFAULT_SIGNATURE_URL =
  'https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release';

/** Stores answer 404 for a missing object; buckets served from GCS answer 403. */
const ABSENT = [404, 403];

/** `<base>/sha256=<hex>/signature-<n>`. */
export function signatureUrl(base: string, digest: string, n: number): string {
  const [algo, hex] = digest.split(':') as [string, string];
  return `${base.replace(/\/+$/, '')}/${algo}=${hex}/signature-${n}`;
}

/** Every signature the store holds for a release digest (none is an empty list, not an error). */
export async function fetchReleaseSignatures(
  digest: string,
  o: { baseUrl: string; tls?: TlsOptions; maxSignatures?: number; retries?: number },
): Promise<Buffer[]> {
  try {
    new URL(o.baseUrl);
  } catch {
    throw usageError(MirrorError.SIGNATURE_URL_INVALID, `the signature store ${o.baseUrl} is not a URL`, {
      hint: 'give --signature-url (or OCP_SIGNATURE_URL) as https://host/path',
    });
  }
  const out: Buffer[] = [];
  for (let n = 1; n <= (o.maxSignatures ?? 16); n++) {
    const url = signatureUrl(o.baseUrl, digest, n);
    let body: Buffer | undefined;
    try {
      body = await getBytes(url, {
        ...o.tls,
        absent: ABSENT,
        errorPrefix: 'SIGNATURE_STORE',
        ...(o.retries !== undefined ? { retries: o.retries } : {}),
      });
    } catch (e) {
      if (!(e instanceof AirgapError)) throw e;
      throw new AirgapError(
        MirrorError.SIGNATURE_STORE_UNREACHABLE,
        `cannot read the release signature ${url}: ${e.message}`,
        {
          where: url,
          cause: e,
          hint:
            e.hint ??
            'point --signature-url (or OCP_SIGNATURE_URL) at a reachable signature store, or a copy of it on the connected side',
        },
      );
    }
    if (body === undefined) break;
    out.push(body);
  }
  return out;
}
