import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSyntheticCatalog, syntheticPackageName } from '../../../lab/catalog.js';
import { buildCatalogImage, type CatalogImageSpec } from '../../../lab/catalog-image.js';
import type { IncludePackage, Operator } from '../../../src/mirror/isc/types.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { MediaType } from '../../../src/mirror/media-types.js';
import { filterCatalog } from '../../../src/mirror/openshift/catalog-filter.js';
import { CONFIGS_LABEL, DATABASE_LABEL } from '../../../src/mirror/openshift/catalog-config.js';
import { readCatalogImage } from '../../../src/mirror/openshift/catalog-image.js';
import { REBUILD_HISTORY, rebuildCatalogImage } from '../../../src/mirror/openshift/catalog-rebuild.js';
import { renderFbc } from '../../../src/mirror/openshift/catalog-render.js';
import { writeTar } from '../../../src/mirror/openshift/tar-writer.js';
import { loadFbcDir, type FbcModel } from '../../../src/mirror/openshift/fbc.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { skopeoCopy, skopeoInspect } from '../../helpers/skopeo.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const fbcSamples = realdata('samples', 'fbc');
const SAMPLE_DIRS = ['operator-registry-foo', 'redhat-operator-index', 'redhat-operator-index-v4.14'].map(
  (d) => join(fbcSamples, d),
);

function op(packages: Partial<IncludePackage>[] = [], full = false): Operator {
  return {
    catalog: 'registry.example.com/redhat/redhat-operator-index:v4.18',
    full,
    skipDependencies: false,
    platforms: [],
    packages: packages.map((p) => ({ name: p.name ?? '', channels: [], ...p })),
  };
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : 1);

/** Everything a catalog says, independent of where it was read from (file names, lines). */
function summary(m: FbcModel) {
  return {
    packages: [...m.packages.values()].sort(byName).map((p) => ({
      name: p.name,
      defaultChannel: p.defaultChannel,
      meta: { ...p.meta, defaultChannel: p.defaultChannel },
      channels: [...p.channels.values()].sort(byName).map((c) => {
        const { entries: _entries, ...rest } = c.meta;
        return { name: c.name, entries: c.entries, meta: rest };
      }),
      bundles: [...p.bundles.values()].sort(byName).map((b) => b.meta),
    })),
    deprecations: m.deprecations,
    others: m.others,
  };
}

async function newLayout(): Promise<OciLayout> {
  return OciLayout.open(join(await tempDir('airgap-catimg-'), 'layout'));
}

/**
 * An image out of the layout as skopeo's `dir:` transport writes it (manifest.json, blobs named by
 * hex), each blob checked with `sha256sum`. skopeo 1.9 resolves only OCI-typed manifests by ref name
 * in an OCI layout, so Docker schema 2 images (what Red Hat ships) are exported by hand; OCI ones
 * go through `skopeo copy` (see the multi-arch test).
 */
async function exportImage(layout: OciLayout, digest: string): Promise<string> {
  const dir = join(await tempDir('airgap-catimg-dir-'), 'image');
  await mkdir(dir);
  const manifest = await layout.readBytes(digest);
  await writeFile(join(dir, 'manifest.json'), manifest);
  const doc = JSON.parse(manifest.toString('utf8')) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  for (const d of [doc.config.digest, ...doc.layers.map((l) => l.digest)]) {
    const hex = d.slice('sha256:'.length);
    await execa('cp', [layout.blobPath(d), join(dir, hex)]);
    const { stdout } = await execa('sha256sum', [join(dir, hex)]);
    expect(stdout.split(' ')[0]).toBe(hex);
  }
  return dir;
}

/**
 * Apply an exported image's layers in order with GNU tar into a root directory, emulating the
 * runtime's whiteouts: before a layer is extracted, its `.wh.<name>` entries delete `<name>` and
 * its `.wh..wh..opq` entries empty their directory; the whiteout files themselves are not extracted.
 */
