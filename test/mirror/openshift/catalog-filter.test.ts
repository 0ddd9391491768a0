import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { buildSyntheticCatalog, syntheticPackageName } from '../../../lab/catalog.js';
import type { IncludePackage, Operator } from '../../../src/mirror/isc/types.js';
import {
  filterCatalog,
  validateCatalog,
  type FilterResult,
} from '../../../src/mirror/openshift/catalog-filter.js';
import {
  FbcModelBuilder,
  loadFbcDir,
  parseFbcStream,
  type FbcModel,
} from '../../../src/mirror/openshift/fbc.js';
import { AirgapError } from '../../../src/util/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const fbcSamples = realdata('samples', 'fbc');
const J = 'jaeger-operator.v';

function op(packages: Partial<IncludePackage>[] = [], full = false): Operator {
  return {
    catalog: 'registry.example.com/redhat/redhat-operator-index:v4.18',
    full,
    skipDependencies: false,
    platforms: [],
    packages: packages.map((p) => ({ name: p.name ?? '', channels: [], ...p })),
  };
}

const kept = (r: FilterResult) => r.kept.map((k) => k.bundle.name);
const entries = (r: FilterResult, pkg: string, ch: string) =>
  r.model.packages
    .get(pkg)!
    .channels.get(ch)
    ?.entries.map((e) => e.name);

function thrown(fn: () => unknown): AirgapError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AirgapError);
    return e as AirgapError;
  }
  throw new Error('expected an error');
}

async function yamlModel(docs: string): Promise<FbcModel> {
  const b = new FbcModelBuilder();
  async function* one() {
    yield docs;
  }
  for await (const blob of parseFbcStream(one(), 'yaml', 'test.yaml')) b.add(blob);
  return b.build();
}

/** A package `p` with bundles p.v1 … p.v<n> at versions 1.0.0 … n.0.0, plus the given channels. */
function catalogYaml(channels: string, defaultChannel = 'a', n = 4): string {
  const bundles = Array.from(
    { length: n },
    (_, i) =>
      `---\nschema: olm.bundle\npackage: p\nname: p.v${i + 1}\nimage: r/p@sha256:${i + 1}\nproperties: [{type: olm.package, value: {packageName: p, version: ${i + 1}.0.0}}]`,
  );
  return `schema: olm.package\nname: p\ndefaultChannel: ${defaultChannel}\n${channels}\n${bundles.join('\n')}`;
}

