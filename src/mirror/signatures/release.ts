/**
 * A release's GPG signatures: fetched from the store, each verified against the keyring and checked
 * as the cluster-version operator checks one: of the atomic container signature type, naming an
 * identity, and naming this release's digest. The identity is recorded (and shown), not compared
 * with where the release was read: a release read from a mirror or an enclave's upstream carries
 * signatures naming quay.io. Only those that pass are returned as signatures; every other one is a
 * problem line. Nothing unverified is ever passed on as verified.
 */
import type { Keyring } from './keys.js';
import { verifyReleaseSignature } from './openpgp.js';
import { ATOMIC_SIGNATURE_TYPE, claimProblem } from './simple-signing.js';
import { fetchReleaseSignatures, shownStoreUrl, type SignatureStoreOptions } from './store.js';

export interface ReleaseSignatureResult {
  digest: string;
  /**
   * The identity the signer named (`quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64`),
   * whatever registry the release was read from.
   */
  reference?: string;
  /** Base64 of each signature that verified and names this digest. */
  signatures: string[];
  /** Fingerprints of the keys that made them. */
  verifiedBy: string[];
  /** One line per signature that did not pass (`signature-<n>: <why>`), or `no signature found …`. */
  problems: string[];
}

/**
 * Fetch and check the signatures of each release (`repository` is `registry/repository` of the
 * release image, e.g. `quay.io/openshift-release-dev/ocp-release`). A store that cannot be read
 * throws SIGNATURE_STORE_UNREACHABLE; a release without signatures is a problem, not an error.
 */
export async function releaseSignatures(
  releases: { digest: string; repository: string }[],
  o: SignatureStoreOptions & { keyring: Keyring },
): Promise<ReleaseSignatureResult[]> {
  return Promise.all(
    releases.map(async (r) => {
      const result: ReleaseSignatureResult = {
        digest: r.digest,
        signatures: [],
        verifiedBy: [],
        problems: [],
      };
      const found = await fetchReleaseSignatures(r.digest, o);
      if (found.length === 0)
        result.problems.push(
          `no signature found for ${r.digest} in the signature store ${shownStoreUrl(o.baseUrl)}`,
        );
      for (const [i, bytes] of found.entries()) {
        const check = await verifyReleaseSignature(bytes, o.keyring);
        const problem = check.ok
          ? claimProblem(check.claim, { digest: r.digest, type: ATOMIC_SIGNATURE_TYPE })
          : check.reason;
        if (problem !== undefined || !check.ok) {
          result.problems.push(`signature-${i + 1}: ${problem}`);
          continue;
        }
        result.signatures.push(bytes.toString('base64'));
        if (!result.verifiedBy.includes(check.fingerprint)) result.verifiedBy.push(check.fingerprint);
        result.reference ??= check.claim.reference;
      }
      return result;
    }),
  );
}
