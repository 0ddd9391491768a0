/**
 * Release signatures as the cluster version operator checks them: an OpenPGP signed message whose
 * literal data is a simple-signing document ("atomic container signature"), made by a key of the
 * keyring. OpenPGP.js does the cryptography; what is signed is read by simple-signing.ts.
 */
import * as openpgp from 'openpgp';
import type { Keyring } from './keys.js';
import { ATOMIC_SIGNATURE_TYPE, parseSimpleSigning, type SignedClaim } from './simple-signing.js';

export type ReleaseSignatureCheck =
  { ok: true; claim: SignedClaim; fingerprint: string } | { ok: false; reason: string };

/** Verify one release signature; never throws for a bad signature (the reason says what is wrong). */
export async function verifyReleaseSignature(
  bytes: Uint8Array,
  keyring: Keyring,
): Promise<ReleaseSignatureCheck> {
  let message: openpgp.Message<Uint8Array>;
  try {
    message = await openpgp.readMessage({ binaryMessage: bytes });
  } catch (e) {
    return { ok: false, reason: `it is not an OpenPGP message (${(e as Error).message})` };
  }
  const signers = message.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
  let data: Uint8Array;
  let fingerprint: string | undefined;
  try {
    const result = await openpgp.verify({
      message,
      verificationKeys: keyring.keys,
      expectSigned: true,
      format: 'binary',
    });
    data = result.data as Uint8Array;
    for (const s of result.signatures) {
      await s.verified; // throws when this signature does not verify
      const key = keyring.keys.find((k) => k.getKeys(s.keyID).length > 0);
      fingerprint = key?.getFingerprint().toUpperCase();
      if (fingerprint) break;
    }
  } catch (e) {
    const byKnown = keyring.keys.some((k) =>
      signers.some((id) => k.getKeys().some((sub) => sub.getKeyID().toHex().toUpperCase() === id)),
    );
    const who = signers.length > 0 ? `key ${signers.join(', ')}` : 'an unknown key';
    return {
      ok: false,
      reason: byKnown
        ? `the signature by ${who} does not verify (${(e as Error).message})`
        : `it was signed by ${who}, which is not in ${keyring.source}`,
    };
  }
  if (!fingerprint) return { ok: false, reason: `no key of ${keyring.source} made it` };
  const parsed = parseSimpleSigning(data);
  if ('error' in parsed) return { ok: false, reason: parsed.error };
  if (parsed.claim.type !== ATOMIC_SIGNATURE_TYPE)
    return {
      ok: false,
      reason: `the signed payload is of type "${parsed.claim.type}", not "${ATOMIC_SIGNATURE_TYPE}"`,
    };
  return { ok: true, claim: parsed.claim, fingerprint };
}
