/**
 * Release signatures through a signature store on loopback laid out as the real one, signed by a
 * throwaway GPG key with `skopeo standalone-sign`: fetched, verified, written into the ConfigMap, and
 * every signature in it accepted by `skopeo standalone-verify` (only the public key imported). Store
 * faults: 5xx retried, a store that is gone, none found, 403 as the end of the list, TLS.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpgSigner, type GpgSigner } from '../../../lab/gpg.js';
import { testPki, testServerCertificate } from '../../../lab/pki.js';
import { startSignatureStore, type SignatureStore } from '../../../lab/signature-store.js';
import { sha256Digest } from '../../../src/mirror/digest.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { parseSignatureConfigMap, signatureConfigMap } from '../../../src/mirror/signatures/configmap.js';
import { loadKeyring, type Keyring } from '../../../src/mirror/signatures/keys.js';
import { releaseSignatures } from '../../../src/mirror/signatures/release.js';
import {
  DEFAULT_SIGNATURE_URL,
  fetchReleaseSignatures,
  signatureUrl,
} from '../../../src/mirror/signatures/store.js';
import { toYaml } from '../../../src/util/yaml.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, withRealdata } from '../../helpers/realdata.js';

const REPO = 'registry.lab.invalid/openshift/release-images';
/** Short waits between retries: the rule is the net kit's, the test need not wait long for it. */
const FAST = { baseDelayMs: 5 };

/** A release payload manifest (its digest is the release digest) and the reference signed for it. */
function release(version: string): { manifest: Buffer; digest: string; reference: string } {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: sha256Digest(`config ${version}`),
        size: 9 + version.length,
      },
      layers: [],
      annotations: { 'io.openshift.release': version },
    }),
  );
  return { manifest, digest: sha256Digest(manifest), reference: `${REPO}:${version}-x86_64` };
}

/** One of the real Red Hat signatures (a valid signature by a key the lab keyring does not hold). */
async function redHatSignature(): Promise<Buffer> {
  const cm = yaml.load(
    await readFile(realdata('samples', 'signatures', 'oc-mirror-signature-configmap.yaml'), 'utf8'),
  ) as { binaryData: Record<string, string> };
  return Buffer.from(Object.values(cm.binaryData)[0]!, 'base64');
}

let gpg: GpgSigner;
let dir: string;
let keyringFile: string;
let keyring: Keyring;
const stores: SignatureStore[] = [];

async function store(o: Parameters<typeof startSignatureStore>[0] = {}): Promise<SignatureStore> {
  const s = await startSignatureStore(o);
  stores.push(s);
  return s;
}

beforeAll(async () => {
  [gpg, dir] = await Promise.all([createGpgSigner(), tempDir('release-store-')]);
  keyringFile = join(dir, 'lab-release-key.asc');
  await writeFile(keyringFile, gpg.publicKey);
  keyring = await loadKeyring([keyringFile]);
}, 60_000);

afterAll(async () => {
  await Promise.all([gpg?.stop(), ...stores.map((s) => s.stop())]);
});

