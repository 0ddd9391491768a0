import { mkdtemp, readdir, readFile, rm, symlink, writeFile, mkdir, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import { imagesOf } from '../../../src/mirror/helm/images.js';
import { writeTar, type TarEntry } from '../../../src/mirror/openshift/tar-writer.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { AirgapError } from '../../../src/util/errors.js';
import {
  PODINFO as PODINFO_FILES,
  SHOP as SHOP_FILES,
  writeChart,
  type ChartFiles,
} from '../../fixtures/helm/charts.js';

let tmp: string;
/** The fixture charts, written out as directories. */
let PODINFO: string;
let SHOP: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helm-'));
  PODINFO = await writeChart(join(tmp, 'podinfo'), PODINFO_FILES);
  SHOP = await writeChart(join(tmp, 'shop'), SHOP_FILES);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The files of a directory as tar entries under `top/`, as `helm package` lays them out. */
async function entriesOf(dir: string, top: string): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  const walk = async (d: string) => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push({ path: `${top}/${relative(dir, p)}`, type: 'File', data: await readFile(p) });
    }
  };
  await walk(dir);
  return out;
}

async function packChart(dir: string, top: string): Promise<Buffer> {
  return gzipSync(writeTar(await entriesOf(dir, top)));
}

async function errorOf(p: Promise<unknown> | (() => unknown)): Promise<AirgapError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected an AirgapError');
}

const images = (m: { manifests: { template: string; text: string }[] }, imagePaths?: string[]) =>
  imagesOf(m.manifests, { imagePaths }).map((i) => i.image);

describe('a podinfo-like chart', () => {
  it('renders like helm template and yields exactly its images', async () => {
    const chart = await loadChart(PODINFO);
    expect(chart.name).toBe('podinfo');
    expect(chart.version).toBe('6.7.1');
    const rendered = renderChart(chart);
    // hpa, ingress and redis render to whitespace: dropped; NOTES.txt is not a manifest; partials never are.
    expect(rendered.manifests.map((m) => m.template)).toEqual([
      'podinfo/templates/deployment.yaml',
      'podinfo/templates/service.yaml',
      'podinfo/templates/tests/jwt.yaml',
    ]);
    const deployment = rendered.manifests[0]!.text;
    expect(deployment).toContain('  name: airgap-podinfo\n');
    expect(deployment).toContain(
      '    helm.sh/chart: podinfo-6.7.1\n    app.kubernetes.io/name: airgap-podinfo\n',
    );
    expect(deployment).toContain('image: "ghcr.io/stefanprodan/podinfo:6.7.1"');
    expect(deployment).toContain(
      '          resources:\n            limits: null\n            requests:\n              cpu: 1m\n',
    );

    const found = imagesOf(rendered.manifests);
    expect(found.map((i) => i.image)).toEqual([
      'ghcr.io/stefanprodan/podinfo:6.7.1',
      'giantswarm/tiny-tools',
    ]);
    expect(found[0]!.where).toBe(
      'podinfo/templates/deployment.yaml: Deployment/airgap-podinfo .spec.template.spec.containers[0].image',
    );
  });

  it('takes values over values.yaml: an image tag, a second deployment, capabilities', async () => {
    const chart = await loadChart(PODINFO);
    const rendered = renderChart(chart, {
      values: {
        image: { tag: '6.5.0' },
        redis: { enabled: true },
        hpa: { enabled: true },
        ingress: { enabled: true },
      },
    });
    expect(images(rendered)).toEqual([
      'ghcr.io/stefanprodan/podinfo:6.5.0',
      'docker.io/redis:7.0.7',
      'giantswarm/tiny-tools',
    ]);
    const hpa = rendered.manifests.find((m) => m.template.endsWith('hpa.yaml'))!.text;
    expect(hpa).toMatch(/^apiVersion: autoscaling\/v2\nkind: HorizontalPodAutoscaler/);
    const ingress = rendered.manifests.find((m) => m.template.endsWith('ingress.yaml'))!.text;
    expect(ingress).toMatch(/^apiVersion: networking.k8s.io\/v1\nkind: Ingress/m);
    expect(ingress).toContain('    - host: "podinfo.local"');
  });

  it('loads the same chart from a .tgz file and from archive bytes', async () => {
    const bytes = await packChart(PODINFO, 'podinfo');
    const file = join(tmp, 'podinfo-6.7.1.tgz');
    await writeFile(file, bytes);
    const fromDir = renderChart(await loadChart(PODINFO)).manifests.map((m) => m.template);
    for (const chart of [await loadChart(file), await loadChart(bytes)]) {
      expect(chart.name).toBe('podinfo');
      expect(renderChart(chart).manifests.map((m) => m.template)).toEqual(fromDir);
      expect(images(renderChart(chart))).toEqual([
        'ghcr.io/stefanprodan/podinfo:6.7.1',
        'giantswarm/tiny-tools',
      ]);
    }
  });
});