withRealdata.describe('filterCatalog on the real samples (oc-mirror v2 rules)', () => {
  it('catalog only, full: false → the head of every channel of every package', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'operator-registry-foo'));
    const r = filterCatalog(model, op());
    expect(kept(r)).toEqual(['foo.v0.2.0']);
    expect(r.kept[0].why).toEqual([
      { channel: 'beta', reason: 'head' },
      { channel: 'stable', reason: 'head' },
    ]);
    expect(entries(r, 'foo', 'beta')).toEqual(['foo.v0.2.0']);
    // the head keeps its replaces/skips so installed operators still find their upgrade
    expect(r.model.packages.get('foo')!.channels.get('beta')!.entries[0].replaces).toBe('foo.v0.1.0');
    expect(r.images).toHaveLength(6);
    expect(r.images[0]).toBe('test.registry/foo-operator/foo-bundle:v0.2.0');
    expect(r.unmodified).toBe(false);
  });

  it('catalog only, full: true → the whole catalog, unmodified', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'operator-registry-foo'));
    const r = filterCatalog(model, op([], true));
    expect(r.unmodified).toBe(true);
    expect(r.model).toBe(model);
    expect(kept(r)).toEqual(['foo.v0.1.0', 'foo.v0.2.0']);
  });

  it('a listed package with full: true → every bundle of every channel', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const r = filterCatalog(model, op([{ name: 'jaeger-product' }], true));
    expect(kept(r)).toHaveLength(6);
    expect(entries(r, 'jaeger-product', 'stable')).toHaveLength(6);
    expect(r.images.length).toBeGreaterThan(6);
    expect(new Set(r.images).size).toBe(r.images.length);
  });

  it('a listed package → the head of each channel', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const r = filterCatalog(model, op([{ name: 'jaeger-product' }]));
    expect(kept(r)).toEqual([`${J}1.51.0-1`]);
  });

  it('package min/max with prerelease bounds → the chain between them, with the skipped respin', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const r = filterCatalog(
      model,
      op([{ name: 'jaeger-product', minVersion: '1.42.0-5', maxVersion: '1.47.1-5' }]),
    );
    expect(kept(r)).toEqual([`${J}1.42.0-5`, `${J}1.42.0-5-0.1687199951.p`, `${J}1.47.1-5`]);
    expect(entries(r, 'jaeger-product', 'stable')).toEqual([
      `${J}1.42.0-5`,
      `${J}1.42.0-5-0.1687199951.p`,
      `${J}1.47.1-5`,
    ]);
  });

  it('a release minVersion does not match prerelease versions (Masterminds semver)', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const r = filterCatalog(model, op([{ name: 'jaeger-product', minVersion: '1.30.0' }]));
    expect(kept(r)).toEqual([`${J}1.30.2`]);
  });

  it('channel-level minVersion → from that version up to the head of that channel', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const r = filterCatalog(
      model,
      op([{ name: 'jaeger-product', channels: [{ name: 'stable', minVersion: '1.47.1-5' }] }]),
    );
    expect(kept(r)).toEqual([`${J}1.47.1-5`, `${J}1.51.0-1`]);
    expect(r.kept.map((k) => k.why[0].reason)).toEqual(['in-range', 'in-range']);
  });

  it('min == max selects exactly that version; channels without it are dropped', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'operator-registry-foo'));
    const r = filterCatalog(model, op([{ name: 'foo', minVersion: '0.1.0', maxVersion: '0.1.0' }]));
    expect(kept(r)).toEqual(['foo.v0.1.0']);
    expect([...r.model.packages.get('foo')!.channels.keys()]).toEqual(['beta']);
    expect(r.warnings.join('\n')).toMatch(/channel "stable" has no bundle in the range/);
  });

  it('listed channels only; dropping the default channel needs a defaultChannel override', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'operator-registry-foo'));
    const e = thrown(() => filterCatalog(model, op([{ name: 'foo', channels: [{ name: 'stable' }] }])));
    expect(e.message).toMatch(
      /the default channel "beta" was filtered out, a new default channel must be configured/,
    );
    expect(e.exitCode).toBe(2);
    const r = filterCatalog(
      model,
      op([{ name: 'foo', defaultChannel: 'stable', channels: [{ name: 'stable' }] }]),
    );
    expect([...r.model.packages.get('foo')!.channels.keys()]).toEqual(['stable']);
    expect(r.model.packages.get('foo')!.defaultChannel).toBe('stable');
    const bad = thrown(() =>
      filterCatalog(model, op([{ name: 'foo', defaultChannel: 'beta', channels: [{ name: 'stable' }] }])),
    );
    expect(bad.message).toMatch(/override "beta" is not among the mirrored channels/);
  });

  it('only listed packages are kept; an unknown package or channel is a usage error with a guess', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const e = thrown(() => filterCatalog(model, op([{ name: 'jaeger' }])));
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('package "jaeger" is not in the catalog');
    expect(e.hint).toBe('did you mean "jaeger-product"?');
    const ch = thrown(() =>
      filterCatalog(model, op([{ name: 'jaeger-product', channels: [{ name: 'stabel' }] }])),
    );
    expect(ch.hint).toBe('did you mean "stable"?');
  });
});

describe('version ranges keep the channel valid', () => {
  const channel = [
    '---\nschema: olm.channel\npackage: p\nname: a\nentries:',
    '  - {name: p.v1}',
    '  - {name: p.v2, replaces: p.v1}',
    '  - {name: p.v3, replaces: p.v1, skips: [p.v2]}',
    '  - {name: p.v4, replaces: p.v3}',
  ].join('\n');

  it('includes an out-of-range bundle when the in-range one is only reachable through it', async () => {
    const model = await yamlModel(catalogYaml(channel));
    const r = filterCatalog(model, op([{ name: 'p', minVersion: '2.0.0', maxVersion: '2.5.0' }]));
    expect(kept(r)).toEqual(['p.v2', 'p.v3']);
    expect(r.kept.map((k) => k.why[0].reason)).toEqual(['in-range', 'upgrade-path']);
    expect(r.warnings.join('\n')).toMatch(/including "p.v3" \(3.0.0\): outside the range/);
  });

  it('refuses a range that empties the default channel', async () => {
    const model = await yamlModel(catalogYaml(channel));
    const e = thrown(() => filterCatalog(model, op([{ name: 'p', minVersion: '9.0.0' }])));
    expect(e.message).toMatch(/leaves the default channel "a" empty/);
  });
});

