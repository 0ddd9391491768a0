import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { runMirror } from '../../src/mirror/run.js';
import { digestTag } from '../../src/mirror/plan.js';
import { refOf, seedRegistry, tempDir, writeIsc, writeMirrorConfig } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest, skopeoInspect } from '../helpers/skopeo.js';
import { MirrorError } from '../../src/mirror/errors.js';

const MiB = 1024 * 1024;

describe('airgap mirror between real registries', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];
  let authFile: string;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry({ host: '::1' })]);
    built = await seedRegistry(src, [
      {
        repo: 'ocp/release',
        layers: [{ id: 'b1', size: 3 * MiB }, { id: 'b2', size: MiB }, { size: 200_000 }],
      },
      {
        repo: 'ocp/release',
        layers: [{ id: 'b1', size: 3 * MiB }, { id: 'b2', size: MiB }, { size: 300_000 }],
      },
      {
        repo: 'tools/cli',
        tag: 'v1',
        format: 'docker',
        layers: [{ id: 'b1', size: 3 * MiB }, { size: 20 * MiB }],
      },
      {
        repo: 'tools/multi',
        tag: 'latest',
        arches: ['amd64', 'arm64'],
        layers: [{ id: 'b2', size: MiB }, { size: 100_000 }],
      },
    ]);
    // One auth file holding both registries' credentials, as a bastion would have.
    const dir = await tempDir();
    authFile = join(dir, 'auth.json');
    const { readFile, writeFile } = await import('node:fs/promises');
    const a = JSON.parse(await readFile(src.authFile, 'utf8'));
    const b = JSON.parse(await readFile(dst.authFile, 'utf8'));
    await writeFile(authFile, JSON.stringify({ auths: { ...a.auths, ...b.auths } }), { mode: 0o600 });
  });

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  const common = () => ({
    authFile,
    caFiles: [src.caFile],
    certDir: '/nonexistent',
    retry: { baseDelayMs: 20 },
  });

  it('copies registry → registry with oc-mirror names, digests intact, and skips everything on a second run', async () => {
    const dir = await tempDir();
    const isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
    const r1 = await runMirror({
      ...common(),
      config: isc,
      destination: `docker://${dst.host}/mirror`,
      workspace: `file://${dir}/ws`,
    });
    expect(r1.summary?.failed).toBe(0);
    expect(r1.summary?.copied).toBe(4);
    // Shared layers crossed once: b1 is uploaded once and mounted into the other repositories.
    expect(r1.summary?.blobs.mounted).toBeGreaterThan(0);

    for (const b of built) {
      const tag = b.tag ?? digestTag(b.digest);
      // skopeo (an independent client) reads the exact manifest digest back through IPv4 relay.
      const ref = `docker://${dst.skopeoHost}/mirror/${b.repo}:${tag}`;
      expect(await skopeoDigest(ref, dst.skopeo)).toBe(b.digest);
    }
    // Every architecture of the multi-arch index came along.
    const multi = built.find((b) => b.repo === 'tools/multi')!;
    const arm = await skopeoInspect(
      `docker://${dst.skopeoHost}/mirror/tools/multi@${multi.children!.arm64}`,
      dst.skopeo,
    );
    expect(arm.Architecture).toBe('arm64');

    const r2 = await runMirror({
      ...common(),
      config: isc,
      destination: `docker://${dst.host}/mirror`,
      workspace: `file://${dir}/ws`,
    });
    expect(r2.summary?.present).toBe(4);
    expect(r2.summary?.bytes).toBe(0);
  });

  it('goes registry → archive → registry, and an incremental archive carries only new blobs', async () => {
    const dir = await tempDir();
    const isc = await writeIsc(
      dir,
      built.slice(0, 2).map((b) => refOf(src, b)),
    );
    const out = join(dir, 'out');
    const m2d = await runMirror({
      ...common(),
      config: isc,
      destination: `file://${out}`,
      archiveSize: 2 * MiB,
    });
    expect(m2d.summary?.failed).toBe(0);
    expect(m2d.archive!.parts.length).toBeGreaterThan(1);
    for (const p of m2d.archive!.parts) expect(p.size).toBeLessThanOrEqual(3 * MiB + 64 * 1024);

    const d2m = await runMirror({
      ...common(),
      config: isc,
      from: `file://${out}`,
      destination: `docker://${dst.host}/fromdisk`,
    });
    expect(d2m.summary?.failed).toBe(0);
    for (const b of built.slice(0, 2)) {
      expect(
        await skopeoDigest(
          `docker://${dst.skopeoHost}/fromdisk/${b.repo}:${digestTag(b.digest)}`,
          dst.skopeo,
        ),
      ).toBe(b.digest);
    }

    // Add an image: the next archive holds its new blobs but not the shared ones already carried.
    const isc2 = await writeIsc(
      dir,
      built.slice(0, 3).map((b) => refOf(src, b)),
    );
    const again = await runMirror({
      ...common(),
      config: isc2,
      destination: `file://${out}`,
      archiveSize: 64 * MiB,
    });
    expect(again.archive!.previouslyArchived).toBeGreaterThan(0);
    const blobsInArchive = again.archive!.parts.flatMap((p) => p.blobs).length;
    expect(blobsInArchive).toBeLessThan(2 + 3 + 4 + 3); // far fewer than every blob of three images
  });
  it('--arch keeps one architecture: a sparse index on disk, refused clearly by a registry that checks index children', async () => {
    const multi = built.find((b) => b.repo === 'tools/multi')!;
    const dir = await tempDir();
    const isc = await writeIsc(dir, [refOf(src, multi)]);
    const out = join(dir, 'out');
    const m2d = await runMirror({
      ...common(),
      config: isc,
      destination: `file://${out}`,
      arches: ['arm64'],
    });
    expect(m2d.summary?.failed).toBe(0);
    const layout = await OciLayout.open(join(out, 'working-dir', 'layout'), false);
    expect(await layout.hasBlob(multi.children!.arm64!)).toBe(true);
    expect(await layout.hasBlob(multi.children!.amd64!)).toBe(false);
    // The index is pushed unchanged (its digest must not change), so distribution 2.8, which checks
    // every child of an index, refuses it: the run says why and how to proceed.
    const m2m = await runMirror({
      ...common(),
      config: isc,
      destination: `docker://${dst.host}/sparse`,
      workspace: `file://${dir}/ws`,
      arches: ['arm64'],
    });
    expect(m2m.summary?.failed).toBe(1);
    expect(m2m.summary?.images[0]?.error?.code).toBe(MirrorError.MIRROR_SPARSE_INDEX_REFUSED);
    expect(m2m.summary?.images[0]?.error?.hint).toMatch(/drop --arch/);
  });
  it('platforms in the ImageSetConfiguration keep only those children; the index and its digest stay as they are', async () => {
    const multi = built.find((b) => b.repo === 'tools/multi')!;
    const dir = await tempDir();
    const isc = await writeMirrorConfig(join(dir, 'isc.yaml'), {
      additionalImages: [
        { name: refOf(src, multi), platforms: [{ os: 'linux', architecture: 'arm64' }] },
        {
          name: refOf(
            src,
            built.find((b) => b.repo === 'tools/cli')!,
          ),
        },
      ],
    });
    const r = await runMirror({ ...common(), config: isc, destination: `oci:${dir}/layout` });
    expect(r.summary?.failed).toBe(0);
    expect(r.plan.find((e) => e.destination.includes('tools/multi'))).toBeDefined();
    const layout = await OciLayout.open(`${dir}/layout`, false);
    expect(await layout.hasBlob(multi.children!.arm64!)).toBe(true);
    expect(await layout.hasBlob(multi.children!.amd64!)).toBe(false);
    // skopeo reads the index unchanged, and the arm64 image through it; amd64 is not there.
    const ref = `oci:${dir}/layout:tools/multi:latest`;
    expect(await skopeoDigest(ref, {})).toBe(multi.digest);
    await skopeoCopy(ref, `dir:${dir}/arm64`, { overrideArch: 'arm64' });
    await expect(skopeoCopy(ref, `dir:${dir}/amd64`, { overrideArch: 'amd64' })).rejects.toThrow();

    // A registry that checks every child of an index refuses it, and says the filter is why.
    const m2m = await runMirror({
      ...common(),
      config: isc,
      destination: `docker://${dst.host}/platforms`,
      workspace: `file://${dir}/ws`,
    });
    const refused = m2m.summary?.images.find((i) => i.destination.includes('tools/multi'));
    expect(refused?.error?.code).toBe(MirrorError.MIRROR_SPARSE_INDEX_REFUSED);
    expect(refused?.error?.message).toContain('because platforms left some of its architectures out');
    expect(m2m.summary?.copied).toBe(1); // the other image is not held back
  });
  it('mirrors into a plain OCI layout (oci:<dir>) that skopeo reads by ref name', async () => {
    const dir = await tempDir();
    const tagged = built.filter((b) => b.tag);
    const isc = await writeIsc(
      dir,
      tagged.map((b) => refOf(src, b)),
    );
    const r = await runMirror({ ...common(), config: isc, destination: `oci:${dir}/layout` });
    expect(r.mode).toBe('mirrorToLayout');
    expect(r.summary?.failed).toBe(0);
    // skopeo 1.9 finds only OCI-typed entries of an OCI layout (it skips Docker media types), so the
    // OCI index is read back through skopeo and the Docker image through the layout itself.
    const multi = tagged.find((b) => b.repo === 'tools/multi')!;
    expect(await skopeoDigest(`oci:${dir}/layout:tools/multi:latest`, {})).toBe(multi.digest);
    const layout = await OciLayout.open(`${dir}/layout`, false);
    for (const b of tagged) expect((await layout.resolve(`${b.repo}:${b.tag}`))?.digest).toBe(b.digest);
  });
});
