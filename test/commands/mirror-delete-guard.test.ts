/**
 * `airgap mirror delete` never acts on an incomplete view, through the real CLI against Debian's
 * docker-registry behind a fault proxy: a tag listing or a manifest read that fails while the list
 * is generated stops it (no list is written), a read that fails when the list is carried out stops
 * that before anything is deleted, and a tag moved onto a listed manifest after the list was
 * written keeps that manifest (distribution would remove the tag with it). skopeo checks each state.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest } from '../helpers/skopeo.js';
import { testCertificates } from '../helpers/tls.js';

describe('airgap mirror delete acts only on a complete, current view', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let proxy: FaultProxy;
  let dir: string;
  let authFile: string;
  let proxyCa: string;
  let old: BuiltImage;
  let current: BuiltImage;
  const ws = () => join(dir, 'ws');
  const list = () => join(ws(), 'delete', 'delete-images.yaml');
  const at = (tag: string) => `docker://${dst.skopeoHost}/m/app/server:${tag}`;
  const access = () => ['--authfile', authFile, '--ca-file', src.caFile, '--ca-file', proxyCa];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    [old, current] = await seedRegistry(src, [
      { repo: 'app/server', tag: '1.0', layers: [{ id: 'base', size: 20_000 }, { size: 5_000 }] },
      { repo: 'app/server', tag: '2.0', layers: [{ id: 'base', size: 20_000 }, { size: 6_000 }] },
    ]);
    dir = await tempDir('airgap-delete-guard-');
    proxy = await startFaultProxy({ target: dst.url, caFile: dst.caFile, tls: testCertificates().server });
    proxyCa = join(dir, 'proxy-ca.crt');
    await writeFile(proxyCa, testCertificates().ca.certPem);
    const basic = (r: TestRegistry) => ({
      auth: Buffer.from(`${r.username}:${r.password}`).toString('base64'),
    });
    authFile = join(dir, 'auth.json');
    await writeFile(
      authFile,
      JSON.stringify({ auths: { [src.host]: basic(src), [proxy.host]: basic(dst) } }),
      {
        mode: 0o600,
      },
    );
    const isc = await writeIsc(dir, [refOf(src, old), refOf(src, current)]);
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws()}`,
      `docker://${proxy.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const disc = join(dir, 'delete-old.yaml');
    await writeFile(
      disc,
      `kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  additionalImages:\n    - name: ${refOf(src, old)}\n`,
    );
  }, 90_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), proxy?.stop()]);
  });

  const generate = () =>
    airgap([
      'mirror',
      'delete',
      '-c',
      join(dir, 'delete-old.yaml'),
      '--workspace',
      `file://${ws()}`,
      '--generate',
      `docker://${proxy.host}/m`,
      ...access(),
    ]);
  const carryOut = () =>
    airgap(['mirror', 'delete', '--delete-yaml-file', list(), `docker://${proxy.host}/m`, ...access()]);

  // A 500 is retried before it counts as a failure; a 403 fails at once: neither is "absent".
  it.each([
    ['a tag listing', /^\/v2\/m\/app\/server\/tags\/list/, 500],
    ['a manifest read', /^\/v2\/m\/app\/server\/manifests\/2\.0$/, 403],
  ])(
    '%s that fails while the list is generated stops it: no list, the repository named',
    async (_what, path, status) => {
      await rm(join(ws(), 'delete'), { recursive: true, force: true });
      proxy.setRules([{ match: { method: 'GET', path }, fault: 'status', status, times: Infinity }]);
      const r = await generate();
      proxy.setRules([]);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/m\/app\/server/);
      expect(existsSync(list())).toBe(false);
    },
    60_000,
  );

  it('a read that fails when the list is carried out stops it before anything is deleted', async () => {
    const gen = await generate();
    expect(gen.exitCode, gen.stderr).toBe(0);
    proxy.setRules([
      { match: { method: 'GET', path: /tags\/list/ }, fault: 'status', status: 403, times: Infinity },
    ]);
    const r = await carryOut();
    proxy.setRules([]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).not.toContain('deleted');
    expect(await skopeoDigest(at('1.0'), dst.skopeo)).toBe(old.digest);
  }, 60_000);

  it('a tag moved onto a listed manifest after the list was written keeps it, with a warning', async () => {
    const gen = await generate();
    expect(gen.exitCode, gen.stderr).toBe(0);
    // Someone tags 1.0 again after the list was reviewed.
    await skopeoCopy(at('1.0'), at('pinned'), { ...dst.skopeo, extraArgs: ['--preserve-digests'] });
    const r = await carryOut();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`m/app/server:pinned points to it now, and the list does not delete that tag`);
    expect(r.stdout).toContain('deleted 0 manifest(s), 1 kept');
    expect(await skopeoDigest(at('pinned'), dst.skopeo)).toBe(old.digest);
    expect(await skopeoDigest(at('1.0'), dst.skopeo)).toBe(old.digest);
    expect(await skopeoDigest(at('2.0'), dst.skopeo)).toBe(current.digest);
  }, 60_000);
});
