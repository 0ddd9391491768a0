/**
 * Operator dependencies followed through the catalog (olm.package.required, olm.gvk.required): what
 * is added and why, what cannot be, and `--no-dependencies` through the real CLI.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogImage } from '../../../lab/catalog-image.js';
import { buildImages } from '../../../lab/images.js';
import type { IncludePackage, Operator } from '../../../src/mirror/isc/types.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { parseDigest } from '../../../src/mirror/digest.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import {
  filterCatalog,
  validateCatalog,
  type FilterResult,
} from '../../../src/mirror/openshift/catalog-filter.js';
import { loadFbcDir, type FbcModel } from '../../../src/mirror/openshift/fbc.js';
import { parseSemverRange } from '../../../src/mirror/openshift/semver-range.js';
import { parseSemver } from '../../../src/mirror/isc/semver.js';
import { renderFbc } from '../../../src/mirror/openshift/catalog-render.js';
import type { MirrorReport } from '../../../src/mirror/run.js';
import { airgap } from '../../helpers/cli.js';
import { clientFor, tempDir, writeMirrorConfig } from '../../helpers/fixtures.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';

interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** One package: channels list versions oldest → newest (each replaces the one before it). */
interface PackageSpec {
  name: string;
  defaultChannel: string;
  channels: Record<string, string[]>;
  bundles: Record<string, { provides?: Gvk[]; requires?: [string, string][]; requiresGvk?: Gvk[] }>;
}

const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;
type ImageOf = (pkg: string, version: string, kind: 'bundle' | 'operator') => string;
const madeUpImage: ImageOf = (pkg, version, kind) =>
  `registry.redhat.io/odf4/${pkg}-${kind}-rhel9@${sha(`${pkg}/${version}/${kind}`)}`;

/**
 * `<package>/catalog.json` files as opm writes them (and as redhat-operator-index holds them):
 * concatenated 4-space indented objects, the package first, then channels, then bundles with their
 * properties in opm's order (olm.gvk, olm.gvk.required, olm.package, olm.package.required) and the
 * bundle image among the relatedImages with an empty name.
 */
function catalogFiles(specs: PackageSpec[], imageOf: ImageOf = madeUpImage): Record<string, string> {
  const files: Record<string, string> = {};
  for (const p of specs) {
    const objects: object[] = [
      {
        schema: 'olm.package',
        name: p.name,
        defaultChannel: p.defaultChannel,
        icon: {
          base64data: Buffer.from(`<svg>${p.name}</svg>`).toString('base64'),
          mediatype: 'image/svg+xml',
        },
      },
    ];
    for (const [channel, versions] of Object.entries(p.channels).sort()) {
      objects.push({
        schema: 'olm.channel',
        name: channel,
        package: p.name,
        entries: versions.map((v, i) => ({
          name: `${p.name}.v${v}`,
          ...(i > 0 ? { replaces: `${p.name}.v${versions[i - 1]}` } : {}),
          skipRange: `>=4.16.0 <${v}`,
        })),
      });
    }
    for (const [version, b] of Object.entries(p.bundles).sort()) {
      const bundleImage = imageOf(p.name, version, 'bundle');
      objects.push({
        schema: 'olm.bundle',
        name: `${p.name}.v${version}`,
        package: p.name,
        image: bundleImage,
        properties: [
          ...(b.provides ?? []).map((value) => ({ type: 'olm.gvk', value })),
          ...(b.requiresGvk ?? []).map((value) => ({ type: 'olm.gvk.required', value })),
          { type: 'olm.package', value: { packageName: p.name, version } },
          ...(b.requires ?? []).map(([packageName, versionRange]) => ({
            type: 'olm.package.required',
            value: { packageName, versionRange },
          })),
        ],
        relatedImages: [
          { name: '', image: bundleImage },
          { name: 'manager', image: imageOf(p.name, version, 'operator') },
        ],
      });
    }
    files[`${p.name}/catalog.json`] = objects.map((o) => `${JSON.stringify(o, null, 4)}\n`).join('');
  }
  return files;
}

