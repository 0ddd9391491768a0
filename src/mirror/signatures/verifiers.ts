/**
 * The cryptography the policy evaluator (policy-evaluate.ts, pure) is given: Sigstore signatures
 * checked with node's crypto (cosign.ts), GPG simple signing with OpenPGP.js (openpgp.ts).
 */
import { verifyCosignSignature } from './cosign.js';
import { keyringFromKeys } from './keys.js';
import { verifyReleaseSignature } from './openpgp.js';
import type { PolicyVerifiers } from './policy.js';

export const policyVerifiers: PolicyVerifiers = {
  sigstore: (sig, publicKeyPem) => verifyCosignSignature(sig, publicKeyPem),
  gpg: async (bytes, keys) => {
    const r = await verifyReleaseSignature(bytes, await keyringFromKeys(keys));
    return r.ok ? { claimBytes: Buffer.from(JSON.stringify(r.claim.payload)) } : { reason: r.reason };
  },
};
