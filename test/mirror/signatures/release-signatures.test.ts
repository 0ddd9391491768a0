/**
 * Release GPG signatures against real data: the signature ConfigMap oc-mirror v2 wrote for a real
 * 4.15 → 4.16 update, whose three signatures were made by Red Hat release key 2 (read from the
 * realdata, as a system installs it: airgap carries no key); keyrings as people give them and as
 * the system installs them; the ConfigMap airgap writes, in oc-mirror's shape and read back.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpgSigner, type GpgSigner } from '../../../lab/gpg.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { parseSignatureConfigMap, signatureConfigMap } from '../../../src/mirror/signatures/configmap.js';
import { findReleaseKeyring, keyringFromKeys, loadKeyring } from '../../../src/mirror/signatures/keys.js';
import { verifyReleaseSignature } from '../../../src/mirror/signatures/openpgp.js';
import { claimProblem } from '../../../src/mirror/signatures/simple-signing.js';
import { toYaml } from '../../../src/util/yaml.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, withRealdata } from '../../helpers/realdata.js';

const RELEASE_REPO = 'quay.io/openshift-release-dev/ocp-release';
const SAMPLE_CONFIGMAP = () => realdata('samples', 'signatures', 'oc-mirror-signature-configmap.yaml');
/** Red Hat release key 2 as published (the key RHEL installs in /etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release). */
const REDHAT_KEY_FILE = () => realdata('samples', 'signatures', 'redhat-release-key-2.asc');
const REDHAT_RELEASE_KEY_2_FINGERPRINT = '567E347AD0044ADE55BA8A5F199E2F91FD431D51';
/** Red Hat release key 2 signs with its primary key: its key id is the fingerprint's last 16 digits. */
const REDHAT_KEY_ID = REDHAT_RELEASE_KEY_2_FINGERPRINT.slice(-16);

interface SampleConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  binaryData: Record<string, string>;
}

async function sampleConfigMap(): Promise<SampleConfigMap> {
  return yaml.load(await readFile(SAMPLE_CONFIGMAP(), 'utf8')) as SampleConfigMap;
}

function redhatKeyring() {
  return loadKeyring([REDHAT_KEY_FILE()]);
}

async function realSignatures(): Promise<{ digest: string; bytes: Buffer }[]> {
  const cm = await sampleConfigMap();
  return Object.entries(cm.binaryData).map(([key, b64]) => ({
    digest: key.replace(/^sha256-([0-9a-f]{64})-\d+$/, 'sha256:$1'),
    bytes: Buffer.from(b64, 'base64'),
  }));
}

let gpg: GpgSigner;
let dir: string;

beforeAll(async () => {
  [gpg, dir] = await Promise.all([createGpgSigner(), tempDir('release-signatures-')]);
}, 60_000);

afterAll(async () => {
  await gpg?.stop();
});

