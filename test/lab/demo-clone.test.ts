/**
 * The README's first command works for anyone who clones the project: `npm run demo` in a fresh
 * clone with nothing beside it (no realdata: no real CRDs, no samples) runs to the end. The clone
 * is of the committed HEAD; it borrows this checkout's node_modules through a link (no test reaches
 * the npm registry, and scripts/setup.sh does not reinstall through a link).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { realdataBeside } from '../../lab/realdata.js';
import { REPO_ROOT } from '../helpers/cli.js';

const run = promisify(execFile);

describe('npm run demo in a bare clone', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs to the end without the realdata, and says that the real CRDs are not checked', async () => {
    dir = await mkdtemp(join(tmpdir(), 'airgap-clone-'));
    const clone = join(dir, 'airgap');
    await run('git', ['clone', '--quiet', '--no-hardlinks', REPO_ROOT, clone]);
    await symlink(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'));
    expect(existsSync(realdataBeside(clone))).toBe(false);
    // Whatever points this checkout at the reference material does not reach the clone.
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('AIRGAP_') || k.startsWith('VITEST')) delete env[k];
    const { stdout, stderr } = await run('bash', ['scripts/demo.sh'], {
      cwd: clone,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`demo failed in the clone:\n${e.stderr ?? ''}\n${(e.stdout ?? '').slice(-4000)}`);
    });
    expect(stdout).toContain('Demo complete');
    expect(stderr + stdout).toMatch(/validation against the real CRDs is off/i);
  }, 600_000);
});
