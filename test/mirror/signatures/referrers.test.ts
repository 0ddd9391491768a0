/**
 * OCI 1.1 referrers kept under the referrers tag schema (`sha256-<hex>`: an index of the artifacts
 * whose `subject` is the image), as a signer such as cosign `--registry-referrers-mode=oci-1-1`
 * leaves them in a registry without the referrers API (Debian's distribution 2.8 is one). Found
 * with the same one listing per repository as `.sig` tags, copied whole through the real CLI
 * (registry → registry, and mirror → disk → mirror), and read back with skopeo.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attachReferrers,
  COSIGN_SIGNATURE_ARTIFACT_TYPE,
  generateSigningKey,
  signImage,
  SPDX_ARTIFACT_TYPE,
  type LabReferrers,
  type SigningKey,
} from '../../../lab/cosign.js';
import type { BuiltImage } from '../../../lab/images.js';
import type { MirrorReport } from '../../../src/mirror/run.js';
import { readCosignSignatures, verifyCosignSignature } from '../../../src/mirror/signatures/cosign.js';
import { airgap } from '../../helpers/cli.js';
import { clientFor, refOf, seedRegistry, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoListTags, skopeoRawManifest } from '../../helpers/skopeo.js';

interface RawManifest {
  mediaType: string;
  artifactType?: string;
  subject?: { digest: string };
  manifests?: { digest: string; artifactType?: string }[];
  layers?: { mediaType: string; digest: string; annotations?: Record<string, string> }[];
}

describe('OCI 1.1 referrers (the referrers tag schema)', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let dir: string;
  let key: SigningKey;
  let authFile: string;
  let isc: string;
  /** Signed only through referrers (a signature and an SBOM). */
  let app: BuiltImage;
  let appReferrers: LabReferrers;
  /** A `.sig` and a referrers index both. */
  let both: BuiltImage;
  /** A referrers index whose artifact names another image as its subject. */
  let stray: BuiltImage;

  const raw = async (ref: string, reg: TestRegistry) =>
    JSON.parse((await skopeoRawManifest(`docker://${ref}`, reg.skopeo)).toString()) as RawManifest;

  const mirror = (...rest: string[]) =>
    airgap(['mirror', '-c', isc, '--authfile', authFile, ...rest, '--ca-file', src.caFile, '--json']);

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    dir = await tempDir();
    key = generateSigningKey();
    [app, both, stray] = await seedRegistry(src, [
      { repo: 'team/app', tag: 'v1', layers: [{ size: 4096 }] },
      { repo: 'team/both', tag: 'v1', layers: [{ size: 2048 }] },
      { repo: 'team/stray', tag: 'v1', layers: [{ size: 1024 }] },
    ]);
    const client = clientFor(src);
    try {
      const attach = (b: BuiltImage, extra: { sbom?: boolean; subjectDigest?: string } = {}) =>
        attachReferrers(client, {
          repo: b.repo,
          digest: b.digest,
          reference: `${src.host}/${b.repo}`,
          privateKey: key.privateKey,
          subjectMediaType: b.mediaType,
          subjectSize: 0,
          ...extra,
        });
      appReferrers = await attach(app!, { sbom: true });
      await attach(both!);
      await signImage(client, {
        repo: both!.repo,
        digest: both!.digest,
        reference: `${src.host}/${both!.repo}`,
        privateKey: key.privateKey,
      });
      await attach(stray!, { subjectDigest: app!.digest });
    } finally {
      await client.close();
    }
    authFile = join(dir, 'auth.json');
    const a = JSON.parse(await readFile(src.authFile, 'utf8'));
    const b = JSON.parse(await readFile(dst.authFile, 'utf8'));
    await writeFile(authFile, JSON.stringify({ auths: { ...a.auths, ...b.auths } }), { mode: 0o600 });
    isc = join(dir, 'isc.yaml');
    await writeFile(
      isc,
      yaml.dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: { additionalImages: [app!, both!, stray!].map((i) => ({ name: refOf(src, i) })) },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  /** The referrers index at `reg/repo` for `image`: its artifacts have the image as subject, and the signature verifies. */
  const checkReferrersAt = async (reg: TestRegistry, repo: string, image: BuiltImage) => {
    const tag = image.digest.replace(':', '-');
    expect(await skopeoListTags(`docker://${reg.host}/${repo}`, reg.skopeo)).toContain(tag);
    const index = await raw(`${reg.host}/${repo}:${tag}`, reg);
    expect(index.manifests!.map((m) => m.artifactType)).toEqual([
      COSIGN_SIGNATURE_ARTIFACT_TYPE,
      SPDX_ARTIFACT_TYPE,
    ]);
    for (const d of index.manifests!) {
      const artifact = await raw(`${reg.host}/${repo}@${d.digest}`, reg);
      expect(artifact.subject!.digest).toBe(image.digest);
    }
    const sigBytes = await skopeoRawManifest(
      `docker://${reg.host}/${repo}@${index.manifests![0]!.digest}`,
      reg.skopeo,
    );
    const client = clientFor(reg);
    try {
      const sigs = await readCosignSignatures(sigBytes, (d, size) => client.getBlobBytes(repo, d, size));
      expect(sigs.map((s) => verifyCosignSignature(s, key.publicKey))).toEqual([true]);
      expect(sigs[0]!.claim!.digest).toBe(image.digest);
    } finally {
      await client.close();
    }
  };

  it('copies each referrers index whole next to its image; an index whose artifact has another subject is a warning, never copied', async () => {
    const r = await mirror('--workspace', `file://${join(dir, 'ws')}`, `docker://${dst.host}/m`);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;

    // app is signed through its referrers; both has a .sig and referrers; stray's referrers are not its own.
    const signedOf = (b: BuiltImage) =>
      report.plan.find((p) => p.source === `${src.host}/${b.repo}@${b.digest}`)!.signed;
    expect([signedOf(app), signedOf(both), signedOf(stray)]).toEqual([true, true, false]);
    const attachments = report.plan.filter((p) => p.kind === 'signature').map((p) => p.destination);
    expect(attachments.sort()).toEqual(
      [
        `${dst.host}/m/team/app:${app.digest.replace(':', '-')}`,
        `${dst.host}/m/team/both:${both.digest.replace(':', '-')}`,
        `${dst.host}/m/team/both:${both.digest.replace(':', '-')}.sig`,
      ].sort(),
    );
    expect(report.plan.find((p) => p.destination.endsWith(app.digest.replace(':', '-')))!.context).toMatch(
      /^referrers of /,
    );
    const warning = report.warnings.find((w) => w.includes('team/stray'));
    expect(warning).toContain(`is not the referrers of ${stray.digest}`);
    expect(warning).toContain(`has the subject ${app.digest}`);
    expect(await skopeoListTags(`docker://${dst.host}/m/team/stray`, dst.skopeo)).toEqual(['v1']);

    await checkReferrersAt(dst, 'm/team/app', app);
    // The index arrives byte for byte: its digest is the source's.
    const digestAt = async (reg: TestRegistry, repo: string) =>
      (
        await skopeoRawManifest(`docker://${reg.host}/${repo}:${app.digest.replace(':', '-')}`, reg.skopeo)
      ).toString();
    expect(await digestAt(dst, 'm/team/app')).toBe(await digestAt(src, 'team/app'));
    expect(appReferrers.artifacts).toHaveLength(2);
  }, 120_000);

  it('--secure-policy reads signatures among referrers: an image signed only there is accepted', async () => {
    const keyPath = join(dir, 'cosign.pub');
    const policy = join(dir, 'policy.json');
    await writeFile(keyPath, key.publicKey);
    await writeFile(
      policy,
      JSON.stringify({
        default: [{ type: 'reject' }],
        transports: {
          docker: {
            [src.host]: [{ type: 'sigstoreSigned', keyPath, signedIdentity: { type: 'matchRepository' } }],
          },
        },
      }),
    );
    const r = await mirror(
      '--workspace',
      `file://${join(dir, 'ws-policy')}`,
      `docker://${dst.host}/p`,
      '--secure-policy',
      '--policy',
      policy,
    );
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as MirrorReport;
    const failed = report.summary!.images.filter((i) => i.status === 'failed').map((i) => i.source);
    expect(failed).toEqual([`${src.host}/team/stray@${stray.digest}`]);
  }, 120_000);

  it('carries them through an archive: mirror → disk, then disk → mirror with the source stopped', async () => {
    const archive = join(dir, 'archive');
    const m2d = await mirror(`file://${archive}`);
    expect(m2d.exitCode, m2d.stderr).toBe(0);
    await src.stop();
    const from = await airgap([
      'mirror',
      '-c',
      isc,
      '--authfile',
      authFile,
      '--from',
      `file://${archive}`,
      `docker://${dst.host}/d`,
      '--ca-file',
      dst.caFile,
      '--json',
    ]);
    expect(from.exitCode, from.stderr).toBe(0);
    await checkReferrersAt(dst, 'd/team/app', app);
  }, 120_000);
});
