import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { runMirror } from '../../src/mirror/run.js';
import { validateAgainstCrd } from '../helpers/crd.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { withRealCrds } from '../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';

describe('cluster resources written by a mirror run', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];
  let dir: string;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [
      { repo: 'team/app', tag: 'v1', layers: [{ size: 50_000 }] },
      { repo: 'team/pinned', layers: [{ size: 40_000 }] },
    ]);
    dir = await tempDir();
  });

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  it('writes the IDMS and ITMS, and a registries.conf that lets skopeo pull the original references from the mirror with the source gone', async () => {
    const { readFile: rf, writeFile } = await import('node:fs/promises');
    const auths = {
      ...JSON.parse(await rf(src.authFile, 'utf8')).auths,
      ...JSON.parse(await rf(dst.authFile, 'utf8')).auths,
    };
    const authFile = join(dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths }), { mode: 0o600 });
    const isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
    const report = await runMirror({
      config: isc,
      destination: `docker://${dst.host}/mirror`,
      workspace: `file://${dir}/ws`,
      authFile,
      caFiles: [src.caFile],
      certDir: '/nonexistent',
    });
    expect(report.summary?.failed).toBe(0);
    const crDir = join(dir, 'ws', 'cluster-resources');
    expect(report.clusterResources?.map((f) => f.slice(crDir.length + 1)).sort()).toEqual([
      'idms-oc-mirror.yaml',
      'itms-oc-mirror.yaml',
      'mapping.txt',
      'registries.conf',
    ]);

    const idms = loadAll(await readFile(join(crDir, 'idms-oc-mirror.yaml'), 'utf8'));
    const itms = loadAll(await readFile(join(crDir, 'itms-oc-mirror.yaml'), 'utf8'));
    expect(idms).toHaveLength(1);
    expect(itms).toHaveLength(1);
    expect(JSON.stringify(idms[0])).toContain(`${dst.host}/mirror/team`);
    const conf = parseToml(await readFile(join(crDir, 'registries.conf'), 'utf8')) as {
      registry?: unknown[];
    };
    expect(conf.registry?.length).toBeGreaterThan(0);

    // The proof a cluster node would give: with the source registry gone, the original references
    // resolve through the mirror that registries.conf names.
    await src.stop();
    const viaMirror = {
      registriesConf: join(crDir, 'registries.conf'),
      authFile,
      certDir: dst.skopeo.certDir,
    };
    const pinned = built.find((b) => !b.tag)!;
    expect(await skopeoDigest(`docker://${src.host}/${pinned.repo}@${pinned.digest}`, viaMirror)).toBe(
      pinned.digest,
    );
    const tagged = built.find((b) => b.tag)!;
    expect(await skopeoDigest(`docker://${src.host}/${tagged.repo}:${tagged.tag}`, viaMirror)).toBe(
      tagged.digest,
    );
  });

  withRealCrds.it('the IDMS and ITMS it wrote validate against the real CRDs', async () => {
    const crDir = join(dir, 'ws', 'cluster-resources');
    const [idms] = loadAll(await readFile(join(crDir, 'idms-oc-mirror.yaml'), 'utf8'));
    const [itms] = loadAll(await readFile(join(crDir, 'itms-oc-mirror.yaml'), 'utf8'));
    expect(validateAgainstCrd('config.openshift.io_imagedigestmirrorsets.crd.yaml', idms)).toEqual([]);
    expect(validateAgainstCrd('config.openshift.io_imagetagmirrorsets.crd.yaml', itms)).toEqual([]);
  });
});