async function loadFiles(files: Record<string, string>): Promise<FbcModel> {
  const dir = await tempDir();
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
  }
  return loadFbcDir(dir);
}

const STORAGE_CLUSTER = { group: 'ocs.openshift.io', version: 'v1', kind: 'StorageCluster' };
const NOOBAA = { group: 'noobaa.io', version: 'v1alpha1', kind: 'NooBaa' };
const CSI_ADDONS_NODE = { group: 'csiaddons.openshift.io', version: 'v1alpha1', kind: 'CSIAddonsNode' };
const CEPH_CLUSTER = { group: 'ceph.rook.io', version: 'v1', kind: 'CephCluster' };

/** An ODF-shaped catalog: odf-operator needs odf-dependencies, which pulls in the component operators. */
const ODF: PackageSpec[] = [
  {
    name: 'odf-operator',
    defaultChannel: 'stable-4.18',
    channels: { 'stable-4.18': ['4.18.1', '4.18.2'] },
    bundles: {
      '4.18.1': { requires: [['odf-dependencies', '>=4.18.0 <4.19.0']] },
      '4.18.2': {
        provides: [{ group: 'odf.openshift.io', version: 'v1alpha1', kind: 'StorageSystem' }],
        requiresGvk: [NOOBAA],
        requires: [
          ['odf-dependencies', '>=4.18.0 <4.19.0'],
          ['odf-prometheus-operator', '>=4.18.0 <4.19.0'],
        ],
      },
    },
  },
  {
    name: 'mcg-operator',
    defaultChannel: 'stable-4.18',
    channels: { 'stable-4.18': ['4.18.3'] },
    bundles: { '4.18.3': { provides: [NOOBAA] } },
  },
  {
    // The default channel's head (4.19.0) is out of range: 4.18.2 from stable-4.18 is the pick.
    name: 'odf-dependencies',
    defaultChannel: 'stable-4.19',
    channels: { 'stable-4.18': ['4.18.0', '4.18.2'], 'stable-4.19': ['4.19.0'] },
    bundles: {
      '4.18.0': { requires: [['ocs-operator', '>=4.18.0 <4.19.0']] },
      '4.18.2': {
        requiresGvk: [CSI_ADDONS_NODE],
        requires: [
          ['ocs-operator', '>=4.18.0 <4.19.0'],
          ['mcg-operator', '>=4.18.0 <4.19.0'],
        ],
      },
      '4.19.0': { requires: [['ocs-operator', '>=4.19.0 <4.20.0']] },
    },
  },
  {
    name: 'ocs-operator',
    defaultChannel: 'stable-4.18',
    channels: { 'stable-4.18': ['4.18.0', '4.18.1'], 'stable-4.19': ['4.19.0'] },
    bundles: {
      '4.18.0': { provides: [STORAGE_CLUSTER] },
      '4.18.1': { provides: [STORAGE_CLUSTER], requiresGvk: [CEPH_CLUSTER] },
      '4.19.0': { provides: [STORAGE_CLUSTER] },
    },
  },
  {
    name: 'odf-csi-addons-operator',
    defaultChannel: 'stable-4.18',
    channels: { 'stable-4.18': ['4.18.0', '4.18.1'] },
    bundles: { '4.18.0': { provides: [CSI_ADDONS_NODE] }, '4.18.1': { provides: [CSI_ADDONS_NODE] } },
  },
  {
    name: 'odf-prometheus-operator',
    defaultChannel: 'stable-4.17',
    channels: { 'stable-4.17': ['4.17.3'] },
    bundles: { '4.17.3': {} },
  },
  {
    name: 'lvms-operator',
    defaultChannel: 'stable-4.18',
    channels: { 'stable-4.18': ['4.18.0'] },
    bundles: {
      '4.18.0': { provides: [{ group: 'lvm.topolvm.io', version: 'v1alpha1', kind: 'LVMCluster' }] },
    },
  },
];

function op(packages: Partial<IncludePackage>[], over: Partial<Operator> = {}): Operator {
  return {
    catalog: 'registry.redhat.io/redhat/redhat-operator-index:v4.18',
    full: false,
    skipDependencies: false,
    platforms: [],
    packages: packages.map((p) => ({ name: p.name ?? '', channels: [], ...p })),
    ...over,
  };
}

