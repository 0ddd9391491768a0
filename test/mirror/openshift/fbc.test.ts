import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { buildSyntheticCatalog } from '../../../lab/catalog.js';
import {
  FbcModelBuilder,
  loadFbcDir,
  parseFbcStream,
  type FbcBlob,
} from '../../../src/mirror/openshift/fbc.js';
import { AirgapError } from '../../../src/util/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const fbcSamples = realdata('samples', 'fbc');

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const buf = Buffer.from(text, 'utf8');
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function collect(gen: AsyncIterable<FbcBlob>): Promise<FbcBlob[]> {
  const out: FbcBlob[] = [];
  for await (const b of gen) out.push(b);
  return out;
}

async function parseError(p: Promise<unknown>): Promise<AirgapError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AirgapError);
  return e as AirgapError;
}

withRealdata.describe('real file-based catalogs', () => {
  it('parses the foo test catalog (YAML, several documents)', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'operator-registry-foo'));
    const foo = model.packages.get('foo')!;
    expect(foo.defaultChannel).toBe('beta');
    expect([...foo.channels.keys()].sort()).toEqual(['beta', 'stable']);
    expect(foo.channels.get('beta')!.entries[1]).toEqual({
      name: 'foo.v0.2.0',
      replaces: 'foo.v0.1.0',
      skips: ['foo.v0.1.1', 'foo.v0.1.2'],
      skipRange: '<0.2.0',
    });
    const b = foo.bundles.get('foo.v0.2.0')!;
    expect(b.version).toBe('0.2.0');
    expect(b.image).toBe('test.registry/foo-operator/foo-bundle:v0.2.0');
    expect(b.relatedImages).toHaveLength(6);
    expect(b.relatedImages).toContainEqual({
      name: 'other',
      image: 'test.registry/foo-operator/foo-other:v0.2.0',
    });
    expect(foo.where).toBe('foo/index.yaml:1');
  });

  it('parses the jaeger-product catalog (concatenated JSON, 2 MB)', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index'));
    const jaeger = model.packages.get('jaeger-product')!;
    expect(jaeger.defaultChannel).toBe('stable');
    expect(jaeger.channels.get('stable')!.entries.map((e) => e.name)).toHaveLength(6);
    expect(jaeger.bundles.size).toBe(6);
    expect(jaeger.bundles.get('jaeger-operator.v1.42.0-5-0.1687199951.p')!.version).toBe(
      '1.42.0-5+0.1687199951.p',
    );
    expect(jaeger.bundles.get('jaeger-operator.v1.51.0-1')!.relatedImages).toHaveLength(13);
    expect(jaeger.channels.get('stable')!.entries[3].skips).toEqual(['jaeger-operator.v1.42.0-5']);
  });

  it('parses the node-observability catalog and records where each package starts', async () => {
    const model = await loadFbcDir(join(fbcSamples, 'redhat-operator-index-v4.14'));
    const noo = model.packages.get('node-observability-operator')!;
    expect(noo.where).toBe('node-observability-operator/catalog.json:1');
    expect([...noo.bundles.keys()]).toEqual(['node-observability-operator.v0.2.0']);
    expect(noo.bundles.get('node-observability-operator.v0.2.0')!.properties.map((p) => p.type)).toContain(
      'olm.gvk',
    );
  });
});

describe('the streaming JSON splitter', () => {
  const objects = [
    {
      schema: 'olm.package',
      name: 'p',
      defaultChannel: 'a',
      description: 'braces } { and "quotes" \\ and ünïcödé ✓',
    },
    { schema: 'olm.channel', package: 'p', name: 'a', entries: [{ name: 'p.v1' }] },
    {
      schema: 'olm.bundle',
      package: 'p',
      name: 'p.v1',
      image: 'r/p@sha256:1',
      properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }],
    },
    { schema: 'vendor.custom', data: [[1, 2], { x: '[' }] },
  ];
  const text = objects.map((o, i) => JSON.stringify(o, null, i % 2 === 0 ? 4 : 0)).join('\n\n');
  const startLines = objects.map((_, i) => {
    const before = objects.slice(0, i).map((o, j) => JSON.stringify(o, null, j % 2 === 0 ? 4 : 0));
    return i === 0 ? 1 : before.join('\n\n').split('\n').length + 2;
  });

  for (const size of [1, 3, 7, 64, 1 << 16]) {
    it(`yields the same objects for ${size}-byte chunks (multi-byte characters split across chunks)`, async () => {
      const blobs = await collect(parseFbcStream(chunked(text, size), 'json', 'x/catalog.json'));
      expect(blobs.map((b) => b.object)).toEqual(objects);
      expect(blobs.map((b) => b.line)).toEqual(startLines);
    });
  }

  it('keeps unknown schemas and deprecations as they are', async () => {
    const b = new FbcModelBuilder();
    const dep = {
      schema: 'olm.deprecations',
      package: 'p',
      entries: [{ reference: { schema: 'olm.package' }, message: 'gone' }],
    };
    for await (const blob of parseFbcStream(chunked(`${text}\n${JSON.stringify(dep)}`, 5), 'json', 'c.json'))
      b.add(blob);
    const model = b.build();
    expect(model.others).toEqual([objects[3]]);
    expect(model.deprecations).toEqual([dep]);
  });

  it('names the file and line of invalid JSON', async () => {
    const e = await parseError(
      collect(parseFbcStream(chunked('{"schema":"a"}\n\n{"schema": nope}', 4), 'json', 'pkg/catalog.json')),
    );
    expect(e.code).toBe(MirrorError.CATALOG_PARSE);
    expect(e.where).toBe('pkg/catalog.json:3');
    expect(e.message).toMatch(/invalid JSON/);
  });

  it('refuses a top-level array and a truncated file', async () => {
    const arr = await parseError(collect(parseFbcStream(chunked('\n[{"schema":"a"}]', 4), 'json', 'a.json')));
    expect(arr.message).toMatch(/expected a JSON object, found an array/);
    expect(arr.where).toBe('a.json:2');
    const cut = await parseError(
      collect(parseFbcStream(chunked('{"schema":"a", "x": "}', 4), 'json', 'b.json')),
    );
    expect(cut.message).toMatch(/ends inside a JSON object/);
  });
});

