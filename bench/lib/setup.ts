/**
 * Benchmark fixtures: registries (with their process id, to account their CPU), a source seeded
 * with synthetic images, and an auth file holding the credentials of both sides.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildImages, type BuiltImage, type ImageSpec } from '../../lab/images.js';
import { CopyEngine } from '../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../src/mirror/copy/endpoints.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { clientFor } from '../../test/helpers/fixtures.js';
import { startRegistry, type RegistryTokenAuth, type TestRegistry } from '../../test/helpers/registry.js';
import { findPid } from './proc.js';

export interface BenchRegistry {
  reg: TestRegistry;
  /** The docker-registry process, for its CPU time. */
  pid: number | undefined;
}

/**
 * A real registry (TLS + htpasswd, or bearer tokens from a token server like quay's) on 127.0.0.1
 * with its access log off: the log would cost the registry and this process work on every
 * request, and no method needs it.
 */
export async function startBenchRegistry(opts: { token?: RegistryTokenAuth } = {}): Promise<BenchRegistry> {
  const reg = await startRegistry({
    host: '127.0.0.1',
    extraConfig: { log: { accesslog: { disabled: true } } },
    ...(opts.token ? { token: opts.token } : {}),
  });
  const pid = await findPid(['docker-registry', join(dirname(reg.storageDir), 'config.yml')]);
  return { reg, pid };
}

/** Build `specs` into `layout` and push them into `reg` (by tag, or by digest). */
export async function seed(reg: TestRegistry, layout: OciLayout, specs: ImageSpec[]): Promise<BuiltImage[]> {
  const built = await buildImages(layout, specs);
  await push(reg, layout, built);
  return built;
}

/** Push images already in `layout` into `reg` with the copy engine (the seeding is not measured). */
export async function push(reg: TestRegistry, layout: OciLayout, built: BuiltImage[]): Promise<void> {
  const client = clientFor(reg);
  try {
    const src = new LayoutEndpoint(layout);
    const dest = new RegistryEndpoint(client);
    const summary = await new CopyEngine({ parallel: 8 }).run(
      built.map((b) => ({
        source: { endpoint: src, repo: b.repo, ref: b.tag ?? b.digest },
        dest: { endpoint: dest, repo: b.repo, ref: b.tag ?? b.digest },
        digest: b.digest,
      })),
    );
    const failed = summary.images.find((i) => i.status === 'failed');
    if (failed) throw new Error(`seeding ${failed.source} failed: ${JSON.stringify(failed.error)}`);
  } finally {
    await client.close();
  }
}

/** One auth.json holding the credentials of every registry given (and `extra`), as a bastion would have. */
export async function mergedAuth(
  path: string,
  regs: TestRegistry[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const auths: Record<string, unknown> = {};
  for (const r of regs) {
    const doc = JSON.parse(await readFile(r.authFile, 'utf8')) as { auths: Record<string, unknown> };
    Object.assign(auths, doc.auths);
  }
  Object.assign(auths, extra);
  await writeFile(path, JSON.stringify({ auths }, null, 2), { mode: 0o600 });
  return path;
}
