/**
 * Release signatures as the cluster version operator checks them: an OpenPGP signed message whose
 * literal data is a simple-signing document ("atomic container signature"), made by a key of the
 * keyring. OpenPGP.js does the cryptography (and the decompression, bounded by the limits of a
 * signature: inflate.ts); what is signed is read by simple-signing.ts.
 */
import type * as OpenPGP from 'openpgp';
import { inflateCap } from '../inflate.js';
import { openpgpLib, type Keyring } from './keys.js';
import { ATOMIC_SIGNATURE_TYPE, parseSimpleSigning, type SignedClaim } from './simple-signing.js';

export type ReleaseSignatureCheck =
  { ok: true; claim: SignedClaim; fingerprint: string } | { ok: false; reason: string };

/** Upper-case hex key ids of the keys that say they made the message's signatures. */
function signerKeyIds(message: OpenPGP.Message<Uint8Array>): string[] {
  return message.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
}

/** The keyring key (primary or subkey) with this key id, by its primary fingerprint. */
function keyringFingerprint(keyring: Keyring, keyId: OpenPGP.KeyID): string | undefined {
  return keyring.keys
    .find((k) => k.getKeys(keyId).length > 0)
    ?.getFingerprint()
    .toUpperCase();
}

/**
 * Verify one release signature and read what it signs; never throws for a bad signature (the
 * reason says what is wrong: not OpenPGP, signed by a key not in the keyring and which, a
 * signature that does not verify, a payload that is not simple signing). Whether the claim is about
 * the right image is the caller's question (claimProblem).
 */
export async function verifyReleaseSignature(
  bytes: Uint8Array,
  keyring: Keyring,
): Promise<ReleaseSignatureCheck> {
  const openpgp = await openpgpLib();
  // The literal data of a signature is compressed: OpenPGP.js inflates it as it reads the message,
  // stopped at the limits of a signature (inflate.ts), so a bomb never grows past them in memory.
  const cap = inflateCap('signature', 'it', bytes.length);
  let message: OpenPGP.Message<Uint8Array>;
  try {
    message = await openpgp.readMessage({
      binaryMessage: bytes,
      config: { maxDecompressedMessageSize: cap.max },
    });
  } catch (e) {
    if (/decompressed message size exceeded/i.test((e as Error).message))
      return { ok: false, reason: cap.refused().message };
    return {
      ok: false,
      reason: `it is not a readable OpenPGP message, corrupt or of another kind (${(e as Error).message})`,
    };
  }
  const signers = signerKeyIds(message);
  const who = signers.length > 0 ? `key ${signers.join(', ')}` : 'an unknown key';
  let result: Awaited<ReturnType<typeof OpenPGP.verify<Uint8Array>>>;
  try {
    // expectSigned: rejects an unsigned message and one where no signature verifies.
    result = await openpgp.verify({
      message,
      verificationKeys: keyring.keys,
      expectSigned: true,
      format: 'binary',
    });
  } catch (e) {
    const byKnown = message.getSigningKeyIDs().some((id) => keyringFingerprint(keyring, id) !== undefined);
    return {
      ok: false,
      reason: byKnown
        ? `the signature by ${who} does not verify (${(e as Error).message})`
        : `it was signed by ${who}, which is not in ${keyring.source}`,
    };
  }
  let fingerprint: string | undefined;
  for (const s of result.signatures) {
    // openpgp rejects `verified` for a signature that does not verify (or by an unknown key): not ours.
    const verified = await s.verified.then(
      () => true,
      () => false,
    );
    fingerprint = verified ? keyringFingerprint(keyring, s.keyID) : undefined;
    if (fingerprint) break;
  }
  if (!fingerprint) return { ok: false, reason: `no key of ${keyring.source} made it (signed by ${who})` };
  const parsed = parseSimpleSigning(result.data);
  if ('error' in parsed) return { ok: false, reason: parsed.error };
  if (parsed.claim.type !== ATOMIC_SIGNATURE_TYPE)
    return {
      ok: false,
      reason: `the signed payload is of type "${parsed.claim.type}", not "${ATOMIC_SIGNATURE_TYPE}"`,
    };
  return { ok: true, claim: parsed.claim, fingerprint };
}