describe('an umbrella chart with an aliased, conditional subchart', () => {
  it('renders the subchart under its alias, with globals, and finds env and CronJob images', async () => {
    const rendered = renderChart(await loadChart(SHOP));
    expect(rendered.manifests.map((m) => m.template)).toEqual([
      'shop/charts/cache/templates/master.yaml',
      'shop/templates/operator.yaml',
    ]);
    const master = rendered.manifests[0]!.text;
    // .Chart.Name is the alias; the parent's define of the same name wins.
    expect(master).toContain('name: airgap-cache-master\n  labels:\n    owner: shop\n');
    // The parent sees the subchart's defaults under the alias.
    expect(rendered.manifests[1]!.text).toContain(
      '- name: CACHE_IMAGE\n              value: bitnami/redis\n',
    );

    const found = imagesOf(rendered.manifests);
    expect(found.map((i) => i.image)).toEqual([
      'registry.example.com/bitnami/redis:7.0.5-debian-11-r7',
      'registry.example.com/bitnami/os-shell:11',
      'quay.io/example/operator:v2.0.0',
      'quay.io/example/worker:1.2.3',
      'quay.io/example/backup@sha256:4bc453b53cb3d914b45f4b250294236adba2c0e09ff6f03793949e7e39fd4cc1',
    ]);
    expect(found.find((i) => i.image.includes('worker'))!.where).toBe(
      'shop/templates/operator.yaml: Deployment/airgap-shop-operator .spec.template.spec.containers[0].env[0].value',
    );
    expect(found.find((i) => i.image.includes('backup'))!.where).toBe(
      'shop/templates/operator.yaml: CronJob/airgap-shop-backup .spec.jobTemplate.spec.template.spec.containers[0].image',
    );
  });

  it('follows conditions and tags from the values', async () => {
    const chart = await loadChart(SHOP);
    const all = renderChart(chart, {
      values: {
        queue: { enabled: true, architecture: 'replication', metrics: { enabled: true } },
        global: { imageRegistry: '' },
        tags: { monitoring: true },
      },
    });
    expect(all.manifests.map((m) => m.template)).toEqual([
      'shop/charts/cache/templates/master.yaml',
      'shop/charts/metrics/templates/deployment.yaml',
      'shop/charts/queue/templates/master.yaml',
      'shop/charts/queue/templates/replicas.yaml',
      'shop/templates/operator.yaml',
    ]);
    expect(images(all)).toEqual([
      'docker.io/bitnami/redis:7.0.5-debian-11-r7',
      'docker.io/bitnami/os-shell:11',
      'quay.io/example/never-rendered:1.0',
      'docker.io/bitnami/redis-exporter:1.45.0',
      'quay.io/example/operator:v2.0.0',
      'quay.io/example/worker:1.2.3',
      'quay.io/example/backup@sha256:4bc453b53cb3d914b45f4b250294236adba2c0e09ff6f03793949e7e39fd4cc1',
    ]);
    const none = renderChart(chart, { values: { cache: { enabled: false } } });
    expect(none.manifests.map((m) => m.template)).toEqual(['shop/templates/operator.yaml']);
  });

  it('reads imagePaths as oc-mirror does, and refuses a malformed one', async () => {
    const rendered = renderChart(await loadChart(SHOP));
    const found = imagesOf(rendered.manifests, {
      imagePaths: ['{.spec.custom[*].image}', '{.spec.custom[0].image}'],
    });
    const widget = found.filter((i) => i.image.includes('widget'));
    expect(widget.map((i) => i.image)).toEqual([
      'quay.io/example/widget:1.0',
      'quay.io/example/widget-helper:1.0',
    ]);
    expect(widget[0]!.places).toEqual([
      'shop/templates/operator.yaml: Widget/airgap-shop-widget .spec.custom[0].image',
    ]);
    const e = await errorOf(() => imagesOf(rendered.manifests, { imagePaths: ['{spec.custom}'] }));
    expect(e.code).toBe(MirrorError.HELM_IMAGE_PATH_INVALID);
  });

  it('reads subcharts packed as archives under charts/', async () => {
    const dir = join(tmp, 'shop-packed');
    await cp(SHOP, dir, { recursive: true });
    await writeFile(
      join(dir, 'charts', 'redis-17.3.0.tgz'),
      await packChart(join(SHOP, 'charts', 'redis'), 'redis'),
    );
    await rm(join(dir, 'charts', 'redis'), { recursive: true });
    const outer = await packChart(dir, 'shop');
    expect(images(renderChart(await loadChart(outer)))).toContain(
      'registry.example.com/bitnami/redis:7.0.5-debian-11-r7',
    );
  });
});

