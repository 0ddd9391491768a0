/**
 * `airgap registry gc` on a bastion made of real parts (podman runs the registry image under the
 * systemd stand-in; the collector runs in that image): after `airgap mirror delete`, the space
 * comes back as `mirror delete --generate` predicted, everything the workspace keeps (a multi-arch
 * index and its children, an image mirrored by digest only) stays whole, and the registry answers
 * again, also when the collection fails.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { useBastion } from '../helpers/bastion.js';
import { refOf, seedRegistry, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoInspect } from '../helpers/skopeo.js';

describe('airgap registry gc', () => {
  const bastion = useBastion();
  let src: TestRegistry;
  let authFile: string;
  let ws: string;
  let keep: { index: BuiltImage; single: BuiltImage; byDigest: BuiltImage };
  let gone: { index: BuiltImage; single: BuiltImage };
  const dest = () => `docker://${bastion().address}/m`;
  const access = () => ['--authfile', authFile, '--ca-file', src.caFile, '--ca-file', bastion().caFile];
  const skopeoAt = () => ({
    authFile,
    certDir: `/etc/containers/certs.d/${bastion().address}`,
    tlsVerify: true,
  });
  const gc = (extra: string[] = []) =>
    bastion().airgap(['registry', 'gc', '--dir', bastion().dir, '--name', bastion().name, ...extra]);
  const answers = async () =>
    (await skopeoInspect(`docker://${bastion().address}/airgap/registry-check:latest`, {
      ...skopeoAt(),
      raw: true,
    })) as string;
  /** systemctl of the stand-in, with the bastion's podman (a unit runs with its caller's environment). */
  const systemctl = async (...args: string[]) => {
    const r = await execa('systemctl', args, { env: { ...process.env, ...bastion().env }, reject: false });
    return { code: r.exitCode ?? 1, stdout: r.stdout };
  };
  /** Start the unit (as a person would, by systemctl) and wait until it answers; its log if it does not. */
  const startAndWait = async () => {
    const b = bastion();
    expect((await systemctl('start', `${b.name}.service`)).code).toBe(0);
    for (let i = 0; ; i++) {
      try {
        return await answers();
      } catch (e) {
        if (i >= 60) {
          const log = await execa('journalctl', ['-u', `${b.name}.service`, '-n', '40', '-o', 'cat'], {
            env: { ...process.env, ...b.env },
            reject: false,
          });
          throw new Error(`${(e as Error).message}\n${log.stdout}${log.stderr}`, { cause: e });
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  beforeAll(async () => {
    const b = bastion();
    // The host's trust store is install's and renew's to test: rebuilding it costs seconds each time.
    const r = await b.install(['--no-trust-host']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    src = await startRegistry();
    const [i1, i2, s1, s2, d] = await seedRegistry(src, [
      { repo: 'apps/multi', tag: '1', layers: [{ size: 20_000 }], arches: ['amd64', 'arm64'] },
      { repo: 'apps/multi', tag: '2', layers: [{ size: 21_000 }], arches: ['amd64', 'arm64'] },
      { repo: 'apps/server', tag: '1.0', layers: [{ id: 'base', size: 30_000 }, { size: 9_000 }] },
      { repo: 'apps/server', tag: '2.0', layers: [{ id: 'base', size: 30_000 }, { size: 11_000 }] },
      { repo: 'apps/pinned', layers: [{ size: 7_000 }] },
    ]);
    keep = { index: i2!, single: s2!, byDigest: d! };
    gone = { index: i1!, single: s1! };
    const auth = (u: string, p: string) => Buffer.from(`${u}:${p}`).toString('base64');
    authFile = join(b.root, 'auth.json');
    await writeFile(
      authFile,
      JSON.stringify({
        auths: {
          [src.host]: { auth: auth(src.username, src.password) },
          [b.address]: { auth: auth(b.username, b.password) },
        },
      }),
      { mode: 0o600 },
    );
    ws = join(b.root, 'ws');
    const isc = (name: string, images: BuiltImage[]) =>
      writeIsc(
        b.root,
        images.map((i) => refOf(src, i)),
        [],
        name,
      );
    // Mirrored with everything, then again without what goes: the workspace keeps the second set.
    for (const file of [
      await isc('all.yaml', [i1!, i2!, s1!, s2!, d!]),
      await isc('kept.yaml', [i2!, s2!, d!]),
    ]) {
      const m = await b.airgap(['mirror', '-c', file, '--workspace', `file://${ws}`, dest(), ...access()]);
      expect(m.exitCode, `${m.stdout}\n${m.stderr}`).toBe(0);
    }
  }, 300_000);
  afterAll(async () => {
    await src?.stop();
  });

  it('on a registry nothing was pushed to: nothing to collect, and it answers again', async () => {
    const b = bastion();
    const data = join(b.root, 'data');
    const unit = `${b.name}.service`;
    // The installed registry's storage set aside for this test; an empty one in its place.
    expect((await systemctl('stop', unit)).code).toBe(0);
    await rename(data, `${data}.aside`);
    await mkdir(data);
    try {
      expect((await systemctl('start', unit)).code).toBe(0);
      const r = await gc();
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`nothing to collect: the storage ${data} holds no repositories`);
      expect(r.stdout).toContain(`(${unit}) answers again`);
      expect((await systemctl('is-active', unit)).stdout.trim()).toBe('active');
    } finally {
      await systemctl('stop', unit);
      await rm(data, { recursive: true, force: true });
      await rename(`${data}.aside`, data);
    }
    expect(await startAndWait()).toContain('schemaVersion');
  }, 120_000);

  it('reclaims what mirror delete predicted; the index, its children and the digest-only image stay whole', async () => {
    const b = bastion();
    const disc = join(b.root, 'delete-isc.yaml');
    await writeFile(
      disc,
      [
        'kind: DeleteImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'delete:',
        '  additionalImages:',
        `    - name: ${refOf(src, gone.index)}`,
        `    - name: ${refOf(src, gone.single)}`,
        '',
      ].join('\n'),
    );
    const gen = await b.airgap([
      'mirror',
      'delete',
      '-c',
      disc,
      '--workspace',
      `file://${ws}`,
      '--generate',
      dest(),
      ...access(),
      '--json',
    ]);
    expect(gen.exitCode, `${gen.stdout}\n${gen.stderr}`).toBe(0);
    const listed = JSON.parse(gen.stdout) as { items: unknown[]; reclaim: { blobs: number; bytes: number } };
    expect(listed.items).toHaveLength(4); // the index, its two children, the single image
    const file = join(ws, 'delete', 'delete-images.yaml');
    const del = await b.airgap(['mirror', 'delete', '--delete-yaml-file', file, dest(), ...access()]);
    expect(del.exitCode, `${del.stdout}\n${del.stderr}`).toBe(0);

    // What would go, the registry still serving.
    const dry = await gc(['--workspace', `file://${ws}`, '--dry-run', '--json']);
    expect(dry.exitCode, `${dry.stdout}\n${dry.stderr}`).toBe(0);
    const would = JSON.parse(dry.stdout);
    expect(would.dryRun).toBe(true);
    expect(would.after).toBeUndefined();

    const r = await gc(['--workspace', `file://${ws}`, '--json']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res.prediction).toEqual({
      file,
      manifests: 4,
      blobs: listed.reclaim.blobs,
      bytes: listed.reclaim.bytes,
    });
    // The layers and configs predicted, and the four deleted manifests' own blobs.
    expect(res.reclaimed.blobs).toBe(listed.reclaim.blobs + 4);
    expect(res.eligible.blobs).toBe(res.reclaimed.blobs);
    expect(would.eligible).toEqual(res.eligible);
    const extra = res.reclaimed.bytes - listed.reclaim.bytes;
    expect(extra).toBeGreaterThan(0);
    expect(extra).toBeLessThan(4 * 4096); // four manifests: the registry's own bookkeeping
    expect(res.after.blobs).toBe(res.before.blobs - res.reclaimed.blobs);

    // Everything kept reads whole: skopeo copies each (every child of the index) out of the mirror.
    const at = (i: BuiltImage) => `docker://${b.address}/m/${i.repo}@${i.digest}`;
    for (const [n, i] of Object.entries(keep)) {
      await skopeoCopy(at(i), `dir:${join(b.root, `out-${n}`)}`, {
        ...skopeoAt(),
        all: i === keep.index,
      });
    }
    for (const child of Object.values(keep.index.children ?? {}))
      await expect(
        skopeoInspect(`docker://${b.address}/m/${keep.index.repo}@${child}`, { ...skopeoAt(), raw: true }),
      ).resolves.toContain('layers');
    const check = await b.airgap(['mirror', 'check', '--workspace', `file://${ws}`, dest(), ...access()]);
    expect(check.exitCode, `${check.stdout}\n${check.stderr}`).toBe(0);

    // In words, once more (nothing left): the prediction beside what went.
    const again = await gc(['--delete-yaml-file', file]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^reclaimed 0 blob\(s\), 0 bytes/m);
    expect(again.stdout).toContain(`mirror delete --generate predicted ${listed.reclaim.blobs} blob(s)`);
    expect(again.stdout).toContain('answers again');
  }, 300_000);

  it('starts the registry again when the collection fails, and says why it failed', async () => {
    const b = bastion();
    // A container left with the name the collector runs under (a crash, say): podman refuses to run it.
    const podman = (...args: string[]) => execa('podman', args, { env: { ...process.env, ...b.env } });
    await podman('create', '--name', `${b.name}-gc`, b.image);
    try {
      const r = await gc();
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(
        /error \[REGISTRY_GC_FAILED\]: garbage-collect failed \(exit 125\): .*name .* is already in use/,
      );
      expect(r.stderr).toContain(`podman rm ${b.name}-gc`);
      expect(r.stderr).not.toContain('    at ');
      expect((await systemctl('is-active', `${b.name}.service`)).stdout.trim()).toBe('active');
      await expect(answers()).resolves.toContain('schemaVersion');
    } finally {
      await podman('rm', '--force', `${b.name}-gc`);
    }
  }, 120_000);

  it('reads the prediction strictly, and says when there is none', async () => {
    const b = bastion();
    const bad = join(b.root, 'not-a-list.yaml');
    await writeFile(bad, 'kind: DeleteImageList\n');
    const r = await gc(['--delete-yaml-file', bad, '--dry-run']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error [REGISTRY_GC_PREDICTION_INVALID]');
    const none = await gc(['--workspace', join(b.root, 'no-ws'), '--dry-run']);
    expect(none.exitCode, none.stderr).toBe(0);
    expect(none.stdout).toContain('no prediction to compare with');
    expect(existsSync(join(b.root, 'no-ws'))).toBe(false);
    // --help says why never --delete-untagged.
    const help = await b.airgap(['registry', 'gc', '--help']);
    expect(help.stdout).toContain('Never --delete-untagged');
    expect(await readFile(bad, 'utf8')).toBe('kind: DeleteImageList\n');
  }, 60_000);
});
