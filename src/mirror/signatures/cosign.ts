/**
 * Sigstore signatures in cosign's tag scheme, as containers/image reads them with
 * `use-sigstore-attachments: true` (what CRI-O does for a ClusterImagePolicy):
 *
 * - the signatures of the image `repo@sha256:<hex>` are a small OCI image tagged
 *   `sha256-<hex>.sig` in the same repository;
 * - each layer of media type `application/vnd.dev.cosign.simplesigning.v1+json` is one signature:
 *   the blob is the signed simple-signing payload (simple-signing.ts), the annotation
 *   `dev.cosignproject.cosign/signature` its base64 signature; cosign may add a Fulcio certificate,
 *   its chain, a Rekor bundle and an RFC 3161 timestamp as further annotations. Those are kept as
 *   they are (they travel with the manifest), but only keyed signatures are verified here.
 *
 * Verification is containers/image's: SHA-256 over the payload bytes, whatever the key type
 * (ECDSA with a DER signature, RSA PKCS#1 v1.5 or PSS, Ed25519 over the message itself).
 */
import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { AirgapError, usageError } from '../../util/errors.js';
import { sha256Digest } from '../digest.js';
import { MirrorError } from '../errors.js';
import { parseManifest, type Descriptor } from '../manifest.js';
import { parseSimpleSigning, type SignedClaim } from './simple-signing.js';

/** Media type of a layer that is one simple-signing signature. */
export const COSIGN_SIGNATURE_MEDIA_TYPE = 'application/vnd.dev.cosign.simplesigning.v1+json';
/** The layer annotation holding the base64 signature of the layer's payload. */
export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
/** The suffix of a signature tag (`sha256-<hex>.sig`). */
export const COSIGN_TAG_SUFFIX = '.sig';
/** The largest payload read: containers/image's limit for a signature body (4 MiB). */
const MAX_COSIGN_PAYLOAD = 4 * 1024 * 1024;

const DIGEST_RE = /^sha256:([0-9a-f]{64})$/;
const TAG_RE = /^sha256-([0-9a-f]{64})\.sig$/;
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

/** The tag cosign stores the signatures of `sha256:<hex>` under: `sha256-<hex>.sig`. */
export function cosignTag(digest: string): string {
  const m = DIGEST_RE.exec(digest);
  if (!m)
    throw usageError(MirrorError.REF_INVALID, `"${digest}" is not a sha256 digest`, {
      hint: 'Sigstore signature tags are named after a sha256:<64 hex> manifest digest',
    });
  return `sha256-${m[1]}${COSIGN_TAG_SUFFIX}`;
}

/** The digest a signature tag is about (`sha256-<hex>.sig` → `sha256:<hex>`); undefined for any other tag. */
export function signedDigestOfTag(tag: string): string | undefined {
  const m = TAG_RE.exec(tag);
  return m ? `sha256:${m[1]}` : undefined;
}

/** One signature of a `.sig` manifest: one simple-signing layer. */
export interface CosignSignature {
  /** The layer as the manifest lists it; its annotations (certificate, bundle, …) untouched. */
  layer: Descriptor;
  /** The signed bytes: the layer's blob, checked against its digest and size. */
  payload: Buffer;
  /** Base64 of the signature over `payload`. */
  signature: string;
  /** What the payload claims (not yet trusted), or why it is not a simple-signing document. */
  claim?: SignedClaim;
  claimError?: string;
}

/** Fetch one blob of the signature's repository (RegistryClient.getBlobBytes fits). */
export type SignatureBlobFetcher = (digest: string, size: number) => Promise<Uint8Array>;

function invalid(what: string, why: string): AirgapError {
  return new AirgapError(
    MirrorError.SIGSTORE_SIGNATURE_INVALID,
    `${what} is not a cosign signature: ${why}`,
    {
      hint: 'the repository holds a sha256-<hex>.sig tag cosign did not write; check it with `skopeo inspect --raw`',
    },
  );
}

/**
 * The signatures one `sha256-<hex>.sig` manifest holds: for each simple-signing layer, its payload
 * (fetched and digest-checked), its signature and the claim the payload makes. Layers of other
 * media types are skipped, as containers/image skips them. Nothing is verified here.
 */
