import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart, type Chart } from '../../../src/mirror/helm/chart.js';
import { imagesOf } from '../../../src/mirror/helm/images.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { writeTar } from '../../../src/mirror/openshift/tar-writer.js';
import { writeChart, type ChartFiles } from '../../fixtures/helm/charts.js';
import { rejection } from '../../helpers/realdata.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helmignore-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const pod = (image: string) => `kind: Pod\nspec:\n  containers:\n  - image: ${image}\n`;
const CHART = 'apiVersion: v2\nname: app\nversion: 0.1.0\n';
const chartDir = (name: string, files: ChartFiles) =>
  writeChart(join(tmp, name), { 'Chart.yaml': CHART, ...files });
const images = (chart: Chart) => imagesOf(renderChart(chart).manifests).map((i) => i.image);
const fileNames = (chart: Chart) => chart.files.map((f) => f.name);

describe('a chart directory with a .helmignore', () => {
  it('drops what it lists, skips comments and blank lines, and the test pod image is not mirrored', async () => {
    const files: ChartFiles = {
      '.helmignore': '# Patterns to ignore\n\n  templates/tests/  \n*.bak\n# templates/keep.yaml\n',
      'templates/app.yaml': pod('quay.io/x/app:1'),
      'templates/keep.yaml': pod('quay.io/x/keep:1'),
      'templates/tests/test-connection.yaml': pod('docker.io/library/busybox:1'),
      'templates/old.yaml.bak': pod('quay.io/x/old:0'),
      'notes.bak': 'old',
      'README.md': 'readme',
    };
    const dir = await chartDir('listed', files);
    const chart = await loadChart(dir);
    expect(images(chart)).toEqual(['quay.io/x/app:1', 'quay.io/x/keep:1']);
    expect(fileNames(chart)).toEqual(['.helmignore', 'README.md']);
    // An archive is read whole, as Helm reads one: `helm package` has applied the rules already.
    const tgz = gzipSync(
      writeTar(
        await Promise.all(
          ['Chart.yaml', ...Object.keys(files)].map(async (name) => ({
            path: `app/${name}`,
            type: 'File' as const,
            data: await readFile(join(dir, name)),
          })),
        ),
      ),
    );
    expect(images(await loadChart(tgz, 'app.tgz'))).toContain('docker.io/library/busybox:1');
  });

  it('reads a ! rule as Helm does: it ignores every path it does not match', async () => {
    const files: ChartFiles = {
      'templates/t-app.yaml': pod('quay.io/x/app:1'),
      'templates/t-extra.yaml': pod('quay.io/x/extra:1'),
      'templates/debug.yaml': pod('quay.io/x/debug:1'),
      'README.md': 'readme',
    };
    const only = await loadChart(await chartDir('negated', { ...files, '.helmignore': '![Ctv]*\n' }));
    expect(images(only)).toEqual(['quay.io/x/app:1', 'quay.io/x/extra:1']);
    expect(fileNames(only)).toEqual([]);
    // The first rule that matches decides: a rule before the ! one still ignores what it names.
    const first = await loadChart(
      await chartDir('negated-after', { ...files, '.helmignore': 't-extra.yaml\n![Ctv]*\n' }),
    );
    expect(images(first)).toEqual(['quay.io/x/app:1']);
  });

  it('matches a rule ending in / to directories only, and a rule with / from the root', async () => {
    const chart = await loadChart(
      await chartDir('dironly', {
        '.helmignore': 'debug/\n/docs/*.md\n',
        'templates/app.yaml': pod('quay.io/x/app:1'),
        'templates/debug/pod.yaml': pod('quay.io/x/debug:1'),
        debug: 'a file named debug stays',
        'docs/a.md': 'dropped',
        'docs/deep/b.md': 'kept: * does not cross /',
      }),
    );
    expect(images(chart)).toEqual(['quay.io/x/app:1']);
    expect(fileNames(chart)).toEqual(['.helmignore', 'debug', 'docs/deep/b.md']);
  });

  it('always drops hidden files under templates/, as Helm does', async () => {
    const chart = await loadChart(
      await chartDir('hidden', {
        'templates/app.yaml': pod('quay.io/x/app:1'),
        'templates/.scratch.yaml': pod('quay.io/x/scratch:1'),
      }),
    );
    expect(images(chart)).toEqual(['quay.io/x/app:1']);
  });

  it('refuses ** and a malformed pattern, a .helmignore with too many rules or too many bytes', async () => {
    const app = { 'templates/app.yaml': pod('quay.io/x/app:1') };
    const star = await rejection(
      loadChart(await chartDir('star', { ...app, '.helmignore': '# x\ntemplates/**\n' })),
    );
    expect(star.code).toBe(MirrorError.HELM_CHART_INVALID);
    expect(star.message).toContain(
      '.helmignore line 2: "templates/**": double-star (**) syntax is not supported',
    );
    const malformed = await rejection(
      loadChart(await chartDir('malformed', { ...app, '.helmignore': 'a[b\n' })),
    );
    expect(malformed.message).toContain('.helmignore line 1: "a[b" is not a valid pattern');
    const many = await rejection(
      loadChart(await chartDir('many', { ...app, '.helmignore': 'x\n'.repeat(1001) })),
    );
    expect(many.message).toContain('more than 1000 rules');
    const dir = await chartDir('big', app);
    await writeFile(join(dir, '.helmignore'), '#'.repeat(65 * 1024));
    const big = await rejection(loadChart(dir));
    expect(big.code).toBe(MirrorError.HELM_CHART_UNSAFE);
    expect(big.message).toContain('.helmignore over 64 KiB');
  });
});
