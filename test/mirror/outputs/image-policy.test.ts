/**
 * The example ClusterImagePolicy: checked against the real CRD twice, by its JSON schema (ajv) and by
 * its CEL rules for what ajv cannot see (the scope format, keyData being base64 of a PUBLIC KEY PEM),
 * read from the CRD file itself; and compared with the `openshift` policy every cluster carries.
 */
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import {
  clusterImagePolicyExample,
  clusterImagePolicyExampleYaml,
  PLACEHOLDER_PUBLIC_KEY_PEM,
  type ClusterImagePolicyObject,
} from '../../../src/mirror/outputs/index.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { crdDir, validateAgainstCrd } from '../../helpers/crd.js';
import { lazy, realdata, thrown, withRealCrds, withRealdataAndCrds } from '../../helpers/realdata.js';

const CRD_FILE = 'config.openshift.io_clusterimagepolicies.crd.yaml';
const SCOPES = [
  'mirror.example.com:8443/openshift/release-images',
  'mirror.example.com:8443/openshift/release',
];

type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  items?: Schema;
  'x-kubernetes-validations'?: { rule: string }[];
};

/** The spec schema of the real CRD (read on first use: it needs the real CRDs). */
const crdSpec = lazy(() => {
  const crd = load(readFileSync(`${crdDir()}/${CRD_FILE}`, 'utf8')) as {
    spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
  };
  return crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
});

/** The regexes of `self.matches('…')` in CEL rules, as JavaScript (RE2 classes JS lacks replaced). */
function celRegexes(rules: { rule: string }[]): RegExp[] {
  return rules.flatMap(({ rule }) => {
    const m = /self\.matches\('((?:[^'\\]|\\.)*)'\)/.exec(rule);
    if (!m) return [];
    const source = m[1]!.replace(/\\\\/g, '\\').replace(/\[\[:xdigit:\]\]/g, '[0-9a-fA-F]');
    return [new RegExp(source)];
  });
}

/** What the CRD's CEL rules say about one object that ajv does not check (scopes and keyData only). */
function celProblems(o: ClusterImagePolicyObject): string[] {
  const problems: string[] = [];
  const scopeRules = crdSpec().properties!.scopes!.items!['x-kubernetes-validations']!;
  const [scopeRegex] = celRegexes(scopeRules.slice(2)); // the rule for scopes without a wildcard
  for (const s of o.spec.scopes) {
    const host = s.split('/')[0]!;
    if (host.split('.').length === 1 && host.split(':')[0] !== 'localhost')
      problems.push(`${s}: not a fully qualified domain`);
    if (!scopeRegex!.test(s)) problems.push(`${s}: invalid repository namespace or image`);
  }
  const keyData = o.spec.policy.rootOfTrust.publicKey.keyData;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(keyData) || keyData.length % 4 !== 0)
    problems.push('keyData is not base64');
  if (keyData.length < 68) problems.push('keyData is shorter than 68');
  const pem = Buffer.from(keyData, 'base64').toString('utf8');
  if (!pem.startsWith('-----BEGIN PUBLIC KEY-----'))
    problems.push('keyData does not start with BEGIN PUBLIC KEY');
  if (!pem.endsWith('-----END PUBLIC KEY-----\n') && !pem.endsWith('-----END PUBLIC KEY-----'))
    problems.push('keyData does not end with END PUBLIC KEY');
  return problems;
}

