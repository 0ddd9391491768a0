/**
 * The tree we test is the tree we support: every package in package-lock.json must run on the
 * oldest Node airgap says it runs on (package.json engines), or `npm ci` on such a machine warns
 * EBADENGINE and installs code that may not run there (.npmrc makes that warning an error).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

describe('dependencies', () => {
  it('the suite runs on the host Node, not the runtime a release packs (node_modules/.bin/node)', async () => {
    const { stdout } = await execa('node', ['-p', 'process.execPath']);
    expect(stdout).not.toContain('node_modules');
    expect(process.execPath).not.toContain('node_modules');
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
    expect(await readFile(join(REPO_ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});
