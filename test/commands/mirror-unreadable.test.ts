/**
 * An answer that is not "not there" is never read as missing, through the real CLI. The mirror
 * sits behind a fault proxy that answers one image's manifest 404 (missing), another's 401 (the
 * credentials refused for that repository) and a third's manifest by digest 500 (the registry
 * failing): `airgap mirror check` names the first missing and the other two "could not be
 * checked", with their causes, and `airgap mirror plan` does not count blobs it could not ask
 * about as blobs to send.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { testCertificates } from '../helpers/tls.js';

describe('a destination that does not answer is not a destination that lacks', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let proxy: FaultProxy;
  let dir: string;
  let authFile: string;
  let built: BuiltImage[];
  const ws = () => join(dir, 'ws');
  const access = () => ['--authfile', authFile, '--ca-file', src.caFile, '--ca-file', dst.caFile];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [
      { repo: 'team/api', tag: 'v1', layers: [{ id: 'base', size: 30_000 }, { size: 5_000 }] },
      { repo: 'team/web', tag: 'v2', layers: [{ size: 20_000 }] },
      { repo: 'tools/cli', tag: 'v3', layers: [{ size: 10_000 }] },
      { repo: 'team/api', tag: 'v9', layers: [{ id: 'base', size: 30_000 }, { size: 7_000 }] },
    ]);
    proxy = await startFaultProxy({ target: dst.url, caFile: dst.caFile, tls: testCertificates().server });
    dir = await tempDir('airgap-unreadable-');
    // The proxy is the mirror: its entry carries the real registry's credentials.
    const auth = (r: TestRegistry) => ({
      auth: Buffer.from(`${r.username}:${r.password}`).toString('base64'),
    });
    authFile = join(dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { [src.host]: auth(src), [proxy.host]: auth(dst) } }), {
      mode: 0o600,
    });
    const isc = await writeIsc(
      dir,
      built.slice(0, 3).map((b) => refOf(src, b)),
    );
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws()}`,
      `docker://${proxy.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([proxy?.stop(), src?.stop(), dst?.stop()]);
  });

  it('mirror check: 404 is missing; a refusal and a 500 could not be checked, named with their cause; exit 1', async () => {
    proxy.setRules([
      {
        match: { method: 'GET', path: /^\/v2\/m\/tools\/cli\/manifests\/v3$/ },
        fault: 'status',
        status: 404,
        times: Infinity,
      },
      {
        match: { method: 'GET', path: /^\/v2\/m\/team\/web\/manifests\/v2$/ },
        fault: 'status',
        status: 401,
        times: Infinity,
      },
      {
        match: { method: 'GET', path: /^\/v2\/m\/team\/api\/manifests\/sha256:/ },
        fault: 'status',
        status: 500,
        times: Infinity,
      },
    ]);
    try {
      const args = [
        'mirror',
        'check',
        '--workspace',
        `file://${ws()}`,
        `docker://${proxy.host}/m`,
        ...access(),
      ];
      const json = await airgap([...args, '--json']);
      expect(json.exitCode, json.stderr).toBe(1);
      const report = JSON.parse(json.stdout);
      expect(report.complete).toBe(false);
      expect(report.counts).toMatchObject({ present: 1, missing: 1, unreadable: 1 });
      const byName = Object.fromEntries(
        report.images.map((i: { destination: string }) => [i.destination.split('/m/')[1], i]),
      );
      expect(byName['tools/cli:v3']).toMatchObject({ status: 'missing' });
      expect(byName['team/web:v2']).toMatchObject({ status: 'unreadable' });
      expect(byName['team/web:v2'].problem).toMatch(/401|unauthori[sz]ed/i);
      // The cluster resource of team/api leads to a manifest the registry failed to answer for.
      expect(report.resources).toEqual([
        expect.objectContaining({
          original: `${src.host}/team/api:v1`,
          mirror: `${proxy.host}/m/team/api`,
          unreadable: true,
          problem: expect.stringMatching(/could not check whether .* holds it: .*500/),
        }),
      ]);
      expect(report.unreadable).toBe(2);

      const text = await airgap(args);
      expect(text.exitCode).toBe(1);
      expect(text.stdout).toMatch(new RegExp(`MISSING +${proxy.host}/m/tools/cli:v3 .*: not there`));
      expect(text.stdout).toMatch(
        new RegExp(
          `UNREADABLE +${proxy.host}/m/team/web:v2 .*: could not be checked: .*(401|unauthori[sz]ed)`,
          'i',
        ),
      );
      expect(text.stdout).toMatch(
        new RegExp(`UNREADABLE +${src.host}/team/api:v1 → ${proxy.host}/m/team/api: could not check whether`),
      );
      expect(text.stdout).not.toContain('which does not hold it');
      expect(text.stdout).toContain('1 missing');
      expect(text.stdout).toContain('2 could not be checked (not counted as missing)');
    } finally {
      proxy.setRules([]);
    }
  }, 90_000);

  it('mirror plan: a blob the destination fails to answer for is not counted as one to send', async () => {
    const v9 = built[3]!;
    const isc = await writeIsc(dir, [refOf(src, v9)], [], 'plan-isc.yaml');
    // m/team/api holds v1 (not v9): each blob of v9 is asked for, and every answer is a 500.
    proxy.setRules([
      {
        match: { method: 'GET', path: /^\/v2\/m\/team\/api\/blobs\/sha256:/ },
        fault: 'status',
        status: 500,
        times: Infinity,
      },
    ]);
    try {
      const r = await airgap([
        'mirror',
        'plan',
        '-c',
        isc,
        '--workspace',
        `file://${join(dir, 'plan-ws')}`,
        `docker://${proxy.host}/m`,
        ...access(),
        '--json',
      ]);
      const report = JSON.parse(r.stdout);
      expect(report.plan).toHaveLength(1);
      expect(report.plan[0].error).toMatch(
        /cannot tell whether the destination holds .*sha256:[0-9a-f]{64}: .*500/,
      );
      expect(report.measure).toMatchObject({ unmeasured: 1, blobs: 0, bytesToMove: 0 });

      const text = await airgap([
        'mirror',
        'plan',
        '-c',
        isc,
        '--workspace',
        `file://${join(dir, 'plan-ws')}`,
        `docker://${proxy.host}/m`,
        ...access(),
      ]);
      expect(text.stdout).toMatch(/\(cannot read: cannot tell whether the destination holds/);
      expect(text.stdout).toContain('1 image(s) could not be measured and are not counted');
    } finally {
      proxy.setRules([]);
    }
  }, 120_000);
});
