/**
 * `airgap mirror inventory` through the real CLI against Debian's docker-registry (TLS, htpasswd):
 * the file lists exactly what skopeo reads from the registry below the prefix (tags, manifests,
 * index children, blobs with sizes, each once), the same on a second run, and reads back with
 * --verify; a registry failing mid-walk gives complete: false naming the failed reads, exit 1, and
 * the rest listed; a hostile inventory file exits 2 naming the field.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../../lab/images.js';
import { readInventory } from '../../../src/mirror/inventory/format.js';
import { airgap } from '../../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy.js';
import { seedRegistry, tempDir, writeAuthFile } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoCopy, skopeoListTags, skopeoRawManifest } from '../../helpers/skopeo.js';
import { testCertificates } from '../../helpers/tls.js';
import { sha256Digest } from '../../../src/mirror/digest.js';
import { PLAN_API_VERSION } from '../../../src/mirror/plan.js';

interface Held {
  tags: Map<string, string>;
  manifests: Set<string>;
  blobs: Map<string, number>;
}

/** What the registry holds in these repositories, read by skopeo alone. */
async function heldBySkopeo(reg: TestRegistry, repos: string[]): Promise<Held> {
  const held: Held = { tags: new Map(), manifests: new Set(), blobs: new Map() };
  const read = async (repo: string, ref: string): Promise<string> => {
    const raw = await skopeoRawManifest(
      `docker://${reg.skopeoHost}/${repo}${ref.startsWith('sha256:') ? '@' : ':'}${ref}`,
      reg.skopeo,
    );
    const digest = sha256Digest(raw);
    held.manifests.add(digest);
    const doc = JSON.parse(raw.toString()) as {
      manifests?: { digest: string }[];
      config?: { digest: string; size: number };
      layers?: { digest: string; size: number }[];
    };
    for (const c of doc.manifests ?? []) await read(repo, c.digest);
    for (const b of [...(doc.config ? [doc.config] : []), ...(doc.layers ?? [])])
      held.blobs.set(b.digest, b.size);
    return digest;
  };
  for (const repo of repos)
    for (const tag of await skopeoListTags(`docker://${reg.skopeoHost}/${repo}`, reg.skopeo))
      held.tags.set(`${repo}:${tag}`, await read(repo, tag));
  return held;
}

/** The same, from an inventory document. */
function heldByInventory(doc: Awaited<ReturnType<typeof readInventory>>['doc']): Held {
  return {
    tags: new Map(doc.tags.map(([r, t, m]) => [`${doc.repositories[r]}:${t}`, doc.manifests[m]![0]])),
    manifests: new Set(doc.manifests.map((m) => m[0])),
    blobs: new Map(doc.blobs.map((b) => [b[0], b[1]])),
  };
}