describe('chart errors', () => {
  const chartDir = (name: string, files: ChartFiles) => writeChart(join(tmp, name), files);

  it('says a required value as Helm does, with the template, line and column', async () => {
    const dir = await chartDir('req', {
      'Chart.yaml': 'apiVersion: v2\nname: req\nversion: 0.1.0\n',
      'values.yaml': 'image: {}\n',
      'templates/pod.yaml':
        'kind: Pod\nspec:\n  containers:\n  - image: {{ required "image.repository is required" .Values.image.repository }}\n',
    });
    const e = await errorOf(async () => renderChart(await loadChart(dir)));
    expect(e.code).toBe(MirrorError.HELM_TEMPLATE_EXEC);
    expect(e.message).toBe('execution error at (req/templates/pod.yaml:4:14): image.repository is required');
    expect(
      renderChart(await loadChart(dir), { values: { image: { repository: 'quay.io/x/y:1' } } }).manifests,
    ).toHaveLength(1);
  });

  it('stops a template that includes itself with an error, not a crash', async () => {
    const dir = await chartDir('loop', {
      'Chart.yaml': 'apiVersion: v2\nname: loop\nversion: 0.1.0\n',
      'templates/_helpers.tpl':
        '{{- define "loop.again" -}}{{ include "loop.again" . | nindent 2 }}{{- end -}}',
      'templates/cm.yaml': 'kind: ConfigMap\ndata: {{ include "loop.again" . }}\n',
    });
    const e = await errorOf(async () => renderChart(await loadChart(dir)));
    expect(e.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(e.message).toBe(
      'loop/templates/_helpers.tpl:1: include "loop.again" → "loop.again" recurses (nesting over 100 levels)',
    );
  });

  it('reads values as Helm does: YAML 1.1 booleans, merge keys, null removing a default', async () => {
    const dir = await chartDir('yaml11', {
      'Chart.yaml': 'apiVersion: v2\nname: yaml11\nversion: 0.1.0\nappVersion: 1.10\n',
      'values.yaml':
        'base: &base {image: quay.io/x/base:1}\nsidecar:\n  <<: *base\n  enabled: no\nextra: {image: quay.io/x/extra:1}\n',
      'templates/pod.yaml': [
        'kind: Pod',
        'metadata: {name: {{ .Chart.AppVersion }}}',
        'spec:',
        '  containers:',
        '  - image: {{ .Values.base.image }}',
        '  {{- if .Values.sidecar.enabled }}',
        '  - image: {{ .Values.sidecar.image }}',
        '  {{- end }}',
        '  {{- with .Values.extra }}',
        '  - image: {{ .image }}',
        '  {{- end }}',
        '',
      ].join('\n'),
    });
    const chart = await loadChart(dir);
    expect(renderChart(chart).manifests[0]!.text).toContain('metadata: {name: 1.10}');
    expect(images(renderChart(chart))).toEqual(['quay.io/x/base:1', 'quay.io/x/extra:1']);
    // The sidecar takes base's image through the merge key: the same image, listed once.
    const both = imagesOf(
      renderChart(chart, { values: { sidecar: { enabled: true }, extra: null } }).manifests,
    );
    expect(both.map((i) => i.image)).toEqual(['quay.io/x/base:1']);
    expect(both[0]!.places).toHaveLength(2);
    expect(
      images(
        renderChart(chart, {
          values: { sidecar: { enabled: true, image: 'quay.io/x/side:2' }, extra: null },
        }),
      ),
    ).toEqual(['quay.io/x/base:1', 'quay.io/x/side:2']);
  });

  it('names the file, line and column of a parse error', async () => {
    const dir = await chartDir('broken', {
      'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.1.0\n',
      'templates/cm.yaml': 'kind: ConfigMap\ndata:\n  a: {{ .Values.a | nosuchfunc }}\n',
    });
    const e = await errorOf(async () => renderChart(await loadChart(dir)));
    expect(e.code).toBe(MirrorError.HELM_TEMPLATE_PARSE);
    expect(e.message).toBe('template: broken/templates/cm.yaml:3:20: function "nosuchfunc" not defined');
  });

  it('refuses a chart without Chart.yaml, and a library chart', async () => {
    const none = await chartDir('nochart', { 'values.yaml': 'a: 1\n' });
    expect((await errorOf(loadChart(none))).code).toBe(MirrorError.HELM_CHART_INVALID);
    const lib = await chartDir('lib', {
      'Chart.yaml': 'apiVersion: v2\nname: lib\nversion: 1.0.0\ntype: library\n',
    });
    expect((await errorOf(async () => renderChart(await loadChart(lib)))).code).toBe(
      MirrorError.HELM_CHART_INVALID,
    );
  });

  it('refuses archives with .., absolute paths or links, and archives that inflate past 200×', async () => {
    const chartYaml = Buffer.from('apiVersion: v2\nname: x\nversion: 1.0.0\n');
    const bad: TarEntry[][] = [
      [
        { path: 'x/Chart.yaml', type: 'File', data: chartYaml },
        { path: 'x/../../etc/evil', type: 'File', data: Buffer.from('!') },
      ],
      [
        { path: 'x/Chart.yaml', type: 'File', data: chartYaml },
        { path: '/etc/evil', type: 'File', data: Buffer.from('!') },
      ],
      [
        { path: 'x/Chart.yaml', type: 'File', data: chartYaml },
        { path: 'x/templates/l.yaml', type: 'SymbolicLink', linkpath: '/etc/passwd' },
      ],
    ];
    for (const entries of bad) {
      const e = await errorOf(loadChart(gzipSync(writeTar(entries))));
      expect(e.code, entries[1]!.path).toBe(MirrorError.HELM_CHART_UNSAFE);
    }
    // 101 MiB of zeros: ~100 KiB of gzip, stopped by the ratio limit (200×) once past 8 MiB.
    const zeros = gzipSync(
      writeTar([
        { path: 'x/Chart.yaml', type: 'File', data: chartYaml },
        { path: 'x/big.bin', type: 'File', data: Buffer.alloc(101 * 1024 * 1024) },
      ]),
    );
    const e = await errorOf(loadChart(zeros, 'big-1.0.0.tgz'));
    expect(e.code).toBe(MirrorError.MIRROR_INFLATE_LIMIT);
    expect(e.message).toMatch(
      /^the chart archive big-1\.0\.0\.tgz inflates more than 200× its \d+(\.\d)? KiB \(the limit for a chart archive\)$/,
    );
    await expect(
      loadChart(gzipSync(writeTar([{ path: 'x/Chart.yaml', type: 'File', data: chartYaml }]))),
    ).resolves.toMatchObject({
      name: 'x',
    });
  });

  it('refuses a chart directory holding a symbolic link', async () => {
    const dir = await chartDir('linked', { 'Chart.yaml': 'apiVersion: v2\nname: linked\nversion: 1.0.0\n' });
    await mkdir(join(dir, 'templates'), { recursive: true });
    await symlink('/etc/hostname', join(dir, 'templates', 'host.yaml'));
    expect((await errorOf(loadChart(dir))).code).toBe(MirrorError.HELM_CHART_UNSAFE);
  });
});

describe('documents split as Helm splits them', () => {
  const chartDir = (name: string, files: ChartFiles) => writeChart(join(tmp, name), files);
  const pod = (image: string) => `kind: Pod\nspec:\n  containers:\n  - image: ${image}`;

  it('reads `---# comment`, content after `--- `, and empty documents, and finds every image', async () => {
    const dir = await chartDir('split', {
      'Chart.yaml': 'apiVersion: v2\nname: split\nversion: 0.1.0\n',
      'values.yaml': 'extra: true\n',
      'templates/pods.yaml': [
        pod('quay.io/x/a:1'),
        // A trim marker pulls the comment of the next document onto the separator line.
        '---',
        '{{- if .Values.extra -}}',
        '# the extra pod',
        pod('quay.io/x/b:2'),
        '{{- end }}',
        '---',
        '---   ',
        '',
        `--- ${pod('quay.io/x/c:3')}`,
        '',
      ].join('\n'),
    });
    const rendered = renderChart(await loadChart(dir));
    expect(rendered.manifests[0]!.text).toContain('---# the extra pod\n');
    expect(images(rendered)).toEqual(['quay.io/x/a:1', 'quay.io/x/b:2', 'quay.io/x/c:3']);
  });

  it('fails on an invalid document as helm template does, naming the template and the line in it', async () => {
    const dir = await chartDir('badsplit', {
      'Chart.yaml': 'apiVersion: v2\nname: badsplit\nversion: 0.1.0\n',
      'templates/pods.yaml': `${pod('quay.io/x/a:1')}\n---# second\n${pod('quay.io/x/b:2')}\n  bad: [\n`,
    });
    const e = await errorOf(async () => images(renderChart(await loadChart(dir))));
    expect(e.code).toBe(MirrorError.HELM_MANIFEST_INVALID);
    expect(e.message).toMatch(/^YAML parse error on badsplit\/templates\/pods\.yaml: /);
    // The error is the second document's, its lines counted from that document's start (as Helm's).
    expect(e.message).toMatch(/\(7:1\)\n[^]* 6 \| {3}bad: \[/);
  });
});
