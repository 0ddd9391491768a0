/**
 * A destination directory that cannot take the mirror: on a read-only file system, or on one too
 * small for it. The error must name the cause and the path (never `[INTERNAL] ENOENT … mkdir`, which
 * is how Node reports a recursive mkdir below a read-only mount), exit 1, and print no stack trace.
 * The file systems are real mounts (a read-only bind mount, a 256 KiB tmpfs); where this machine
 * cannot mount, the tests are skipped with the reason.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommonError } from '../../src/util/errors.js';
import { airgap } from '../helpers/cli.js';
import { tempDir, writeIsc } from '../helpers/fixtures.js';
import { startHostileRegistry, type HostileRegistry } from '../helpers/hostile-registry.js';

/** Why this machine cannot make test mounts, or undefined when it can. */
async function mountUnavailable(): Promise<string | undefined> {
  const dir = await tempDir('airgap-mount-probe-');
  const r = await execa('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { reject: false });
  if (r.exitCode !== 0) return `cannot mount here: ${r.stderr.trim() || r.exitCode}`;
  await execa('umount', [dir], { reject: false });
  await rm(dir, { recursive: true, force: true });
  return undefined;
}

const unavailable = await mountUnavailable();
if (unavailable) console.warn(`fs-errors.test.ts skipped: ${unavailable}`);

describe.skipIf(unavailable)('a destination directory that cannot take the mirror', () => {
  let reg: HostileRegistry;
  let dir: string;
  let isc: string;
  const mounts: string[] = [];

  beforeAll(async () => {
    reg = await startHostileRegistry();
    dir = await tempDir();
    reg.image('big/app', 'v1', Buffer.alloc(1024 * 1024, 'z'));
    isc = await writeIsc(dir, [`${reg.host}/big/app:v1`]);
  });

  afterAll(async () => {
    for (const m of mounts.reverse()) await execa('umount', [m], { reject: false });
    await reg?.stop();
  });

  const mirrorTo = (archive: string) =>
    airgap(['mirror', '-c', isc, `file://${archive}`, '--ca-file', reg.caFile]);

  it('a read-only file system is named as such, with the path', async () => {
    const ro = join(dir, 'ro');
    await mkdir(ro);
    await execa('mount', ['--bind', ro, ro]);
    mounts.push(ro);
    await execa('mount', ['-o', 'remount,bind,ro', ro]);
    const r = await mirrorTo(join(ro, 'archive'));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`[${CommonError.FS_READ_ONLY}]`);
    expect(r.stderr).toContain(`${ro} is on a read-only file system`);
    expect(r.stderr).not.toContain('INTERNAL');
    expect(r.stderr).not.toContain('--verbose');
  }, 60_000);

  it('a file system too small for the mirror is named as out of space, and the run says where', async () => {
    const small = join(dir, 'small');
    await mkdir(small);
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', small]);
    mounts.push(small);
    const r = await mirrorTo(join(small, 'archive'));
    expect(r.exitCode).toBe(1);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toContain(CommonError.FS_NO_SPACE);
    expect(out).toContain(`no space left on the device holding ${join(small, 'archive')}`);
    expect(out).not.toContain('INTERNAL');
  }, 60_000);
});
