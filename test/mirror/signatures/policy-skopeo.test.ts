/**
 * airgap's reading of containers-policy.json(5) and containers-registries.d(5) against the real
 * implementation: Debian's skopeo (containers/image) pulls from a real registry with the same policy
 * and registries.d files, with a GPG "simple signing" signature made by `skopeo standalone-sign`
 * (gpg) and stored where our lookaside lookup says it belongs. For each policy, airgap's verdict
 * must be skopeo's, and the one expected.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePolicy, parsePolicy } from '../../../src/mirror/signatures/policy.js';
import { loadRegistriesD, lookasideSignatureUrl } from '../../../src/mirror/signatures/registries-d.js';
import { seedRegistry, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoCopy, skopeoRawManifest } from '../../helpers/skopeo.js';
import { policyVerifiers } from '../../../src/mirror/signatures/verifiers.js';

/** The product's verifiers: skopeo's signatures are GPG simple signing. */
const verifiers = policyVerifiers;

let reg: TestRegistry;
let dir: string;
let gnupg: string;
let host: string;
let digest: string;
let signature: Uint8Array;
let releaseKey: string;
let strangerKey: string;
let registriesDDir: string;
const gpgHomes: string[] = [];

async function gpg(args: string[], home = gnupg) {
  return execa('gpg', ['--batch', '--homedir', home, ...args]);
}

/** A fresh GPG key in its own home; returns the home, the fingerprint and the armored public key file. */
async function gpgKey(name: string): Promise<{ home: string; fingerprint: string; publicKey: string }> {
  const home = await mkdtemp(join(dir, `gnupg-${name}-`));
  gpgHomes.push(home);
  await gpg(
    ['--passphrase', '', '--quick-gen-key', `${name} <${name}@example.com>`, 'ed25519', 'sign', 'never'],
    home,
  );
  const listing = await gpg(['--with-colons', '--list-keys'], home);
  const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listing.stdout)![1]!;
  const publicKey = join(dir, `${name}.asc`);
  await writeFile(publicKey, (await gpg(['--export', '--armor'], home)).stdout);
  return { home, fingerprint, publicKey };
}

/** Place `signature` where containers/image reads it for `reference`, through our reading of the registries.d dir. */
async function placeSignature(reference: string): Promise<void> {
  const d = await loadRegistriesD(registriesDDir);
  const base = d.lookasideFor(reference)!.url;
  const path = fileURLToPath(lookasideSignatureUrl(base, reference, digest, 1));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, signature);
}

/** Whether skopeo accepts pulling `reference` under `policy`; throws on any failure that is not a policy refusal. */
async function skopeoAccepts(policyFile: string, reference: string): Promise<boolean> {
  const out = await mkdtemp(join(dir, 'pull-'));
  try {
    const r = await execa(
      'skopeo',
      [
        '--policy',
        policyFile,
        '--registries.d',
        registriesDDir,
        'copy',
        '--quiet',
        '--src-authfile',
        reg.skopeo.authFile,
        '--src-cert-dir',
        reg.skopeo.certDir,
        `docker://${reference}`,
        `dir:${out}`,
      ],
      { reject: false, stdin: 'ignore', timeout: 60_000 },
    );
    if (r.exitCode === 0) return true;
    if (/Source image rejected/.test(r.stderr)) return false;
    throw new Error(`skopeo failed for another reason: ${r.stderr}`);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  dir = await tempDir('airgap-policy-skopeo-');
  reg = await startRegistry();
  host = reg.skopeoHost;
  await seedRegistry(reg, [{ repo: 'ns/app', tag: 'v1', layers: [{ size: 2048 }] }]);
  for (const target of ['ns/app:v2', 'mirror/app:v1'])
    await skopeoCopy(`docker://${host}/ns/app:v1`, `docker://${host}/${target}`, {
      ...reg.skopeo,
      extraArgs: ['--preserve-digests'],
    });
  const manifest = await skopeoRawManifest(`docker://${host}/ns/app:v1`, reg.skopeo);
  const manifestFile = join(dir, 'manifest.json');
  await writeFile(manifestFile, manifest);

  const release = await gpgKey('release');
  const stranger = await gpgKey('stranger');
  gnupg = release.home;
  releaseKey = release.publicKey;
  strangerKey = stranger.publicKey;
  const sigFile = join(dir, 'signature');
  await execa(
    'skopeo',
    ['standalone-sign', manifestFile, `${host}/ns/app:v1`, release.fingerprint, '-o', sigFile],
    {
      env: { GNUPGHOME: release.home },
    },
  );
  signature = await readFile(sigFile);
  digest = (await execa('skopeo', ['manifest-digest', manifestFile])).stdout.trim();

  // registries.d: the registry's lookaside is a file:// store; mirror/ has one of its own.
  registriesDDir = join(dir, 'registries.d');
  await mkdir(registriesDDir);
  await writeFile(
    join(registriesDDir, 'test.yaml'),
    [
      'docker:',
      `  ${host}:`,
      `    lookaside: file://${join(dir, 'sigstore-host')}`,
      `  ${host}/mirror:`,
      `    lookaside: file://${join(dir, 'sigstore-mirror')}`,
      `  ${host}/ns/app:`,
      '    use-sigstore-attachments: false',
      '',
    ].join('\n'),
  );
  for (const reference of [`${host}/ns/app:v1`, `${host}/mirror/app:v1`]) await placeSignature(reference);
}, 180_000);