export async function readCosignSignatures(
  manifestBytes: Uint8Array,
  fetchBlob: SignatureBlobFetcher,
  what = 'the signature manifest',
): Promise<CosignSignature[]> {
  const m = parseManifest(Buffer.from(manifestBytes), undefined, what);
  if (m.kind !== 'image') throw invalid(what, 'it is an image index, not an image manifest');
  const out: CosignSignature[] = [];
  for (const [i, layer] of m.layers.entries()) {
    if (layer.mediaType !== COSIGN_SIGNATURE_MEDIA_TYPE) continue;
    const at = `${what} layers[${i}]`;
    const signature = layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION];
    if (typeof signature !== 'string' || signature === '')
      throw invalid(at, `it has no ${COSIGN_SIGNATURE_ANNOTATION} annotation`);
    if (layer.size > MAX_COSIGN_PAYLOAD)
      throw invalid(at, `its payload is ${layer.size} bytes, over the ${MAX_COSIGN_PAYLOAD}-byte limit`);
    const payload = Buffer.from(await fetchBlob(layer.digest, layer.size));
    const got = sha256Digest(payload);
    if (got !== layer.digest || payload.length !== layer.size)
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_MISMATCH,
        `${at}: the payload (${payload.length} bytes) hashes to ${got}, the manifest says ${layer.digest} (${layer.size} bytes)`,
        { hint: 'the payload was altered at the source or in transit; this signature cannot be trusted' },
      );
    const parsed = parseSimpleSigning(payload);
    out.push({
      layer,
      payload,
      signature,
      ...('claim' in parsed ? { claim: parsed.claim } : { claimError: parsed.error }),
    });
  }
  return out;
}

/** Key types containers/image verifies Sigstore signatures with. */
const EC_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

/**
 * A public key from a PEM, or from base64 of a PEM (a ClusterImagePolicy's `keyData`).
 * `where` names the source in messages (`ClusterImagePolicy openshift spec.policy…keyData`).
 */
export function publicKeyFrom(input: string | Uint8Array, where = 'the public key'): KeyObject {
  let text = (typeof input === 'string' ? input : Buffer.from(input).toString('utf8')).trim();
  if (!text.includes('-----BEGIN')) {
    const compact = text.replace(/\s+/g, '');
    const decoded = BASE64_RE.test(compact) ? Buffer.from(compact, 'base64').toString('utf8') : '';
    if (!decoded.includes('-----BEGIN'))
      throw usageError(
        MirrorError.SIGSTORE_KEY_INVALID,
        `${where} is neither a PEM public key nor base64 of one`,
        {
          hint: 'give the key as cosign.pub holds it (-----BEGIN PUBLIC KEY-----), or as base64 of that PEM',
        },
      );
    text = decoded.trim();
  }
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text)?.[1] ?? '';
  if (label.includes('PRIVATE'))
    throw usageError(MirrorError.SIGSTORE_KEY_INVALID, `${where} is a private key`, {
      hint: 'give the public key (cosign.pub); a private key does not belong in a policy',
    });
  if (label.includes('CERTIFICATE'))
    throw usageError(MirrorError.SIGSTORE_KEY_INVALID, `${where} is a certificate, not a public key`, {
      hint: 'only keyed Sigstore signatures are verified: give the public key (-----BEGIN PUBLIC KEY-----)',
    });
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch (e) {
    throw usageError(MirrorError.SIGSTORE_KEY_INVALID, `${where} cannot be read: ${(e as Error).message}`, {
      hint: 'give a PEM public key (ECDSA P-256/P-384, RSA or Ed25519), as `cosign generate-key-pair` writes it',
    });
  }
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const supported =
    type === 'rsa' ||
    type === 'rsa-pss' ||
    type === 'ed25519' ||
    (type === 'ec' && EC_CURVES.has(curve ?? ''));
  if (!supported)
    throw usageError(
      MirrorError.SIGSTORE_KEY_INVALID,
      `${where} is a ${type}${curve ? ` ${curve}` : ''} key, which Sigstore signatures are not made with`,
      { hint: 'use an ECDSA (P-256, P-384, P-521), RSA or Ed25519 public key' },
    );
  return key;
}

/**
 * Whether `signature` (base64) is a signature of `payload` by `publicKey`, checked as
 * containers/image checks it: SHA-256 for ECDSA (DER) and RSA (PKCS#1 v1.5, or PSS), Ed25519 over
 * the payload itself. Anything malformed is simply not a valid signature.
 */
export function verifyCosignSignature(
  sig: { payload: Uint8Array; signature: string },
  publicKey: KeyObject | string | Uint8Array,
): boolean {
  const key =
    typeof publicKey === 'string' || publicKey instanceof Uint8Array ? publicKeyFrom(publicKey) : publicKey;
  const encoded = sig.signature.replace(/\s+/g, '');
  if (!BASE64_RE.test(encoded)) return false;
  const signature = Buffer.from(encoded, 'base64');
  const payload = Buffer.from(sig.payload);
  const pss = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO };
  const attempt = (run: () => boolean): boolean => {
    try {
      return run();
    } catch {
      // crypto.verify throws on a signature or key it cannot use: a signature that does not verify.
      return false;
    }
  };
  switch (key.asymmetricKeyType) {
    case 'ec':
      return attempt(() => verify('sha256', payload, { key, dsaEncoding: 'der' }, signature));
    case 'rsa':
      return (
        attempt(() => verify('sha256', payload, { key, padding: constants.RSA_PKCS1_PADDING }, signature)) ||
        attempt(() => verify('sha256', payload, pss, signature))
      );
    case 'rsa-pss':
      return attempt(() => verify('sha256', payload, pss, signature));
    case 'ed25519':
      return attempt(() => verify(null, payload, key, signature));
    default:
      return false;
  }
}
