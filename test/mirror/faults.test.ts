import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { digestTag } from '../../src/mirror/plan.js';
import { runMirror } from '../../src/mirror/run.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest } from '../helpers/skopeo.js';
import { testCertificates } from '../helpers/tls.js';

const MiB = 1024 * 1024;

/** An auth file whose entries for the proxies carry the real registries' credentials. */
async function authFor(dir: string, pairs: [string, TestRegistry][]): Promise<string> {
  const auths: Record<string, { auth: string }> = {};
  for (const [host, reg] of pairs)
    auths[host] = { auth: Buffer.from(`${reg.username}:${reg.password}`).toString('base64') };
  const path = join(dir, 'auth.json');
  await writeFile(path, JSON.stringify({ auths }), { mode: 0o600 });
  return path;
}

describe('mirroring through a faulty network', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let srcProxy: FaultProxy;
  let dstProxy: FaultProxy;
  let built: BuiltImage[];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [
      { repo: 'app/a', tag: 'v1', layers: [{ id: 'base', size: 2 * MiB }, { size: 20 * MiB }] },
      {
        repo: 'app/b',
        tag: 'v1',
        layers: [{ id: 'base', size: 2 * MiB }, { size: 3 * MiB }, { size: 500_000 }],
      },
      {
        repo: 'app/c',
        tag: 'v1',
        format: 'docker',
        layers: [{ id: 'base', size: 2 * MiB }, { size: 1 * MiB }],
      },
      { repo: 'app/d', layers: [{ id: 'base', size: 2 * MiB }, { size: 18 * MiB }] },
      { repo: 'app/e', tag: 'multi', arches: ['amd64', 'arm64'], layers: [{ size: 2 * MiB }] },
    ]);
    const tls = testCertificates().server;
    [srcProxy, dstProxy] = await Promise.all([
      startFaultProxy({ target: src.url, caFile: src.caFile, tls }),
      startFaultProxy({ target: dst.url, caFile: dst.caFile, tls }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([srcProxy?.stop(), dstProxy?.stop(), src?.stop(), dst?.stop()]);
  });

  /** Mirror `images` from the source proxy into `<dest proxy>/<prefix>`, collecting the warnings. */
  async function mirrorThroughProxies(prefix: string, images: BuiltImage[]) {
    const dir = await tempDir();
    const authFile = await authFor(dir, [
      [srcProxy.host, src],
      [dstProxy.host, dst],
    ]);
    const isc = await writeIsc(
      dir,
      images.map((b) =>
        b.tag ? `${srcProxy.host}/${b.repo}:${b.tag}` : `${srcProxy.host}/${b.repo}@${b.digest}`,
      ),
    );
    const warnings: string[] = [];
    const report = await runMirror({
      config: isc,
      destination: `docker://${dstProxy.host}/${prefix}`,
      workspace: `file://${dir}/ws`,
      authFile,
      caFiles: [src.caFile],
      certDir: '/nonexistent',
      retry: { baseDelayMs: 20, maxDelayMs: 200 },
      progress: (e) => {
        if (e.type === 'warning') warnings.push(e.message);
      },
    });
    return { report, warnings };
  }

  it('survives resets, 5xx, 429 with Retry-After, truncated, corrupted and slow bodies; skopeo confirms every digest', async () => {
    const blobGet = { method: 'GET', path: /\/blobs\/sha256:/ };
    srcProxy.setRules([
      { match: { path: /\/manifests\// }, fault: 'status', status: 503, times: 2 },
      { match: { path: /\/manifests\// }, fault: 'retry-after', retryAfterSeconds: 1, times: 1 },
      { match: blobGet, fault: 'corrupt', times: 2 },
      { match: blobGet, fault: 'reset', afterBytes: 256 * 1024, times: 2 },
      { match: blobGet, fault: 'truncate', afterBytes: 100_000, times: 2 },
      { match: blobGet, fault: 'slow', delayMs: 300, afterBytes: 64 * 1024, times: 1 },
      { fault: 'status', status: 502, times: 2, every: 7 },
    ]);
    dstProxy.setRules([
      { match: { method: 'POST' }, fault: 'status', status: 503, times: 2 },
      { match: { method: 'PATCH' }, fault: 'reset', times: 2 },
      { match: { method: 'PUT', path: /\/blobs\/uploads\// }, fault: 'status', status: 500, times: 2 },
      { match: { method: 'GET', path: /\/manifests\// }, fault: 'reset', times: 2 },
      {
        match: { method: 'PUT', path: /\/manifests\// },
        fault: 'retry-after',
        retryAfterSeconds: 1,
        times: 1,
      },
    ]);
    // A watchdog: if the run ever stalls, say where (the proxies' last requests), then fail.
    const watchdog = setTimeout(() => {
      const tail = (p: FaultProxy) => p.stats().log.slice(-25);
      console.error('STALLED', JSON.stringify({ src: tail(srcProxy), dst: tail(dstProxy) }, null, 1));
    }, 45_000);
    const { report } = await mirrorThroughProxies('m', built).finally(() => clearTimeout(watchdog));
    expect(report.summary?.images.filter((i) => i.status === 'failed').map((i) => i.error)).toEqual([]);
    expect(report.summary?.copied).toBe(built.length);
    // Every rule fired: the faults really happened.
    expect(srcProxy.stats().byRule.every((n) => n > 0)).toBe(true);
    expect(dstProxy.stats().byRule.every((n) => n > 0)).toBe(true);

    // skopeo reads the exact digests back, and copying every image out re-verifies every blob digest.
    const out = await tempDir();
    for (const b of built) {
      const ref = `docker://${dst.skopeoHost}/m/${b.repo}:${b.tag ?? digestTag(b.digest)}`;
      expect(await skopeoDigest(ref, dst.skopeo)).toBe(b.digest);
      await skopeoCopy(ref, `dir:${join(out, b.repo.replace('/', '_'))}`, { src: dst.skopeo, all: true });
    }
    const copied = await readFile(join(out, 'app_a', 'manifest.json'));
    expect(copied.length).toBeGreaterThan(0);
  });
  it('never stores a corrupted blob: the mismatch is caught, said, and the blob fetched again', async () => {
    srcProxy.setRules([{ match: { method: 'GET', path: /\/blobs\/sha256:/ }, fault: 'corrupt', times: 3 }]);
    dstProxy.setRules([]);
    const { report, warnings } = await mirrorThroughProxies('corrupt', built.slice(0, 2));
    expect(report.summary?.failed).toBe(0);
    expect(srcProxy.stats().byRule[0]).toBe(3);
    expect(warnings.filter((w) => /hashes to sha256:/.test(w)).length).toBe(3);
    for (const b of built.slice(0, 2)) {
      expect(await skopeoDigest(`docker://${dst.skopeoHost}/corrupt/${b.repo}:${b.tag}`, dst.skopeo)).toBe(
        b.digest,
      );
    }
  });
});
