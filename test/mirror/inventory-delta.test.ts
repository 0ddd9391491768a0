/**
 * Deltas from what the far side really holds (issue 29), with real registries and skopeo as the
 * independent reader: a release-shaped set goes to the enclave through a full archive, the
 * connected workspace is lost, newer releases are added, and an inventory of the enclave's registry
 * decides what the next archive carries. Then the same delta meets an enclave that holds nothing,
 * and an inventory that lies.
 */
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { execa } from 'execa';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUpstream, type Upstream } from '../../lab/upstream.js';
import { inventoryText, readInventory, type Inventory } from '../../src/mirror/inventory/format.js';
import type { MirrorReport } from '../../src/mirror/report.js';
import type { ImageResult } from '../../src/mirror/copy/engine.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { airgap } from '../helpers/cli.js';
import { clientFor, refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy } from '../helpers/skopeo.js';

const KiB = 1024;

interface ArchiveJson {
  parts: { file: string; size: number; blobs: string[] }[];
  previouslyArchived: string[];
  inventory?: { sha256: string; destination: string };
  homes?: Record<string, string>;
}

/** Carry an archive across: only its parts and its manifest, never the connected side's working-dir. */
async function carry(from: string, to: string): Promise<string> {
  await mkdir(to, { recursive: true });
  for (const f of await readdir(from))
    if (/^mirror_\d+\.tar$/.test(f) || f === 'airgap-archive.json')
      await copyFile(join(from, f), join(to, f));
  return to;
}

const archiveJson = async (dir: string): Promise<ArchiveJson> =>
  JSON.parse(await readFile(join(dir, 'airgap-archive.json'), 'utf8')) as ArchiveJson;

const archiveBytes = async (dir: string) => {
  let n = 0;
  for (const p of (await archiveJson(dir)).parts) n += (await stat(join(dir, p.file))).size;
  return n;
};