async function applyLayers(imageDir: string): Promise<{ root: string; layers: string[] }> {
  const manifest = JSON.parse(await readFile(join(imageDir, 'manifest.json'), 'utf8')) as {
    layers: { digest: string }[];
  };
  const root = join(await tempDir('airgap-catimg-root-'), 'rootfs');
  await mkdir(root);
  const layers: string[] = [];
  for (const l of manifest.layers) {
    const file = join(imageDir, l.digest.slice('sha256:'.length));
    layers.push(file);
    const { stdout } = await execa('tar', ['-tf', file]);
    for (const raw of stdout.split('\n')) {
      const p = raw.replace(/^\.?\//, '');
      const slash = p.lastIndexOf('/');
      const [dir, base] = [p.slice(0, slash + 1), p.slice(slash + 1)];
      if (base === '.wh..wh..opq') {
        await execa('find', [join(root, dir), '-mindepth', '1', '-delete']).catch(() => undefined);
      } else if (base.startsWith('.wh.')) {
        await execa('rm', ['-rf', join(root, dir, base.slice(4))]);
      }
    }
    await execa('tar', ['-xf', file, '-C', root, '--exclude=.wh.*']);
  }
  return { root, layers };
}

async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (d.isDirectory()) out.push(...(await listTree(join(dir, d.name))).map((p) => `${d.name}/${p}`));
    else out.push(d.name);
  }
  return out.sort();
}

let synthDir: string;
let synthDir2: string;

beforeAll(async () => {
  synthDir = join(await tempDir('airgap-synth-'), 'configs');
  await buildSyntheticCatalog({
    dir: synthDir,
    packages: 4,
    channelsPerPackage: 2,
    bundlesPerChannel: 5,
    registry: 'registry.example.com/lab',
  });
  // a different catalog for the same package names (upper layers replacing files)
  synthDir2 = join(await tempDir('airgap-synth2-'), 'configs');
  await buildSyntheticCatalog({
    dir: synthDir2,
    packages: 1,
    channelsPerPackage: 1,
    bundlesPerChannel: 2,
    registry: 'registry.example.com/other',
  });
});

async function build(spec: Omit<CatalogImageSpec, 'repo' | 'format'> & Partial<CatalogImageSpec>) {
  const layout = await newLayout();
  const built = await buildCatalogImage(layout, {
    repo: 'redhat/redhat-operator-index',
    format: 'docker',
    ...spec,
  });
  return { layout, built };
}

