/**
 * The "simple signing" payload both signature kinds sign: the JSON document containers/image
 * defines (signature/simple.go), naming the manifest digest and the repository it belongs to.
 *
 * - Release GPG signatures (the OpenShift signature store, `atomic container signature`) carry it
 *   inside an OpenPGP message.
 * - Sigstore signatures in cosign's format (`cosign container image signature`) carry it as the
 *   one layer of the `sha256-<hex>.sig` manifest, with the signature in an annotation.
 *
 * Whatever the kind, a signature only counts for an image when the payload names that image's
 * digest: a valid signature of another digest is never taken as this one's.
 */
import { parseReference } from '../reference.js';

export const ATOMIC_SIGNATURE_TYPE = 'atomic container signature';
export const COSIGN_SIGNATURE_TYPE = 'cosign container image signature';

export interface SimpleSigningPayload {
  critical: {
    identity: { 'docker-reference': string };
    image: { 'docker-manifest-digest': string };
    type: string;
  };
  optional?: Record<string, unknown>;
}

/** What a payload claims, read without trusting it yet. */
export interface SignedClaim {
  /** `sha256:<hex>`: the manifest digest the signer signed. */
  digest: string;
  /** The reference the signer named (`quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64`). */
  reference: string;
  type: string;
  payload: SimpleSigningPayload;
}

/** Read a payload; undefined with the reason when it is not a simple-signing document. */
export function parseSimpleSigning(bytes: Uint8Array): { claim: SignedClaim } | { error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    return { error: `the signed payload is not JSON: ${(e as Error).message}` };
  }
  const critical = (doc as SimpleSigningPayload | undefined)?.critical;
  const digest = critical?.image?.['docker-manifest-digest'];
  const reference = critical?.identity?.['docker-reference'];
  const type = critical?.type;
  if (typeof digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(digest))
    return {
      error: 'the signed payload names no sha256 manifest digest (critical.image.docker-manifest-digest)',
    };
  if (typeof reference !== 'string' || reference === '')
    return { error: 'the signed payload names no image (critical.identity.docker-reference)' };
  if (typeof type !== 'string') return { error: 'the signed payload has no type (critical.type)' };
  return { claim: { digest, reference, type, payload: doc as SimpleSigningPayload } };
}

/** `registry/repository` of a reference, as identities are compared. */
function repositoryOf(reference: string): string | undefined {
  try {
    const r = parseReference(reference);
    return `${r.registry}/${r.repository}`;
  } catch {
    // parseReference refuses it: no repository (undefined says so to the caller).
    return undefined;
  }
}

/**
 * Whether a claim is about this image: the digest must be the image's; the identity, when asked
 * for, must name the same repository (containers-policy.json's default `matchRepoDigestOrExact`
 * for images pulled by digest). Returns the problem, or undefined when it matches.
 */
export function claimProblem(
  claim: SignedClaim,
  image: { digest: string; repository?: string; type?: string },
): string | undefined {
  if (image.type !== undefined && claim.type !== image.type)
    return `the signature is of type "${claim.type}", not "${image.type}"`;
  if (claim.digest !== image.digest) return `the signature is for ${claim.digest}, not ${image.digest}`;
  if (image.repository !== undefined) {
    const signed = repositoryOf(claim.reference);
    if (signed !== image.repository)
      return `the signature names ${claim.reference}, not an image of ${image.repository}`;
  }
  return undefined;
}