afterAll(async () => {
  await reg?.stop();
  // Stop the gpg-agents these homes started.
  for (const home of gpgHomes)
    await execa('gpgconf', ['--homedir', home, '--kill', 'gpg-agent'], { reject: false });
});

describe('the same verdict as skopeo', () => {
  const accept = [{ type: 'insecureAcceptAnything' }];
  const reject = [{ type: 'reject' }];
  const signed = (extra: Record<string, unknown> = {}) => [
    { type: 'signedBy', keyType: 'GPGKeys', keyPath: releaseKey, ...extra },
  ];

  /** [what, policy's docker scopes, reference (below the registry), expected]. */
  const cases = (): [string, Record<string, unknown>, string, boolean][] => [
    ['signed, asked for by the signed tag', { [`${host}/ns/app`]: signed() }, 'ns/app:v1', true],
    ['signed, asked for by digest', { [`${host}/ns/app`]: signed() }, `ns/app@${digest}`, true],
    ['signed for :v1, asked for by :v2', { [`${host}/ns/app`]: signed() }, 'ns/app:v2', false],
    [
      'signed for :v1, :v2 under matchRepository',
      { [`${host}/ns/app`]: signed({ signedIdentity: { type: 'matchRepository' } }) },
      'ns/app:v2',
      true,
    ],
    [
      'matchExact by digest against a tagged signature',
      { [`${host}/ns/app`]: signed({ signedIdentity: { type: 'matchExact' } }) },
      `ns/app@${digest}`,
      false,
    ],
    [
      'exactReference naming the signed tag',
      {
        [`${host}/ns/app`]: signed({
          signedIdentity: { type: 'exactReference', dockerReference: `${host}/ns/app:v1` },
        }),
      },
      'ns/app:v2',
      true,
    ],
    [
      'remapIdentity from the mirror namespace to the signed one',
      {
        [`${host}/mirror`]: signed({
          signedIdentity: { type: 'remapIdentity', prefix: `${host}/mirror`, signedPrefix: `${host}/ns` },
        }),
      },
      'mirror/app:v1',
      true,
    ],
    ['the mirror copy without remapping', { [`${host}/mirror`]: signed() }, 'mirror/app:v1', false],
    [
      'signed by another key',
      { [`${host}/ns/app`]: [{ ...signed()[0], keyPath: strangerKey }] },
      'ns/app:v1',
      false,
    ],
    [
      'repository scope beats namespace',
      { [`${host}/ns/app`]: reject, [`${host}/ns`]: accept },
      'ns/app:v1',
      false,
    ],
    ['namespace scope beats host', { [`${host}/ns`]: accept, [host]: reject }, 'ns/app:v1', true],
    [
      'tag scope beats repository',
      { [`${host}/ns/app:v1`]: accept, [`${host}/ns/app`]: reject },
      'ns/app:v1',
      true,
    ],
    [
      'tag scope for another tag',
      { [`${host}/ns/app:v1`]: accept, [`${host}/ns/app`]: reject },
      'ns/app:v2',
      false,
    ],
    ['host beats wildcard', { [host]: reject, '*.0.0.1': accept }, 'ns/app:v1', false],
    ['wildcard domain', { '*.0.0.1': accept }, 'ns/app:v1', true],
    ['nearer wildcard first', { '*.0.1': reject, '*.1': accept }, 'ns/app:v1', false],
    ['"" before the default', { '': accept }, 'ns/app:v1', true],
    ['no scope: the default', { 'quay.io': accept }, 'ns/app:v1', false],
  ];

  it('for signatures, signedIdentity rules and scope precedence', async () => {
    const results: string[] = [];
    for (const [what, scopes, below, expected] of cases()) {
      const doc = { default: [{ type: 'reject' }], transports: { docker: scopes } };
      const file = join(dir, 'policy.json');
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      await writeFile(file, text);
      const reference = `${host}/${below}`;
      const ours = await evaluatePolicy(
        await parsePolicy(text, file),
        { reference, digest },
        { sigstore: [], gpg: [signature] },
        verifiers,
      );
      const theirs = await skopeoAccepts(file, reference);
      results.push(`${what}: airgap ${ours.allowed}, skopeo ${theirs}, expected ${expected}`);
      if (ours.allowed !== theirs || theirs !== expected)
        results.push(`  airgap said: ${ours.reasons.join('; ')}`);
    }
    const expected = cases().map(([what, , , e]) => `${what}: airgap ${e}, skopeo ${e}, expected ${e}`);
    expect(results).toEqual(expected);
  }, 300_000);
});
