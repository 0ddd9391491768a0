/**
 * cosign's signature format as containers/image reads it: the tag scheme, the `.sig` manifest the
 * lab signer pushes to a real registry (checked independently with skopeo), reading its
 * signatures back through the registry client, and keyed verification checked against
 * signatures openssl makes (P-256, P-384, RSA PKCS#1 v1.5 and PSS, Ed25519), plus the real
 * ClusterImagePolicy key.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey, signImage, signImageNamingAnotherDigest } from '../../../lab/cosign.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { MediaType } from '../../../src/mirror/media-types.js';
import type { RegistryClient } from '../../../src/mirror/registry/client.js';
import {
  COSIGN_SIGNATURE_ANNOTATION,
  COSIGN_SIGNATURE_MEDIA_TYPE,
  cosignTag,
  publicKeyFrom,
  readCosignSignatures,
  signedDigestOfTag,
  verifyCosignSignature,
} from '../../../src/mirror/signatures/cosign.js';
import { sha256Digest } from '../../../src/mirror/digest.js';
import { clientFor, seedRegistry, tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoCopy, skopeoInspect } from '../../helpers/skopeo.js';

const HEX = 'a'.repeat(64);

describe('cosign tag scheme', () => {
  it('names the signatures of sha256:<hex> sha256-<hex>.sig, and reads the digest back from that tag only', () => {
    expect(cosignTag(`sha256:${HEX}`)).toBe(`sha256-${HEX}.sig`);
    expect(signedDigestOfTag(`sha256-${HEX}.sig`)).toBe(`sha256:${HEX}`);
    for (const other of [
      'latest',
      `sha256-${HEX}`,
      `sha256-${HEX}.att`,
      `sha256-${HEX.slice(1)}.sig`,
      `sha512-${HEX}.sig`,
    ])
      expect(signedDigestOfTag(other)).toBeUndefined();
    expect(() => cosignTag('sha256:abc')).toThrow(/not a sha256 digest/);
  });
});

/** Sign `payload` with openssl (an implementation independent of node's verify). */
async function opensslSign(
  dir: string,
  keyFile: string,
  payload: Buffer,
  mode: 'plain' | 'pss' | 'raw',
): Promise<string> {
  const data = join(dir, 'payload.json');
  await writeFile(data, payload);
  const args =
    mode === 'raw'
      ? ['pkeyutl', '-sign', '-rawin', '-inkey', keyFile, '-in', data]
      : [
          'dgst',
          '-sha256',
          '-sign',
          keyFile,
          ...(mode === 'pss' ? ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:digest'] : []),
          data,
        ];
  // Binary output: execa would strip a last byte of 0x0a as a "final newline" (1 run in 256).
  const { stdout } = await execa('openssl', args, { encoding: 'buffer', stripFinalNewline: false });
  return Buffer.from(stdout).toString('base64');
}

async function opensslKey(
  dir: string,
  name: string,
  genArgs: string[],
): Promise<{ key: string; pub: string }> {
  const key = join(dir, `${name}.key`);
  await execa('openssl', ['genpkey', ...genArgs, '-out', key]);
  const { stdout } = await execa('openssl', ['pkey', '-in', key, '-pubout']);
  return { key, pub: stdout };
}

describe('verifyCosignSignature against signatures openssl makes', () => {
  const payload = Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': 'quay.io/openshift-release-dev/ocp-release' },
        image: { 'docker-manifest-digest': `sha256:${HEX}` },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
  const other = generateSigningKey().publicKey;
  const cases: [string, string[], 'plain' | 'pss' | 'raw'][] = [
    ['ECDSA P-256', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'], 'plain'],
    ['ECDSA P-384', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'], 'plain'],
    ['RSA PKCS#1 v1.5', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], 'plain'],
    ['RSA PSS', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], 'pss'],
    ['Ed25519', ['-algorithm', 'ED25519'], 'raw'],
  ];
  for (const [name, gen, mode] of cases) {
    it(`${name}: the right key verifies; another key, another payload or a damaged signature does not`, async () => {
      const dir = await tempDir();
      const { key, pub } = await opensslKey(dir, 'k', gen);
      const signature = await opensslSign(dir, key, payload, mode);
      expect(verifyCosignSignature({ payload, signature }, pub)).toBe(true);
      // The ClusterImagePolicy form: base64 of the PEM.
      expect(verifyCosignSignature({ payload, signature }, Buffer.from(pub).toString('base64'))).toBe(true);
      expect(verifyCosignSignature({ payload, signature }, other)).toBe(false);
      const altered = Buffer.from(payload.toString().replace(HEX, 'b'.repeat(64)));
      expect(verifyCosignSignature({ payload: altered, signature }, pub)).toBe(false);
      const raw = Buffer.from(signature, 'base64');
      raw[raw.length >> 1]! ^= 0x01;
      expect(verifyCosignSignature({ payload, signature: raw.toString('base64') }, pub)).toBe(false);
      expect(verifyCosignSignature({ payload, signature: 'not base64!' }, pub)).toBe(false);
    });
  }
});

describe('publicKeyFrom', () => {
  withRealdata.it(
    "reads the openshift ClusterImagePolicy's keyData (base64 of a PEM): Red Hat's RSA 4096 key",
    async () => {
      const policy = yaml.load(
        await readFile(realdata('samples', 'signatures', 'openshift-cluster-image-policy.yaml'), 'utf8'),
      ) as { spec: { policy: { rootOfTrust: { publicKey: { keyData: string } } } } };
      const key = publicKeyFrom(policy.spec.policy.rootOfTrust.publicKey.keyData);
      expect(key.asymmetricKeyType).toBe('rsa');
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(4096);
      // A signature by another key is not taken for Red Hat's.
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const payload = Buffer.from('{}');
      expect(
        verifyCosignSignature(
          { payload, signature: sign('sha256', payload, privateKey).toString('base64') },
          key,
        ),
      ).toBe(false);
    },
  );

  it('refuses a private key, a certificate, an X25519 key and text that is no key, without echoing the key', async () => {
    const { privateKey } = generateSigningKey();
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const cases: [string, RegExp][] = [
      [privateKey, /is a private key/],
      [Buffer.from(privateKey).toString('base64'), /is a private key/],
      ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', /is a certificate/],
      [x25519, /x25519 key/],
      ['hello', /neither a PEM public key nor base64 of one/],
      ['-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', /cannot be read/],
    ];
    for (const [input, message] of cases) {
      const e = await rejection(Promise.resolve().then(() => publicKeyFrom(input, 'policy.json keyPath')));
      expect(e.code).toBe(MirrorError.SIGSTORE_KEY_INVALID);
      expect(e.exitCode).toBe(2);
      expect(e.message).toMatch(message);
      expect(e.message).toContain('policy.json keyPath');
      expect(e.describe()).not.toContain(privateKey.split('\n')[1]!);
    }
  });
});

describe('readCosignSignatures on manifests as they come', () => {
  const payload = Buffer.from(
    '{"critical":{"identity":{"docker-reference":"r.example/a"},"image":{"docker-manifest-digest":"sha256:' +
      HEX +
      '"},"type":"cosign container image signature"},"optional":null}',
  );
  const layer = (extra: Record<string, unknown> = {}) => ({
    mediaType: COSIGN_SIGNATURE_MEDIA_TYPE,
    digest: sha256Digest(payload),
    size: payload.length,
    annotations: { [COSIGN_SIGNATURE_ANNOTATION]: 'c2ln', 'dev.sigstore.cosign/bundle': '{"kept":true}' },
    ...extra,
  });
  const manifest = (layers: unknown[]) =>
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciManifest,
        config: { mediaType: MediaType.OciConfig, digest: sha256Digest('{}'), size: 2 },
        layers,
      }),
    );
  const fetch = async () => payload;

  it('reads each simple-signing layer (other media types skipped), keeping its annotations', async () => {
    const other = { mediaType: MediaType.OciLayer, digest: sha256Digest('x'), size: 1 };
    const sigs = await readCosignSignatures(manifest([other, layer()]), fetch);
    expect(sigs).toHaveLength(1);
    expect(sigs[0]!.signature).toBe('c2ln');
    expect(sigs[0]!.claim?.digest).toBe(`sha256:${HEX}`);
    expect(sigs[0]!.layer.annotations?.['dev.sigstore.cosign/bundle']).toBe('{"kept":true}');
  });

  it('refuses a payload that does not hash to its layer digest', async () => {
    const e = await rejection(
      readCosignSignatures(
        manifest([layer()]),
        async () => Buffer.from(payload.toString().replace('a', 'b')),
        'r.example/a:sha256-x.sig',
      ),
    );
    expect(e.code).toBe(MirrorError.MIRROR_DIGEST_MISMATCH);
    expect(e.message).toContain('r.example/a:sha256-x.sig layers[0]');
  });

  it('refuses a layer without a signature annotation, an oversized layer and an index', async () => {
    const bare = await rejection(readCosignSignatures(manifest([layer({ annotations: {} })]), fetch));
    expect(bare.code).toBe(MirrorError.SIGSTORE_SIGNATURE_INVALID);
    expect(bare.message).toContain(COSIGN_SIGNATURE_ANNOTATION);
    let fetched = false;
    const huge = await rejection(
      readCosignSignatures(manifest([layer({ size: 64 * 1024 * 1024 })]), async () => {
        fetched = true;
        return payload;
      }),
    );
    expect(huge.code).toBe(MirrorError.SIGSTORE_SIGNATURE_INVALID);
    expect(fetched).toBe(false);
    const index = Buffer.from(
      JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: [] }),
    );
    expect((await rejection(readCosignSignatures(index, fetch))).code).toBe(
      MirrorError.SIGSTORE_SIGNATURE_INVALID,
    );
  });
});