withRealdata.describe('release signatures (OpenPGP simple signing)', () => {
  it('each real signature verifies with Red Hat release key 2 and names its own digest and the release repository', async () => {
    const keyring = await redhatKeyring();
    const sigs = await realSignatures();
    expect(sigs).toHaveLength(3);
    for (const s of sigs) {
      const r = await verifyReleaseSignature(s.bytes, keyring);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (!r.ok) continue;
      expect(r.fingerprint).toBe(REDHAT_RELEASE_KEY_2_FINGERPRINT);
      expect(r.claim.digest).toBe(s.digest);
      expect(r.claim.type).toBe('atomic container signature');
      expect(r.claim.reference).toMatch(
        /^quay\.io\/openshift-release-dev\/ocp-release:4\.1[56]\.\d+-x86_64$/,
      );
      expect(claimProblem(r.claim, { digest: s.digest, repository: RELEASE_REPO })).toBeUndefined();
    }
  });

  it('a real signature checked for another release digest or repository is refused, naming both', async () => {
    const [a, b] = await realSignatures();
    const r = await verifyReleaseSignature(a!.bytes, await redhatKeyring());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(claimProblem(r.claim, { digest: b!.digest, repository: RELEASE_REPO })).toBe(
      `the signature is for ${a!.digest}, not ${b!.digest}`,
    );
    expect(claimProblem(r.claim, { digest: a!.digest, repository: 'quay.io/other/repo' })).toBe(
      `the signature names ${r.claim.reference}, not an image of quay.io/other/repo`,
    );
  });

  it('a real signature checked against the lab key is refused, naming the key that signed it', async () => {
    const [a] = await realSignatures();
    const keyring = await keyringFromKeys(gpg.publicKey, 'the lab key');
    expect(keyring.fingerprints).toEqual([gpg.fingerprint]);
    const r = await verifyReleaseSignature(a!.bytes, keyring);
    expect(r).toEqual({
      ok: false,
      reason: `it was signed by key ${REDHAT_KEY_ID}, which is not in the lab key`,
    });
  });

  it('a tampered signature, garbage, and a signed payload that is not simple signing are refused', async () => {
    const keyring = await redhatKeyring();
    const [a] = await realSignatures();
    // Red Hat's signature packet moved onto a payload naming another digest no longer verifies; the
    // same construction with the payload unchanged does (so the refusal is the forgery's).
    const original = await openpgp.verify({
      message: await openpgp.readMessage({ binaryMessage: a!.bytes }),
      verificationKeys: keyring.keys,
      format: 'binary',
    });
    const payload = Buffer.from(original.data).toString('utf8');
    const signature = await original.signatures[0]!.signature;
    const withPayload = async (text: string) => {
      const literal = await openpgp.createMessage({ binary: Buffer.from(text) });
      const packets = new openpgp.PacketList();
      packets.push(...signature.packets, ...literal.packets);
      return new openpgp.Message(packets).write();
    };
    expect(await verifyReleaseSignature(await withPayload(payload), keyring)).toMatchObject({ ok: true });
    const forged = payload.replace(a!.digest, `sha256:${'0'.repeat(64)}`);
    expect(forged).not.toBe(payload);
    const f = await verifyReleaseSignature(await withPayload(forged), keyring);
    expect(f.ok).toBe(false);
    if (!f.ok)
      expect(f.reason).toMatch(new RegExp(`^the signature by key ${REDHAT_KEY_ID} does not verify \\(`));

    // A damaged message (one byte of the compressed data changed) and garbage cannot be read.
    const damaged = Buffer.from(a!.bytes);
    damaged[damaged.length - 3]! ^= 0x01;
    for (const bytes of [damaged, Buffer.from('not a signature')]) {
      const r = await verifyReleaseSignature(bytes, keyring);
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.reason).toMatch(/^it is not a readable OpenPGP message, corrupt or of another kind \(/);
    }

    // A good signature by a trusted key over something that is not a simple-signing document.
    const { privateKey, publicKey } = await openpgp.generateKey({
      userIDs: [{ name: 'test signer' }],
      type: 'ecc',
      curve: 'curve25519Legacy',
      format: 'object',
    });
    const signed = await openpgp.sign({
      message: await openpgp.createMessage({ binary: Buffer.from('{"hello":"world"}') }),
      signingKeys: privateKey,
      format: 'binary',
    });
    const n = await verifyReleaseSignature(signed, await keyringFromKeys(publicKey.armor(), 'a test key'));
    expect(n).toEqual({
      ok: false,
      reason: 'the signed payload names no sha256 manifest digest (critical.image.docker-manifest-digest)',
    });
  });
});

describe('--release-keyring', () => {
  it('a missing file and a file that is not a key are usage errors naming the file and what to do', async () => {
    const missing = join(dir, 'missing.asc');
    const e1 = await rejection(loadKeyring([missing]));
    expect(e1).toMatchObject({
      code: MirrorError.SIGNATURE_KEYRING_INVALID,
      exitCode: 2,
      message: `cannot read the release keyring ${missing}: it does not exist`,
    });
    expect(e1.hint).toContain('--release-keyring');
    const notKey = join(dir, 'not-a-key.asc');
    await writeFile(notKey, 'hello\n');
    const e2 = await rejection(loadKeyring([notKey]));
    expect(e2).toMatchObject({ code: MirrorError.SIGNATURE_KEYRING_INVALID, exitCode: 2 });
    expect(e2.message).toContain(`${notKey} holds no OpenPGP public key`);
    expect(e2.hint).toContain('gpg --export --armor');
  });

  withRealdata.it(
    'reads armored and binary files, several keys in one file, and says where they came from',
    async () => {
      const armored = join(dir, 'lab.asc');
      await writeFile(armored, gpg.publicKey);
      const binary = join(dir, 'both.gpg');
      const lab = await openpgp.readKey({ armoredKey: gpg.publicKey });
      const redhat = await openpgp.readKey({ armoredKey: await readFile(REDHAT_KEY_FILE(), 'utf8') });
      await writeFile(binary, Buffer.concat([lab.write(), redhat.write()]));

      const one = await loadKeyring([armored]);
      expect(one).toMatchObject({ fingerprints: [gpg.fingerprint], source: armored });
      const both = await loadKeyring([binary]);
      expect(both.fingerprints).toEqual([gpg.fingerprint, REDHAT_RELEASE_KEY_2_FINGERPRINT]);
      // The same key given twice counts once.
      const twice = await loadKeyring([armored, binary]);
      expect(twice.fingerprints).toEqual([gpg.fingerprint, REDHAT_RELEASE_KEY_2_FINGERPRINT]);
      expect(twice.source).toBe(`${armored}, ${binary}`);
      // The real signatures verify with the Red Hat key found in the binary file.
      const [a] = await realSignatures();
      expect(await verifyReleaseSignature(a!.bytes, both)).toMatchObject({
        ok: true,
        fingerprint: REDHAT_RELEASE_KEY_2_FINGERPRINT,
      });
    },
  );
});