describe('mirror inventory → --inventory → --from', () => {
  let src: TestRegistry;
  let enclave: TestRegistry;
  let empty: TestRegistry;
  let up: Upstream;
  let dir: string;
  let authFile: string;
  let certDir: string;
  /** The enclave's inventory after the first archive went in. */
  let enclaveInventory: Inventory;

  const isc = async (name: string, maxVersion: string) => {
    const path = join(dir, name);
    await writeFile(
      path,
      yaml.dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: { platform: { channels: [{ name: up.channel, minVersion: '4.18.1', maxVersion }] } },
      }),
    );
    return path;
  };
  const access = () => ['--authfile', authFile, '--cert-dir', certDir];
  /** `-c <config> <access> --graph-url … --remove-signatures file://<out>`: mirror → disk, or its plan. */
  const toDiskArgs = (config: string, out: string) => [
    '-c',
    config,
    ...access(),
    '--graph-url',
    up.graph.url,
    '--remove-signatures',
    `file://${out}`,
  ];
  const toDisk = (config: string, out: string, ...rest: string[]) =>
    airgap(['mirror', ...toDiskArgs(config, out), '--json', ...rest]);
  const fromDisk = (config: string, archive: string, reg: TestRegistry) =>
    airgap([
      'mirror',
      '-c',
      config,
      ...access(),
      '--from',
      `file://${archive}`,
      `docker://${reg.host}/mirror`,
      '--json',
    ]);
  const inventory = (reg: TestRegistry, out: string) =>
    airgap(['mirror', 'inventory', ...access(), `docker://${reg.host}/mirror`, '-o', out, '--json']);

  beforeAll(async () => {
    [src, enclave, empty] = await Promise.all([startRegistry(), startRegistry(), startRegistry()]);
    dir = await tempDir();
    // Components share a base layer (as a release's do) and have one of their own each.
    up = await buildUpstream({
      registry: src,
      dir: join(dir, 'upstream'),
      versions: ['4.18.1', '4.18.2', '4.18.3'],
      components: 6,
      baseBytes: [256 * KiB],
      componentBytes: 24 * KiB,
      packages: 1,
      risk: false,
    });
    authFile = join(dir, 'auth.json');
    const auths = {};
    for (const r of [src, enclave, empty])
      Object.assign(auths, (JSON.parse(await readFile(r.authFile, 'utf8')) as { auths: object }).auths);
    await writeFile(authFile, JSON.stringify({ auths }), { mode: 0o600 });
    certDir = join(dir, 'certs.d');
    for (const r of [src, enclave, empty]) {
      await mkdir(join(certDir, r.host), { recursive: true });
      await copyFile(r.caFile, join(certDir, r.host, 'ca.crt'));
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([src?.stop(), enclave?.stop(), empty?.stop(), up?.stop()]);
  });

  it('an inventory of the enclave, taken after the connected workspace was lost, cuts an archive of only the new blobs', async () => {
    // The first archive, whole, into the enclave.
    const first = await isc('isc-1.yaml', '4.18.1');
    const a1 = join(dir, 'a1');
    expect((await toDisk(first, a1)).exitCode).toBe(0);
    const pushed = await fromDisk(first, await carry(a1, join(dir, 'far-a1')), enclave);
    expect(pushed.exitCode, pushed.stderr).toBe(0);
    await rm(a1, { recursive: true, force: true }); // the connected workspace is gone

    const inv = join(dir, 'enclave.inventory.json.gz');
    const taken = await inventory(enclave, inv);
    expect(taken.exitCode, taken.stderr).toBe(0);
    const listed = await readInventory(inv);
    expect(listed.doc.complete).toBe(true);

    // Newer releases; the same configuration cut whole, and against the inventory.
    const second = await isc('isc-2.yaml', '4.18.3');
    const full = join(dir, 'full');
    const delta = join(dir, 'delta');
    expect((await toDisk(second, full)).exitCode).toBe(0);
    const cut = await toDisk(second, delta, '--inventory', inv);
    expect(cut.exitCode, cut.stderr).toBe(0);
    const report = JSON.parse(cut.stdout) as MirrorReport;
    const sha = `sha256:${createHash('sha256')
      .update(await readFile(inv))
      .digest('hex')}`;
    expect(report.archive!.inventory!.sha256).toBe(sha);
    const d = await archiveJson(delta);
    const f = await archiveJson(full);
    expect(d.inventory).toMatchObject({ sha256: sha, destination: `docker://${enclave.host}/mirror` });
    // Carried: exactly what the full archive carries that the inventory does not list.
    const carried = new Set(d.parts.flatMap((p) => p.blobs));
    for (const b of f.parts.flatMap((p) => p.blobs)) {
      const size = listed.blob(b)?.size;
      if (size === undefined) expect(carried.has(b), `${b} must travel`).toBe(true);
    }
    const manifests = new Set(f.parts.flatMap((p) => p.blobs).filter((b) => listed.manifest(b)));
    for (const b of carried)
      if (!manifests.has(b)) expect(listed.blob(b), `${b} is there already`).toBeUndefined();
    expect(new Set(d.previouslyArchived).size).toBeGreaterThan(0);
    // The bytes left behind are the fraction of the full archive the enclave already holds.
    const sizes = await blobSizes(full);
    let all = 0;
    let held = 0;
    for (const [b, n] of sizes) {
      all += n;
      if (listed.holdsBlob(b, n)) held += n;
    }
    const ratio = (await archiveBytes(delta)) / (await archiveBytes(full));
    console.log(
      `delta archive / full archive: ${ratio.toFixed(3)}; shared fraction ${(held / all).toFixed(3)}`,
    );
    expect(held / all).toBeGreaterThan(0.3);
    expect(Math.abs(ratio - (1 - held / all))).toBeLessThan(0.05);
    enclaveInventory = listed;

    // The plan says the same before anything is cut: per image, what the far side holds and what is left to carry.
    const planArgs = ['plan', ...toDiskArgs(second, join(dir, 'plan-only')), '--inventory', inv];
    const planned = await airgap(['mirror', ...planArgs, '--json']);
    expect(planned.exitCode, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as MirrorReport;
    expect(plan.inventory).toMatchObject({ sha256: sha, complete: true });
    expect(plan.measure!.coveredBytes).toBe(held);
    expect(plan.measure!.bytesToMove).toBe(plan.measure!.bytes - held); // layers and configs: manifests are not counted
    const components = plan.plan.filter((p) => p.kind === 'release-component');
    for (const c of components) expect(c.covered).toBeGreaterThan(0);
    const text = await airgap(['mirror', ...planArgs]);
    expect(text.stdout).toContain(
      `the far side holds (the inventory ${sha} of docker://${enclave.host}/mirror`,
    );

    const verify = await airgap(['mirror', 'verify', `file://${delta}`]);
    expect(verify.exitCode).toBe(0);
    expect(verify.stdout).toContain(
      `a delta: cut against the inventory ${sha} of docker://${enclave.host}/mirror`,
    );

    // Across: the enclave takes it, and skopeo reads every image of the plan whole from there.
    const far = await carry(delta, join(dir, 'far-delta'));
    const r = await fromDisk(second, far, enclave);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const done = JSON.parse(r.stdout) as MirrorReport;
    expect(done.delta!.missing).toEqual([]);
    expect(done.delta!.expected).toBeGreaterThan(0);
    await mkdir(join(dir, 'read'));
    for (const i of done.summary!.images) {
      expect(i.status).not.toBe('failed');
      await skopeoCopy(
        `docker://${i.destination}`,
        `dir:${join(dir, 'read', createHash('sha1').update(i.destination).digest('hex'))}`,
        {
          ...enclave.skopeo,
          all: true,
        },
      );
    }
  }, 300_000);

  it('an enclave that holds nothing: each image needing what the delta left out fails alone, naming it, nothing of it pushed; its own inventory cuts a complete archive', async () => {
    const second = join(dir, 'isc-2.yaml');
    const far = join(dir, 'far-delta');
    const r = await fromDisk(second, far, empty);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as MirrorReport;
    const failed = report.summary!.images.filter((i) => i.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const i of failed) {
      expect(i.error!.code).toBe(MirrorError.MIRROR_BLOB_UNAVAILABLE);
      expect(i.error!.message).toMatch(
        /needs \d+ blob\(s\) neither the archive nor the destination holds: sha256:/,
      );
      expect(i.error!.hint).toContain('inventory');
    }
    expect(report.delta!.missing.length).toBeGreaterThan(0);
    expect(r.stderr).toContain(`lacks ${report.delta!.missing.length} of the`);
    // Nothing half-pushed: none of the failed images' manifests, nor what the archive carried for them.
    await expectNothingOf(
      empty,
      report.summary!.images,
      (await archiveJson(far)).parts.flatMap((p) => p.blobs),
    );
    // Its own inventory: the archive cut against it carries what it lacks, and goes in whole.
    const inv = join(dir, 'empty.inventory.json');
    expect((await inventory(empty, inv)).exitCode).toBe(0);
    const own = join(dir, 'own');
    expect((await toDisk(second, own, '--inventory', inv)).exitCode).toBe(0);
    const again = await fromDisk(second, await carry(own, join(dir, 'far-own')), empty);
    expect(again.exitCode, again.stdout).toBe(0);
  }, 300_000);

  it('a blob the enclave holds in another repository is mounted from where the inventory found it, once per repository', async () => {
    const [a, b, c] = await seedRegistry(src, [
      { repo: 'apps/a', tag: 'v1', layers: [{ id: 'shared', size: 200 * KiB }, { size: 4 * KiB }] },
      { repo: 'apps/b', tag: 'v1', layers: [{ id: 'shared', size: 200 * KiB }, { size: 5 * KiB }] },
      { repo: 'apps/b', tag: 'v2', layers: [{ id: 'shared', size: 200 * KiB }, { size: 6 * KiB }] },
    ]);
    const one = await writeIsc(dir, [refOf(src, a!)], [], 'isc-apps-1.yaml');
    const both = await writeIsc(dir, [refOf(src, a!), refOf(src, b!), refOf(src, c!)], [], 'isc-apps-2.yaml');
    expect((await toDisk(one, join(dir, 'apps-1'))).exitCode).toBe(0);
    const first = await fromDisk(one, await carry(join(dir, 'apps-1'), join(dir, 'far-apps-1')), enclave);
    expect(first.exitCode, first.stdout).toBe(0);
    const inv = join(dir, 'apps.inventory.json');
    expect((await inventory(enclave, inv)).exitCode).toBe(0);
    const cut = join(dir, 'apps-2');
    expect((await toDisk(both, cut, '--inventory', inv)).exitCode).toBe(0);
    expect(Object.values((await archiveJson(cut)).homes ?? {})).toContain('mirror/apps/a');
    const r = await fromDisk(both, await carry(cut, join(dir, 'far-apps-2')), enclave);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    // apps/b's two images need the shared layer: it is mounted into apps/b once.
    expect(report.delta).toMatchObject({ missing: [], failed: 0, mounted: 1 });
    for (const ref of ['mirror/apps/b:v1', 'mirror/apps/b:v2'])
      await skopeoCopy(
        `docker://${enclave.host}/${ref}`,
        `dir:${join(dir, 'read', ref.replace(/[/:]/g, '_'))}`,
        enclave.skopeo,
      );
  }, 300_000);

  it('an inventory that lies (lists blobs the registry lacks) is caught before any push of the images that need them', async () => {
    const liar = await startRegistry();
    try {
      const inv = join(dir, 'liar.inventory.json');
      const auths = JSON.parse(await readFile(authFile, 'utf8')) as { auths: Record<string, unknown> };
      Object.assign(
        auths.auths,
        (JSON.parse(await readFile(liar.authFile, 'utf8')) as { auths: object }).auths,
      );
      await writeFile(authFile, JSON.stringify(auths), { mode: 0o600 });
      await mkdir(join(certDir, liar.host), { recursive: true });
      await copyFile(liar.caFile, join(certDir, liar.host, 'ca.crt'));
      expect((await inventory(liar, inv)).exitCode).toBe(0);
      // The lie: it claims the release components' shared base layer.
      const full = await archiveJson(join(dir, 'full'));
      const honest = await readInventory(inv);
      // The largest blob the first archive carried: the components' shared base layer.
      const [base, size] = [...(await blobSizes(join(dir, 'full')))]
        .filter(([b, n]) => enclaveInventory.holdsBlob(b, n))
        .sort((a, b) => b[1] - a[1])[0]!;
      const doc = {
        ...honest.doc,
        repositories: ['mirror/openshift-release-dev/ocp-v4.0-art-dev'],
        blobs: [[base, size, 0] as [string, number, number]],
      };
      await writeFile(inv, inventoryText(doc));
      expect(full.parts.length).toBeGreaterThan(0);
      const cut = join(dir, 'lie');
      expect((await toDisk(join(dir, 'isc-2.yaml'), cut, '--inventory', inv)).exitCode).toBe(0);
      const r = await fromDisk(join(dir, 'isc-2.yaml'), await carry(cut, join(dir, 'far-lie')), liar);
      expect(r.exitCode).toBe(1);
      const report = JSON.parse(r.stdout) as MirrorReport;
      const failed = report.summary!.images.filter((i) => i.status === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      for (const i of failed) expect(i.error!.message).toContain(base);
      expect(report.delta!.missing).toEqual([base]);
      // Every other image went in; the components needing the base did not, not even their own layer.
      expect(report.summary!.images.filter((i) => i.status === 'copied').length).toBeGreaterThan(0);
      await expectNothingOf(
        liar,
        report.summary!.images,
        (await archiveJson(cut)).parts.flatMap((p) => p.blobs),
      );
    } finally {
      await liar.stop();
    }
  }, 300_000);
});

/**
 * Nothing of a failed image is at the destination: not its manifest, and, in a repository where
 * every image failed, none of the blobs the archive carried.
 */
async function expectNothingOf(reg: TestRegistry, images: ImageResult[], carried: string[]): Promise<void> {
  const client = clientFor(reg);
  try {
    const repoOf = (i: ImageResult) => splitRef(i.destination.slice(reg.host.length + 1));
    const failedRepos = new Set(images.filter((i) => i.status === 'failed').map((i) => repoOf(i)[0]));
    for (const i of images) if (i.status !== 'failed') failedRepos.delete(repoOf(i)[0]);
    expect(failedRepos.size).toBeGreaterThan(0);
    for (const i of images.filter((x) => x.status === 'failed')) {
      const [repo, ref] = repoOf(i);
      expect(await client.headManifest(repo, ref), i.destination).toBeUndefined();
    }
    for (const repo of failedRepos)
      for (const b of carried) expect(await client.hasBlob(repo, b), `${repo}@${b}`).toBe(false);
  } finally {
    await client.close();
  }
}

/** `repo:tag` or `repo@sha256:…` → [repo, ref]. */
function splitRef(s: string): [string, string] {
  const at = s.indexOf('@');
  if (at > 0) return [s.slice(0, at), s.slice(at + 1)];
  const colon = s.lastIndexOf(':');
  return [s.slice(0, colon), s.slice(colon + 1)];
}

/** The size of every blob of an archive's parts, from the tar headers (tar -tv). */
async function blobSizes(archive: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const p of (await archiveJson(archive)).parts) {
    const r = await execa('tar', ['-tvf', join(archive, p.file)]);
    for (const line of r.stdout.split('\n')) {
      const m = /\s(\d+)\s+\S+\s+\S+\s+blobs\/sha256\/([0-9a-f]{64})$/.exec(line);
      if (m) out.set(`sha256:${m[2]}`, Number(m[1]));
    }
  }
  return out;
}
