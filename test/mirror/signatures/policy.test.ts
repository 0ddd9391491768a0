/**
 * containers-policy.json(5) as `airgap mirror --secure-policy` reads and applies it: real policy
 * files in a temp dir, real keys (an ECDSA P-256 key made with node's crypto for Sigstore, OpenPGP
 * keys made with openpgp for GPG), real signatures over simple-signing payloads, the product's own
 * Sigstore verifier and an OpenPGP verifier built on openpgp; plus Red Hat's real release
 * signatures and key, and the policy.json this machine ships.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import * as openpgp from 'openpgp';
import { beforeAll, describe, expect, it } from 'vitest';
import { MirrorError } from '../../../src/mirror/errors.js';
import {
  evaluatePolicy,
  identityProblemFor,
  loadPolicy,
  parsePolicy,
  policyScopeFor,
  type PolicyEvidence,
  type SignaturePolicy,
  type SignedIdentity,
} from '../../../src/mirror/signatures/policy.js';
import {
  ATOMIC_SIGNATURE_TYPE,
  COSIGN_SIGNATURE_TYPE,
} from '../../../src/mirror/signatures/simple-signing.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { policyVerifiers } from '../../../src/mirror/signatures/verifiers.js';

const DIGEST = `sha256:${'1'.repeat(64)}`;
const OTHER_DIGEST = `sha256:${'2'.repeat(64)}`;

/** A simple-signing payload as a signer writes it. */
function payload(type: string, reference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': reference },
        image: { 'docker-manifest-digest': digest },
        type,
      },
      optional: { creator: 'policy.test.ts' },
    }),
  );
}

/** A Sigstore signature in cosign's format: base64 of an ECDSA (DER) signature over SHA-256 of the payload. */
function sigstoreSign(key: KeyObject, reference: string, digest: string, type = COSIGN_SIGNATURE_TYPE) {
  const bytes = payload(type, reference, digest);
  return { payload: bytes, signature: sign('sha256', bytes, { key, dsaEncoding: 'der' }).toString('base64') };
}

async function gpgSign(
  armoredPrivateKey: string,
  reference: string,
  digest: string,
  type = ATOMIC_SIGNATURE_TYPE,
) {
  const signingKeys = await openpgp.readPrivateKey({ armoredKey: armoredPrivateKey });
  const message = await openpgp.createMessage({ binary: payload(type, reference, digest) });
  return (await openpgp.sign({ message, signingKeys, format: 'binary' })) as Uint8Array;
}

/** The verifiers the run injects: the product's Sigstore check and its OpenPGP simple-signing check. */
const verifiers = policyVerifiers;

const none: PolicyEvidence = { sigstore: [], gpg: [] };

let dir: string;
let cosignKey: KeyObject;
let otherCosignKey: KeyObject;
let cosignPub: string;
let cosignPubPem: string;
let otherCosignPub: string;
let gpg: { privateKey: string; publicKey: string };
let otherGpg: { privateKey: string; publicKey: string };
let gpgPub: string;
let gpgBinaryPub: string;
let otherGpgPub: string;

async function policyFile(doc: unknown, name = 'policy.json'): Promise<SignaturePolicy> {
  const file = join(dir, name);
  await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  return loadPolicy(file);
}

/** A policy whose every docker image needs what `requirement` says. */
function only(requirement: Record<string, unknown>): unknown {
  return { default: [{ type: 'reject' }], transports: { docker: { 'quay.io/ns': [requirement] } } };
}