const keptNames = (r: FilterResult) => r.kept.map((k) => k.bundle.name);

describe('following operator dependencies through the catalog', () => {
  it('adds what the kept bundles need, transitively, and says why; the result is a valid catalog', async () => {
    const model = await loadFiles(catalogFiles(ODF));
    const r = filterCatalog(model, op([{ name: 'odf-operator' }, { name: 'mcg-operator' }]));

    expect(r.added).toEqual([
      {
        package: 'odf-dependencies',
        bundle: 'odf-dependencies.v4.18.2',
        version: '4.18.2',
        channel: 'stable-4.18',
        requiredBy: 'odf-operator 4.18.2',
        requirement: 'olm.package.required odf-dependencies >=4.18.0 <4.19.0',
      },
      {
        package: 'odf-csi-addons-operator',
        bundle: 'odf-csi-addons-operator.v4.18.1',
        version: '4.18.1',
        channel: 'stable-4.18',
        requiredBy: 'odf-dependencies 4.18.2',
        requirement: 'olm.gvk.required csiaddons.openshift.io/v1alpha1 CSIAddonsNode',
      },
      {
        package: 'ocs-operator',
        bundle: 'ocs-operator.v4.18.1',
        version: '4.18.1',
        channel: 'stable-4.18',
        requiredBy: 'odf-dependencies 4.18.2',
        requirement: 'olm.package.required ocs-operator >=4.18.0 <4.19.0',
      },
    ]);
    // mcg-operator (listed) already provides NooBaa and is in odf-dependencies' range: nothing added for it.
    expect(keptNames(r)).toEqual([
      'mcg-operator.v4.18.3',
      'ocs-operator.v4.18.1',
      'odf-csi-addons-operator.v4.18.1',
      'odf-dependencies.v4.18.2',
      'odf-operator.v4.18.2',
    ]);
    const deps = r.kept.find((k) => k.bundle.name === 'odf-dependencies.v4.18.2')!;
    expect(deps.why).toEqual([
      { channel: 'stable-4.18', reason: 'dependency', detail: 'required by odf-operator 4.18.2' },
    ]);

    // The added package keeps the channel its bundle came from, as that package's default channel.
    const odfDeps = r.model.packages.get('odf-dependencies')!;
    expect(odfDeps.defaultChannel).toBe('stable-4.18');
    expect([...odfDeps.channels.keys()]).toEqual(['stable-4.18']);
    expect(odfDeps.channels.get('stable-4.18')!.entries).toEqual([
      {
        name: 'odf-dependencies.v4.18.2',
        replaces: 'odf-dependencies.v4.18.0',
        skipRange: '>=4.16.0 <4.18.2',
      },
    ]);
    expect([...r.model.packages.keys()].sort()).toEqual([
      'mcg-operator',
      'ocs-operator',
      'odf-csi-addons-operator',
      'odf-dependencies',
      'odf-operator',
    ]);
    expect(() => validateCatalog(r.model)).not.toThrow();
    const rendered = renderFbc(r.model).get('odf-dependencies/catalog.json')!.toString();
    expect(rendered).toContain('"defaultChannel": "stable-4.18"');
    expect(rendered).not.toContain('odf-dependencies.v4.19.0');

    // Their images are mirrored: bundle and related images of every added bundle.
    expect(r.images).toContain(madeUpImage('odf-dependencies', '4.18.2', 'bundle'));
    expect(r.images).toContain(madeUpImage('ocs-operator', '4.18.1', 'operator'));
    expect(r.images).not.toContain(madeUpImage('odf-dependencies', '4.19.0', 'bundle'));
    expect(r.images).toHaveLength(10);
  });

  it('warns, naming the bundle, for what the catalog cannot give; nothing stops', async () => {
    const model = await loadFiles(catalogFiles(ODF));
    const r = filterCatalog(model, op([{ name: 'odf-operator' }, { name: 'mcg-operator' }]));
    expect(r.warnings).toEqual([
      'odf-operator 4.18.2 requires package odf-prometheus-operator >=4.18.0 <4.19.0, which the catalog does not have (it has odf-prometheus-operator 4.17.3): the operator will not install',
      'ocs-operator 4.18.1 requires the API ceph.rook.io/v1 CephCluster (olm.gvk.required), which no bundle in the catalog provides: the operator will not install',
    ]);
    expect(r.model.packages.has('odf-prometheus-operator')).toBe(false);
  });

  it('a package already kept in range adds nothing; out of range, the chain down to the version needed', async () => {
    const model = await loadFiles(catalogFiles(ODF));
    // ocs-operator listed: its head 4.18.1 meets odf-dependencies' range.
    const inRange = filterCatalog(
      model,
      op([
        { name: 'odf-dependencies', defaultChannel: 'stable-4.18', channels: [{ name: 'stable-4.18' }] },
        { name: 'ocs-operator' },
      ]),
    );
    expect(inRange.added.map((a) => a.bundle)).toEqual([
      'odf-csi-addons-operator.v4.18.1',
      'mcg-operator.v4.18.3',
    ]);

    // A range below the kept head of ocs-operator's stable-4.18: that channel keeps its head and
    // gains the older entry, so it stays one upgrade chain.
    const below = await loadFiles(
      catalogFiles([
        ...ODF.filter((p) => p.name !== 'odf-dependencies'),
        {
          name: 'odf-dependencies',
          defaultChannel: 'stable-4.18',
          channels: { 'stable-4.18': ['4.18.0'] },
          bundles: { '4.18.0': { requires: [['ocs-operator', '<4.18.1']] } },
        },
      ]),
    );
    const r = filterCatalog(below, op([{ name: 'odf-dependencies' }, { name: 'ocs-operator' }]));
    expect(r.added).toEqual([
      {
        package: 'ocs-operator',
        bundle: 'ocs-operator.v4.18.0',
        version: '4.18.0',
        channel: 'stable-4.18',
        requiredBy: 'odf-dependencies 4.18.0',
        requirement: 'olm.package.required ocs-operator <4.18.1',
      },
    ]);
    expect(
      r.model.packages
        .get('ocs-operator')!
        .channels.get('stable-4.18')!
        .entries.map((e) => e.name),
    ).toEqual(['ocs-operator.v4.18.0', 'ocs-operator.v4.18.1']);
    expect(() => validateCatalog(r.model)).not.toThrow();
  });

  it('--no-dependencies and skipDependencies: true keep only what is listed', async () => {
    const model = await loadFiles(catalogFiles(ODF));
    for (const r of [
      filterCatalog(model, op([{ name: 'odf-operator' }]), { dependencies: false }),
      filterCatalog(model, op([{ name: 'odf-operator' }], { skipDependencies: true })),
    ]) {
      expect(r.added).toEqual([]);
      expect(keptNames(r)).toEqual(['odf-operator.v4.18.2']);
      expect(r.warnings).toEqual([]);
    }
  });

  withRealdata.it(
    'on the real operator-registry sample: foo needs bar and test.bar/v1alpha1 Bar, which it does not have',
    async () => {
      const model = await loadFbcDir(join(realdata('samples', 'fbc'), 'operator-registry-foo'));
      const r = filterCatalog(model, op([{ name: 'foo' }]));
      expect(r.added).toEqual([]);
      expect(r.warnings).toEqual([
        'foo 0.2.0 requires the API test.bar/v1alpha1 Bar (olm.gvk.required), which no bundle in the catalog provides: the operator will not install',
        'foo 0.2.0 requires package bar <0.1.0, which the catalog does not have: the operator will not install',
      ]);
    },
  );
});

