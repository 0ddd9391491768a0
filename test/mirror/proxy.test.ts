import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { runMirror } from '../../src/mirror/run.js';
import { startConnectProxy, type ConnectProxy } from '../helpers/connect-proxy.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';

const PROXY_VARS = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
] as const;

describe('mirroring through an HTTPS proxy (HTTPS_PROXY / NO_PROXY)', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let proxy: ConnectProxy;
  let built: BuiltImage[];
  let authFile: string;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [{ repo: 'px/app', tag: 'v1', layers: [{ size: 100_000 }] }]);
    proxy = await startConnectProxy();
    const dir = await tempDir();
    authFile = join(dir, 'auth.json');
    const auths = {
      ...JSON.parse(await readFile(src.authFile, 'utf8')).auths,
      ...JSON.parse(await readFile(dst.authFile, 'utf8')).auths,
    };
    await writeFile(authFile, JSON.stringify({ auths }), { mode: 0o600 });
    for (const v of PROXY_VARS) saved[v] = process.env[v];
  });

  afterEach(() => {
    for (const v of PROXY_VARS) {
      if (saved[v] === undefined) delete process.env[v];
      else process.env[v] = saved[v];
    }
  });

  afterAll(async () => {
    await Promise.all([proxy?.stop(), src?.stop(), dst?.stop()]);
  });

  async function mirror(prefix: string) {
    const dir = await tempDir();
    const isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
    return runMirror({
      config: isc,
      destination: `docker://${dst.host}/${prefix}`,
      workspace: `file://${dir}/ws`,
      authFile,
      caFiles: [src.caFile],
      certDir: '/nonexistent',
    });
  }

  it('tunnels to both registries through the proxy, TLS verified end to end', async () => {
    for (const v of PROXY_VARS) delete process.env[v];
    process.env.HTTPS_PROXY = proxy.url;
    proxy.tunnels.length = 0;
    const report = await mirror('viaproxy');
    expect(report.summary?.failed).toBe(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([src.host, dst.host]));
    delete process.env.HTTPS_PROXY;
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/viaproxy/px/app:v1`, dst.skopeo)).toBe(
      built[0]!.digest,
    );
  });

  it('goes direct to hosts NO_PROXY names', async () => {
    for (const v of PROXY_VARS) delete process.env[v];
    process.env.https_proxy = proxy.url;
    process.env.no_proxy = dst.host;
    proxy.tunnels.length = 0;
    const report = await mirror('direct');
    expect(report.summary?.failed).toBe(0);
    expect(proxy.tunnels.every((t) => t === src.host)).toBe(true);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
  });
});
