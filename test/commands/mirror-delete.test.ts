/**
 * `airgap mirror delete` through the real CLI against Debian's docker-registry: the generate step
 * lists exactly what the DeleteImageSetConfiguration names and the workspace no longer keeps,
 * with the blobs a garbage collection would reclaim; the delete step removes them; after the
 * registry's own garbage-collect, skopeo finds every kept image whole and every deleted one gone.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub } from '../../lab/hub/index.js';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { refOf, seedRegistry, tempDir, writeIsc, writeAuthFile } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDelete, skopeoDigest } from '../helpers/skopeo.js';

const blobFile = (r: TestRegistry, digest: string) =>
  join(
    r.storageDir,
    'docker',
    'registry',
    'v2',
    'blobs',
    'sha256',
    digest.slice(7, 9),
    digest.slice(7),
    'data',
  );

describe('airgap mirror delete', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let locked: TestRegistry;
  let dir: string;
  let authFile: string;
  let old: BuiltImage;
  let current: BuiltImage;
  const ws = () => join(dir, 'ws');
  const access = () => [
    '--authfile',
    authFile,
    '--ca-file',
    src.caFile,
    '--ca-file',
    dst.caFile,
    '--ca-file',
    locked.caFile,
  ];

  beforeAll(async () => {
    [src, dst, locked] = await Promise.all([
      startRegistry(),
      startRegistry(),
      startRegistry({ extraConfig: { storage: { delete: { enabled: false } } } }),
    ]);
    // Two releases of one app sharing a base layer; each has a layer of its own.
    [old, current] = await seedRegistry(src, [
      { repo: 'app/server', tag: '1.0', layers: [{ id: 'base', size: 40_000 }, { size: 10_000 }] },
      { repo: 'app/server', tag: '2.0', layers: [{ id: 'base', size: 40_000 }, { size: 12_000 }] },
    ]);
    dir = await tempDir('airgap-delete-');
    authFile = await writeAuthFile(join(dir, 'auth.json'), [src, dst, locked]);
    // The mirror holds both releases, and 2.0 a second time under another tag.
    const isc = await writeIsc(dir, [
      refOf(src, old),
      refOf(src, current),
      { name: refOf(src, current), targetTag: 'stable' },
    ]);
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws()}`,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), locked?.stop()]);
  });

  it('keeps what other tags under the prefix use: the destination is walked, not only the workspace plan', async () => {
    // Someone else's copy of 1.0 under the same prefix, which no workspace plan knows about.
    const elsewhere = `docker://${dst.skopeoHost}/m/elsewhere/app:kept`;
    await skopeoCopy(`docker://${dst.skopeoHost}/m/app/server:1.0`, elsewhere, {
      ...dst.skopeo,
      extraArgs: ['--preserve-digests'],
    });
    expect(await skopeoDigest(elsewhere, dst.skopeo)).toBe(old.digest);
    try {
      const disc = join(dir, 'delete-old-only.yaml');
      await writeFile(
        disc,
        `kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  additionalImages:\n    - name: ${refOf(src, old)}\n`,
      );
      const gen = await airgap([
        'mirror',
        'delete',
        '-c',
        disc,
        '--workspace',
        `file://${ws()}`,
        '--generate',
        `docker://${dst.host}/m`,
        ...access(),
        '--json',
      ]);
      expect(gen.exitCode, gen.stderr).toBe(0);
      const listed = JSON.parse(gen.stdout);
      // 1.0's manifest in app/server goes; none of its blobs would be reclaimed: the other tag uses them.
      expect(listed.items).toHaveLength(1);
      expect(listed.reclaim).toMatchObject({ blobs: 0, bytes: 0, sharedBlobs: 3 });
      expect(listed.walkedTags).toBe(3); // 2.0, stable, elsewhere/app:kept (1.0 is the one deleted)
      expect(listed.walkNote).toBeUndefined();
    } finally {
      await skopeoDelete(elsewhere, dst.skopeo);
    }
  }, 60_000);

  it('lists what goes and what stays, deletes it, and garbage-collect reclaims only what nothing kept uses', async () => {
    // Delete 1.0, and the "stable" tag of 2.0 (the same manifest as 2.0, which the mirror keeps).
    const disc = join(dir, 'delete-isc.yaml');
    await writeFile(
      disc,
      [
        'kind: DeleteImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'delete:',
        '  additionalImages:',
        `    - name: ${refOf(src, old)}`,
        `    - name: ${refOf(src, current)}`,
        '      targetTag: stable',
        '',
      ].join('\n'),
    );
    // The workspace keeps what its last plan mirrored at every tag this does not delete: 2.0 stays.
    const gen = await airgap([
      'mirror',
      'delete',
      '-c',
      disc,
      '--workspace',
      `file://${ws()}`,
      '--generate',
      `docker://${dst.host}/m`,
      ...access(),
      '--json',
    ]);
    expect(gen.exitCode, gen.stderr).toBe(0);
    const listed = JSON.parse(gen.stdout);
    expect(listed.items.map((i: { imageReference: string }) => i.imageReference)).toEqual([
      `docker://${dst.host}/m/app/server@${old.digest}`,
    ]);
    expect(listed.skipped).toEqual([
      {
        image: `${src.host}/app/server@${current.digest}`,
        reason: expect.stringMatching(/^still used by additionalImages\[1\]/),
      },
    ]);
    // Only 1.0's own layer and config go; the shared base layer stays.
    expect(listed.reclaim.blobs).toBe(2);
    expect(listed.reclaim.sharedBlobs).toBe(1);
    const file = join(ws(), 'delete', 'delete-images.yaml');
    expect(await readFile(file, 'utf8')).toContain('kind: DeleteImageList');
    // Generating changed nothing.
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/m/app/server:1.0`, dst.skopeo)).toBe(old.digest);

    const del = await airgap([
      'mirror',
      'delete',
      '--delete-yaml-file',
      file,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(del.stdout).toContain('deleted 1 manifest(s)');
    expect(del.stdout).toContain('airgap registry gc');
    expect(del.stdout).toContain('never --delete-untagged');
    await expect(skopeoDigest(`docker://${dst.skopeoHost}/m/app/server:1.0`, dst.skopeo)).rejects.toThrow();

    await dst.garbageCollect();
    const [, own] = listed.items[0].relatedBlobs as string[];
    expect(existsSync(blobFile(dst, own!))).toBe(false);
    // Every kept image is whole: skopeo copies all its blobs out of the mirror.
    for (const tag of ['2.0', 'stable']) {
      expect(await skopeoDigest(`docker://${dst.skopeoHost}/m/app/server:${tag}`, dst.skopeo)).toBe(
        current.digest,
      );
      await skopeoCopy(
        `docker://${dst.skopeoHost}/m/app/server:${tag}`,
        `dir:${join(dir, `out-${tag}`)}`,
        dst.skopeo,
      );
    }
    // Again: nothing left to delete, said so.
    const again = await airgap([
      'mirror',
      'delete',
      '--delete-yaml-file',
      file,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('1 already gone');
  }, 120_000);

  it('refuses to list a release a hosted cluster on the hub runs, naming the cluster', async () => {
    const hub = await startHub({ dir: join(dir, 'hub') });
    try {
      hub.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'clusters' } });
      hub.store.create({
        apiVersion: 'hypershift.openshift.io/v1beta1',
        kind: 'HostedCluster',
        metadata: { name: 'prod', namespace: 'clusters' },
        spec: {
          release: { image: `${dst.host}/m/app/server@${current.digest}` },
          pullSecret: { name: 'prod-pull-secret' },
          dns: { baseDomain: 'example.com' },
          etcd: { managementType: 'Managed', managed: { storage: { type: 'PersistentVolume' } } },
          networking: { networkType: 'OVNKubernetes' },
          platform: { type: 'Agent', agent: { agentNamespace: 'clusters-prod' } },
          services: [],
        },
      });
      const disc = join(dir, 'delete-current.yaml');
      await writeFile(
        disc,
        `kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  additionalImages:\n    - name: ${refOf(src, current)}\n`,
      );
      const r = await airgap([
        'mirror',
        'delete',
        '-c',
        disc,
        '--workspace',
        `file://${ws()}`,
        '--generate',
        `docker://${dst.host}/m`,
        '--kubeconfig',
        hub.kubeconfigFile,
        ...access(),
      ]);
      expect(r.exitCode, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `error [DELETE_IN_USE]: refusing to delete what hosted clusters run: ${refOf(src, current)} (clusters/prod)`,
      );
    } finally {
      await hub.stop();
    }
  }, 60_000);

  it('bad input: a registry that refuses deletes, a list for another registry, no phase', async () => {
    const list = join(dir, 'locked.yaml');
    await writeFile(
      list,
      `kind: DeleteImageList\napiVersion: mirror.openshift.io/v2alpha1\nitems:\n- imageName: x\n  imageReference: docker://${locked.host}/m/app/server@${old.digest}\n  type: additional\n  relatedBlobs: []\n`,
    );
    const refused = await airgap([
      'mirror',
      'delete',
      '--delete-yaml-file',
      list,
      `docker://${locked.host}/m`,
      ...access(),
    ]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(`error [DELETE_REFUSED]: ${locked.host} refuses to delete manifests`);
    expect(refused.stderr).toContain('storage.delete.enabled: true');
    const other = await airgap([
      'mirror',
      'delete',
      '--delete-yaml-file',
      list,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(`is at ${locked.host}, not at the destination ${dst.host}`);
    const none = await airgap(['mirror', 'delete', `docker://${dst.host}/m`]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('say which phase: --generate, or --delete-yaml-file <file>');
  });
});