beforeAll(async () => {
  dir = await tempDir('airgap-policy-');
  const pair = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const a = pair();
  const b = pair();
  cosignKey = a.privateKey;
  otherCosignKey = b.privateKey;
  cosignPubPem = a.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  cosignPub = join(dir, 'cosign.pub');
  otherCosignPub = join(dir, 'other-cosign.pub');
  await writeFile(cosignPub, cosignPubPem);
  await writeFile(otherCosignPub, b.publicKey.export({ type: 'spki', format: 'pem' }));
  const key = (name: string) =>
    openpgp.generateKey({ userIDs: [{ name, email: `${name}@example.com` }], format: 'armored' });
  gpg = await key('release');
  otherGpg = await key('stranger');
  gpgPub = join(dir, 'release.asc');
  gpgBinaryPub = join(dir, 'release.gpg');
  otherGpgPub = join(dir, 'stranger.asc');
  await writeFile(gpgPub, gpg.publicKey);
  await writeFile(gpgBinaryPub, (await openpgp.readKey({ armoredKey: gpg.publicKey })).write());
  await writeFile(otherGpgPub, otherGpg.publicKey);
});

describe('sigstoreSigned', () => {
  const image = { reference: `quay.io/ns/app@${DIGEST}`, digest: DIGEST };

  it('accepts an image signed with the key (keyPath or keyData), refuses one without a signature', async () => {
    const signature = sigstoreSign(cosignKey, 'quay.io/ns/app:v1', DIGEST);
    for (const keys of [{ keyPath: cosignPub }, { keyData: Buffer.from(cosignPubPem).toString('base64') }]) {
      const policy = await policyFile(only({ type: 'sigstoreSigned', ...keys }));
      const ok = await evaluatePolicy(policy, image, { sigstore: [signature], gpg: [] }, verifiers);
      expect(ok).toMatchObject({ allowed: true, reasons: [] });
      const unsigned = await evaluatePolicy(policy, image, none, verifiers);
      expect(unsigned.allowed).toBe(false);
      expect(unsigned.requirement).toBe('transports.docker["quay.io/ns"][0]: sigstoreSigned');
      expect(unsigned.reasons[0]).toMatch(
        /has no Sigstore signature; scope "quay.io\/ns" requires one made with/,
      );
    }
  });

  it('refuses signatures by another key, of another digest, or of the GPG kind, saying why for each', async () => {
    const policy = await policyFile(only({ type: 'sigstoreSigned', keyPath: cosignPub }));
    const verdict = await evaluatePolicy(
      policy,
      image,
      {
        sigstore: [
          sigstoreSign(otherCosignKey, 'quay.io/ns/app:v1', DIGEST),
          sigstoreSign(cosignKey, 'quay.io/ns/app:v1', OTHER_DIGEST),
          sigstoreSign(cosignKey, 'quay.io/ns/app:v1', DIGEST, ATOMIC_SIGNATURE_TYPE),
        ],
        gpg: [],
      },
      verifiers,
    );
    expect(verdict.allowed).toBe(false);
    expect(verdict.reasons).toHaveLength(1);
    const reason = verdict.reasons[0]!;
    expect(reason).toContain(`no Sigstore signature of ${DIGEST} verifies with ${cosignPub}`);
    expect(reason).toContain('3 signatures tried');
    expect(reason).toContain('#1 was not made with that key');
    expect(reason).toContain(`#2 verifies, but the signature is for ${OTHER_DIGEST}, not ${DIGEST}`);
    expect(reason).toContain(`#3 verifies, but the signature is of type "${ATOMIC_SIGNATURE_TYPE}"`);
  });

  it('accepts when any of several keys (keyPaths) made the signature', async () => {
    const policy = await policyFile(only({ type: 'sigstoreSigned', keyPaths: [otherCosignPub, cosignPub] }));
    const signature = sigstoreSign(cosignKey, 'quay.io/ns/app:v1', DIGEST);
    expect((await evaluatePolicy(policy, image, { sigstore: [signature], gpg: [] }, verifiers)).allowed).toBe(
      true,
    );
  });
});

