/**
 * Releases from the update graph and operator catalogs, end to end: a synthetic upstream (release
 * payloads, a catalog whose bundles are real images, an update service) in one real registry, the
 * real CLI mirroring it, and skopeo plus our own readers checking what arrived.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildUpstream, type Upstream } from '../../lab/upstream.js';
import { CopyEngine } from '../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../src/mirror/copy/endpoints.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { readCatalogImage } from '../../src/mirror/openshift/catalog-image.js';
import type { MirrorReport } from '../../src/mirror/run.js';
import { airgap } from '../helpers/cli.js';
import { validateAgainstCrd } from '../helpers/crd.js';
import { clientFor, tempDir } from '../helpers/fixtures.js';
import { withRealCrds } from '../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest, skopeoInspect } from '../helpers/skopeo.js';

describe('OpenShift releases and operator catalogs through the real CLI', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let up: Upstream;
  let dir: string;
  let authFile: string;
  let isc: string;

  const iscText = (over: Record<string, unknown> = {}) =>
    yaml.dump({
      kind: 'ImageSetConfiguration',
      apiVersion: 'mirror.openshift.io/v2alpha1',
      mirror: {
        platform: {
          channels: [{ name: up.channel, minVersion: '4.18.2', maxVersion: '4.18.3' }],
          graph: true,
          kubeVirtContainer: true,
        },
        operators: [
          {
            catalog: up.catalogRef,
            packages: [
              { name: 'lab-operator-000' },
              { name: 'lab-operator-001', defaultChannel: 'stable-v1', channels: [{ name: 'stable-v1' }] },
            ],
          },
        ],
        additionalImages: [{ name: up.ubiRef }],
        ...over,
      },
    });

  const common = () => [
    '--authfile',
    authFile,
    '--ca-file',
    src.caFile,
    '--cert-dir',
    '/nonexistent',
    '--graph-url',
    up.graph.url,
    '--graph-base-image',
    up.ubiRef,
    '--signature-url',
    up.signatureStore.url,
  ];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    dir = await tempDir();
    up = await buildUpstream({
      registry: src,
      dir: join(dir, 'upstream'),
      versions: ['4.18.1', '4.18.2', '4.18.3'],
    });
    authFile = join(dir, 'auth.json');
    const a = JSON.parse(await readFile(src.authFile, 'utf8'));
    const b = JSON.parse(await readFile(dst.authFile, 'utf8'));
    await writeFile(authFile, JSON.stringify({ auths: { ...a.auths, ...b.auths } }), { mode: 0o600 });
    isc = join(dir, 'isc.yaml');
    await writeFile(isc, iscText());
  }, 120_000);

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), up?.stop()]);
  });

  it('plans first: releases in range with their risk, catalog heads, every tag pinned, sizes measured', async () => {
    const r = await airgap([
      'mirror',
      'plan',
      '-c',
      isc,
      ...common(),
      '--workspace',
      `file://${dir}/ws-plan`,
      `docker://${dst.host}/ocp`,
      '--json',
    ]);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    expect(report.releases.map((x) => x.version)).toEqual(['4.18.2', '4.18.3']);
    expect(report.warnings.join('\n')).toContain('4.18.2 → 4.18.3 is conditional: LabRisk');
    expect(report.catalogs).toHaveLength(1);
    expect(report.catalogs[0]!.rebuilt).toBe(true);
    // lab-operator-000: heads of its 2 channels; lab-operator-001: head of stable-v1 only.
    expect(report.catalogs[0]!.bundles).toBe(3);
    const kinds = new Map<string, number>();
    for (const p of report.plan) kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
    expect(kinds.get('release')).toBe(2);
    expect(kinds.get('release-component')).toBe(2 * 6 + 2); // components plus the KubeVirt disk of each
    expect(kinds.get('graph')).toBe(1);
    expect(kinds.get('catalog')).toBe(1);
    expect(kinds.get('bundle')).toBe(3);
    expect(kinds.get('additional')).toBe(1);
    expect(report.measure!.bytesToMove).toBeGreaterThan(0);
    expect(report.measure!.presentImages).toBe(0);
    const plan = JSON.parse(await readFile(report.planFile!, 'utf8'));
    for (const e of plan.images) expect(e.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  }, 120_000);

  it('mirrors registry → registry with oc-mirror names and writes every cluster resource', async () => {
    const ws = join(dir, 'ws');
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      ...common(),
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/ocp`,
    ]);
    expect(r.stderr + r.stdout).not.toContain('FAILED');
    expect(r.exitCode).toBe(0);

    const opts = dst.skopeo;
    const rel = up.releases[2]!;
    expect(await skopeoDigest(`docker://${dst.host}/ocp/openshift/release-images:4.18.3-x86_64`, opts)).toBe(
      rel.digest,
    );
    const comp = rel.components[0]!;
    const compName = 'cluster-version-operator';
    expect(
      await skopeoDigest(`docker://${dst.host}/ocp/openshift/release:4.18.3-x86_64-${compName}`, opts),
    ).toBe(comp.slice(comp.indexOf('@') + 1));
    expect(
      await skopeoDigest(
        `docker://${dst.host}/ocp/openshift/release:4.18.3-x86_64-kube-virt-container`,
        opts,
      ),
    ).toBe(up.kubevirtRef.slice(up.kubevirtRef.indexOf('@') + 1));
    // 4.18.1 is below minVersion: not mirrored.
    await expect(
      skopeoDigest(`docker://${dst.host}/ocp/openshift/release-images:4.18.1-x86_64`, opts),
    ).rejects.toThrow();
    // The graph-data image built on the base (one layer more), as the plan pinned it.
    const plan = JSON.parse(await readFile(join(ws, 'plan.json'), 'utf8')) as {
      images: { kind: string; digest: string }[];
    };
    const graphDigest = plan.images.find((e) => e.kind === 'graph')!.digest;
    expect(await skopeoDigest(`docker://${dst.host}/ocp/openshift/graph-image:latest`, opts)).toBe(
      graphDigest,
    );
    const graph = await skopeoInspect(`docker://${dst.host}/ocp/openshift/graph-image:latest`, opts);
    const base = await skopeoInspect(`docker://${src.host}/ubi9/ubi:latest`, src.skopeo);
    expect(graph.Layers).toHaveLength(base.Layers.length + 1);

    // The catalog at its own path and tag, rebuilt: only the two packages, only the kept bundles.
    const catalogDigest = await skopeoDigest(
      `docker://${dst.host}/ocp/redhat/redhat-operator-index:v4.18`,
      opts,
    );
    expect(catalogDigest).not.toBe(up.catalogDigest);
    const layout = await OciLayout.open(join(dir, 'readback'));
    const client = clientFor(dst);
    await new CopyEngine().run([
      {
        source: {
          endpoint: new RegistryEndpoint(client),
          repo: 'ocp/redhat/redhat-operator-index',
          ref: catalogDigest,
        },
        dest: { endpoint: new LayoutEndpoint(layout), repo: 'catalog', ref: 'v4.18' },
      },
    ]);
    await client.close();
    const { model } = await readCatalogImage(layout, catalogDigest);
    expect([...model.packages.keys()].sort()).toEqual(['lab-operator-000', 'lab-operator-001']);
    expect([...model.packages.get('lab-operator-001')!.channels.keys()]).toEqual(['stable-v1']);
    const heads = [...model.packages.values()].flatMap((p) => [...p.bundles.keys()]).sort();
    expect(heads).toEqual(
      [
        up.catalog.heads.get('lab-operator-000/stable-v1'),
        up.catalog.heads.get('lab-operator-000/stable-v2'),
        up.catalog.heads.get('lab-operator-001/stable-v1'),
      ].sort(),
    );
    // Each kept bundle's images arrived (by digest, under their own path).
    for (const b of model.packages.get('lab-operator-000')!.bundles.values()) {
      const d = b.image.slice(b.image.indexOf('@') + 1);
      const repo = b.image.slice(b.image.indexOf('/') + 1, b.image.indexOf('@'));
      expect(await skopeoDigest(`docker://${dst.host}/ocp/${repo}@${d}`, opts)).toBe(d);
    }

    const cr = join(ws, 'cluster-resources');
    const idms = yaml.loadAll(await readFile(join(cr, 'idms-oc-mirror.yaml'), 'utf8')) as {
      metadata: { name: string };
      spec: { imageDigestMirrors: { source: string; mirrors: string[] }[] };
    }[];
    expect(idms.map((o) => o.metadata.name).sort()).toEqual(['idms-operator-0', 'idms-release-0']);
    const release = idms.find((o) => o.metadata.name === 'idms-release-0')!.spec.imageDigestMirrors;
    expect(release).toContainEqual({
      source: `${src.host}/openshift-release-dev/ocp-release`,
      mirrors: [`${dst.host}/ocp/openshift/release-images`],
    });
    expect(release).toContainEqual({
      source: `${src.host}/openshift-release-dev/ocp-v4.0-art-dev`,
      mirrors: [`${dst.host}/ocp/openshift/release`],
    });
    const cs = yaml.load(await readFile(join(cr, 'cs-redhat-operator-index-v4-18.yaml'), 'utf8')) as {
      spec: { image: string };
    };
    expect(cs.spec.image).toBe(`${dst.host}/ocp/redhat/redhat-operator-index:v4.18`);
    const osus = yaml.load(await readFile(join(cr, 'updateService.yaml'), 'utf8')) as {
      spec: { releases: string; graphDataImage: string };
    };
    expect(osus.spec.releases).toBe(`${dst.host}/ocp/openshift/release-images`);
    expect(osus.spec.graphDataImage).toContain(`${dst.host}/ocp/openshift/graph-image`);

    // Nothing left to do the second time.
    const again = await airgap([
      'mirror',
      '-c',
      isc,
      ...common(),
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/ocp`,
      '--json',
    ]);
    expect(again.exitCode).toBe(0);
    const rep = JSON.parse(again.stdout) as MirrorReport;
    expect(rep.summary!.copied).toBe(0);
    expect(rep.summary!.bytes).toBe(0);
  }, 180_000);

  withRealCrds.it('the cluster resources it wrote validate against the real CRDs', async () => {
    const cr = join(dir, 'ws', 'cluster-resources');
    const read = async (f: string) => yaml.loadAll(await readFile(join(cr, f), 'utf8'));
    const idms = await read('idms-oc-mirror.yaml');
    expect(idms).toHaveLength(2);
    for (const o of idms)
      expect(validateAgainstCrd('config.openshift.io_imagedigestmirrorsets.crd.yaml', o)).toEqual([]);
    const [cs] = await read('cs-redhat-operator-index-v4-18.yaml');
    expect(validateAgainstCrd('operators.coreos.com_catalogsources.yaml', cs)).toEqual([]);
    const [cc] = await read('cc-redhat-operator-index-v4-18.yaml');
    expect(validateAgainstCrd('olm.operatorframework.io_clustercatalogs.yaml', cc)).toEqual([]);
  });

  it('goes to disk and back without -c: the archive carries its plan; another configuration is refused', async () => {
    const out = join(dir, 'archive');
    const m2d = await airgap(['mirror', '-c', isc, ...common(), `file://${out}`]);
    expect(m2d.exitCode).toBe(0);
    const d2m = await airgap([
      'mirror',
      '--authfile',
      authFile,
      '--ca-file',
      dst.caFile,
      '--cert-dir',
      '/nonexistent',
      '--from',
      `file://${out}`,
      `docker://${dst.host}/fromdisk`,
      '--json',
    ]);
    expect(
      d2m.exitCode,
      JSON.stringify(
        JSON.parse(d2m.stdout)
          .summary?.images.filter((i: { status: string }) => i.status === 'failed')
          .slice(0, 3),
      ),
    ).toBe(0);
    const rep = JSON.parse(d2m.stdout) as MirrorReport;
    expect(rep.summary!.failed).toBe(0);
    expect(
      await skopeoDigest(`docker://${dst.host}/fromdisk/openshift/release-images:4.18.2-x86_64`, dst.skopeo),
    ).toBe(up.releases[1]!.digest);

    const other = join(dir, 'other.yaml');
    await writeFile(other, iscText({ additionalImages: [] }));
    const bad = await airgap([
      'mirror',
      '-c',
      other,
      '--authfile',
      authFile,
      '--from',
      `file://${out}`,
      `docker://${dst.host}/x`,
    ]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('different ImageSetConfiguration');
  }, 180_000);

  it('says clearly what is wrong with the channel, the range, the package, the catalog and the graph endpoint', async () => {
    const run = async (over: Record<string, unknown>, extra: string[] = []) => {
      const f = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
      await writeFile(f, iscText(over));
      const args = common();
      if (extra.includes('--graph-url')) args.splice(args.indexOf('--graph-url'), 2);
      return airgap([
        'mirror',
        'plan',
        '-c',
        f,
        ...args,
        ...extra,
        '--workspace',
        `file://${dir}/ws-bad`,
        `docker://${dst.host}/bad`,
      ]);
    };
    const noOps = { operators: [], additionalImages: [] };
    const channel = await run({ ...noOps, platform: { channels: [{ name: 'stable-9.99' }] } });
    expect(channel.exitCode).toBe(2);
    expect(channel.stderr).toContain('stable-9.99');
    const range = await run({
      ...noOps,
      platform: { channels: [{ name: up.channel, minVersion: '4.19.0' }] },
    });
    expect(range.exitCode).toBe(2);
    expect(range.stderr).toMatch(/4\.19\.0/);
    const pkg = await run({
      platform: undefined,
      additionalImages: [],
      operators: [{ catalog: up.catalogRef, packages: [{ name: 'no-such-operator' }] }],
    });
    expect(pkg.exitCode).toBe(2);
    expect(pkg.stderr).toContain('no-such-operator');
    expect(pkg.stderr).toMatch(/isc.*\.yaml:\d+|bad-.*\.yaml:\d+/);
    const nofbc = await run({
      platform: undefined,
      additionalImages: [],
      operators: [{ catalog: up.ubiRef }],
    });
    expect(nofbc.exitCode).toBe(1);
    expect(nofbc.stderr).toMatch(/file-based catalog|no FBC|configs/i);
    const graph = await run({ ...noOps, platform: { channels: [{ name: up.channel }] } }, [
      '--graph-url',
      'http://127.0.0.1:9/api/upgrades_info/v1/graph',
    ]);
    expect(graph.exitCode).toBe(1);
    expect(graph.stderr).toContain('127.0.0.1:9');
    for (const r of [channel, range, pkg, nofbc, graph]) expect(r.stderr).not.toMatch(/\n\s+at .*:\d+:\d+/);
  }, 120_000);

  it('runs a saved plan: the pinned digests, with targetCatalog/targetTag naming the catalog', async () => {
    const f = join(dir, 'target.yaml');
    await writeFile(
      f,
      iscText({
        platform: undefined,
        additionalImages: [],
        operators: [
          {
            catalog: up.catalogRef,
            targetCatalog: 'mirrored/operator-index',
            targetTag: 'v4.18-hosted',
            packages: [{ name: 'lab-operator-002' }],
          },
        ],
      }),
    );
    const ws = join(dir, 'ws-saved');
    const planned = await airgap([
      'mirror',
      'plan',
      '-c',
      f,
      ...common(),
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/saved`,
    ]);
    expect(planned.exitCode, planned.stderr).toBe(0);
    expect(planned.stdout).toContain('→ mirrored/operator-index:v4.18-hosted');
    const run = await airgap([
      'mirror',
      '--plan',
      join(ws, 'plan.json'),
      ...common(),
      '--workspace',
      `file://${ws}`,
      `docker://${dst.host}/saved`,
      '--json',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const plan = JSON.parse(await readFile(join(ws, 'plan.json'), 'utf8')) as {
      images: { kind: string; digest: string }[];
    };
    const catalog = plan.images.find((e) => e.kind === 'catalog')!;
    expect(
      await skopeoDigest(`docker://${dst.host}/saved/mirrored/operator-index:v4.18-hosted`, dst.skopeo),
    ).toBe(catalog.digest);
    const cs = yaml.load(
      await readFile(join(ws, 'cluster-resources', 'cs-operator-index-v4-18-hosted.yaml'), 'utf8'),
    ) as { spec: { image: string } };
    expect(cs.spec.image).toBe(`${dst.host}/saved/mirrored/operator-index:v4.18-hosted`);
  }, 120_000);

  it('with the source registry gone, a node resolves release components through the mirror (registries.conf)', async () => {
    const conf = join(dir, 'ws', 'cluster-resources', 'registries.conf');
    await src.stop();
    const viaMirror = { registriesConf: conf, authFile, certDir: dst.skopeo.certDir };
    const component = up.releases[2]!.components[1]!; // by digest, as the payload names it
    expect(await skopeoDigest(`docker://${component}`, viaMirror)).toBe(
      component.slice(component.indexOf('@') + 1),
    );
    const payload = up.releases[2]!.payload;
    expect(await skopeoDigest(`docker://${payload}`, viaMirror)).toBe(up.releases[2]!.digest);
  }, 60_000);
});