describe('validateCatalog', () => {
  const ch = (name: string, lines: string[]) =>
    `---\nschema: olm.channel\npackage: p\nname: ${name}\nentries:\n${lines.join('\n')}`;

  it('accepts a heads-only channel whose head replaces a bundle that is not there', async () => {
    const model = await yamlModel(
      catalogYaml(ch('a', ['  - {name: p.v4, replaces: p.v3, skips: [p.v2]}']), 'a', 4),
    );
    model.packages.get('p')!.bundles = new Map([['p.v4', model.packages.get('p')!.bundles.get('p.v4')!]]);
    expect(() => validateCatalog(model)).not.toThrow();
  });

  it('catches an empty channel', async () => {
    const model = await yamlModel(
      catalogYaml(
        `${ch('a', ['  - {name: p.v1}'])}\n${ch('b', ['  []'])}`.replace('entries:\n  []', 'entries: []'),
        'a',
        1,
      ),
    );
    const e = thrown(() => validateCatalog(model));
    expect(e.code).toBe(MirrorError.CATALOG_INVALID);
    expect(e.where).toBe('package "p" channel "b"');
    expect(e.message).toMatch(/the channel is empty/);
  });

  it('catches a default channel that is not in the catalog', async () => {
    const model = await yamlModel(catalogYaml(ch('a', ['  - {name: p.v1}']), 'gone', 1));
    const e = thrown(() => validateCatalog(model));
    expect(e.message).toMatch(/default channel "gone" is not in the catalog/);
    expect(e.hint).toMatch(/one of: a/);
  });

  it('catches two heads', async () => {
    const model = await yamlModel(catalogYaml(ch('a', ['  - {name: p.v1}', '  - {name: p.v2}']), 'a', 2));
    const e = thrown(() => validateCatalog(model));
    expect(e.message).toMatch(/multiple channel heads: p.v1, p.v2/);
  });

  it('catches a dangling replaces that breaks the chain, and an entry whose bundle was not kept', async () => {
    const model = await yamlModel(
      catalogYaml(ch('a', ['  - {name: p.v1}', '  - {name: p.v3, replaces: p.v2}']), 'a', 3),
    );
    const e = thrown(() => validateCatalog(model));
    expect(e.hint).toMatch(/"p.v3" replaces "p.v2", which is not in the channel/);
    const missing = await yamlModel(
      catalogYaml(ch('a', ['  - {name: p.v1}', '  - {name: p.v9, replaces: p.v1}']), 'a', 1),
    );
    expect(thrown(() => validateCatalog(missing)).message).toMatch(
      /entry "p.v9" has no bundle in the catalog/,
    );
  });

  it('catches a cycle', async () => {
    const model = await yamlModel(
      catalogYaml(
        ch('a', [
          '  - {name: p.v3}',
          '  - {name: p.v1, replaces: p.v2}',
          '  - {name: p.v2, replaces: p.v1, skips: [p.v3]}',
        ]),
        'a',
        3,
      ),
    );
    const e = thrown(() => validateCatalog(model));
    expect(e.message).toMatch(/no channel head|cycle/);
  });
});

describe('synthetic catalogs', () => {
  it('filter to the expected heads', async () => {
    const dir = await tempDir();
    const built = await buildSyntheticCatalog({
      dir,
      packages: 6,
      channelsPerPackage: 3,
      bundlesPerChannel: (p, c) => 1 + ((p + c) % 9),
      registry: 'lab.example.com/ops',
    });
    const r = filterCatalog(await loadFbcDir(dir), op());
    expect(kept(r).sort()).toEqual([...built.heads.values()].sort());
    for (const [key, head] of built.heads) {
      const [pkg, ch] = key.split('/');
      expect(entries(r, pkg, ch)).toEqual([head]);
    }
    expect(r.images).toContain(
      `lab.example.com/ops/common/kube-rbac-proxy@${r.images.find((i) => i.includes('kube-rbac-proxy'))!.split('@')[1]}`,
    );
    expect(r.images.filter((i) => i.includes('kube-rbac-proxy'))).toHaveLength(1);
  });

  it('range filtering walks the respin skips of a long channel', async () => {
    const dir = await tempDir();
    await buildSyntheticCatalog({
      dir,
      packages: 1,
      channelsPerPackage: 1,
      bundlesPerChannel: 12,
      registry: 'r',
    });
    const name = syntheticPackageName(0);
    const r = filterCatalog(await loadFbcDir(dir), op([{ name, minVersion: '1.2.0', maxVersion: '1.6.0' }]));
    // 1.3.0 replaces 1.1.0 and skips 1.2.0; 1.7.0 replaces 1.5.0 and skips 1.6.0 (so 1.7.0 is needed to reach it)
    expect(kept(r)).toEqual(
      ['1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0', '1.7.0'].map((v) => `${name}.v${v}`),
    );
  });

  it('parses and filters 300 packages / 5,000 bundles', async () => {
    const dir = await tempDir();
    const built = await buildSyntheticCatalog({
      dir,
      packages: 300,
      channelsPerPackage: 2,
      bundlesPerChannel: (p, c) => (p * 2 + c < 200 ? 9 : 8),
      registry: 'lab.example.com/big',
    });
    expect(built.bundles).toBe(5000);
    const model = await loadFbcDir(dir);
    const r = filterCatalog(model, op());
    expect(r.kept).toHaveLength(600);
    const listed = filterCatalog(
      model,
      op([{ name: syntheticPackageName(7), channels: [{ name: 'stable-v2', minVersion: '2.3.0' }] }]),
    );
    expect(kept(listed)).toEqual([...built.packages[7].channels[1].bundles.slice(3)].sort());
  });
});