describe('airgap mirror inventory', () => {
  let reg: TestRegistry;
  let dir: string;
  let authFile: string;
  let images: BuiltImage[];
  const access = () => ['--authfile', authFile, '--ca-file', reg.caFile];
  const inside = ['m/app/server', 'm/app/multi'];

  beforeAll(async () => {
    reg = await startRegistry();
    dir = await tempDir('airgap-inventory-');
    authFile = await writeAuthFile(join(dir, 'auth.json'), [reg]);
    // Two releases sharing a base layer, a multi-arch index, and an image outside the prefix.
    images = await seedRegistry(reg, [
      { repo: 'm/app/server', tag: '1.0', layers: [{ id: 'inv-base', size: 20_000 }, { size: 5_000 }] },
      { repo: 'm/app/server', tag: '2.0', layers: [{ id: 'inv-base', size: 20_000 }, { size: 6_000 }] },
      {
        repo: 'm/app/multi',
        tag: '1',
        layers: [{ id: 'inv-base', size: 20_000 }],
        arches: ['amd64', 'arm64'],
      },
      { repo: 'elsewhere/app', tag: 'x', layers: [{ size: 4_000 }] },
    ]);
    // A second tag naming 2.0's manifest.
    await skopeoCopy(
      `docker://${reg.skopeoHost}/m/app/server:2.0`,
      `docker://${reg.skopeoHost}/m/app/server:stable`,
      {
        ...reg.skopeo,
        extraArgs: ['--preserve-digests'],
      },
    );
  }, 90_000);
  afterAll(async () => {
    await reg?.stop();
  });

  it('lists exactly what the registry holds below the prefix, each blob once, and the same twice', async () => {
    const file = join(dir, 'inventory.json');
    const r = await airgap([
      'mirror',
      'inventory',
      `docker://${reg.host}/m`,
      '-o',
      file,
      ...access(),
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const inv = await readInventory(file);
    expect(report).toMatchObject({
      complete: true,
      problems: [],
      sha256: inv.sha256,
      repositories: 2,
      tags: 4,
    });
    expect(inv.doc.destination).toBe(`docker://${reg.host}/m`);
    expect(inv.doc.repositories).toEqual(['m/app/multi', 'm/app/server']);
    expect(heldByInventory(inv.doc)).toEqual(await heldBySkopeo(reg, inside));
    // The shared base layer is one entry; the image outside the prefix is not there.
    const outside = images.find((i) => i.repo === 'elsewhere/app')!;
    expect(inv.manifest(outside.digest)).toBeUndefined();
    expect(new Set(inv.doc.blobs.map((b) => b[0])).size).toBe(inv.doc.blobs.length);
    const multi = images.find((i) => i.repo === 'm/app/multi')!;
    const index = inv.doc.manifests.find((m) => m[0] === multi.digest)!;
    expect(index[4].map((c) => inv.doc.manifests[c]![0]).sort()).toEqual(
      Object.values(multi.children!).sort(),
    );
    expect(report.bytes).toBe(inv.doc.blobs.reduce((n, b) => n + b[1], 0));

    // Stable: a second run gives the same document but for when it was taken.
    const again = join(dir, 'again.json.gz');
    const r2 = await airgap([
      'mirror',
      'inventory',
      `docker://${reg.host}/m`,
      '-o',
      again,
      ...access(),
      '--parallel',
      '2',
    ]);
    expect(r2.exitCode, r2.stderr).toBe(0);
    expect(r2.stdout).toMatch(/2 repositories, 4 tags, \d+ manifests, \d+ blobs/);
    const second = await readInventory(again);
    expect({ ...second.doc, takenAt: '' }).toEqual({ ...inv.doc, takenAt: '' });

    // --verify reads the gzip back and says what it covers.
    const v = await airgap(['mirror', 'inventory', '--verify', again]);
    expect(v.exitCode, v.stderr).toBe(0);
    expect(v.stdout).toContain(`the inventory of docker://${reg.host}/m`);
    expect(v.stdout).toContain(second.sha256);
    expect(v.stdout).toMatch(/complete: every read succeeded/);
  }, 120_000);

  describe('a registry failing mid-walk', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await startFaultProxy({ target: reg.url, caFile: reg.caFile, tls: testCertificates().server });
    });
    afterAll(async () => {
      await proxy?.stop();
    });

    it('writes what it read, says complete: false naming each failed read, and exits 1', async () => {
      const arm = images.find((i) => i.repo === 'm/app/multi')!.children!.arm64!;
      proxy.setRules([
        {
          match: { method: 'GET', path: /^\/v2\/m\/app\/server\/tags\/list/ },
          fault: 'status',
          status: 500,
          times: Infinity,
        },
        {
          match: { method: 'GET', path: new RegExp(`/v2/m/app/multi/manifests/${arm}`) },
          fault: 'status',
          status: 502,
          times: Infinity,
        },
      ]);
      const auth = await writeAuthFile(join(dir, 'proxy-auth.json'), [{ ...reg, host: proxy.host }]);
      const file = join(dir, 'partial.json');
      const r = await airgap([
        'mirror',
        'inventory',
        `docker://${proxy.host}/m`,
        '-o',
        file,
        '--authfile',
        auth,
        '--ca-file',
        reg.caFile,
        '--retry-times',
        '0',
        '--json',
      ]);
      expect(r.exitCode, r.stderr).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report.complete).toBe(false);
      expect(report.problems).toEqual([
        expect.stringMatching(new RegExp(`^m/app/multi@${arm}: .*502`)),
        expect.stringMatching(/^m\/app\/server: the tag list: .*500/),
      ]);
      const inv = await readInventory(file);
      expect(inv.doc.complete).toBe(false);
      // The rest is listed: the index and its amd64 child, not the repository whose tags failed.
      expect(inv.doc.repositories).toEqual(['m/app/multi']);
      expect(inv.tag('m/app/multi', '1')).toBe(images.find((i) => i.repo === 'm/app/multi')!.digest);
      expect(inv.manifest(images.find((i) => i.repo === 'm/app/multi')!.children!.amd64!)).toBeDefined();
      expect(inv.manifest(arm)).toBeUndefined();

      const text = await airgap(['mirror', 'inventory', '--verify', file]);
      expect(text.exitCode).toBe(1);
      expect(text.stdout).toMatch(/INCOMPLETE .*2 read\(s\) failed/);
    }, 120_000);

    it('a registry that refuses its catalog is walked through the plan, and says so', async () => {
      proxy.setRules([{ match: { path: /^\/v2\/_catalog/ }, fault: 'status', status: 401, times: Infinity }]);
      const auth = await writeAuthFile(join(dir, 'proxy-auth.json'), [{ ...reg, host: proxy.host }]);
      const args = [
        'mirror',
        'inventory',
        `docker://${proxy.host}/m`,
        '--authfile',
        auth,
        '--ca-file',
        reg.caFile,
      ];
      // Without a plan there is nothing to go by: said, with the fix, and no file.
      const none = await airgap([...args, '-o', join(dir, 'none.json')]);
      expect(none.exitCode).toBe(1);
      expect(none.stderr).toMatch(/does not list its repositories/);
      expect(none.stderr).toMatch(/--workspace|--plan/);
      // A plan that mirrored m/app/server (and names a repository that is not there).
      const plan = join(dir, 'plan.json');
      const entry = (repo: string, tag: string) => ({
        kind: 'additional',
        origin: `quay.io/org/${repo}:${tag}`,
        source: `quay.io/org/${repo}@sha256:${'a'.repeat(64)}`,
        digest: `sha256:${'a'.repeat(64)}`,
        destRepo: `app/${repo}`,
        destTag: tag,
        byTag: true,
        byDigest: false,
        context: 'additionalImages[0]',
      });
      await writeFile(
        plan,
        JSON.stringify({
          apiVersion: PLAN_API_VERSION,
          kind: 'MirrorPlan',
          images: [entry('server', '1.0'), entry('gone', '1')],
        }),
      );
      const file = join(dir, 'by-plan.json');
      const r = await airgap([...args, '--plan', plan, '-o', file]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/note: .* did not list its repositories .* the plan .*plan\.json/);
      const inv = await readInventory(file);
      expect(inv.doc.complete).toBe(true);
      expect(inv.doc.repositories).toEqual(['m/app/server']);
      expect(inv.doc.tags.map((t) => t[1])).toEqual(['1.0', '2.0', 'stable']);
    }, 120_000);
  });

  describe('a hostile inventory file', () => {
    let good: string;
    beforeAll(async () => {
      good = join(dir, 'good.json');
      const r = await airgap(['mirror', 'inventory', `docker://${reg.host}/m`, '-o', good, ...access()]);
      expect(r.exitCode, r.stderr).toBe(0);
    }, 60_000);

    const hostile = async (
      name: string,
      change: (doc: Record<string, unknown> & { blobs: unknown[][]; tags: unknown[][] }) => void,
    ) => {
      const doc = { ...(await readInventory(good)).doc } as never as Record<string, unknown> & {
        blobs: unknown[][];
        tags: unknown[][];
      };
      change(doc);
      const path = join(dir, name);
      await writeFile(path, JSON.stringify(doc));
      return airgap(['mirror', 'inventory', '--verify', path]);
    };

    it('a bad digest, an index out of range, a wrong apiVersion: exit 2, the field named', async () => {
      const bad = await hostile('bad-digest.json', (d) => {
        d.blobs[1]![0] = 'sha256:../../etc/passwd';
      });
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(/bad-digest\.json: blobs\[1\]\[0\]: .* is not a digest/);
      const range = await hostile('range.json', (d) => {
        d.tags[0]![2] = 9999;
      });
      expect(range.exitCode).toBe(2);
      expect(range.stderr).toMatch(
        /range\.json: tags\[0\]\[2\]: 9999 is not the index of one of the \d+ manifests/,
      );
      const version = await hostile('version.json', (d) => {
        d.apiVersion = 'airgap/v9';
      });
      expect(version.exitCode).toBe(2);
      expect(version.stderr).toMatch(/version\.json: apiVersion\/kind: .*airgap\/v9/);
      expect(`${bad.stderr}${range.stderr}${version.stderr}`).not.toMatch(/\n\s+at /); // no stack trace
    }, 60_000);

    it('a gzip bomb: exit 2, stopped early', async () => {
      const path = join(dir, 'bomb.json.gz');
      const zeros = Buffer.alloc(1024 * 1024);
      // 1 GiB of zeros, some 1 MiB gzipped.
      await pipeline(
        Readable.from(
          (function* () {
            for (let i = 0; i < 1024; i++) yield zeros;
          })(),
        ),
        createGzip({ level: 9 }),
        createWriteStream(path),
      );
      const started = Date.now();
      const r = await airgap(['mirror', 'inventory', '--verify', path]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/bomb\.json\.gz: the file \(gzip\): .*inflates/);
      expect(Date.now() - started).toBeLessThan(20_000);
    }, 60_000);
  });
});