describe('the release keys the system installed', () => {
  withRealdata.it(
    'reads every key of a file holding several armored blocks, as RHEL installs them, and trusts each',
    async () => {
      // RHEL's RPM-GPG-KEY-redhat-release holds release key 2, then the auxiliary keys, one block each.
      const system = join(dir, 'system', 'RPM-GPG-KEY-redhat-release');
      await mkdir(join(dir, 'system'), { recursive: true });
      await writeFile(system, `${await readFile(REDHAT_KEY_FILE(), 'utf8')}\n${gpg.publicKey}`);
      const keyring = await findReleaseKeyring({ systemFiles: [join(dir, 'system', 'absent'), system] });
      expect(keyring).toMatchObject({
        fingerprints: [REDHAT_RELEASE_KEY_2_FINGERPRINT, gpg.fingerprint],
        source: system,
      });
      // Both verify: the real signatures with the first block, the lab's with the second.
      const [a] = await realSignatures();
      expect(await verifyReleaseSignature(a!.bytes, keyring!)).toMatchObject({ ok: true });
      const labSigned = await gpg.sign(Buffer.from('{"schemaVersion":2}'), 'quay.io/example/release:1');
      expect(await verifyReleaseSignature(labSigned, keyring!)).toMatchObject({
        ok: true,
        fingerprint: gpg.fingerprint,
      });
    },
  );

  it('a system file that does not exist is no key; a keyring given wins over the system one', async () => {
    expect(await findReleaseKeyring({ systemFiles: [join(dir, 'nowhere', 'RPM-GPG-KEY')] })).toBeUndefined();
    const given = join(dir, 'given.asc');
    await writeFile(given, gpg.publicKey);
    const keyring = await findReleaseKeyring({ files: [given], systemFiles: [REDHAT_KEY_FILE()] });
    expect(keyring).toMatchObject({ fingerprints: [gpg.fingerprint], source: given });
    // A given file that is missing is an error, never "no key" (the system file is not used instead).
    const missing = join(dir, 'missing-given.asc');
    const e = await rejection(findReleaseKeyring({ files: [missing], systemFiles: [REDHAT_KEY_FILE()] }));
    expect(e).toMatchObject({ code: MirrorError.SIGNATURE_KEYRING_INVALID, exitCode: 2 });
    expect(e.message).toContain(missing);
  });

  it('a system file that exists but cannot be read, or holds no key, is an error with its cause', async () => {
    const directory = join(dir, 'system-dir');
    await mkdir(directory, { recursive: true });
    const e1 = await rejection(findReleaseKeyring({ systemFiles: [directory] }));
    expect(e1).toMatchObject({
      code: MirrorError.SIGNATURE_SYSTEM_KEYRING_UNREADABLE,
      exitCode: 1,
      message: `cannot read the release keys installed at ${directory}: it is a directory`,
    });
    expect((e1.cause as NodeJS.ErrnoException).code).toBe('EISDIR');
    expect(e1.hint).toContain('--release-keyring');
    const garbage = join(dir, 'system-garbage');
    await writeFile(garbage, 'not a key\n');
    const e2 = await rejection(findReleaseKeyring({ systemFiles: [garbage] }));
    expect(e2).toMatchObject({ code: MirrorError.SIGNATURE_SYSTEM_KEYRING_UNREADABLE, exitCode: 1 });
    expect(e2.message).toMatch(new RegExp(`^${garbage} holds no OpenPGP public key: `));
  });
});