describe('signedBy (GPG)', () => {
  const image = { reference: `quay.io/ns/app@${DIGEST}`, digest: DIGEST };

  it('accepts a signature made with the keyring, armored or binary, from keyPath, keyPaths or keyData', async () => {
    const signature = await gpgSign(gpg.privateKey, 'quay.io/ns/app:v1', DIGEST);
    for (const keys of [
      { keyPath: gpgPub },
      { keyPath: gpgBinaryPub },
      { keyPaths: [otherGpgPub, gpgPub] },
      { keyData: (await readFile(gpgBinaryPub)).toString('base64') },
    ]) {
      const policy = await policyFile(only({ type: 'signedBy', keyType: 'GPGKeys', ...keys }));
      const verdict = await evaluatePolicy(policy, image, { sigstore: [], gpg: [signature] }, verifiers);
      expect(verdict, JSON.stringify(keys)).toMatchObject({ allowed: true });
    }
  });

  it("refuses another key's signature, a signature of another digest, and no signature", async () => {
    const policy = await policyFile(only({ type: 'signedBy', keyType: 'GPGKeys', keyPath: gpgPub }));
    const stranger = await gpgSign(otherGpg.privateKey, 'quay.io/ns/app:v1', DIGEST);
    const elsewhere = await gpgSign(gpg.privateKey, 'quay.io/ns/app:v1', OTHER_DIGEST);
    const verdict = await evaluatePolicy(
      policy,
      image,
      { sigstore: [], gpg: [stranger, elsewhere] },
      verifiers,
    );
    expect(verdict.allowed).toBe(false);
    expect(verdict.reasons[0]).toContain(`no GPG signature of ${DIGEST} verifies with ${gpgPub}`);
    expect(verdict.reasons[0]).toMatch(/#1 it was signed by key [0-9A-F]{16}, which is not in /);
    expect(verdict.reasons[0]).toContain(`#2 verifies, but the signature is for ${OTHER_DIGEST}`);
    const unsigned = await evaluatePolicy(policy, image, none, verifiers);
    expect(unsigned.reasons[0]).toMatch(/has no GPG signature/);
    // A Sigstore signature does not stand in for a GPG one.
    const sigstore = sigstoreSign(cosignKey, 'quay.io/ns/app:v1', DIGEST);
    expect((await evaluatePolicy(policy, image, { sigstore: [sigstore], gpg: [] }, verifiers)).allowed).toBe(
      false,
    );
  });

  withRealdata.it("verifies Red Hat's real release signatures with Red Hat's release key", async () => {
    const configMap = yaml.load(
      await readFile(realdata('samples/signatures/oc-mirror-signature-configmap.yaml'), 'utf8'),
    ) as { binaryData: Record<string, string> };
    const key = Object.keys(configMap.binaryData).find((k) => k.startsWith('sha256-7039e7bd'))!;
    const digest = `sha256:${key.slice('sha256-'.length, 'sha256-'.length + 64)}`;
    const signature = Buffer.from(configMap.binaryData[key]!, 'base64');
    const policy = await policyFile({
      default: [{ type: 'reject' }],
      transports: {
        docker: {
          'quay.io/openshift-release-dev/ocp-release': [
            {
              type: 'signedBy',
              keyType: 'GPGKeys',
              keyPath: realdata('samples/signatures/redhat-release-key-2.asc'),
            },
          ],
        },
      },
    });
    const evidence = { sigstore: [], gpg: [signature] };
    const release = 'quay.io/openshift-release-dev/ocp-release';
    const byDigest = await evaluatePolicy(
      policy,
      { reference: `${release}@${digest}`, digest },
      evidence,
      verifiers,
    );
    expect(byDigest).toMatchObject({ allowed: true });
    // The signature names the tag 4.15.49-x86_64: asked for by that tag it holds, by another it does not.
    const byTag = { reference: `${release}:4.15.49-x86_64`, digest };
    expect((await evaluatePolicy(policy, byTag, evidence, verifiers)).allowed).toBe(true);
    const wrongTag = await evaluatePolicy(
      policy,
      { reference: `${release}:4.16.0-x86_64`, digest },
      evidence,
      verifiers,
    );
    expect(wrongTag.allowed).toBe(false);
    expect(wrongTag.reasons[0]).toContain(
      `the signature names ${release}:4.15.49-x86_64, not ${release}:4.16.0-x86_64 (matchRepoDigestOrExact)`,
    );
  });
});

describe('requirements together and scope precedence', () => {
  it('needs every requirement of the scope: a Sigstore and a GPG signature both', async () => {
    const policy = await policyFile({
      default: [{ type: 'reject' }],
      transports: {
        docker: {
          'quay.io': [
            { type: 'sigstoreSigned', keyPath: cosignPub },
            { type: 'signedBy', keyType: 'GPGKeys', keyPath: gpgPub },
          ],
        },
      },
    });
    const image = { reference: `quay.io/ns/app@${DIGEST}`, digest: DIGEST };
    const sigstore = [sigstoreSign(cosignKey, 'quay.io/ns/app:v1', DIGEST)];
    const gpgSigs = [await gpgSign(gpg.privateKey, 'quay.io/ns/app:v1', DIGEST)];
    expect((await evaluatePolicy(policy, image, { sigstore, gpg: gpgSigs }, verifiers)).allowed).toBe(true);
    const half = await evaluatePolicy(policy, image, { sigstore, gpg: [] }, verifiers);
    expect(half).toMatchObject({ allowed: false, requirement: 'transports.docker["quay.io"][1]: signedBy' });
  });

  it('applies the most specific scope: tag, repository, namespace, host, wildcard, "", default', async () => {
    const accept = [{ type: 'insecureAcceptAnything' }];
    const reject = [{ type: 'reject' }];
    const signed = [{ type: 'sigstoreSigned', keyPath: cosignPub }];
    const doc = {
      default: reject,
      transports: {
        docker: {
          'quay.io': reject,
          'quay.io/ns': accept,
          'quay.io/ns/repo': signed,
          'quay.io/ns/repo:v1': accept,
          [`quay.io/ns/repo@${DIGEST}`]: accept,
          'registry.example.com:5000': reject,
          '*.example.com': accept,
          '*.b.example.com': reject,
          'a.b.example.com': accept,
        },
        // Other transports never apply to mirrored images.
        'docker-daemon': { '': accept },
      },
    };
    const policy = await policyFile(doc);
    const cases: [string, string, boolean][] = [
      ['quay.io/ns/repo:v1', 'quay.io/ns/repo:v1', true],
      [`quay.io/ns/repo@${DIGEST}`, `quay.io/ns/repo@${DIGEST}`, true],
      ['quay.io/ns/repo:v2', 'quay.io/ns/repo', false],
      [`quay.io/ns/repo@${OTHER_DIGEST}`, 'quay.io/ns/repo', false],
      ['quay.io/ns/other:v1', 'quay.io/ns', true],
      ['quay.io/ns/deeper/repo:v1', 'quay.io/ns', true],
      ['quay.io/elsewhere/repo:v1', 'quay.io', false],
      ['registry.example.com/x/y:1', '*.example.com', true],
      ['registry.example.com:5000/x/y:1', 'registry.example.com:5000', false],
      ['registry.example.com:6000/x/y:1', '*.example.com', true],
      ['c.b.example.com/x:1', '*.b.example.com', false],
      ['a.b.example.com/x:1', 'a.b.example.com', true],
      ['example.com/x:1', 'default', false],
      ['busybox', 'default', false],
    ];
    for (const [reference, scope, allowed] of cases) {
      const applied = policyScopeFor(policy, reference);
      expect(applied.path === 'default' ? 'default' : applied.scope, reference).toBe(scope);
      const verdict = await evaluatePolicy(policy, { reference, digest: DIGEST }, none, verifiers);
      expect(verdict.allowed, reference).toBe(allowed);
    }
    const byDefault = await evaluatePolicy(policy, { reference: 'busybox', digest: DIGEST }, none, verifiers);
    expect(byDefault.reasons[0]).toContain(
      "no transports.docker scope names docker.io/library/busybox and the policy's default rejects it",
    );
    const byHost = await evaluatePolicy(
      policy,
      { reference: 'quay.io/x/y:1', digest: DIGEST },
      none,
      verifiers,
    );
    expect(byHost.reasons[0]).toMatch(
      /^the policy rejects every image in scope "quay.io" \(.*policy.json:\d+:\d+\)$/,
    );

    // The docker transport's "" scope comes before the global default.
    const withEmpty = await policyFile({ default: reject, transports: { docker: { '': accept } } });
    expect(policyScopeFor(withEmpty, 'busybox').label).toBe('the docker default scope ""');
    expect(
      (await evaluatePolicy(withEmpty, { reference: 'busybox', digest: DIGEST }, none, verifiers)).allowed,
    ).toBe(true);
  });
});

describe('signedIdentity', () => {
  const rules: Record<string, SignedIdentity> = {
    digestOrExact: { type: 'matchRepoDigestOrExact' },
    repository: { type: 'matchRepository' },
    exact: { type: 'matchExact' },
  };
  const byDigest = `quay.io/ns/app@${DIGEST}`;

  it('matchRepoDigestOrExact: by digest the same repository, by tag the same tag; never a bare name', () => {
    const rule = rules.digestOrExact!;
    expect(identityProblemFor(rule, byDigest, 'quay.io/ns/app:v1')).toBeUndefined();
    expect(identityProblemFor(rule, byDigest, `quay.io/ns/app@${DIGEST}`)).toBeUndefined();
    expect(identityProblemFor(rule, byDigest, 'quay.io/ns/other:v1')).toBe(
      'the signature names quay.io/ns/other:v1, not an image of quay.io/ns/app (matchRepoDigestOrExact)',
    );
    expect(identityProblemFor(rule, 'quay.io/ns/app:v1', 'quay.io/ns/app:v1')).toBeUndefined();
    expect(identityProblemFor(rule, 'quay.io/ns/app:v1', 'quay.io/ns/app:v2')).toMatch(
      /not quay.io\/ns\/app:v1/,
    );
    // A name alone is :latest for the image, but never for the signature.
    expect(identityProblemFor(rule, 'quay.io/ns/app', 'quay.io/ns/app:latest')).toBeUndefined();
    expect(identityProblemFor(rule, byDigest, 'quay.io/ns/app')).toMatch(
      /with no tag or digest.*"signedIdentity": \{"type": "matchRepository"\}/,
    );
    // docker.io names are compared expanded.
    expect(identityProblemFor(rule, 'busybox:1', 'docker.io/library/busybox:1')).toBeUndefined();
  });

  it('matchRepository accepts any reference to the same repository only; matchExact only the same reference', () => {
    expect(identityProblemFor(rules.repository!, byDigest, 'quay.io/ns/app')).toBeUndefined();
    expect(identityProblemFor(rules.repository!, 'quay.io/ns/app:v1', 'quay.io/ns/app:v9')).toBeUndefined();
    expect(identityProblemFor(rules.repository!, byDigest, 'quay.io/ns/app2:v1')).toMatch(/matchRepository/);
    expect(identityProblemFor(rules.exact!, 'quay.io/ns/app:v1', 'quay.io/ns/app:v1')).toBeUndefined();
    expect(identityProblemFor(rules.exact!, byDigest, 'quay.io/ns/app:v1')).toMatch(
      /not exactly .*matchExact/,
    );
    expect(identityProblemFor(rules.exact!, byDigest, byDigest)).toBeUndefined();
    expect(identityProblemFor(rules.exact!, 'quay.io/ns/app:v1', 'quay.io/ns/app')).toMatch(/matchExact/);
  });

  it('exactReference, exactRepository and remapIdentity compare with what the rule names', () => {
    const exactRef: SignedIdentity = { type: 'exactReference', dockerReference: 'quay.io/up/app:v1' };
    expect(identityProblemFor(exactRef, byDigest, 'quay.io/up/app:v1')).toBeUndefined();
    expect(identityProblemFor(exactRef, byDigest, 'quay.io/up/app:v2')).toMatch(/exactReference/);
    const exactRepo: SignedIdentity = { type: 'exactRepository', dockerRepository: 'quay.io/up/app' };
    expect(identityProblemFor(exactRepo, byDigest, 'quay.io/up/app:v7')).toBeUndefined();
    expect(identityProblemFor(exactRepo, byDigest, 'quay.io/ns/app:v7')).toMatch(/exactRepository/);
    const remap: SignedIdentity = {
      type: 'remapIdentity',
      prefix: 'mirror.example.com:8443/ocp',
      signedPrefix: 'quay.io/openshift-release-dev',
    };
    const mirrored = `mirror.example.com:8443/ocp/ocp-release@${DIGEST}`;
    expect(
      identityProblemFor(remap, mirrored, 'quay.io/openshift-release-dev/ocp-release:4.18.1'),
    ).toBeUndefined();
    expect(identityProblemFor(remap, mirrored, 'mirror.example.com:8443/ocp/ocp-release:4.18.1')).toMatch(
      /remapIdentity, as quay.io\/openshift-release-dev\/ocp-release@/,
    );
    // The prefix matches whole path components only: ocp2 is not under ocp.
    const sideways = `mirror.example.com:8443/ocp2/ocp-release@${DIGEST}`;
    expect(identityProblemFor(remap, sideways, 'mirror.example.com:8443/ocp2/ocp-release:1')).toBeUndefined();
  });

  it('is applied to verified signatures: a signature for another repository is refused, matchRepository needs the same one', async () => {
    const image = { reference: `quay.io/ns/app@${DIGEST}`, digest: DIGEST };
    const forOther = { sigstore: [sigstoreSign(cosignKey, 'quay.io/ns/other', DIGEST)], gpg: [] };
    const forApp = { sigstore: [sigstoreSign(cosignKey, 'quay.io/ns/app', DIGEST)], gpg: [] };
    const strict = await policyFile(only({ type: 'sigstoreSigned', keyPath: cosignPub }));
    const loose = await policyFile(
      only({ type: 'sigstoreSigned', keyPath: cosignPub, signedIdentity: { type: 'matchRepository' } }),
      'loose.json',
    );
    // cosign names a repository without a tag: only matchRepository takes it.
    expect((await evaluatePolicy(strict, image, forApp, verifiers)).reasons[0]).toMatch(
      /with no tag or digest/,
    );
    expect((await evaluatePolicy(loose, image, forApp, verifiers)).allowed).toBe(true);
    const other = await evaluatePolicy(loose, image, forOther, verifiers);
    expect(other.allowed).toBe(false);
    expect(other.reasons[0]).toContain(
      'the signature names quay.io/ns/other, not an image of quay.io/ns/app',
    );
  });
});

describe('policy files that are wrong', () => {
  async function problem(text: string, name = 'bad.json') {
    const file = join(dir, name);
    await writeFile(file, text);
    const e = await rejection(loadPolicy(file));
    expect(e.exitCode).toBe(2);
    return { e, file };
  }

  it('reports a JSON syntax error at its line and column, with or without a position from V8', async () => {
    // A trailing comma in a list: V8 says only "Unexpected token ']'".
    const trailing = await problem('{\n  "default": [\n    {"type": "reject"},\n  ]\n}\n');
    expect(trailing.e.code).toBe(MirrorError.SIGNATURE_POLICY_INVALID);
    expect(trailing.e.message).toBe("the policy is not valid JSON: Unexpected token ']'");
    expect(trailing.e.where).toBe(`${trailing.file}:4:3`);
    // A missing comma between fields: V8 gives the offset.
    const comma = await problem('{\n  "default": [{"type": "reject"}]\n  "transports": {}\n}\n');
    expect(comma.e.message).toMatch(/not valid JSON: Expected ',' or '}' after property value$/);
    expect(comma.e.where).toBe(`${comma.file}:3:3`);
    const truncated = await problem('{\n  "default": [{"type": "reject"}');
    expect(truncated.e.where).toBe(`${truncated.file}:2:33`);
    const bareword = await problem('{"default": [{"type": reject}]}');
    expect(bareword.e.where).toBe(`${bareword.file}:1:23`);
    const empty = await problem('');
    expect(empty.e.message).toMatch(/Unexpected end of JSON input/);
    expect(empty.e.where).toBe(`${empty.file}:1:1`);
  });

  it('refuses a key given twice, as containers/image does', async () => {
    const { e, file } = await problem('{\n  "default": [{"type": "reject"}],\n  "default": []\n}\n');
    expect(e.message).toBe('the policy has the key "default" twice in one object');
    expect(e.where).toBe(`${file}:3:3`);
  });

  it('names the scope, the field and its line for each invalid requirement, with a hint', async () => {
    const text = JSON.stringify(
      {
        default: [{ type: 'reject' }],
        transports: {
          docker: {
            'quay.io/a': [{ type: 'signedby', keyType: 'GPGKeys', keyPath: gpgPub }],
            'quay.io/b': [{ type: 'signedBy', keyType: 'GPGKeys' }],
            'quay.io/c': [{ type: 'signedBy', keyType: 'GPGKeys', keyPath: gpgPub, keyData: 'AAAA' }],
            'quay.io/d': [{ type: 'sigstoreSigned' }],
            'quay.io/e': [{ type: 'signedBy', keyType: 'GPGKeys', keyPath: 'keys/release.asc' }],
            'quay.io/f': [{ type: 'sigstoreSigned', keyPath: join(dir, 'missing.pub') }],
            'quay.io/g': [
              { type: 'sigstoreSigned', keyPath: cosignPub, signedIdentity: { type: 'matchRepositry' } },
            ],
            'quay.io/h': [{ type: 'insecureAcceptAnything', keyPath: cosignPub }],
            'quay.io/i': [],
            'docker://quay.io/j': [{ type: 'reject' }],
          },
        },
      },
      null,
      2,
    );
    const { e, file } = await problem(text);
    const lines = e.message.split('\n').slice(1);
    const line = (scope: string) => lines.find((l) => l.includes(`"${scope}"`)) ?? `(no line for ${scope})`;
    const at = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;
    expect(e.message).toMatch(/^10 problems in /);
    expect(line('quay.io/a')).toContain(`${file}:${at('"signedby"')}:`);
    expect(line('quay.io/a')).toMatch(/unknown requirement type "signedby" — did you mean signedBy\?/);
    expect(line('quay.io/b')).toMatch(
      /signedBy names no key — give exactly one of keyPath, keyPaths, keyData/,
    );
    expect(line('quay.io/c')).toMatch(/signedBy gives keyPath and keyData/);
    expect(line('quay.io/d')).toMatch(
      /sigstoreSigned names no key — give exactly one of keyPath, keyPaths, keyData, keyDatas/,
    );
    expect(line('quay.io/e')).toContain(`${file}:${at('keys/release.asc')}:`);
    expect(line('quay.io/e')).toMatch(/key path "keys\/release.asc" is relative — give the absolute path/);
    expect(line('quay.io/f')).toContain(
      `cannot read the key file ${join(dir, 'missing.pub')}: it does not exist`,
    );
    expect(line('quay.io/g')).toMatch(
      /unknown signedIdentity "matchRepositry" — did you mean matchRepository\?/,
    );
    expect(line('quay.io/h')).toMatch(/scope "quay.io\/h": insecureAcceptAnything has no field "keyPath"/);
    expect(line('quay.io/i')).toMatch(/must be a non-empty list of requirements/);
    expect(line('docker://quay.io/j')).toMatch(/names a transport or URL, so it never matches/);
    const codes = (e.details?.problems as { code: string }[]).map((p) => p.code);
    expect(codes).toContain(MirrorError.SIGNATURE_POLICY_UNREADABLE);
  });

  it('refuses Fulcio, PKI and Rekor requirements as unsupported rather than skipping them', async () => {
    const fulcio = await problem(
      JSON.stringify(
        only({
          type: 'sigstoreSigned',
          fulcio: {
            caPath: '/etc/fulcio.pem',
            oidcIssuer: 'https://oauth2.sigstore.dev/auth',
            subjectEmail: 'a@b',
          },
          rekorPublicKeyPath: '/etc/rekor.pub',
        }),
      ),
    );
    expect(fulcio.e.code).toBe(MirrorError.SIGNATURE_POLICY_UNSUPPORTED);
    expect(fulcio.e.message).toMatch(/keyless \(Fulcio\) verification is not supported/);
    expect(fulcio.e.message).toMatch(/rekorPublicKeyPath requires a Rekor transparency-log entry/);
    const rekor = await problem(
      JSON.stringify(only({ type: 'sigstoreSigned', keyPath: cosignPub, rekorPublicKeyPath: cosignPub })),
    );
    expect(rekor.e.code).toBe(MirrorError.SIGNATURE_POLICY_UNSUPPORTED);
    expect(rekor.e.hint).toMatch(/remove the rekorPublicKey\* field/);
  });

  it('refuses a policy without a default, a file that is not there, and a key that is not a public key', async () => {
    const noDefault = await problem('{"transports": {}}');
    expect(noDefault.e.message).toBe('the policy has no "default"');
    const missing = await rejection(loadPolicy(join(dir, 'nope.json')));
    expect(missing).toMatchObject({ code: MirrorError.SIGNATURE_POLICY_UNREADABLE, exitCode: 2 });
    expect(missing.message).toContain('nope.json: it does not exist');
    const notAKey = await problem(JSON.stringify(only({ type: 'sigstoreSigned', keyPath: gpgPub })));
    expect(notAKey.e.code).toBe(MirrorError.SIGSTORE_KEY_INVALID);
    expect(notAKey.e.message).toContain(gpgPub);
  });
});

describe('real policy files', () => {
  it.skipIf(!existsSync('/etc/containers/policy.json'))(
    'parses the policy.json this machine ships',
    async () => {
      const policy = await loadPolicy('/etc/containers/policy.json');
      expect(policy.default.requirements.length).toBeGreaterThan(0);
      const verdict = await evaluatePolicy(policy, { reference: 'busybox', digest: DIGEST }, none, verifiers);
      expect(typeof verdict.allowed).toBe('boolean');
    },
  );

  it('parses the shape Fedora and RHEL ship: signedBy keyPaths per registry, docker-daemon, a default', async () => {
    const text = `{
    "default": [
        {
            "type": "insecureAcceptAnything"
        }
    ],
    "transports": {
        "docker": {
            "registry.access.redhat.com": [
                {
                    "type": "signedBy",
                    "keyType": "GPGKeys",
                    "keyPaths": ["${gpgPub}", "${otherGpgPub}"]
                }
            ],
            "registry.redhat.io": [
                {
                    "type": "signedBy",
                    "keyType": "GPGKeys",
                    "keyPaths": ["${gpgPub}", "${otherGpgPub}"]
                }
            ]
        },
        "docker-daemon": {
            "": [
                {
                    "type": "insecureAcceptAnything"
                }
            ]
        }
    }
}
`;
    const policy = await parsePolicy(text, 'fedora-policy.json');
    expect([...policy.docker.keys()]).toEqual(['registry.access.redhat.com', 'registry.redhat.io']);
    const scope = policyScopeFor(policy, 'registry.redhat.io/ubi9/ubi:latest');
    expect(scope.requirements[0]).toMatchObject({ type: 'signedBy', where: 'fedora-policy.json:17:17' });
    const image = { reference: 'registry.redhat.io/ubi9/ubi:latest', digest: DIGEST };
    const signature = await gpgSign(otherGpg.privateKey, 'registry.redhat.io/ubi9/ubi:latest', DIGEST);
    expect((await evaluatePolicy(policy, image, { sigstore: [], gpg: [signature] }, verifiers)).allowed).toBe(
      true,
    );
    expect(
      (await evaluatePolicy(policy, { ...image, reference: 'quay.io/a/b:1' }, none, verifiers)).allowed,
    ).toBe(true);
  });
});
