/**
 * Release GPG signatures against real data: the signature ConfigMap oc-mirror v2 wrote for a real
 * 4.15 → 4.16 update, whose three signatures were made by the Red Hat release key airgap ships.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import * as openpgp from 'openpgp';
import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../../src/mirror/errors.js';
import { signatureConfigMap } from '../../../src/mirror/signatures/configmap.js';
import {
  keyringFromKeys,
  loadKeyring,
  REDHAT_RELEASE_KEY_2_FINGERPRINT,
} from '../../../src/mirror/signatures/keys.js';
import { verifyReleaseSignature } from '../../../src/mirror/signatures/openpgp.js';
import { claimProblem } from '../../../src/mirror/signatures/simple-signing.js';
import { realdata } from '../../helpers/realdata.js';

const RELEASE_REPO = 'quay.io/openshift-release-dev/ocp-release';

async function realSignatures(): Promise<{ digest: string; bytes: Buffer }[]> {
  const cm = yaml.load(
    await readFile(realdata('samples', 'signatures', 'oc-mirror-signature-configmap.yaml'), 'utf8'),
  ) as {
    binaryData: Record<string, string>;
  };
  return Object.entries(cm.binaryData).map(([key, b64]) => ({
    digest: key.replace(/^sha256-([0-9a-f]{64})-\d+$/, 'sha256:$1'),
    bytes: Buffer.from(b64, 'base64'),
  }));
}

describe('release signatures (OpenPGP simple signing)', () => {
  it('each real signature verifies with the shipped Red Hat key and names its own digest and the release repository', async () => {
    const keyring = await loadKeyring();
    expect(keyring.fingerprints).toEqual([REDHAT_RELEASE_KEY_2_FINGERPRINT]);
    const sigs = await realSignatures();
    expect(sigs).toHaveLength(3);
    for (const s of sigs) {
      const r = await verifyReleaseSignature(s.bytes, keyring);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (!r.ok) continue;
      expect(r.fingerprint).toBe(REDHAT_RELEASE_KEY_2_FINGERPRINT);
      expect(r.claim.digest).toBe(s.digest);
      expect(r.claim.reference).toMatch(
        /^quay\.io\/openshift-release-dev\/ocp-release:4\.1[56]\.\d+-x86_64$/,
      );
      expect(claimProblem(r.claim, { digest: s.digest, repository: RELEASE_REPO })).toBeUndefined();
    }
  });

  it('a real signature checked for another release digest is refused, naming both digests', async () => {
    const [a, b] = await realSignatures();
    const r = await verifyReleaseSignature(a!.bytes, await loadKeyring());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const problem = claimProblem(r.claim, { digest: b!.digest, repository: RELEASE_REPO });
    expect(problem).toBe(`the signature is for ${a!.digest}, not ${b!.digest}`);
    expect(claimProblem(r.claim, { digest: a!.digest, repository: 'quay.io/other/repo' })).toContain(
      'not an image of quay.io/other/repo',
    );
  });

  it('a real signature checked against another key is refused, naming the key that signed it', async () => {
    const { publicKey } = await openpgp.generateKey({
      userIDs: [{ name: 'not Red Hat' }],
      type: 'ecc',
      curve: 'curve25519Legacy',
      format: 'armored',
    });
    const [a] = await realSignatures();
    const r = await verifyReleaseSignature(a!.bytes, await keyringFromKeys(publicKey, 'a test key'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    // Red Hat release key 2 signs with its primary key: its key id is the fingerprint's last 16 digits.
    expect(r.reason).toBe(
      `it was signed by key ${REDHAT_RELEASE_KEY_2_FINGERPRINT.slice(-16)}, which is not in a test key`,
    );
  });

  it('garbage is refused as not an OpenPGP message', async () => {
    const r = await verifyReleaseSignature(Buffer.from('not a signature'), await loadKeyring());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^it is not an OpenPGP message/);
  });

  it('--release-keyring: a missing file and a file that is not a key are usage errors naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keyring-'));
    const missing = join(dir, 'missing.asc');
    await expect(loadKeyring([missing])).rejects.toMatchObject({
      code: MirrorError.SIGNATURE_KEYRING_INVALID,
      exitCode: 2,
      message: `cannot read the release keyring ${missing}: it does not exist`,
    });
    const notKey = join(dir, 'not-a-key.asc');
    await writeFile(notKey, 'hello\n');
    await expect(loadKeyring([notKey])).rejects.toMatchObject({
      code: MirrorError.SIGNATURE_KEYRING_INVALID,
      exitCode: 2,
      message: expect.stringContaining(`${notKey} holds no OpenPGP public key`),
    });
  });

  it('the ConfigMap has oc-mirror v2 shape: name, namespace, label, sha256-<hex>-<n> keys', async () => {
    const sigs = await realSignatures();
    const cm = signatureConfigMap([
      { digest: sigs[0]!.digest, signatures: [sigs[0]!.bytes.toString('base64'), 'c2Vjb25k'] },
      { digest: sigs[1]!.digest, signatures: [sigs[1]!.bytes.toString('base64')] },
    ]);
    expect(cm.metadata).toEqual({
      name: 'mirrored-release-signatures',
      namespace: 'openshift-config-managed',
      labels: { 'release.openshift.io/verification-signatures': '' },
    });
    expect(Object.keys(cm.binaryData)).toEqual([
      `sha256-${sigs[0]!.digest.slice(7)}-1`,
      `sha256-${sigs[0]!.digest.slice(7)}-2`,
      `sha256-${sigs[1]!.digest.slice(7)}-1`,
    ]);
    expect(cm.binaryData[`sha256-${sigs[1]!.digest.slice(7)}-1`]).toBe(sigs[1]!.bytes.toString('base64'));
  });
});