describe('the signature store', () => {
  it('is addressed as the cluster version operator reads it', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(signatureUrl(DEFAULT_SIGNATURE_URL, digest, 2)).toBe(
      `https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release/sha256=${'ab'.repeat(32)}/signature-2`,
    );
    expect(signatureUrl('http://h/store/', digest, 1)).toBe(
      `http://h/store/sha256=${'ab'.repeat(32)}/signature-1`,
    );
  });

  withRealdata.it(
    'fetch → verify → ConfigMap: every signature in it is accepted by skopeo standalone-verify',
    async () => {
      const s = await store();
      const a = release('4.18.1');
      const b = release('4.18.2');
      const sigA = await gpg.sign(a.manifest, a.reference);
      const sigB = await gpg.sign(b.manifest, b.reference);
      s.put(a.digest, sigA);
      // b's store also holds a valid signature by a key the keyring does not hold, and a's signature.
      s.put(b.digest, sigB, await redHatSignature(), sigA);

      const results = await releaseSignatures(
        [
          { digest: a.digest, repository: REPO },
          { digest: b.digest, repository: REPO },
        ],
        { baseUrl: s.url, keyring },
      );
      expect(results[0]).toEqual({
        digest: a.digest,
        reference: a.reference,
        signatures: [sigA.toString('base64')],
        verifiedBy: [gpg.fingerprint],
        problems: [],
      });
      expect(results[1]).toEqual({
        digest: b.digest,
        reference: b.reference,
        signatures: [sigB.toString('base64')],
        verifiedBy: [gpg.fingerprint],
        problems: [
          `signature-2: it was signed by key 199E2F91FD431D51, which is not in ${keyringFile}`,
          `signature-3: the signature is for ${a.digest}, not ${b.digest}`,
        ],
      });
      // n = 1 … until the first 404, for each release.
      const hex = (d: string) => d.slice('sha256:'.length);
      expect([...s.requests].sort()).toEqual(
        [
          ...[1, 2].map((n) => `/signatures/sha256=${hex(a.digest)}/signature-${n}`),
          ...[1, 2, 3, 4].map((n) => `/signatures/sha256=${hex(b.digest)}/signature-${n}`),
        ].sort(),
      );

      // The ConfigMap as written, read back, each signature checked by skopeo for its release.
      const written = toYaml(signatureConfigMap(results));
      const back = parseSignatureConfigMap(written, 'signature-configmap.yaml');
      expect(back.map((r) => r.digest)).toEqual([a.digest, b.digest]);
      for (const [r, rel] of back.map((r, i) => [r, [a, b][i]!] as const)) {
        expect(r.signatures).toHaveLength(1);
        const check = await gpg.verify(rel.manifest, rel.reference, Buffer.from(r.signatures[0]!, 'base64'));
        expect(check, check.output).toMatchObject({ ok: true });
      }
      // skopeo is a checker that can refuse: a's signature for b's manifest is not accepted.
      expect(await gpg.verify(b.manifest, b.reference, sigA)).toMatchObject({ ok: false });
    },
    60_000,
  );

  it('a release read from another registry keeps signatures whose identity names quay.io, as the CVO does', async () => {
    const s = await store();
    const a = release('4.18.7');
    const identity = 'quay.io/openshift-release-dev/ocp-release:4.18.7-x86_64';
    const sig = await gpg.sign(a.manifest, identity);
    s.put(a.digest, sig);
    // Read from the lab's registry (REPO), signed for quay.io: verified, the identity recorded.
    const [r] = await releaseSignatures([{ digest: a.digest, repository: REPO }], {
      baseUrl: s.url,
      keyring,
    });
    expect(r).toEqual({
      digest: a.digest,
      reference: identity,
      signatures: [sig.toString('base64')],
      verifiedBy: [gpg.fingerprint],
      problems: [],
    });
  }, 30_000);

  it('a store without signatures for a release is a problem "no signature found", not an error', async () => {
    const s = await store();
    const a = release('4.18.3');
    const [r] = await releaseSignatures([{ digest: a.digest, repository: REPO }], {
      baseUrl: s.url,
      keyring,
    });
    expect(r).toEqual({
      digest: a.digest,
      signatures: [],
      verifiedBy: [],
      problems: [`no signature found for ${a.digest} in the signature store ${s.url}`],
    });
    expect(s.requests).toEqual([`/signatures/sha256=${a.digest.slice(7)}/signature-1`]);
  });

  it('a store hosted on GCS ends the list with 403', async () => {
    const s = await store({ absentStatus: 403 });
    const a = release('4.18.4');
    const sig = await gpg.sign(a.manifest, a.reference);
    s.put(a.digest, sig);
    expect(await fetchReleaseSignatures(a.digest, { baseUrl: s.url })).toEqual([sig]);
    expect(s.requests).toHaveLength(2);
  }, 30_000);

  it('5xx answers are retried, then the signatures are read', async () => {
    const s = await store();
    const a = release('4.18.5');
    const sig = await gpg.sign(a.manifest, a.reference);
    s.put(a.digest, sig);
    s.failNext(2, 503);
    expect(await fetchReleaseSignatures(a.digest, { baseUrl: s.url, ...FAST })).toEqual([sig]);
    const first = `/signatures/sha256=${a.digest.slice(7)}/signature-1`;
    expect(s.requests).toEqual([first, first, first, `/signatures/sha256=${a.digest.slice(7)}/signature-2`]);
  }, 30_000);

  it('a store that keeps failing, or is gone, is SIGNATURE_STORE_UNREACHABLE naming the URL, with the flags to fix it', async () => {
    const failing = await store();
    failing.failNext(100);
    const digest = release('4.18.6').digest;
    const e1 = await rejection(fetchReleaseSignatures(digest, { baseUrl: failing.url, retries: 2, ...FAST }));
    expect(e1).toMatchObject({
      code: MirrorError.SIGNATURE_STORE_UNREACHABLE,
      exitCode: 1,
      where: `${failing.url}/sha256=${digest.slice(7)}/signature-1`,
    });
    expect(e1.message).toContain('after 3 attempts: HTTP 500');
    expect(failing.requests).toHaveLength(3);

    const gone = await store();
    await gone.stop();
    const e2 = await rejection(
      releaseSignatures([{ digest, repository: REPO }], { baseUrl: gone.url, keyring, retries: 1, ...FAST }),
    );
    expect(e2).toMatchObject({ code: MirrorError.SIGNATURE_STORE_UNREACHABLE, exitCode: 1 });
    expect(e2.message).toMatch(/ECONNREFUSED/);
    expect(e2.where).toContain(gone.url);
    expect(e2.hint).toContain('--signature-url');
    expect(e2.hint).toContain('OCP_SIGNATURE_URL');
  }, 30_000);

  it('a store URL that is not http(s) is a usage error', async () => {
    const e = await rejection(
      fetchReleaseSignatures(`sha256:${'0'.repeat(64)}`, { baseUrl: 'file:///srv/store' }),
    );
    expect(e).toMatchObject({ code: MirrorError.SIGNATURE_URL_INVALID, exitCode: 2 });
    expect(e.hint).toContain('--signature-url');
  });

  it('over HTTPS: trusted with the CA file, refused without it (with the CA hint)', async () => {
    const pki = await testPki(join(dir, 'pki'));
    const s = await store({ tls: await testServerCertificate() });
    const a = release('4.18.7');
    const sig = await gpg.sign(a.manifest, a.reference);
    s.put(a.digest, sig);
    expect(s.url.startsWith('https://')).toBe(true);
    expect(
      await fetchReleaseSignatures(a.digest, {
        baseUrl: s.url,
        tls: { caFiles: [pki.caFile], certDirs: [] },
      }),
    ).toEqual([sig]);
    const e = await rejection(fetchReleaseSignatures(a.digest, { baseUrl: s.url, tls: { certDirs: [] } }));
    expect(e).toMatchObject({ code: MirrorError.SIGNATURE_STORE_UNREACHABLE, exitCode: 1 });
    expect(e.message).toContain('TLS verification failed');
    expect(e.hint).toMatch(/--ca-file.*--signature-url/);
  }, 30_000);
});