describe('version ranges (blang/semver v4, as OLM reads versionRange)', () => {
  const matches = (range: string, versions: string[]) => {
    const r = parseSemverRange(range);
    return versions.filter((v) => r(parseSemver(v)!));
  };
  const all = [
    '4.15.0',
    '4.15.9',
    '4.16.0-rc.1',
    '4.16.0',
    '4.17.2',
    '5.0.0',
    '1.34.1-5',
    '1.42.0-5+0.1687199951.p',
  ];

  it('reads comparators, AND, OR and x wildcards', () => {
    // A prerelease is an ordinary version to blang: 4.16.0-rc.1 is below 4.16.0, so in this range.
    expect(matches('>=4.15.0 <4.16.0', all)).toEqual(['4.15.0', '4.15.9', '4.16.0-rc.1']);
    expect(matches('>= 4.16.0', all)).toEqual(['4.16.0', '4.17.2', '5.0.0']);
    expect(matches('<4.15.5 || >=5.0.0', all)).toEqual([
      '4.15.0',
      '5.0.0',
      '1.34.1-5',
      '1.42.0-5+0.1687199951.p',
    ]);
    expect(matches('4.x', all)).toEqual(['4.15.0', '4.15.9', '4.16.0-rc.1', '4.16.0', '4.17.2']);
    expect(matches('<=4.15.x', all)).toEqual([
      '4.15.0',
      '4.15.9',
      '4.16.0-rc.1',
      '1.34.1-5',
      '1.42.0-5+0.1687199951.p',
    ]);
    expect(matches('>4.15.x', all)).toEqual(['4.16.0', '4.17.2', '5.0.0']);
    expect(matches('4.17.2', all)).toEqual(['4.17.2']);
    expect(matches('!=4.17.2 >=4.16.0', all)).toEqual(['4.16.0', '5.0.0']);
    // build metadata does not count when comparing
    expect(matches('=1.42.0-5', all)).toEqual(['1.42.0-5+0.1687199951.p']);
    expect(matches('>1.30.0 <2.0.0', all)).toEqual(['1.34.1-5', '1.42.0-5+0.1687199951.p']);
  });

  it('refuses what OLM refuses', () => {
    for (const bad of ['', '||', '>=1.0.0 ||', 'x', '>=v1.0.0', '>=4.15', '~1.2.3', '>=01.0.0'])
      expect(() => parseSemverRange(bad), bad).toThrow();
  });
});