describe('clusterImagePolicyExample', () => {
  it('scopes the mirrored release repositories with a placeholder key', () => {
    const o = clusterImagePolicyExample({ scopes: SCOPES });
    expect(o.spec.scopes).toEqual(SCOPES);
    expect(o.spec.policy.rootOfTrust.policyType).toBe('PublicKey');
    expect(o.spec.policy.signedIdentity).toEqual({ matchPolicy: 'MatchRepoDigestOrExact' });
    const pem = Buffer.from(o.spec.policy.rootOfTrust.publicKey.keyData, 'base64').toString('utf8');
    expect(pem).toBe(PLACEHOLDER_PUBLIC_KEY_PEM);
    expect(pem).toMatch(/REPLACE/);
    expect(() => createPublicKey(pem)).toThrow(); // not a key anyone could mistake for a real one
    expect(o.metadata.annotations['kubernetes.io/description']).toMatch(/placeholder/);
  });

  withRealCrds.it('the placeholder key and the scopes pass the CRD: its schema and its CEL rules', () => {
    const o = clusterImagePolicyExample({ scopes: SCOPES });
    expect(validateAgainstCrd(CRD_FILE, o)).toEqual([]);
    expect(celProblems(o)).toEqual([]);
  });

  withRealdataAndCrds.it('has the shape of the openshift ClusterImagePolicy every cluster carries', () => {
    const real = load(
      readFileSync(realdata('samples', 'signatures', 'openshift-cluster-image-policy.yaml'), 'utf8'),
    ) as ClusterImagePolicyObject;
    // The checks here hold for the real one (so they can tell a good policy from a bad one) …
    expect(validateAgainstCrd(CRD_FILE, real)).toEqual([]);
    expect(celProblems(real)).toEqual([]);
    const ours = clusterImagePolicyExample({ scopes: SCOPES });
    expect(ours.apiVersion).toBe(real.apiVersion);
    expect(ours.kind).toBe(real.kind);
    expect(Object.keys(ours.spec.policy.rootOfTrust)).toEqual(Object.keys(real.spec.policy.rootOfTrust));
    expect(Object.keys(ours.spec.policy.rootOfTrust.publicKey)).toEqual(
      Object.keys(real.spec.policy.rootOfTrust.publicKey),
    );
    // … and the real key read the way ours is written (base64 of a PEM) is a public key.
    const realPem = Buffer.from(real.spec.policy.rootOfTrust.publicKey.keyData, 'base64').toString('utf8');
    expect(createPublicKey(realPem).asymmetricKeyType).toBe('rsa');
    const withReal = clusterImagePolicyExample({ scopes: SCOPES, publicKeyPem: realPem });
    expect(
      createPublicKey(Buffer.from(withReal.spec.policy.rootOfTrust.publicKey.keyData, 'base64')).export({
        type: 'spki',
        format: 'der',
      }),
    ).toEqual(createPublicKey(realPem).export({ type: 'spki', format: 'der' }));
  });

  it('carries a given key as base64 of its SPKI PEM (an ECDSA cosign key; an RSA key in PKCS#1 form)', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const o = clusterImagePolicyExample({ name: 'site-key', scopes: SCOPES, publicKeyPem: ec });
    expect(o.metadata.name).toBe('site-key');
    expect(Buffer.from(o.spec.policy.rootOfTrust.publicKey.keyData, 'base64').toString('utf8')).toBe(ec);
    expect(o.metadata.annotations['kubernetes.io/description']).not.toMatch(/placeholder/);

    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const pkcs1 = rsa.export({ type: 'pkcs1', format: 'pem' }).toString();
    expect(pkcs1).toMatch(/BEGIN RSA PUBLIC KEY/);
    const r = clusterImagePolicyExample({ scopes: SCOPES, publicKeyPem: `\n${pkcs1}\n\n` });
    expect(Buffer.from(r.spec.policy.rootOfTrust.publicKey.keyData, 'base64').toString('utf8')).toBe(
      rsa.export({ type: 'spki', format: 'pem' }).toString(),
    );
  });

  withRealCrds.it(
    'a given key (ECDSA; RSA in PKCS#1 form) passes the CRD: its schema and its CEL rules',
    () => {
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString();
      const o = clusterImagePolicyExample({ name: 'site-key', scopes: SCOPES, publicKeyPem: ec });
      expect(validateAgainstCrd(CRD_FILE, o)).toEqual([]);
      expect(celProblems(o)).toEqual([]);
      const pkcs1 = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .publicKey.export({ type: 'pkcs1', format: 'pem' })
        .toString();
      expect(celProblems(clusterImagePolicyExample({ scopes: SCOPES, publicKeyPem: pkcs1 }))).toEqual([]);
    },
  );

  it('refuses a private key without echoing it, and text that is no key', () => {
    const priv = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const e = thrown(() => clusterImagePolicyExample({ scopes: SCOPES, publicKeyPem: priv }));
    expect(e.code).toBe(MirrorError.SIGSTORE_KEY_INVALID);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/private key/);
    expect(e.describe()).not.toContain(priv.split('\n')[1]!);
    const junk = thrown(() => clusterImagePolicyExample({ scopes: SCOPES, publicKeyPem: 'not a key' }));
    expect(junk.code).toBe(MirrorError.SIGSTORE_KEY_INVALID);
    expect(junk.hint).toMatch(/BEGIN PUBLIC KEY/);
  });

  const BAD_SCOPES = [
    'mirror:5000/openshift/release-images', // not fully qualified
    '[fd00::1]:5000/openshift/release-images', // an IPv6 literal
    'mirror.example.com/openshift/release-images:4.21.0-x86_64', // one image, not a repository
    'mirror.example.com/OpenShift/release',
  ];

  it('drops duplicate scopes (the CRD list is a set) and refuses scopes the CRD would refuse', () => {
    expect(clusterImagePolicyExample({ scopes: [SCOPES[0]!, SCOPES[0]!] }).spec.scopes).toEqual([SCOPES[0]]);
    expect(
      clusterImagePolicyExample({ scopes: ['localhost:5000/openshift/release-images'] }).spec.scopes,
    ).toEqual(['localhost:5000/openshift/release-images']);
    for (const bad of BAD_SCOPES) {
      const e = thrown(() => clusterImagePolicyExample({ scopes: [bad] }));
      expect(e.code, bad).toBe(MirrorError.CLUSTER_RESOURCE_INPUT);
      expect(e.message, bad).toContain(bad);
    }
    expect(thrown(() => clusterImagePolicyExample({ scopes: [] })).message).toMatch(/at least one scope/);
  });

  withRealCrds.it("the scopes it refuses, the CRD's CEL rules refuse too; localhost they accept", () => {
    expect(
      celProblems(clusterImagePolicyExample({ scopes: ['localhost:5000/openshift/release-images'] })),
    ).toEqual([]);
    const good = clusterImagePolicyExample({ scopes: SCOPES });
    // The API server would refuse all but the tagged one too (a tag makes it one image's scope).
    for (const bad of BAD_SCOPES.filter((s) => !s.includes(':4.21')))
      expect(celProblems({ ...good, spec: { ...good.spec, scopes: [bad] } }), bad).not.toEqual([]);
  });
});

describe('clusterImagePolicyExampleYaml', () => {
  it('says in its header to replace the placeholder key, and reads back as the object', () => {
    const text = clusterImagePolicyExampleYaml({ scopes: SCOPES });
    const header = text.split('\n').filter((l) => l.startsWith('#'));
    expect(text.startsWith('#')).toBe(true);
    expect(header.join('\n')).toMatch(/REPLACE spec\.policy\.rootOfTrust\.publicKey\.keyData/);
    const doc = load(text);
    // The object the CRD accepts (see above), exactly.
    expect(doc).toEqual(clusterImagePolicyExample({ scopes: SCOPES }));
  });

  it('has no replace note when the key is given', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const text = clusterImagePolicyExampleYaml({ scopes: SCOPES, publicKeyPem: pem });
    expect(text).not.toMatch(/REPLACE/);
    expect(text.startsWith('#')).toBe(true);
  });
});
