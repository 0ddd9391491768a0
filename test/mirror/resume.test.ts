import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { digestTag } from '../../src/mirror/plan.js';
import { airgap, spawnAirgap } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest } from '../helpers/skopeo.js';
import { testCertificates } from '../helpers/tls.js';

const MiB = 1024 * 1024;

/** kill -9 after a random delay, several times; then a run that must finish. */
async function killRepeatedly(
  args: string[],
  kills: number,
  minMs: number,
  maxMs: number,
): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; i < kills; i++) {
    const child = spawnAirgap(args);
    const delay = minMs + Math.floor(Math.random() * (maxMs - minMs));
    delays.push(delay);
    await sleep(delay);
    child.kill('SIGKILL');
    await child;
  }
  return delays;
}

describe('kill -9 at random points, then resume', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let up: FaultProxy;
  let built: BuiltImage[];
  let uniqueBytes = 0;
  let dir: string;
  let authFile: string;
  let isc: string;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(
      src,
      Array.from({ length: 6 }, (_, i) => ({
        repo: `big/img${i}`,
        tag: 'v1',
        layers: [{ id: 'base', size: 6 * MiB }, { size: (18 + i) * MiB }, { size: 3 * MiB }],
      })),
    );
    uniqueBytes = 6 * MiB + built.reduce((a, b) => a + b.bytes - 6 * MiB, 0);
    // A plain proxy in front of the destination counts the bytes uploaded across all runs.
    up = await startFaultProxy({ target: dst.url, caFile: dst.caFile, tls: testCertificates().server });
    dir = await tempDir();
    authFile = join(dir, 'auth.json');
    const auth = (r: TestRegistry) => ({
      auth: Buffer.from(`${r.username}:${r.password}`).toString('base64'),
    });
    await writeFile(authFile, JSON.stringify({ auths: { [src.host]: auth(src), [up.host]: auth(dst) } }), {
      mode: 0o600,
    });
    isc = await writeIsc(
      dir,
      built.map((b) => `${src.host}/${b.repo}:${b.tag}`),
    );
  });

  afterAll(async () => {
    await Promise.all([up?.stop(), src?.stop(), dst?.stop()]);
  });

  const common = () => [
    'mirror',
    '-c',
    isc,
    '--authfile',
    authFile,
    '--ca-file',
    src.caFile,
    '--cert-dir',
    '/nonexistent',
    '--parallel',
    '4',
  ];

  it('Ctrl-C ends a run with one line: what was done, and that running it again resumes', async () => {
    const args = [...common(), '--workspace', `file://${dir}/ws-int`, `docker://${up.host}/int`];
    const child = spawnAirgap(args);
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += String(d)));
    // Once the plan is recorded the copy is under way.
    for (let i = 0; i < 300 && !existsSync(join(dir, 'ws-int', 'plan.json')); i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(130);
    const lines = err.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^interrupted \(SIGINT\): (\d+ of 6 images done, )?[\d.]+ [KMG]?i?B moved; run the same command again: it resumes where this one stopped$/,
    );
    expect(err).not.toMatch(/at .*\.js:\d+/);
    const again = await airgap([...args, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).summary.failed).toBe(0);
  });

  it('registry → registry: the rerun completes, skopeo confirms every digest, little is sent twice', async () => {
    const args = [...common(), '--workspace', `file://${dir}/ws`, `docker://${up.host}/k`];
    const before = up.stats().bytesUp; // other tests here go through the same proxy
    await killRepeatedly(args, 3, 150, 900);
    const final = await airgap([...args, '--json']);
    expect(final.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    expect(final.exitCode).toBe(0);
    const report = JSON.parse(final.stdout);
    expect(report.summary.failed).toBe(0);
    for (const b of built) {
      expect(await skopeoDigest(`docker://${dst.skopeoHost}/k/${b.repo}:${b.tag}`, dst.skopeo)).toBe(
        b.digest,
      );
    }
    // Interrupted chunked uploads resumed from the journal: everything crossed at most ~1.5 times.
    const sent = up.stats().bytesUp - before;
    expect(sent).toBeGreaterThanOrEqual(uniqueBytes * 0.95);
    expect(sent).toBeLessThan(uniqueBytes * 1.6);
    // And nothing half-written is visible: every blob in the registry verifies when skopeo copies it out.
    const out = await tempDir();
    await skopeoCopy(`docker://${dst.skopeoHost}/k/${built[0]!.repo}:v1`, `dir:${out}`, { src: dst.skopeo });
  });

  it('registry → disk: partial downloads resume and no partial blob is ever under its digest', async () => {
    const out = join(dir, 'archive');
    const args = [...common(), `file://${out}`, '--archive-size', '40M'];
    await killRepeatedly(args, 2, 150, 700);
    const final = await airgap([...args, '--json']);
    expect(final.exitCode).toBe(0);
    const report = JSON.parse(final.stdout);
    expect(report.summary.failed).toBe(0);
    const verify = await airgap(['mirror', 'verify', `file://${out}`]);
    expect(verify.exitCode).toBe(0);
    expect(verify.stdout).toMatch(/archive is complete/);
    const partsDir = await readdir(out);
    expect(partsDir.filter((f) => f.endsWith('.tar')).length).toBeGreaterThan(1);
    // The archive goes into a registry with nothing from the source side.
    const d2m = await airgap([
      ...common(),
      '--from',
      `file://${out}`,
      `docker://${up.host}/fromdisk`,
      '--json',
    ]);
    expect(d2m.exitCode, d2m.stderr).toBe(0);
    for (const b of built) {
      expect(
        await skopeoDigest(
          `docker://${dst.skopeoHost}/fromdisk/${b.repo}:${b.tag ?? digestTag(b.digest)}`,
          dst.skopeo,
        ),
      ).toBe(b.digest);
    }
  });
});