describe('the lab signer against a real registry', () => {
  let reg: TestRegistry;
  let client: RegistryClient;
  const key = generateSigningKey();
  let image: { repo: string; digest: string };

  beforeAll(async () => {
    reg = await startRegistry();
    client = clientFor(reg);
    const [built] = await seedRegistry(reg, [{ repo: 'lab/app', tag: 'v1', layers: [{ size: 2048 }] }]);
    image = { repo: built!.repo, digest: built!.digest };
  });
  afterAll(async () => {
    await client?.close();
    await reg?.stop();
  });

  it('pushes sha256-<hex>.sig as a valid OCI image skopeo reads, with one simple-signing layer', async () => {
    const sig = await signImage(client, {
      ...image,
      reference: `${reg.host}/${image.repo}`,
      privateKey: key.privateKey,
    });
    expect(sig.tag).toBe(`sha256-${image.digest.slice(7)}.sig`);
    const ref = `docker://${reg.skopeoHost}/${image.repo}:${sig.tag}`;
    const raw = JSON.parse(await skopeoInspect(ref, { ...reg.skopeo, raw: true })) as {
      mediaType: string;
      config: { mediaType: string };
      layers: { mediaType: string; annotations: Record<string, string> }[];
    };
    expect(raw.mediaType).toBe(MediaType.OciManifest);
    expect(raw.config.mediaType).toBe(MediaType.OciConfig);
    expect(raw.layers).toHaveLength(1);
    expect(raw.layers[0]!.mediaType).toBe(COSIGN_SIGNATURE_MEDIA_TYPE);
    expect(raw.layers[0]!.annotations[COSIGN_SIGNATURE_ANNOTATION]).toBe(sig.layers[0]!.signature);
    // skopeo reads the config too, and copies it whole (each blob checked against its digest).
    const inspected = await skopeoInspect(ref, reg.skopeo);
    expect(inspected.Digest).toBe(sig.manifestDigest);
    const out = await tempDir();
    await skopeoCopy(ref, `oci:${join(out, 'sig')}:sig`, reg.skopeo);
  });

  it('reads the signature back through the registry client: it names the image and verifies with the key only', async () => {
    const tag = cosignTag(image.digest);
    const m = await client.getManifest(image.repo, tag);
    const sigs = await readCosignSignatures(m.bytes, (d, size) => client.getBlobBytes(image.repo, d, size));
    expect(sigs).toHaveLength(1);
    const [s] = sigs;
    expect(s!.claim).toMatchObject({
      digest: image.digest,
      reference: `${reg.host}/${image.repo}`,
      type: 'cosign container image signature',
    });
    expect(verifyCosignSignature(s!, key.publicKey)).toBe(true);
    expect(verifyCosignSignature(s!, generateSigningKey().publicKey)).toBe(false);
  });

  it('a .sig made to name another digest says so in its claim (and still verifies: the key is not the problem)', async () => {
    const [other] = await seedRegistry(reg, [{ repo: 'lab/other', tag: 'v1', layers: [{ size: 512 }] }]);
    await signImageNamingAnotherDigest(
      client,
      {
        repo: other!.repo,
        digest: other!.digest,
        reference: `${reg.host}/${other!.repo}`,
        privateKey: key.privateKey,
      },
      image.digest,
    );
    const m = await client.getManifest(other!.repo, cosignTag(other!.digest));
    const [s] = await readCosignSignatures(m.bytes, (d, size) => client.getBlobBytes(other!.repo, d, size));
    expect(s!.claim?.digest).toBe(image.digest);
    expect(verifyCosignSignature(s!, key.publicKey)).toBe(true);
  });
});
