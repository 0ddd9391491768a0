/**
 * `airgap mirror check` through the real CLI against real registries: complete after a run, and
 * each way a mirror can be short named with the command that fixes it: an image missing, a tag
 * moved to another image, cluster resources that send a node elsewhere.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { refOf, seedRegistry, tempDir, writeIsc, writeAuthFile } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy } from '../helpers/skopeo.js';

describe('airgap mirror check', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let dir: string;
  let authFile: string;
  let built: BuiltImage[];
  let isc: string;
  const ws = () => join(dir, 'ws');
  /** The source's CA is kept: the source registry is stopped halfway (its files go with it). */
  const access = () => [
    '--authfile',
    authFile,
    '--ca-file',
    join(dir, 'src-ca.crt'),
    '--ca-file',
    dst.caFile,
  ];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [
      { repo: 'team/api', tag: 'v1', layers: [{ size: 30_000 }] },
      { repo: 'team/web', tag: 'v2', layers: [{ size: 20_000 }] },
      { repo: 'tools/cli', tag: 'v3', layers: [{ size: 10_000 }] },
    ]);
    dir = await tempDir('airgap-check-');
    await writeFile(join(dir, 'src-ca.crt'), await readFile(src.caFile));
    authFile = await writeAuthFile(join(dir, 'auth.json'), [src, dst]);
    isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws()}`,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  it('checks an ImageSetConfiguration alone, with no workspace, and writes nothing', async () => {
    const before = await readdir(dir, { recursive: true });
    const r = await airgap(['mirror', 'check', '-c', isc, `docker://${dst.host}/m`, ...access()]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`docker://${dst.host}/m is complete: 3 image(s) at their digests`);
    expect(await readdir(dir, { recursive: true })).toEqual(before);
  });

  it('says a mirror is complete after a run, cluster resources included, and exits 0', async () => {
    await src.stop(); // the check needs nothing from the source side
    const r = await airgap([
      'mirror',
      'check',
      '--workspace',
      `file://${ws()}`,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `docker://${dst.host}/m is complete: 3 image(s) at their digests, and the cluster resources lead to them`,
    );
  });

  it('names what is missing, a tag moved elsewhere, and a resource that misleads a node, with the command that fixes it', async () => {
    // Another prefix holds nothing: every image is missing.
    const empty = await airgap([
      'mirror',
      'check',
      '--plan',
      join(ws(), 'plan.json'),
      '--workspace',
      `file://${join(dir, 'ws2')}`,
      `docker://${dst.host}/empty`,
      ...access(),
      '--json',
    ]);
    expect(empty.exitCode).toBe(1);
    const report = JSON.parse(empty.stdout);
    expect(report.complete).toBe(false);
    expect(report.counts).toMatchObject({ present: 0, missing: 3 });
    expect(report.fix).toBe(
      `airgap mirror --plan ${join(ws(), 'plan.json')} --workspace file://${join(dir, 'ws2')} docker://${dst.host}/empty`,
    );

    // The web tag now names the cli image; and registries.conf sends team/api somewhere empty.
    const [, web, cli] = built;
    await skopeoCopy(
      `docker://${dst.skopeoHost}/m/${cli!.repo}:${cli!.tag}`,
      `docker://${dst.skopeoHost}/m/${web!.repo}:${web!.tag}`,
      dst.skopeo,
    );
    const confPath = join(ws(), 'cluster-resources', 'registries.conf');
    const conf = await readFile(confPath, 'utf8');
    expect(conf).toContain(`${dst.host}/m/team`);
    await writeFile(confPath, conf.replaceAll(`${dst.host}/m/team`, `${dst.host}/elsewhere/team`));
    const r = await airgap([
      'mirror',
      'check',
      '--workspace',
      `file://${ws()}`,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `OTHER-DIGEST +${dst.host}/m/team/web:v2 .*: the tag names sha256:[0-9a-f]{64}, the plan ${web!.digest}`,
      ),
    );
    expect(r.stdout).toContain(
      `RESOURCE     ${src.host}/team/api:v1 → ${dst.host}/elsewhere/team/api: registries.conf sends it to ${dst.host}/elsewhere/team/api, which does not hold it`,
    );
    expect(r.stdout).toContain(
      `to fetch what is missing: airgap mirror --plan ${join(ws(), 'plan.json')} --workspace file://${ws()} docker://${dst.host}/m`,
    );
  });

  it('bad input: not a registry, or a workspace with no plan', async () => {
    const file = await airgap(['mirror', 'check', `file://${dir}/x`]);
    expect(file.exitCode).toBe(2);
    expect(file.stderr).toContain('airgap mirror check checks a registry');
    const none = await airgap([
      'mirror',
      'check',
      '--workspace',
      `file://${join(dir, 'nothing')}`,
      `docker://${dst.host}/m`,
      ...access(),
    ]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('holds no plan.json');
  });
});