describe('readCatalogImage', () => {
  it('reads a Red Hat-shaped synthetic catalog (docker, gzip) to the model of its directory', async () => {
    const { layout, built } = await build({ fbcDir: synthDir });
    const r = await readCatalogImage(layout, built.digest);
    expect(r.configsDir).toBe('/configs');
    expect(r.digest).toBe(built.digest);
    expect(r.imageDigest).toBe(built.digest);
    expect(r.mediaType).toBe(MediaType.DockerManifest);
    expect(r.manifests).toHaveLength(1);
    expect(r.files).toEqual([0, 1, 2, 3].map((p) => `${syntheticPackageName(p)}/catalog.json`));
    expect(summary(r.model)).toEqual(summary(await loadFbcDir(synthDir)));
    expect(r.model.packages.get(syntheticPackageName(0))?.where).toBe(
      `/configs/${syntheticPackageName(0)}/catalog.json:1`,
    );
  });

  withRealdata.it(
    'reads the real samples in place: uncompressed OCI, gzip OCI multi-arch, docker',
    async () => {
      const expected = {
        packages: [] as ReturnType<typeof summary>['packages'],
        deprecations: [],
        others: [],
      };
      for (const d of SAMPLE_DIRS) expected.packages.push(...summary(await loadFbcDir(d)).packages);
      expected.packages.sort(byName);
      for (const spec of [
        { format: 'oci', compression: 'none' },
        { format: 'oci', arches: ['amd64', 'arm64', 'ppc64le', 's390x'] as string[] },
        { format: 'docker' },
      ] as const) {
        const { layout, built } = await build({ fbcDir: SAMPLE_DIRS, ...spec });
        const r = await readCatalogImage(layout, built.digest);
        expect(summary(r.model)).toEqual(expected);
        expect(r.files).toEqual([
          'foo/index.yaml',
          'jaeger-product/catalog.json',
          'node-observability-operator/catalog.json',
        ]);
        const jaeger = r.model.packages.get('jaeger-product')!;
        expect(jaeger.bundles.size).toBe(6);
        expect(jaeger.channels.get('stable')?.entries.at(-1)?.name).toBe('jaeger-operator.v1.51.0-1');
      }
    },
  );

  it('follows an index to the asked architecture, amd64 by default', async () => {
    const { layout, built } = await build({ fbcDir: synthDir, arches: ['arm64', 'amd64'] });
    const r = await readCatalogImage(layout, built.digest);
    expect(r.imageDigest).toBe(built.children!.amd64);
    expect(r.mediaType).toBe(MediaType.DockerManifestList);
    expect(r.manifests.map((m) => m.platform?.architecture)).toEqual(['arm64', 'amd64']);
    expect((await readCatalogImage(layout, built.digest, { arch: 'aarch64' })).imageDigest).toBe(
      built.children!.arm64,
    );
    const e = await rejection(readCatalogImage(layout, built.digest, { arch: 's390x' }));
    expect(e.code).toBe(MirrorError.CATALOG_ARCH_MISSING);
    expect(e.message).toContain('linux/arm64, linux/amd64');
  });

  withRealdata.it('uses /configs without the label, and the labelled directory otherwise', async () => {
    const a = await build({ fbcDir: SAMPLE_DIRS[0], label: false });
    expect((await readCatalogImage(a.layout, a.built.digest)).model.packages.has('foo')).toBe(true);
    const b = await build({ fbcDir: SAMPLE_DIRS[0], configsDir: '/opt/catalog' });
    const r = await readCatalogImage(b.layout, b.built.digest);
    expect(r.configsDir).toBe('/opt/catalog');
    expect(r.model.packages.get('foo')?.where).toBe('/opt/catalog/foo/index.yaml:1');
  });

  it('honours whiteouts, opaque directories and upper files of the source image', async () => {
    const replaced = await readFile(join(synthDir2, syntheticPackageName(0), 'catalog.json'));
    const { layout, built } = await build({
      fbcDir: synthDir,
      // a broken file in the catalog layer that an upper layer deletes: it must never be parsed
      files: { 'broken/catalog.json': '{"schema": "olm.package", "name": ' },
      upperLayers: [
        {
          whiteouts: ['configs/broken/catalog.json', `configs/${syntheticPackageName(1)}`],
          files: { [`configs/${syntheticPackageName(0)}/catalog.json`]: replaced },
        },
        { whiteouts: [`configs/${syntheticPackageName(2)}/catalog.json`] },
      ],
    });
    const r = await readCatalogImage(layout, built.digest);
    expect([...r.model.packages.keys()].sort()).toEqual([syntheticPackageName(0), syntheticPackageName(3)]);
    // the upper layer's file won over the catalog layer's
    const p0 = r.model.packages.get(syntheticPackageName(0))!;
    expect([...p0.channels.keys()]).toEqual(['stable-v1']);
    expect([...p0.bundles.values()][0].image).toMatch(/^registry\.example\.com\/other\//);

    // an opaque whiteout hides everything below; only the upper layer's content is left
    const o = await build({
      fbcDir: synthDir,
      upperLayers: [
        { opaque: ['configs'], files: { [`configs/${syntheticPackageName(0)}/catalog.json`]: replaced } },
      ],
    });
    const ro = await readCatalogImage(o.layout, o.built.digest);
    expect([...ro.model.packages.keys()]).toEqual([syntheticPackageName(0)]);
    expect(ro.model.packages.get(syntheticPackageName(0))!.bundles.size).toBe(2);
  });

  withRealdata.it('skips what .indexignore names, and files that are not JSON or YAML', async () => {
    const { layout, built } = await build({
      fbcDir: SAMPLE_DIRS[0],
      files: {
        '.indexignore': '# not catalog content\nscratch/\n*.draft.json\n',
        // fails on its first byte; the other 4 MiB must still be drained for the tar parser to go on
        'scratch/catalog.json': `[${' '.repeat(4 * 1024 * 1024)}`,
        'foo/wip.draft.json': '{broken',
        'README.md': '# docs',
      },
    });
    const r = await readCatalogImage(layout, built.digest);
    expect(r.files).toEqual(['foo/index.yaml']);
    expect([...r.model.packages.keys()]).toEqual(['foo']);
  });

  it('CATALOG_NO_FBC names the image and the directory (SQLite catalogs, empty /configs, deleted /configs)', async () => {
    const sqlite = await build({
      files: { 'README.md': 'no catalog here' },
      labels: { [DATABASE_LABEL]: '/database/index.db' },
    });
    const e = await rejection(readCatalogImage(sqlite.layout, sqlite.built.digest));
    expect(e.code).toBe(MirrorError.CATALOG_NO_FBC);
    expect(e.exitCode).toBe(1);
    expect(e.message).toContain(
      'redhat/redhat-operator-index:v4.18 has no file-based catalog under /configs',
    );
    expect(e.message).toContain(`${DATABASE_LABEL}=/database/index.db`);
    expect(e.where).toBe('redhat/redhat-operator-index:v4.18');
    expect(e.hint).toMatch(
      /SQLite catalogs from before OpenShift 4\.11 are not supported; use a file-based catalog/,
    );

    const deleted = await build({ fbcDir: synthDir, upperLayers: [{ whiteouts: ['configs'] }] });
    const d = await rejection(readCatalogImage(deleted.layout, deleted.built.digest));
    expect(d.code).toBe(MirrorError.CATALOG_NO_FBC);
  });

  withRealdata.it('CATALOG_PARSE names the file, the line and the image', async () => {
    const { layout, built } = await build({
      fbcDir: SAMPLE_DIRS[0],
      files: {
        'bad/catalog.json': '{"schema": "olm.package", "name": "bad", "defaultChannel": "x"}\n\n{"schema": 3',
      },
    });
    const e = await rejection(readCatalogImage(layout, built.digest));
    expect(e.code).toBe(MirrorError.CATALOG_PARSE);
    expect(e.where).toBe('/configs/bad/catalog.json:3 in redhat/redhat-operator-index:v4.18');
  });

  withRealdata.it(
    'refuses damaged layers without hanging: truncated or garbage tar, bytes that do not match the digest',
    async () => {
      const tar = writeTar([
        { path: 'configs/late/catalog.json', type: 'File', data: Buffer.alloc(8192, 0x20) },
      ]);
      for (const raw of [tar.subarray(0, 2048), Buffer.alloc(1536, 0x41)]) {
        const { layout, built } = await build({ fbcDir: SAMPLE_DIRS[0], upperLayers: [{ raw }] });
        const e = await rejection(readCatalogImage(layout, built.digest));
        expect(e.code).toBe(MirrorError.CATALOG_IMAGE_INVALID);
        expect(e.where).toBe('redhat/redhat-operator-index:v4.18');
      }
      const { layout, built } = await build({ fbcDir: SAMPLE_DIRS[0], format: 'oci', compression: 'none' });
      const manifest = JSON.parse((await layout.readBytes(built.digest)).toString('utf8')) as {
        layers: { digest: string }[];
      };
      const blob = layout.blobPath(manifest.layers[0]!.digest);
      const bytes = await readFile(blob);
      bytes[1026] ^= 0x01; // inside /bin/opm's content: still a valid tar, no longer the right bytes
      await writeFile(blob, bytes);
      const e = await rejection(readCatalogImage(layout, built.digest));
      expect(e.code).toBe(MirrorError.MIRROR_DIGEST_MISMATCH);
    },
  );

  it('streams a large catalog file through the tar parser', async () => {
    const dir = join(await tempDir('airgap-synth-big-'), 'configs');
    await buildSyntheticCatalog({
      dir,
      packages: 1,
      channelsPerPackage: 2,
      bundlesPerChannel: 3000,
      registry: 'registry.example.com/big',
    });
    const size = (await stat(join(dir, syntheticPackageName(0), 'catalog.json'))).size;
    expect(size).toBeGreaterThan(8 * 1024 * 1024);
    const { layout, built } = await build({ fbcDir: dir, format: 'oci', compression: 'none' });
    const r = await readCatalogImage(layout, built.digest);
    expect(r.model.packages.get(syntheticPackageName(0))!.bundles.size).toBe(6000);
  });
});

describe('renderFbc', () => {
  it('writes one catalog.json per package in opm order that parses back to the same model', async () => {
    const model = await loadFbcDir(synthDir);
    const files = renderFbc(model);
    expect([...files.keys()]).toEqual([0, 1, 2, 3].map((p) => `${syntheticPackageName(p)}/catalog.json`));
    const dir = await tempDir('airgap-render-');
    for (const [rel, bytes] of files) {
      await mkdir(join(dir, rel, '..'), { recursive: true });
      await writeFile(join(dir, rel), bytes);
    }
    expect(summary(await loadFbcDir(dir))).toEqual(summary(model));
    const text = files.get(`${syntheticPackageName(0)}/catalog.json`)!.toString('utf8');
    const schemas = [...text.matchAll(/^ {4}"schema": "([^"]+)"/gm)].map((m) => m[1]);
    expect(schemas).toEqual(['olm.package', 'olm.channel', 'olm.channel', ...Array(10).fill('olm.bundle')]);
    expect(text.startsWith('{\n    "schema": "olm.package",')).toBe(true);
  });
});

describe('rebuildCatalogImage', () => {
  const filter = op([{ name: 'jaeger-product' }, { name: 'foo' }]);

  withRealdata.it(
    'replaces /configs and the opm cache in one root-owned layer; checked with skopeo and GNU tar',
    async () => {
      const { layout, built } = await build({ fbcDir: SAMPLE_DIRS });
      const source = await readCatalogImage(layout, built.digest);
      const filtered = filterCatalog(source.model, filter).model;
      const refName = 'redhat/redhat-operator-index:v4.18-filtered';
      const rebuilt = await rebuildCatalogImage(layout, built.digest, filtered, { refName });
      expect(rebuilt.mediaType).toBe(MediaType.DockerManifest);
      expect((await layout.resolve(refName))?.digest).toBe(rebuilt.digest);
      // nothing else was tagged
      expect((await layout.entries()).map((e) => e.refName).sort()).toEqual([built.refName, refName].sort());

      // our own reader: only the filtered packages, heads only
      const back = await readCatalogImage(layout, rebuilt.digest);
      expect(summary(back.model)).toEqual(summary(filtered));
      expect(back.files).toEqual(['foo/catalog.json', 'jaeger-product/catalog.json']);
      expect([...back.model.packages.get('jaeger-product')!.bundles.keys()]).toEqual([
        'jaeger-operator.v1.51.0-1',
      ]);

      // independent tools: skopeo exports (verifying digests), GNU tar applies the layers
      const dir = await exportImage(layout, rebuilt.digest);
      const { root, layers } = await applyLayers(dir);
      expect(layers).toHaveLength(4);
      expect(await listTree(join(root, 'configs'))).toEqual([
        'foo/catalog.json',
        'jaeger-product/catalog.json',
      ]);
      await expect(stat(join(root, 'tmp', 'cache'))).rejects.toThrow(/ENOENT/);
      expect((await stat(join(root, 'tmp'))).mode & 0o7777).toBe(0o1777); // /tmp untouched: opm can build its cache
      expect((await stat(join(root, 'bin', 'opm'))).isFile()).toBe(true);
      expect(summary(await loadFbcDir(join(root, 'configs')))).toEqual(summary(filtered));

      // the last layer, as `tar -tvzf` lists it
      const { stdout } = await execa('tar', ['-tvzf', layers[3]!]);
      const lines = stdout.split('\n');
      expect(lines.map((l) => l.split(/\s+/).at(-1))).toEqual([
        'tmp/.wh.cache',
        'configs/',
        'configs/.wh..wh..opq',
        'configs/foo/',
        'configs/foo/catalog.json',
        'configs/jaeger-product/',
        'configs/jaeger-product/catalog.json',
      ]);
      for (const l of lines) {
        const [mode, owner, , date, time] = l.split(/\s+/);
        expect(owner).toBe('root/root');
        expect(mode).toBe(l.endsWith('/') ? 'drwxr-xr-x' : '-rw-r--r--');
        expect(`${date} ${time}`).toBe('1970-01-01 00:00');
      }

      // the config and manifest skopeo exported
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
        mediaType: string;
        config: { digest: string };
        layers: { mediaType: string; digest: string }[];
      };
      expect(manifest.mediaType).toBe(MediaType.DockerManifest);
      expect(manifest.layers.at(-1)!.mediaType).toBe(MediaType.DockerLayerGzip);
      const config = JSON.parse(await readFile(join(dir, manifest.config.digest.slice(7)), 'utf8')) as {
        config: { Cmd: string[]; Entrypoint: string[]; Labels: Record<string, string>; User: string };
        rootfs: { diff_ids: string[] };
        history: { created_by: string }[];
        architecture: string;
      };
      expect(config.config.Entrypoint).toEqual(['/bin/opm']);
      expect(config.config.Cmd).toEqual([
        'serve',
        '/configs',
        '--cache-dir=/tmp/cache',
        '--cache-enforce-integrity=false',
      ]);
      expect(config.config.Labels[CONFIGS_LABEL]).toBe('/configs');
      expect(config.config.User).toBe('1001');
      expect(config.architecture).toBe('amd64');
      expect(config.history.at(-1)!.created_by).toBe(REBUILD_HISTORY);
      expect(config.history).toHaveLength(4);
      const { stdout: sum } = await execa('sh', ['-c', `gzip -dc '${layers[3]}' | sha256sum`]);
      expect(config.rootfs.diff_ids).toHaveLength(4);
      expect(config.rootfs.diff_ids.at(-1)).toBe(`sha256:${sum.split(' ')[0]}`);
    },
  );

  withRealdata.it(
    'is deterministic: the same source and filter give the same digest, in any layout',
    async () => {
      const digests: string[] = [];
      for (let i = 0; i < 2; i++) {
        const { layout, built } = await build({ fbcDir: SAMPLE_DIRS });
        const model = filterCatalog((await readCatalogImage(layout, built.digest)).model, filter).model;
        digests.push((await rebuildCatalogImage(layout, built.digest, model)).digest);
        digests.push((await rebuildCatalogImage(layout, built.digest, model)).digest);
        expect((await layout.entries()).map((e) => e.refName)).toEqual([built.refName]); // no tag asked
      }
      expect(new Set(digests).size).toBe(1);
      // a different filter gives a different image
      const { layout, built } = await build({ fbcDir: SAMPLE_DIRS });
      const other = filterCatalog(
        (await readCatalogImage(layout, built.digest)).model,
        op([{ name: 'foo' }]),
      ).model;
      expect((await rebuildCatalogImage(layout, built.digest, other)).digest).not.toBe(digests[0]);
    },
  );

  it('rebuilds every child of a multi-arch OCI index, keeping platforms and the index media type', async () => {
    const arches = ['amd64', 'arm64', 'ppc64le'];
    const { layout, built } = await build({ fbcDir: synthDir, format: 'oci', compression: 'none', arches });
    const source = await readCatalogImage(layout, built.digest);
    const pkg = syntheticPackageName(2);
    const filtered = filterCatalog(
      source.model,
      op([{ name: pkg, channels: [{ name: 'stable-v1' }], defaultChannel: 'stable-v1' }]),
    ).model;
    const refName = 'redhat/redhat-operator-index:v4.18-multi-filtered';
    const rebuilt = await rebuildCatalogImage(layout, built.digest, filtered, { refName });
    expect(rebuilt.mediaType).toBe(MediaType.OciIndex);
    expect(rebuilt.images.map((i) => i.platform?.architecture)).toEqual(arches);
    expect(rebuilt.images.map((i) => i.sourceDigest)).toEqual(arches.map((a) => built.children![a]));
    // one shared layer blob for every architecture
    expect(new Set(rebuilt.images.map((i) => i.layer.digest)).size).toBe(1);
    expect(rebuilt.images[0]!.layer.mediaType).toBe(MediaType.OciLayerGzip);

    const index = JSON.parse((await layout.readBytes(rebuilt.digest)).toString('utf8')) as {
      mediaType: string;
      manifests: { digest: string; mediaType: string; platform: { architecture: string; os: string } }[];
    };
    expect(index.mediaType).toBe(MediaType.OciIndex);
    expect(index.manifests.map((m) => [m.platform.os, m.platform.architecture])).toEqual(
      arches.map((a) => ['linux', a]),
    );
    for (const [i, arch] of arches.entries()) {
      expect(index.manifests[i]!.digest).toBe(rebuilt.images[i]!.digest);
      const r = await readCatalogImage(layout, rebuilt.digest, { arch });
      expect(r.imageDigest).toBe(rebuilt.images[i]!.digest);
      expect(summary(r.model)).toEqual(summary(filtered));
      expect(r.model.packages.get(pkg)!.defaultChannel).toBe('stable-v1');
      const child = JSON.parse((await layout.readBytes(r.imageDigest)).toString('utf8')) as {
        layers: { mediaType: string }[];
        config: { digest: string };
      };
      expect(child.layers.map((l) => l.mediaType)).toEqual([
        MediaType.OciLayer,
        MediaType.OciLayer,
        MediaType.OciLayer,
        MediaType.OciLayerGzip,
      ]);
      const cfg = JSON.parse((await layout.readBytes(child.config.digest)).toString('utf8')) as {
        architecture: string;
      };
      expect(cfg.architecture).toBe(arch);
    }

    // skopeo copies the whole index (every blob verified) and GNU tar agrees on the arm64 image
    const dir = join(await tempDir('airgap-catimg-all-'), 'image');
    await skopeoCopy(`oci:${layout.dir}:${refName}`, `dir:${dir}`, { all: true });
    const inspected = await skopeoInspect(`oci:${layout.dir}:${refName}`, {});
    expect(inspected.Architecture).toBe('amd64');
    const amd = JSON.parse((await layout.readBytes(rebuilt.images[0]!.digest)).toString('utf8')) as {
      layers: { digest: string }[];
    };
    expect(inspected.Layers).toEqual(amd.layers.map((l) => l.digest));
    expect(inspected.Labels?.[CONFIGS_LABEL]).toBe('/configs');
    const arm = rebuilt.images[1]!.digest.slice(7);
    await writeFile(join(dir, 'manifest.json'), await readFile(join(dir, `${arm}.manifest.json`)));
    const { root } = await applyLayers(dir);
    expect(await listTree(join(root, 'configs'))).toEqual([`${pkg}/catalog.json`]);
    expect(await readFile(join(root, 'etc', 'os-release'), 'utf8')).toContain('ARCH=arm64');
  });

  withRealdata.it('removes a cache named in a custom --cache-dir and keeps other serve flags', async () => {
    const { layout, built } = await build({
      fbcDir: SAMPLE_DIRS[0],
      format: 'oci',
      cmd: [
        'serve',
        '/configs',
        '--cache-dir',
        '/var/cache/opm',
        '--port',
        '50052',
        '--cache-enforce-integrity',
      ],
    });
    const model = filterCatalog((await readCatalogImage(layout, built.digest)).model, op()).model;
    const rebuilt = await rebuildCatalogImage(layout, built.digest, model);
    expect(rebuilt.images[0]!.cacheDir).toBe('/var/cache/opm');
    const manifest = JSON.parse((await layout.readBytes(rebuilt.digest)).toString('utf8')) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    const cfg = JSON.parse((await layout.readBytes(manifest.config.digest)).toString('utf8')) as {
      config: { Cmd: string[] };
    };
    expect(cfg.config.Cmd).toEqual([
      'serve',
      '/configs',
      '--cache-dir=/var/cache/opm',
      '--cache-enforce-integrity=false',
      '--port',
      '50052',
    ]);
    const { stdout } = await execa('tar', ['-tzf', layout.blobPath(manifest.layers.at(-1)!.digest)]);
    expect(stdout.split('\n')[0]).toBe('var/cache/.wh.opm');
    expect(
      createHash('sha256')
        .update(await readFile(layout.blobPath(rebuilt.digest)))
        .digest('hex'),
    ).toBe(rebuilt.digest.slice(7));
  });
});
