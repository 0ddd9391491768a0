/**
 * Fixtures shared by the mirror tests: synthetic images built into an OCI layout (lab/) and
 * pushed into a real source registry, and ImageSetConfigurations written to disk.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as yaml from 'js-yaml';
import { Header } from 'tar';
import { buildImages, type BuiltImage, type ImageSpec } from '../../lab/images.js';
import { CopyEngine } from '../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../src/mirror/copy/endpoints.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { RegistryClient } from '../../src/mirror/registry/client.js';
import type { TestRegistry } from './registry.js';

export async function tempDir(prefix = 'airgap-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** A client for a test registry, trusting the test CA and using its auth file. */
export function clientFor(
  reg: TestRegistry,
  extra: ConstructorParameters<typeof RegistryClient>[1] = {},
): RegistryClient {
  return new RegistryClient(reg.host, {
    caFiles: [reg.caFile],
    certDirs: [],
    credentials: { authFile: reg.authFile },
    retry: { baseDelayMs: 20, maxDelayMs: 200 },
    ...extra,
  });
}

/** Build images and push them into `reg` (by tag, or by digest for untagged specs). */
export async function seedRegistry(reg: TestRegistry, specs: ImageSpec[]): Promise<BuiltImage[]> {
  const layout = await OciLayout.open(join(await tempDir('airgap-seed-'), 'layout'));
  const built = await buildImages(layout, specs);
  const src = new LayoutEndpoint(layout);
  const client = clientFor(reg);
  const dest = new RegistryEndpoint(client);
  const engine = new CopyEngine({ parallel: 8 });
  const summary = await engine.run(
    built.map((b) => ({
      source: { endpoint: src, repo: b.repo, ref: b.tag ?? b.digest },
      dest: { endpoint: dest, repo: b.repo, ref: b.tag ?? b.digest },
      digest: b.digest,
    })),
  );
  await client.close();
  const failed = summary.images.filter((i) => i.status === 'failed');
  if (failed.length) throw new Error(`seeding failed: ${JSON.stringify(failed[0]?.error)}`);
  return built;
}

/** The reference of a built image in a registry. */
export function refOf(reg: { host: string }, b: BuiltImage): string {
  return b.tag ? `${reg.host}/${b.repo}:${b.tag}` : `${reg.host}/${b.repo}@${b.digest}`;
}

/** Write an ImageSetConfiguration (mirror.openshift.io/v2alpha1) whose `mirror:` is `mirror`; returns the path. */
export async function writeMirrorConfig(path: string, mirror: Record<string, unknown>): Promise<string> {
  await writeFile(
    path,
    yaml.dump({ kind: 'ImageSetConfiguration', apiVersion: 'mirror.openshift.io/v2alpha1', mirror }),
  );
  return path;
}

/** Write an ImageSetConfiguration with `additionalImages` (and optional blockedImages) to `dir/file`. */
export async function writeIsc(
  dir: string,
  images: (string | { name: string; targetRepo?: string; targetTag?: string })[],
  blocked: string[] = [],
  file = 'isc.yaml',
): Promise<string> {
  return writeMirrorConfig(join(dir, file), {
    additionalImages: images.map((i) => (typeof i === 'string' ? { name: i } : i)),
    ...(blocked.length ? { blockedImages: blocked.map((name) => ({ name })) } : {}),
  });
}

/**
 * One containers auth.json (0600) holding the credentials of every registry given, as a bastion's
 * single auth file holds its source and mirror registries; returns its path.
 */
export async function writeAuthFile(path: string, registries: readonly TestRegistry[]): Promise<string> {
  const auth = (r: TestRegistry) => Buffer.from(`${r.username}:${r.password}`).toString('base64');
  const auths = Object.fromEntries(registries.map((r) => [r.host, { auth: auth(r) }]));
  await writeFile(path, JSON.stringify({ auths }), { mode: 0o600 });
  return path;
}

/** A tar.gz holding exactly `files` (path → text) at its root, as the graph-data tarball has them. */
export function tarGz(files: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [path, text] of Object.entries(files)) {
    const body = Buffer.from(text);
    const h = Buffer.alloc(512);
    new Header({ path, mode: 0o644, size: body.length, mtime: new Date(0), type: 'File' }).encode(h, 0);
    parts.push(h, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

/**
 * A "billion laughs": nine levels of ten aliases each (anchors l0 … l9), about 1 KB that stands for
 * a billion list items, with `key: *l9` as its last line when a key is given.
 */
export function billionLaughs(key?: string): string[] {
  const lines = [`l0: &l0 [${Array(10).fill('"lol"').join(',')}]`];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(',')}]`,
    );
  if (key) lines.push(`${key}: *l9`);
  return lines;
}