describe('dependencies through the real CLI (airgap mirror plan)', () => {
  let reg: TestRegistry;
  let dir: string;
  let isc: string;
  const images = new Map<string, string>();

  const packages = (): PackageSpec[] =>
    ODF.filter((p) =>
      [
        'odf-operator',
        'mcg-operator',
        'odf-dependencies',
        'ocs-operator',
        'odf-csi-addons-operator',
        'odf-prometheus-operator',
      ].includes(p.name),
    );

  beforeAll(async () => {
    reg = await startRegistry();
    dir = await tempDir();
    const layout = await OciLayout.open(join(dir, 'layout'));
    // Every bundle and operator image the catalog names is a real image in the registry.
    const wanted: [string, string][] = [];
    for (const p of packages())
      for (const v of Object.keys(p.bundles))
        for (const kind of ['bundle', 'operator'] as const)
          wanted.push([`${p.name}/${v}/${kind}`, `odf4/${p.name}-${kind}-rhel9`]);
    const built = await buildImages(
      layout,
      wanted.map(([, repo]) => ({
        repo,
        format: 'docker' as const,
        layers: [{ id: 'odf-base', size: 4096 }, { size: 512 }],
      })),
    );
    wanted.forEach(([key], i) => images.set(key, `${reg.host}/${built[i]!.repo}@${built[i]!.digest}`));
    const catalog = await buildCatalogImage(layout, {
      files: catalogFiles(packages(), (pkg, version, kind) => images.get(`${pkg}/${version}/${kind}`)!),
      repo: 'redhat/redhat-operator-index',
      tag: 'v4.18',
      format: 'docker',
    });
    const client = clientFor(reg);
    const src = new LayoutEndpoint(layout);
    const dest = new RegistryEndpoint(client);
    const summary = await new CopyEngine({ parallel: 8 }).run([
      ...built.map((b) => ({
        source: { endpoint: src, repo: b.repo, ref: b.digest },
        dest: { endpoint: dest, repo: b.repo, ref: b.digest },
        digest: b.digest,
      })),
      {
        source: { endpoint: src, repo: catalog.repo, ref: catalog.tag },
        dest: { endpoint: dest, repo: catalog.repo, ref: catalog.tag },
        digest: parseDigest(catalog.digest, 'catalog'),
      },
    ]);
    await client.close();
    expect(summary.failed).toBe(0);
    isc = await writeMirrorConfig(join(dir, 'isc.yaml'), {
      operators: [
        {
          catalog: `${reg.host}/redhat/redhat-operator-index:v4.18`,
          packages: [{ name: 'odf-operator' }, { name: 'mcg-operator' }],
        },
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await reg?.stop();
  });

  const plan = (ws: string, ...extra: string[]) =>
    airgap([
      'mirror',
      'plan',
      '-c',
      isc,
      '--authfile',
      reg.authFile,
      '--ca-file',
      reg.caFile,
      '--cert-dir',
      '/nonexistent',
      '--workspace',
      `file://${join(dir, ws)}`,
      `docker://${reg.host}/mirror`,
      ...extra,
    ]);

  it('plans the packages odf-operator needs, each with the bundle that requires it', async () => {
    const text = await plan('ws-text');
    expect(text.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(
      'odf-dependencies 4.18.2 added: required by odf-operator 4.18.2 (olm.package.required odf-dependencies >=4.18.0 <4.19.0)',
    );
    expect(text.stdout).toContain(
      'ocs-operator 4.18.1 added: required by odf-dependencies 4.18.2 (olm.package.required ocs-operator >=4.18.0 <4.19.0)',
    );
    expect(text.stdout).toMatch(
      /odf-dependencies\.v4\.18\.2 4\.18\.2: stable-4\.18: dependency \(required by odf-operator 4\.18\.2\)/,
    );
    expect(text.stderr).toContain(
      'odf-operator 4.18.2 requires package odf-prometheus-operator >=4.18.0 <4.19.0, which the catalog does not have',
    );

    const json = await plan('ws-json', '--json');
    expect(json.exitCode).toBe(0);
    const report = JSON.parse(json.stdout) as MirrorReport;
    const cat = report.catalogs[0]!;
    expect(cat.packages.map((p) => p.name).sort()).toEqual([
      'mcg-operator',
      'ocs-operator',
      'odf-csi-addons-operator',
      'odf-dependencies',
      'odf-operator',
    ]);
    expect(cat.added!.map((a) => `${a.bundle} ← ${a.requiredBy}`)).toEqual([
      'odf-dependencies.v4.18.2 ← odf-operator 4.18.2',
      'odf-csi-addons-operator.v4.18.1 ← odf-dependencies 4.18.2',
      'ocs-operator.v4.18.1 ← odf-dependencies 4.18.2',
    ]);
    expect(report.warnings.join('\n')).toContain('odf-prometheus-operator >=4.18.0 <4.19.0');
    // The added bundles' images are in the plan, pinned to the digests in the registry.
    const sources = report.plan.map((p) => p.source);
    expect(sources).toContain(images.get('odf-dependencies/4.18.2/bundle'));
    expect(sources).toContain(images.get('ocs-operator/4.18.1/operator'));
    expect(sources).not.toContain(images.get('odf-dependencies/4.19.0/bundle'));
    const saved = JSON.parse(await readFile(report.planFile!, 'utf8'));
    expect(saved.catalogs[0].added).toHaveLength(3);
  });

  it('--no-dependencies plans only the listed packages', async () => {
    const r = await plan('ws-nodeps', '--no-dependencies', '--json');
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    const cat = report.catalogs[0]!;
    expect(cat.packages.map((p) => p.name).sort()).toEqual(['mcg-operator', 'odf-operator']);
    expect(cat.added).toBeUndefined();
    expect(report.warnings.join('\n')).not.toContain('requires');
    expect(report.plan.map((p) => p.source)).not.toContain(images.get('odf-dependencies/4.18.2/bundle'));
    expect(report.plan.filter((p) => p.kind === 'bundle')).toHaveLength(2);
  });
});
