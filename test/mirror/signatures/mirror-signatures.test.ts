/**
 * Signatures through the real CLI, registry → registry: a signed upstream (cosign-format Sigstore
 * signatures next to every image, GPG-signed releases in a signature store), what arrives at the
 * mirror checked as a node checks it, and what the person is told when something is not signed,
 * does not verify, or is refused by the policy.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../../lab/cosign.js';
import { createGpgSigner, type GpgSigner } from '../../../lab/gpg.js';
import type { BuiltImage } from '../../../lab/images.js';
import { buildUpstream, type Upstream } from '../../../lab/upstream.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import type { MirrorReport } from '../../../src/mirror/run.js';
import { airgap } from '../../helpers/cli.js';
import { refOf, seedRegistry, tempDir, writeMirrorConfig } from '../../helpers/fixtures.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { freePort, startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { nodeSigstoreProblem } from '../../helpers/sigstore-node.js';
import { skopeoCopy, skopeoListTags, skopeoRawManifest } from '../../helpers/skopeo.js';

/** Red Hat release key 2 as published: what RHEL installs at /etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release. */
const REDHAT_KEY_FILE = realdata('samples', 'signatures', 'redhat-release-key-2.asc');

describe('signatures through airgap mirror, registry → registry', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let up: Upstream;
  let gpg: GpgSigner;
  let unsigned: BuiltImage;
  let dir: string;
  let authFile: string;
  let keyring: string;
  let isc: string;

  const args = (workspace: string, prefix: string, ...extra: string[]) => [
    'mirror',
    '-c',
    isc,
    '--authfile',
    authFile,
    '--ca-file',
    src.caFile,
    '--cert-dir',
    '/nonexistent',
    '--graph-url',
    up.graph.url,
    '--signature-url',
    up.signatureStore.url,
    '--workspace',
    `file://${join(dir, workspace)}`,
    ...extra,
    `docker://${dst.host}/${prefix}`,
    '--json',
  ];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    dir = await tempDir();
    gpg = await createGpgSigner();
    keyring = join(dir, 'lab-release-key.asc');
    await writeFile(keyring, gpg.publicKey);
    up = await buildUpstream({
      registry: src,
      dir: join(dir, 'upstream'),
      versions: ['4.18.1', '4.18.2'],
      components: 2,
      packages: 1,
      signing: { key: generateSigningKey().privateKey },
      releaseSigner: gpg,
    });
    [unsigned] = await seedRegistry(src, [{ repo: 'team/unsigned', tag: 'v1', layers: [{ size: 2048 }] }]);
    authFile = join(dir, 'auth.json');
    const a = JSON.parse(await readFile(src.authFile, 'utf8'));
    const b = JSON.parse(await readFile(dst.authFile, 'utf8'));
    await writeFile(authFile, JSON.stringify({ auths: { ...a.auths, ...b.auths } }), { mode: 0o600 });
    isc = await writeMirrorConfig(join(dir, 'isc.yaml'), {
      platform: { channels: [{ name: up.channel, minVersion: '4.18.2', maxVersion: '4.18.2' }] },
      additionalImages: [{ name: up.ubiRef }, { name: refOf(src, unsigned!) }],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), up?.stop(), gpg?.stop()]);
  });

  it('copies each signature next to its image, says which images are signed, and writes the trust files', async () => {
    const r = await airgap(args('ws', 'ocp', '--release-keyring', keyring));
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    const images = report.plan.filter((p) => p.kind !== 'signature');
    const sigs = report.plan.filter((p) => p.kind === 'signature');
    // Every upstream image is signed, the extra one is not; one signature per signed image.
    expect(images.filter((p) => p.signed === false).map((p) => p.source)).toEqual([
      `${src.host}/team/unsigned@${unsigned!.digest}`,
    ]);
    expect(sigs).toHaveLength(images.length - 1);
    expect(report.signatures!.sigstore).toEqual({ signed: images.length - 1, unsigned: 1 });
    const release = report.signatures!.releases[0]!;
    expect(release).toMatchObject({ version: '4.18.2', verifiedBy: [gpg.fingerprint], problems: [] });
    expect(release.signatures).toHaveLength(1);

    // The signatures are at the mirror, next to the images, under cosign's tag.
    const releaseTags = await skopeoListTags(`docker://${dst.host}/ocp/openshift/release-images`, dst.skopeo);
    expect(releaseTags).toContain(`${up.releases[1]!.digest.replace(':', '-')}.sig`);

    // A node finds and verifies them through registries.conf; the unsigned image has none.
    const resources = join(dir, 'ws', 'cluster-resources');
    const registriesConf = await readFile(join(resources, 'registries.conf'), 'utf8');
    const node = (original: string) =>
      nodeSigstoreProblem({ registriesConf, original, publicKeyPem: up.signing!.publicKey, ...dst.skopeo });
    expect(await node(up.releases[1]!.payload)).toBeUndefined();
    expect(await node(`${src.host}/team/unsigned@${unsigned!.digest}`)).toMatch(/^no signature at /);

    // The trust files for the cluster.
    const cm = yaml.load(await readFile(join(resources, 'signature-configmap.yaml'), 'utf8')) as {
      metadata: { namespace: string };
      binaryData: Record<string, string>;
    };
    expect(cm.metadata.namespace).toBe('openshift-config-managed');
    expect(Object.keys(cm.binaryData)).toEqual([`${up.releases[1]!.digest.replace(':', '-')}-1`]);
    expect(await readFile(join(resources, 'registries.d', `${dst.host}.yaml`), 'utf8')).toBe(
      `docker:\n  ${dst.host}:\n    use-sigstore-attachments: true\n`,
    );
  }, 180_000);

  it('a signature replaced at the mirror by one of another image no longer verifies', async () => {
    // The .sig of the release now holds the signature of ubi9 (valid, by the same key, for another digest).
    const ubiSig = (await skopeoListTags(`docker://${dst.host}/ocp/ubi9/ubi`, dst.skopeo)).find((t) =>
      t.endsWith('.sig'),
    )!;
    const releaseSig = `${up.releases[1]!.digest.replace(':', '-')}.sig`;
    await skopeoCopy(
      `docker://${dst.host}/ocp/ubi9/ubi:${ubiSig}`,
      `docker://${dst.host}/ocp/openshift/release-images:${releaseSig}`,
      dst.skopeo,
    );
    const registriesConf = await readFile(join(dir, 'ws', 'cluster-resources', 'registries.conf'), 'utf8');
    const problem = await nodeSigstoreProblem({
      registriesConf,
      original: up.releases[1]!.payload,
      publicKeyPem: up.signing!.publicKey,
      ...dst.skopeo,
    });
    expect(problem).toMatch(/a signature names sha256:/);
  }, 120_000);

  it('a signature store out of reach is asked once and said once for every release', async () => {
    const both = await writeMirrorConfig(join(dir, 'both-releases.yaml'), {
      platform: { channels: [{ name: up.channel, minVersion: '4.18.1', maxVersion: '4.18.2' }] },
    });
    const dead = `http://127.0.0.1:${await freePort()}/signatures`;
    const planArgs = args('ws-dead-store', 'dead', '--release-keyring', keyring, '--retry-times', '1')
      .slice(1)
      .map((a) => (a === isc ? both : a === up.signatureStore.url ? dead : a));
    const r = await airgap(['mirror', 'plan', ...planArgs]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    expect(report.signatures!.releases.map((x) => x.version).sort()).toEqual(['4.18.1', '4.18.2']);
    const said = report.warnings.filter((w) => w.includes('127.0.0.1'));
    expect(said).toEqual([
      expect.stringMatching(/^2 releases \(4\.18\.\d \(amd64\) … 4\.18\.\d \(amd64\)\): .*not asked again/),
    ]);
  });

  it('--remove-signatures copies none and says so', async () => {
    const r = await airgap(args('ws-nosig', 'nosig', '--remove-signatures', '--release-keyring', keyring));
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    expect(report.plan.filter((p) => p.kind === 'signature')).toEqual([]);
    expect(report.signatures!.removed).toBe(true);
    const tags = await skopeoListTags(`docker://${dst.host}/nosig/openshift/release-images`, dst.skopeo);
    expect(tags.filter((t) => t.endsWith('.sig'))).toEqual([]);
  }, 180_000);

  /** No keyring given, and the system's keys looked for in `system` (a file that need not exist). */
  const systemKeys = (system: string) => ({
    AIRGAP_RELEASE_KEYRING: '',
    AIRGAP_SYSTEM_RELEASE_KEYRING: system,
  });
  const toDestination = (argv: string[], destination: string) =>
    argv.map((a) => (a.startsWith(`docker://${dst.host}/`) ? destination : a));
  const notices = (stderr: string) =>
    stderr.split('\n').filter((l) => l.startsWith('warning: no release key'));

  withRealdata.it(
    'release signatures that do not verify with the system key are a warning, never written as verified',
    async () => {
      // The Red Hat key at the system's place: it did not make the lab's signatures.
      const r = await airgap(args('ws-redhat-key', 'rhkey'), { env: systemKeys(REDHAT_KEY_FILE) });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(notices(r.stderr)).toEqual([]);
      const report = JSON.parse(r.stdout) as MirrorReport;
      const release = report.signatures!.releases[0]!;
      expect(release.signatures).toEqual([]);
      expect(release.problems.join('\n')).toContain(`which is not in ${REDHAT_KEY_FILE}`);
      expect(report.warnings.join('\n')).toContain('release 4.18.2');
      const resources = await readdir(join(dir, 'ws-redhat-key', 'cluster-resources'));
      expect(resources).not.toContain('signature-configmap.yaml');
    },
    180_000,
  );

  withRealdata.it(
    'the keys installed at the system path are used, every armored block of the file',
    async () => {
      // As RHEL's RPM-GPG-KEY-redhat-release: release key 2 first, then another key (here the lab's).
      const system = join(dir, 'RPM-GPG-KEY-redhat-release');
      await writeFile(system, `${await readFile(REDHAT_KEY_FILE, 'utf8')}\n${gpg.publicKey}`);
      const r = await airgap(args('ws-system-key', 'syskey'), { env: systemKeys(system) });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(notices(r.stderr)).toEqual([]);
      const release = (JSON.parse(r.stdout) as MirrorReport).signatures!.releases[0]!;
      expect(release).toMatchObject({ version: '4.18.2', verifiedBy: [gpg.fingerprint], problems: [] });
      const cm = yaml.load(
        await readFile(join(dir, 'ws-system-key', 'cluster-resources', 'signature-configmap.yaml'), 'utf8'),
      ) as { binaryData: Record<string, string> };
      expect(Object.values(cm.binaryData)).toEqual(release.signatures);
    },
    180_000,
  );

  it('with no release key anywhere, the run says so once before it fetches anything, and writes no signature', async () => {
    const both = await writeMirrorConfig(join(dir, 'no-key-releases.yaml'), {
      platform: { channels: [{ name: up.channel, minVersion: '4.18.1', maxVersion: '4.18.2' }] },
    });
    const env = systemKeys(join(dir, 'no-such-dir', 'RPM-GPG-KEY-redhat-release'));
    const argv = args('ws-no-key', 'nokey').map((a) => (a === isc ? both : a));
    const asked = up.signatureStore.requests.length;
    const r = await airgap(argv, { env });
    expect(r.exitCode, r.stderr).toBe(0);
    // Once for the two releases, naming where the key comes from.
    expect(notices(r.stderr)).toEqual([
      'warning: no release key: release signatures cannot be verified and none will be written; install the Red Hat release key (/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release, package redhat-release) or give --release-keyring FILE (or AIRGAP_RELEASE_KEYRING)',
    ]);
    const report = JSON.parse(r.stdout) as MirrorReport;
    expect(report.releases.map((x) => x.version).sort()).toEqual(['4.18.1', '4.18.2']);
    expect(report.signatures!.releases).toEqual([]);
    expect(up.signatureStore.requests.length).toBe(asked);
    const resources = await readdir(join(dir, 'ws-no-key', 'cluster-resources'));
    expect(resources).not.toContain('signature-configmap.yaml');
    expect(r.stdout).not.toMatch(/no release key/);

    // Before anything is fetched: a destination that cannot be reached fails after the notice.
    const unreachable = `docker://127.0.0.1:${await freePort()}/nokey`;
    const failed = await airgap(
      toDestination(args('ws-no-key-dead', 'x', '--retry-times', '0'), unreachable),
      {
        env,
      },
    );
    expect(failed.exitCode).toBe(1);
    const lines = failed.stderr.split('\n');
    const notice = lines.findIndex((l) => l.startsWith('warning: no release key'));
    expect(notice, failed.stderr).toBeGreaterThanOrEqual(0);
    expect(lines.findIndex((l) => l.includes('cannot be used'))).toBeGreaterThan(notice);
  }, 180_000);

  it('a --release-keyring file that is not a key stops the run before anything is fetched (exit 2, naming it)', async () => {
    const notKey = join(dir, 'not-a-key.asc');
    await writeFile(notKey, 'this is not an OpenPGP key\n');
    // The destination is unreachable: the keyring is read before the first request.
    const unreachable = `docker://127.0.0.1:${await freePort()}/badkey`;
    const r = await airgap(
      toDestination(args('ws-bad-key', 'x', '--release-keyring', notKey, '--retry-times', '0'), unreachable),
      { env: systemKeys(join(dir, 'no-such-dir', 'key')) },
    );
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${notKey} holds no OpenPGP public key`);
    expect(r.stderr).not.toContain('cannot be used');
    expect(notices(r.stderr)).toEqual([]);
  }, 120_000);

  it('--secure-policy: an image the policy refuses is not mirrored and says why; the others are', async () => {
    const policy = join(dir, 'policy.json');
    const key = join(dir, 'cosign.pub');
    await writeFile(key, up.signing!.publicKey);
    await writeFile(
      policy,
      JSON.stringify({
        default: [{ type: 'reject' }],
        transports: {
          docker: {
            [src.host]: [
              { type: 'sigstoreSigned', keyPath: key, signedIdentity: { type: 'matchRepository' } },
            ],
          },
        },
      }),
    );
    const r = await airgap(args('ws-policy', 'policy', '--secure-policy', '--policy', policy));
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as MirrorReport;
    const failed = report.summary!.images.filter((i) => i.status === 'failed');
    expect(failed.map((i) => i.source)).toEqual([`${src.host}/team/unsigned@${unsigned!.digest}`]);
    expect(failed[0]!.error!.code).toBe(MirrorError.SIGNATURE_POLICY_REJECTED);
    expect(failed[0]!.error!.message).toContain(policy);
    expect(report.summary!.copied).toBeGreaterThan(3);
  }, 180_000);

  it('--registries.d: a signedBy image is accepted with the GPG signature its lookaside holds, refused without it', async () => {
    // team/unsigned gets a GPG signature (skopeo standalone-sign) in a file lookaside, laid out as
    // containers/image reads it: <lookaside>/<repository>@sha256=<hex>/signature-1.
    const ref = `${src.host}/team/unsigned`;
    const manifest = await skopeoRawManifest(`docker://${ref}@${unsigned!.digest}`, src.skopeo);
    const lookaside = join(dir, 'lookaside');
    const sigDir = join(lookaside, `team/unsigned@${unsigned!.digest.replace(':', '=')}`);
    await mkdir(sigDir, { recursive: true });
    await writeFile(join(sigDir, 'signature-1'), await gpg.sign(manifest, `${ref}:v1`));
    const registriesD = join(dir, 'registries.d');
    await mkdir(registriesD, { recursive: true });
    await writeFile(
      join(registriesD, 'lab.yaml'),
      `docker:\n  ${src.host}/team:\n    lookaside: file://${lookaside}\n`,
    );
    const policy = join(dir, 'signedby-policy.json');
    await writeFile(
      policy,
      JSON.stringify({
        default: [{ type: 'reject' }],
        transports: {
          docker: {
            [src.host]: [{ type: 'insecureAcceptAnything' }],
            [ref]: [
              {
                type: 'signedBy',
                keyType: 'GPGKeys',
                keyPath: keyring,
                signedIdentity: { type: 'matchRepository' },
              },
            ],
          },
        },
      }),
    );
    const run = (workspace: string, ...extra: string[]) =>
      airgap(args(workspace, workspace, '--secure-policy', '--policy', policy, ...extra));
    const accepted = await run('ws-lookaside', '--registries.d', registriesD);
    expect(accepted.exitCode, accepted.stderr).toBe(0);

    const empty = join(dir, 'registries.d-empty');
    await mkdir(empty, { recursive: true });
    const refused = await run('ws-no-lookaside', '--registries.d', empty);
    expect(refused.exitCode).toBe(1);
    const failed = (JSON.parse(refused.stdout) as MirrorReport).summary!.images.filter(
      (i) => i.status === 'failed',
    );
    expect(failed.map((i) => i.source)).toEqual([`${ref}@${unsigned!.digest}`]);
    expect(failed[0]!.error!.message).toContain('signedBy');
  }, 180_000);

  it('a policy file with a syntax error stops before anything is copied, naming file:line:column', async () => {
    const policy = join(dir, 'broken-policy.json');
    await writeFile(policy, '{\n  "default": [\n    {"type": "reject"},\n  ]\n}\n');
    const r = await airgap(args('ws-broken', 'broken', '--secure-policy', '--policy', policy));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${policy}:4:3`);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 120_000);

  // Last: it replaces a signature at the source.
  it('a re-run reads no signature payload again, yet a .sig replaced at the source is read and checked anew', async () => {
    const run = (env: Record<string, string> = {}) =>
      airgap(args('ws-rerun', 'rerun', '--release-keyring', keyring), { env });
    const first = await run();
    expect(first.exitCode).toBe(0);
    const plan = (JSON.parse(first.stdout) as MirrorReport).plan;
    // The layers of every .sig the plan copies: the signature payloads.
    const payloads = new Set<string>();
    for (const sig of plan.filter((p) => p.kind === 'signature')) {
      const m = JSON.parse((await skopeoRawManifest(`docker://${sig.source}`, src.skopeo)).toString()) as {
        layers: { digest: string }[];
      };
      for (const l of m.layers) payloads.add(l.digest);
    }
    expect(payloads.size).toBeGreaterThan(2);
    const payloadReads = (stderr: string) =>
      stderr
        .split('\n')
        .filter((l) => l.startsWith(`http: GET https://${src.host}/`))
        .filter((l) => payloads.has(/\/blobs\/(sha256:[0-9a-f]{64})/.exec(l)?.[1] ?? ''));

    const again = await run({ AIRGAP_DEBUG: 'http' });
    expect(again.exitCode, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as MirrorReport;
    expect(report.summary!.copied).toBe(0);
    expect(report.signatures!.sigstore.unsigned).toBe(1);
    expect(payloadReads(again.stderr)).toEqual([]);

    // ubi9's .sig at the source now holds the release's signature (valid, for another digest).
    const [ubi, ubiDigest] = plan.find((p) => p.source.includes('/ubi9/'))!.source.split('@') as [
      string,
      string,
    ];
    const [release, releaseDigest] = plan.find((p) => p.kind === 'release')!.source.split('@') as [
      string,
      string,
    ];
    const sigTag = (digest: string) => `${digest.replace(':', '-')}.sig`;
    await skopeoCopy(
      `docker://${release}:${sigTag(releaseDigest)}`,
      `docker://${ubi}:${sigTag(ubiDigest)}`,
      src.skopeo,
    );
    const third = await run({ AIRGAP_DEBUG: 'http' });
    const after = JSON.parse(third.stdout) as MirrorReport;
    expect(after.plan.find((p) => p.source.includes('/ubi9/'))!.signed).toBe(false);
    expect(after.warnings.join('\n')).toContain(`:${sigTag(ubiDigest)} is not a signature of ${ubiDigest}`);
    expect(payloadReads(third.stderr).length).toBeGreaterThan(0);
  }, 180_000);
});