describe('YAML catalogs and model errors', () => {
  const yamlText = [
    'schema: olm.package',
    'name: p',
    'defaultChannel: a',
    '---',
    'schema: olm.channel',
    'package: p',
    'name: a',
    'entries:',
    '  - name: p.v1',
    '---',
    'schema: olm.bundle',
    'package: p',
    'name: p.v1',
    'image: r/p@sha256:1',
    'properties: []',
  ].join('\n');

  it('names the YAML document line of a bundle without an olm.package property', async () => {
    const b = new FbcModelBuilder();
    const e = await parseError(
      (async () => {
        for await (const blob of parseFbcStream(chunked(yamlText, 9), 'yaml', 'p/index.yaml')) b.add(blob);
      })(),
    );
    expect(e.where).toBe('p/index.yaml:10');
    expect(e.message).toMatch(/bundle "p.v1" has 0 olm.package properties/);
  });

  it('names the line of a YAML syntax error', async () => {
    const e = await parseError(
      collect(parseFbcStream(chunked('schema: olm.package\nname: [p\n', 4), 'yaml', 'i.yaml')),
    );
    expect(e.code).toBe(MirrorError.CATALOG_PARSE);
    expect(e.where).toMatch(/^i\.yaml:\d+$/);
  });

  it('refuses channels of a package with no olm.package, and duplicates', async () => {
    const b = new FbcModelBuilder();
    b.add({
      object: { schema: 'olm.channel', package: 'ghost', name: 'a', entries: [] },
      file: 'g.json',
      line: 4,
    });
    const e = await parseError(Promise.resolve().then(() => b.build()));
    expect(e.message).toMatch(/package "ghost" has channels or bundles but no olm.package/);
    expect(e.where).toBe('g.json:4');
    const d = new FbcModelBuilder();
    d.add({ object: { schema: 'olm.package', name: 'p' }, file: 'a.json', line: 1 });
    const dup = await parseError(
      Promise.resolve().then(() =>
        d.add({ object: { schema: 'olm.package', name: 'p' }, file: 'b.json', line: 9 }),
      ),
    );
    expect(dup.message).toMatch(/defined twice \(first at a.json:1\)/);
  });

  it('walks a tree, skips other files and honours .indexignore', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'p', 'sub'), { recursive: true });
    await writeFile(
      join(dir, 'p', 'index.yaml'),
      yamlText.replace(
        'properties: []',
        'properties: [{type: olm.package, value: {packageName: p, version: 1.0.0}}]',
      ),
    );
    await writeFile(join(dir, 'p', 'README.md'), '# not a catalog {');
    await writeFile(join(dir, 'p', 'sub', 'broken.json'), '{ nope');
    await writeFile(join(dir, 'p', '.indexignore'), '# ignore work in progress\nsub/*.json\n');
    const model = await loadFbcDir(dir);
    expect(model.packages.get('p')!.bundles.get('p.v1')!.version).toBe('1.0.0');
    await writeFile(join(dir, 'p', '.indexignore'), '# nothing\n');
    expect((await parseError(loadFbcDir(dir))).where).toBe('p/sub/broken.json:1');
  });
});

describe('the synthetic catalog builder', () => {
  it('writes catalogs that parse back with the declared shape', async () => {
    const dir = await tempDir();
    const built = await buildSyntheticCatalog({
      dir,
      packages: 4,
      channelsPerPackage: 3,
      bundlesPerChannel: (p, c) => 1 + p + c,
      registry: 'lab.example.com/ops',
    });
    const model = await loadFbcDir(dir);
    expect(model.packages.size).toBe(4);
    let bundles = 0;
    for (const p of built.packages) {
      const pkg = model.packages.get(p.name)!;
      expect(pkg.defaultChannel).toBe(p.defaultChannel);
      for (const ch of p.channels)
        expect(pkg.channels.get(ch.name)!.entries.map((e) => e.name)).toEqual(ch.bundles);
      bundles += pkg.bundles.size;
    }
    expect(bundles).toBe(built.bundles);
    const any = model.packages.get(built.packages[3].name)!.bundles.values().next().value!;
    expect(any.image).toMatch(/^lab\.example\.com\/ops\/lab-operator-003\/bundle@sha256:[0-9a-f]{64}$/);
    expect(any.properties.find((p) => p.type === 'olm.package')).toBeDefined();
  });
});
