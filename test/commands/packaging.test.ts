/**
 * The tree we test is the tree we support. The suite runs on the Node 24 runtime the lockfile pins
 * (what the single-file executable carries); every package in package-lock.json must run on the
 * oldest Node airgap says it runs on (package.json engines), or the release tarball would carry
 * code that does not run on a Node it accepts. (npm itself may run on an older host Node: it only
 * installs; scripts/runtime.sh picks the Node everything runs on.)
 */
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../helpers/cli.js';

describe('dependencies', () => {
  it('the suite runs on the Node 24 runtime the lockfile pins, and nothing shadows the host Node', async () => {
    const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const runtime = `node-linux-${process.arch}`;
    const pinned = lock.packages[`node_modules/${runtime}`]?.version;
    expect(pinned).toMatch(/^24\./);
    expect(process.version).toBe(`v${pinned}`);
    const bin = join(REPO_ROOT, 'node_modules', runtime, 'bin', 'node');
    expect(await realpath(process.execPath)).toBe(await realpath(bin));
    // The node a test's child process finds on PATH is the same runtime (scripts/runtime.sh).
    const { stdout } = await execa('node', ['-p', 'process.version']);
    expect(stdout).toBe(`v${pinned}`);
    // No `node` link in node_modules/.bin: `npx node` is the host's Node, never this one by accident.
    await expect(lstat(join(REPO_ROOT, 'node_modules', '.bin', 'node'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('engines is exactly the newest floor of what the product uses, and the build targets it', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
    };
    // The packages the product carries (not dev, not the pinned runtimes): their oldest Node each.
    const floors = Object.entries(lock.packages)
      .filter(([name, p]) => name !== '' && !p.dev && !name.includes('node-linux-'))
      .map(([, p]) => (Array.isArray(p.engines) ? undefined : p.engines?.node))
      .filter((range): range is string => range !== undefined)
      .map((range) => semver.minVersion(range)!.version);
    const newest = floors.sort(semver.compare).at(-1)!;
    expect(pkg.engines.node).toBe(`>=${newest}`);
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    const dist = await readFile(join(REPO_ROOT, 'scripts', 'dist.mjs'), 'utf8');
    expect(dist).toContain('target: `node${floor}`');
  });

  it('every locked package supports the oldest Node airgap supports', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
    };
    const floor = semver.minVersion(pkg.engines.node)!.version;
    const refused = Object.entries(lock.packages)
      .filter(([, p]) => {
        const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
        return node !== undefined && !semver.satisfies(floor, node);
      })
      .map(([name, p]) => `${name}@${p.version} needs node ${(p.engines as { node: string }).node}`);
    expect(refused).toEqual([]);
  });

  it('the checkout started by another Node hands over to the pinned runtime, and its exit code comes back', async () => {
    const host = ['/usr/bin/node', '/usr/local/bin/node'].find(
      (p) => existsSync(p) && p !== process.execPath,
    );
    if (!host) return; // no other Node on this machine: nothing to hand over from
    const r = await execa(host, [BIN, 'version', '--json'], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ node: process.version, distribution: 'package' });
    const usage = await execa(host, [BIN, 'mirror', '--no-such-flag'], { reject: false });
    expect(usage.exitCode).toBe(2);
  });

  it('the checkout refuses a Node older than engines with the reason, not a stack trace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airgap-old-node-'));
    try {
      const old = join(dir, 'old-node.mjs');
      await writeFile(
        old,
        "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.19.0' } });\n",
      );
      const r = await execa(process.execPath, ['--import', old, BIN, '--version'], { reject: false });
      const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
        engines: { node: string };
      };
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        `error: airgap needs Node ${pkg.engines.node.replace('>=', '')} or later; this is Node 18.19.0`,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
