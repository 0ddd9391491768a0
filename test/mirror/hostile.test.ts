/**
 * Hostile input through the real CLI: a registry that lies (test/helpers/hostile-registry.ts),
 * plans and archives built by the test to point outside themselves. Each test checks what a user
 * would notice: nothing outside the workspace created, changed or deleted (a canary file and a
 * listing of the tree around it, before and after), a clear error naming the input, a non-zero
 * exit, and no wait without end.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/mirror/errors.js';
import { PLAN_API_VERSION } from '../../src/mirror/plan.js';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { startHostileRegistry, type HostileRegistry } from '../helpers/hostile-registry.js';

const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Every path below `dir` with its size and modification time: what "nothing changed" is checked against. */
async function snapshot(dir: string, skip: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    const p = join(dir, entry);
    if (p === skip || p.startsWith(`${skip}/`)) continue;
    const s = await stat(p).catch(() => undefined);
    out.push(`${relative(dir, p)} ${s?.isDirectory() ? 'dir' : `${s?.size} ${s?.mtimeMs}`}`);
  }
  return out.sort();
}

describe('hostile input', () => {
  let reg: HostileRegistry;
  let dir: string;

  /** An ImageSetConfiguration naming one image of the hostile registry. */
  const iscFor = async (name: string, ref: string) => {
    const path = join(dir, `${name}.yaml`);
    await writeFile(
      path,
      yaml.dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: { additionalImages: [{ name: `${reg.host}/${ref}` }] },
      }),
    );
    return path;
  };

  beforeAll(async () => {
    reg = await startHostileRegistry();
    dir = await tempDir();
    // An image whose layer names a digest that walks out of any directory it is joined to.
    const config = Buffer.from(
      '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}',
    );
    reg.blob('evil/app', sha256(config), config);
    reg.blob('evil/app', 'sha256:../../../../canary', 'owned');
    reg.manifest('evil/app', 'v1', {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      bytes: JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: {
          mediaType: 'application/vnd.oci.image.config.v1+json',
          digest: sha256(config),
          size: config.length,
        },
        layers: [
          {
            mediaType: 'application/vnd.oci.image.layer.v1.tar',
            digest: 'sha256:../../../../canary',
            size: 5,
          },
        ],
      }),
    });
    // Manifests that never end, or end far past any real manifest, with no Content-Length.
    reg.manifest('big/chunked', 'v1', { chunkedBytes: 100 * 1024 * 1024 });
    reg.manifest('big/endless', 'v1', { endless: true });
  });

  afterAll(async () => {
    await reg?.stop();
  });

  it('a layer digest that walks out of the workspace touches nothing outside it, and is named', async () => {
    const base = join(dir, 'traversal');
    await mkdir(base, { recursive: true });
    // Where `<archive>/working-dir/layout/.airgap-partial/../../../../canary` lands.
    const canary = join(base, 'canary');
    await writeFile(canary, 'the user owns this');
    const archive = join(base, 'archive');
    const before = await snapshot(base, archive);

    const r = await airgap([
      'mirror',
      '-c',
      await iscFor('traversal', 'evil/app:v1'),
      `file://${archive}`,
      '--ca-file',
      reg.caFile,
      '--json',
    ]);
    expect(r.exitCode).toBe(1);
    expect(await readFile(canary, 'utf8')).toBe('the user owns this');
    expect(await snapshot(base, archive)).toEqual(before);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toContain(MirrorError.MIRROR_DIGEST_INVALID);
    expect(out).toContain('layers[0]');
    expect(out).toMatch(/\\?"sha256:\.\.\/\.\.\/\.\.\/\.\.\/canary\\?" is not a digest/);
    expect(out).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 60_000);

  it('a plan whose digest walks out is refused before anything is read or written', async () => {
    const plan = join(dir, 'evil-plan.json');
    await writeFile(
      plan,
      JSON.stringify({
        apiVersion: PLAN_API_VERSION,
        kind: 'MirrorPlan',
        releases: [],
        catalogs: [],
        blocked: [],
        warnings: [],
        images: [
          {
            kind: 'additional',
            origin: `${reg.host}/evil/app:v1`,
            source: `${reg.host}/evil/app@sha256:../../../etc/passwd`,
            digest: 'sha256:../../../etc/passwd',
            destRepo: 'evil/app',
            destTag: 'v1',
            byTag: true,
            byDigest: false,
            context: 'additionalImages[0]',
          },
        ],
      }),
    );
    const archive = join(dir, 'plan-archive');
    const r = await airgap(['mirror', '--plan', plan, `file://${archive}`, '--ca-file', reg.caFile]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('images[0].digest');
    expect(r.stderr).toContain('is not a digest');
    expect(reg.requests.some((q) => q.path.includes('passwd'))).toBe(false);
    await expect(stat(archive)).rejects.toThrow();
  }, 60_000);

  it('a symbolic link in a carried archive is refused, naming it; nothing is written through it', async () => {
    const archive = join(dir, 'linked-archive');
    const victim = join(dir, 'victim');
    await mkdir(archive, { recursive: true });
    await mkdir(victim, { recursive: true });
    await symlink(victim, join(archive, 'working-dir'));
    const r = await airgap([
      'mirror',
      '-c',
      await iscFor('linked', 'evil/app:v1'),
      '--from',
      `file://${archive}`,
      'docker://127.0.0.1:9/mirror',
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(MirrorError.ARCHIVE_UNSAFE_ENTRY);
    expect(r.stderr).toContain(`${join(archive, 'working-dir')} is a symbolic link`);
    expect(await readdir(victim)).toEqual([]);
  }, 60_000);

  it.each(['chunked', 'endless'])(
    'a %s manifest with no Content-Length is cut off at the 4 MiB limit, not read whole',
    async (kind) => {
      const started = Date.now();
      const r = await airgap([
        'mirror',
        '-c',
        await iscFor(kind, `big/${kind}:v1`),
        `file://${join(dir, `${kind}-archive`)}`,
        '--ca-file',
        reg.caFile,
        '--json',
      ]);
      expect(r.exitCode).toBe(1);
      expect(`${r.stdout}\n${r.stderr}`).toContain('over the 4 MiB a manifest may have');
      expect(Date.now() - started).toBeLessThan(30_000);
    },
    60_000,
  );
});