describe('the signature ConfigMap', () => {
  withRealdata.it(
    'has the shape oc-mirror v2 writes: apiVersion, kind, namespace, label, sha256-<hex>-<n> keys',
    async () => {
      const sample = await sampleConfigMap();
      const sigs = await realSignatures();
      const cm = signatureConfigMap([
        { digest: sigs[0]!.digest, signatures: [sigs[0]!.bytes.toString('base64'), 'c2Vjb25k'] },
        { digest: sigs[1]!.digest, signatures: [sigs[1]!.bytes.toString('base64')] },
      ]);
      expect(cm.apiVersion).toBe(sample.apiVersion);
      expect(cm.kind).toBe(sample.kind);
      expect(cm.metadata.namespace).toBe(sample.metadata.namespace);
      expect(cm.metadata.labels).toEqual(sample.metadata.labels);
      // oc-mirror's name (const.go); the published sample was renamed with a prefix by its user.
      expect(cm.metadata.name).toBe('mirrored-release-signatures');
      expect(sample.metadata.name.endsWith(cm.metadata.name)).toBe(true);
      const keyFormat = /^sha256-[0-9a-f]{64}-[1-9][0-9]*$/;
      for (const k of [...Object.keys(sample.binaryData), ...Object.keys(cm.binaryData)])
        expect(k).toMatch(keyFormat);
      expect(Object.keys(cm.binaryData)).toEqual([
        `sha256-${sigs[0]!.digest.slice(7)}-1`,
        `sha256-${sigs[0]!.digest.slice(7)}-2`,
        `sha256-${sigs[1]!.digest.slice(7)}-1`,
      ]);
      expect(cm.binaryData[`sha256-${sigs[1]!.digest.slice(7)}-1`]).toBe(
        sample.binaryData[Object.keys(sample.binaryData)[1]!],
      );
    },
  );

  withRealdata.it("reads back oc-mirror's ConfigMap and its own, as YAML and as JSON", async () => {
    const fromOcMirror = parseSignatureConfigMap(
      await readFile(SAMPLE_CONFIGMAP(), 'utf8'),
      SAMPLE_CONFIGMAP(),
    );
    const sigs = await realSignatures();
    expect(fromOcMirror).toEqual(
      sigs.map((s) => ({ digest: s.digest, signatures: [s.bytes.toString('base64')] })),
    );

    const sets = [
      {
        digest: sigs[0]!.digest,
        signatures: [sigs[0]!.bytes.toString('base64'), sigs[2]!.bytes.toString('base64')],
      },
      { digest: sigs[1]!.digest, signatures: [sigs[1]!.bytes.toString('base64')] },
    ];
    const cm = signatureConfigMap(sets);
    expect(parseSignatureConfigMap(toYaml(cm), 'signature-configmap.yaml')).toEqual(sets);
    expect(parseSignatureConfigMap(JSON.stringify(cm, null, 2), 'signature-configmap.json')).toEqual(sets);
  });

  it('a file the cluster version operator would not read is a usage error naming the file and every problem', async () => {
    const bad = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'sigs', namespace: 'default' },
      binaryData: { 'sha256-abc-1': 'aGVsbG8=', [`sha256-${'a'.repeat(64)}-1`]: 'not base64!' },
    };
    const e = await rejection(
      Promise.resolve().then(() => parseSignatureConfigMap(toYaml(bad), 'sigs.yaml')),
    );
    expect(e).toMatchObject({
      code: MirrorError.SIGNATURE_CONFIGMAP_INVALID,
      exitCode: 2,
      where: 'sigs.yaml',
    });
    expect(e.message).toBe(
      'sigs.yaml is not a release signature ConfigMap: ' +
        'metadata.namespace is "default", not openshift-config-managed (the only namespace the cluster version operator reads signatures from); ' +
        'metadata.labels has no release.openshift.io/verification-signatures (the label the cluster version operator selects by); ' +
        'binaryData key "sha256-abc-1" is not sha256-<hex>-<n>; ' +
        `binaryData.sha256-${'a'.repeat(64)}-1 is not base64`,
    );
    const notYaml = await rejection(
      Promise.resolve().then(() => parseSignatureConfigMap('a: [b', 'broken.yaml')),
    );
    expect(notYaml).toMatchObject({ code: MirrorError.SIGNATURE_CONFIGMAP_INVALID, exitCode: 2 });
    expect(notYaml.message).toMatch(/^broken\.yaml is not YAML or JSON: /);
  });
});
