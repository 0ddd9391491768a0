/**
 * Helm charts through the real CLI: a chart repository on loopback serving real-shaped charts
 * (a podinfo-like chart, a chart with an aliased subchart and an image in a container env value),
 * mirrored to disk with the charts carried in the archive, then from the archive into a registry
 * that skopeo reads back. Bad input: a repository out of reach, a chart that does not render and
 * hostile charts (an endless loop, a recursion) are named, and the other charts still go. A
 * repository listing no charts plans every version of every chart, and the plan says how each image
 * was found (args, env, hooks, test pods: the corpus of test/fixtures/helm/corpus/images.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packChart, startChartRepo, type ChartRepo } from '../../lab/chart-repo.js';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir, writeMirrorConfig, writeAuthFile } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';
import { writeChart } from '../fixtures/helm/charts.js';
import {
  certManager,
  grafana,
  ingressNginx,
  kubePrometheusStack,
  type Registries,
} from '../fixtures/helm/corpus/images.js';

const run = promisify(execFile);

/** Write a chart directory from `files` (path → text). */
async function chartDir(root: string, name: string, files: Record<string, string>): Promise<string> {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

/** A chart shaped like the real podinfo chart: helpers, a Deployment whose tag defaults to appVersion. */
function podinfoFiles(host: string): Record<string, string> {
  return {
    'Chart.yaml':
      'apiVersion: v1\nname: podinfo\nversion: 6.5.0\nappVersion: 6.5.0\ndescription: Podinfo Helm chart for Kubernetes\n',
    'values.yaml': `replicaCount: 1\nimage:\n  repository: ${host}/charts/podinfo\n  tag: ""\n  pullPolicy: IfNotPresent\nui:\n  color: "#34577c"\n`,
    'templates/_helpers.tpl': [
      '{{/* Expand the name of the chart. */}}',
      '{{- define "podinfo.name" -}}',
      '{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}',
      '{{- end }}',
      '{{- define "podinfo.fullname" -}}',
      '{{- printf "%s-%s" .Release.Name (include "podinfo.name" .) | trunc 63 | trimSuffix "-" }}',
      '{{- end }}',
      '',
    ].join('\n'),
    'templates/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: {{ template "podinfo.fullname" . }}',
      'spec:',
      '  replicas: {{ .Values.replicaCount }}',
      '  template:',
      '    spec:',
      '      containers:',
      '        - name: {{ .Chart.Name }}',
      '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"',
      '          imagePullPolicy: {{ .Values.image.pullPolicy }}',
      '          env:',
      '            - name: PODINFO_UI_COLOR',
      '              value: {{ .Values.ui.color | quote }}',
      '',
    ].join('\n'),
    'templates/NOTES.txt': 'Visit {{ template "podinfo.fullname" . }}\n',
  };
}

describe('helm charts: a chart repository mirrored with its images, carried across the air gap', () => {
  let src: TestRegistry;
  let dest: TestRegistry;
  let repo: ChartRepo;
  let dir: string;
  let authFile: string;
  let images: Record<string, BuiltImage>;

  beforeAll(async () => {
    [src, dest] = await Promise.all([startRegistry(), startRegistry()]);
    const built = await seedRegistry(src, [
      { repo: 'charts/podinfo', tag: '6.5.0', layers: [{ size: 20_000 }] },
      { repo: 'charts/web', tag: '2.1.0', layers: [{ size: 15_000 }] },
      { repo: 'charts/redis', tag: '7.2.4', layers: [{ size: 12_000 }] },
      { repo: 'charts/sidecar', tag: 'v1', layers: [{ size: 8_000 }] },
    ]);
    images = Object.fromEntries(built.map((b) => [b.repo.split('/')[1]!, b]));
    dir = await tempDir('airgap-helm-');
    const podinfo = await chartDir(dir, 'podinfo', podinfoFiles(src.host));
    // A web app with a redis subchart aliased "cache", and a sidecar image only in an env value.
    const web = await chartDir(dir, 'webapp', {
      'Chart.yaml': [
        'apiVersion: v2',
        'name: webapp',
        'version: 2.1.0',
        'appVersion: 2.1.0',
        'dependencies:',
        '  - name: redis',
        '    version: 7.2.4',
        '    alias: cache',
        '    condition: cache.enabled',
        '',
      ].join('\n'),
      'values.yaml': `image: ${src.host}/charts/web\ncache:\n  enabled: true\n  image:\n    tag: 7.2.4\n`,
      'templates/deployment.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: {{ .Release.Name }}-web',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: web',
        '          image: {{ .Values.image }}:{{ .Chart.AppVersion }}',
        '          env:',
        '            - name: SIDECAR_IMAGE',
        `              value: ${src.host}/charts/sidecar:v1`,
        '',
      ].join('\n'),
      'charts/redis/Chart.yaml': 'apiVersion: v2\nname: redis\nversion: 7.2.4\n',
      'charts/redis/values.yaml': `image:\n  repository: ${src.host}/charts/redis\n  tag: latest\n`,
      'charts/redis/templates/statefulset.yaml': [
        'apiVersion: apps/v1',
        'kind: StatefulSet',
        'metadata:',
        '  name: {{ .Release.Name }}-{{ .Chart.Name }}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: redis',
        '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"',
        '',
      ].join('\n'),
    });
    const broken = await chartDir(dir, 'broken', {
      'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.1.0\n',
      'values.yaml': 'image: {}\n',
      'templates/pod.yaml':
        'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - image: {{ required "image.repository is required" .Values.image.repository }}\n',
    });
    repo = await startChartRepo([
      { name: 'podinfo', version: '6.4.0', appVersion: '6.4.0', tgz: await packChart(podinfo) },
      { name: 'podinfo', version: '6.5.0', appVersion: '6.5.0', tgz: await packChart(podinfo) },
      { name: 'webapp', version: '2.1.0', appVersion: '2.1.0', tgz: await packChart(web) },
      { name: 'broken', version: '0.1.0', tgz: await packChart(broken) },
    ]);
    authFile = await writeAuthFile(join(dir, 'auth.json'), [src, dest]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dest?.stop(), repo?.stop()]);
  });

  const access = () => ['--authfile', authFile, '--ca-file', src.caFile, '--ca-file', dest.caFile];

  it('renders each chart, mirrors its images (subchart and env ones too), and carries the charts', async () => {
    const isc = await writeMirrorConfig(join(dir, 'isc.yaml'), {
      helm: {
        repositories: [
          { name: 'lab', url: repo.url, charts: [{ name: 'podinfo', version: '6.5.0' }, { name: 'webapp' }] },
        ],
      },
    });
    const out = join(dir, 'archive');
    const m2d = await airgap(['mirror', '-c', isc, `file://${out}`, ...access(), '--json']);
    expect(m2d.exitCode, m2d.stderr).toBe(0);
    const report = JSON.parse(m2d.stdout);
    const charts = Object.fromEntries(
      report.charts.map((c: { name: string; images: { image: string; sources: string[] }[] }) => [
        c.name,
        c.images.map((i) => `${i.image} [${i.sources.join(',')}]`).sort(),
      ]),
    );
    expect(charts).toEqual({
      podinfo: [`${src.host}/charts/podinfo:6.5.0 [image]`],
      webapp: [
        `${src.host}/charts/redis:7.2.4 [image]`,
        `${src.host}/charts/sidecar:v1 [env]`,
        `${src.host}/charts/web:2.1.0 [image]`,
      ],
    });
    expect(report.summary.failed).toBe(0);
    expect(report.summary.copied).toBe(4);
    // The charts travel in the archive's first part.
    const { stdout: members } = await run('tar', ['-tf', join(out, 'mirror_000001.tar')]);
    expect(members).toContain('helm/charts/podinfo-6.5.0.tgz');
    expect(members).toContain('helm/charts/webapp-2.1.0.tgz');

    // The disconnected side: no chart repository, no source registry.
    await repo.stop();
    const ws = join(dir, 'd2m-ws');
    const d2m = await airgap([
      'mirror',
      '-c',
      isc,
      '--from',
      `file://${out}`,
      `docker://${dest.host}/mirror`,
      ...access(),
    ]);
    expect(d2m.exitCode, d2m.stderr).toBe(0);
    for (const name of ['podinfo', 'web', 'redis', 'sidecar']) {
      const b = images[name]!;
      expect(await skopeoDigest(`docker://${dest.skopeoHost}/mirror/${b.repo}:${b.tag}`, dest.skopeo)).toBe(
        b.digest,
      );
    }
    const carried = await readdir(join(out, 'working-dir', 'helm', 'charts'));
    expect(carried.sort()).toEqual(['podinfo-6.5.0.tgz', 'webapp-2.1.0.tgz']);
    void ws;
  }, 120_000);

  it('names a chart that does not render and a repository out of reach; the other charts still go', async () => {
    repo = await startChartRepo([
      { name: 'podinfo', version: '6.5.0', appVersion: '6.5.0', tgz: await packChart(join(dir, 'podinfo')) },
      { name: 'broken', version: '0.1.0', tgz: await packChart(join(dir, 'broken')) },
    ]);
    const isc = await writeMirrorConfig(join(dir, 'bad.yaml'), {
      helm: {
        repositories: [
          { name: 'lab', url: repo.url, charts: [{ name: 'broken' }, { name: 'podinfo' }] },
          { name: 'gone', url: 'http://127.0.0.1:9/charts', charts: [{ name: 'anything' }] },
        ],
      },
    });
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${join(dir, 'bad-out')}`, ...access()]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/chart {4}broken 0\.1\.0 \(lab\): FAILED, .*image\.repository is required/);
    expect(r.stdout).toMatch(/chart {4}anything \(gone\): FAILED, helm repository "gone"/);
    expect(r.stdout).toMatch(/chart {4}podinfo 6\.5\.0 \(lab\): 1 image\(s\)/);
    expect(r.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/);
  }, 60_000);

  it('stops hostile charts within seconds and a bounded heap, naming each; the other charts are still planned', async () => {
    // Three nested ranges (10^12 iterations), and two helpers that include each other.
    const spin = await chartDir(dir, 'spin', {
      'Chart.yaml': 'apiVersion: v2\nname: spin\nversion: 0.1.0\n',
      'templates/cm.yaml': [
        'apiVersion: v1',
        'kind: ConfigMap',
        'data:',
        '{{- range $i := until 10000 }}',
        '{{- range $j := until 10000 }}',
        '{{- range $k := until 10000 }}',
        '  k{{ $i }}-{{ $j }}-{{ $k }}: x',
        '{{- end }}{{ end }}{{ end }}',
        '',
      ].join('\n'),
    });
    const loop = await chartDir(dir, 'loop', {
      'Chart.yaml': 'apiVersion: v2\nname: loop\nversion: 0.1.0\n',
      'templates/_helpers.tpl': [
        '{{- define "loop.name" -}}',
        '{{ include "loop.fullname" . }}',
        '{{- end -}}',
        '{{- define "loop.fullname" -}}',
        '{{ include "loop.name" . | trunc 63 }}',
        '{{- end -}}',
        '',
      ].join('\n'),
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "loop.fullname" . }}\n',
    });
    const hostileRepo = await startChartRepo([
      { name: 'podinfo', version: '6.5.0', appVersion: '6.5.0', tgz: await packChart(join(dir, 'podinfo')) },
      { name: 'spin', version: '0.1.0', tgz: await packChart(spin) },
      { name: 'loop', version: '0.1.0', tgz: await packChart(loop) },
    ]);
    try {
      const isc = await writeMirrorConfig(join(dir, 'hostile.yaml'), {
        helm: {
          repositories: [
            {
              name: 'lab',
              url: hostileRepo.url,
              charts: [{ name: 'spin' }, { name: 'loop' }, { name: 'podinfo' }],
            },
          ],
        },
      });
      const start = Date.now();
      const r = await airgap(
        ['mirror', 'plan', '-c', isc, `file://${join(dir, 'hostile-out')}`, ...access()],
        {
          env: { NODE_OPTIONS: '--max-old-space-size=256' },
          timeoutMs: 30_000,
        },
      );
      const took = Date.now() - start;
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stdout).toMatch(
        /chart {4}spin 0\.1\.0 \(lab\): FAILED, spin\/templates\/cm\.yaml:[67]: the template engine stopped: over 10000000 steps/,
      );
      expect(r.stdout).toMatch(
        /chart {4}loop 0\.1\.0 \(lab\): FAILED, loop\/templates\/_helpers\.tpl:[25]: include "loop\.(fullname|name)" → "loop\.(name|fullname)" → "loop\.\1" recurses \(nesting over 100 levels\)\n/,
      );
      expect(r.stdout).toMatch(/chart {4}podinfo 6\.5\.0 \(lab\): 1 image\(s\)/);
      expect(r.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(took).toBeLessThan(10_000);
    } finally {
      await hostileRepo.stop();
    }
  }, 60_000);

  it('plans every version of every chart of a repository listing none, says how each image was found, and names charts that fail by file and line', async () => {
    const at: Registries = { quay: src.host, k8s: src.host, docker: src.host };
    const seeded = await seedRegistry(
      src,
      [
        'prometheus-operator/prometheus-operator:v0.93.1',
        'prometheus-operator/prometheus-config-reloader:v0.93.1',
        'thanos/thanos:v0.37.2',
        'ingress-nginx/kube-webhook-certgen:v1.5.2',
        'ingress-nginx/controller:v1.12.1',
        'jetstack/cert-manager-controller:v1.16.2',
        'jetstack/cert-manager-acmesolver:v1.16.2',
        'jetstack/cert-manager-startupapicheck:v1.16.2',
        'library/busybox:1.31.1',
        'grafana/grafana:11.3.0',
        'bats/bats:v1.4.1',
      ].map((ref) => {
        const [repo, tag] = ref.split(':') as [string, string];
        return { repo, tag, layers: [{ size: 2_000 }] };
      }),
    );
    const controller = seeded.find((b) => b.repo === 'ingress-nginx/controller')!;
    const corpus = join(dir, 'corpus');
    const pack = async (name: string, files: Record<string, string>) =>
      packChart(
        await writeChart(
          join(corpus, `${name}-${files['Chart.yaml']!.match(/^version: (.+)$/m)![1]}`, name),
          files,
        ),
      );
    const corpusRepo = await startChartRepo([
      {
        name: 'kube-prometheus-stack',
        version: '66.3.0',
        tgz: await pack('kube-prometheus-stack', kubePrometheusStack(at, '66.3.0')),
      },
      {
        name: 'kube-prometheus-stack',
        version: '66.3.1',
        tgz: await pack('kube-prometheus-stack', kubePrometheusStack(at, '66.3.1')),
      },
      { name: 'cert-manager', version: 'v1.16.2', tgz: await pack('cert-manager', certManager(at)) },
      {
        name: 'ingress-nginx',
        version: '4.12.1',
        tgz: await pack('ingress-nginx', ingressNginx(at, controller.digest)),
      },
      { name: 'grafana', version: '8.6.0', tgz: await pack('grafana', grafana(at)) },
      { name: 'broken', version: '0.1.0', tgz: await packChart(join(dir, 'broken')) },
      {
        name: 'badyaml',
        version: '0.1.0',
        tgz: await pack('badyaml', {
          'Chart.yaml': 'apiVersion: v2\nname: badyaml\nversion: 0.1.0\n',
          'templates/cm.yaml':
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: x\n   b: y\n',
        }),
      },
      {
        name: 'badref',
        version: '0.1.0',
        tgz: await pack('badref', {
          'Chart.yaml': 'apiVersion: v2\nname: badref\nversion: 0.1.0\n',
          'values.yaml': 'image:\n  repository: quay.io/example/App\n  tag: v1\n',
          'templates/pod.yaml':
            'apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n      image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n',
        }),
      },
      {
        // Two images of one chart that oc-mirror's naming puts at one destination.
        name: 'twins',
        version: '0.1.0',
        tgz: await pack('twins', {
          'Chart.yaml': 'apiVersion: v2\nname: twins\nversion: 0.1.0\n',
          'templates/pod.yaml':
            'apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: a\n      image: one.example.com/library/busybox:1.36\n    - name: b\n      image: two.example.com/library/busybox:1.36\n',
        }),
      },
      {
        name: 'common',
        version: '2.26.0',
        type: 'library',
        tgz: await pack('common', {
          'Chart.yaml': 'apiVersion: v2\nname: common\nversion: 2.26.0\ntype: library\n',
          'templates/_names.tpl': '{{- define "common.names.name" -}}{{ .Chart.Name }}{{- end -}}\n',
        }),
      },
    ]);
    try {
      const isc = await writeMirrorConfig(join(dir, 'corpus.yaml'), {
        helm: { repositories: [{ name: 'corpus', url: corpusRepo.url }] },
      });
      const plan = (json: boolean) =>
        airgap([
          'mirror',
          'plan',
          '-c',
          isc,
          `file://${join(dir, 'corpus-out')}`,
          ...access(),
          ...(json ? ['--json'] : []),
        ]);

      const j = await plan(true);
      expect(j.exitCode, j.stderr).toBe(1);
      const report = JSON.parse(j.stdout);
      type Img = { image: string; sources: string[]; where: string; onlyIn?: string[] };
      type Chart = { name: string; version?: string; images?: Img[]; error?: string };
      const charts = new Map<string, Chart>(report.charts.map((c: Chart) => [`${c.name} ${c.version}`, c]));
      // Every version of every chart; the library chart left out.
      expect([...charts.keys()].sort()).toEqual([
        'badref 0.1.0',
        'badyaml 0.1.0',
        'broken 0.1.0',
        'cert-manager v1.16.2',
        'grafana 8.6.0',
        'ingress-nginx 4.12.1',
        'kube-prometheus-stack 66.3.0',
        'kube-prometheus-stack 66.3.1',
        'twins 0.1.0',
      ]);
      const how = (key: string) =>
        Object.fromEntries(
          charts
            .get(key)!
            .images!.map((i) => [
              i.image.slice(src.host.length + 1),
              [i.sources.join(','), i.onlyIn?.join(',') ?? ''],
            ]),
        );
      for (const v of ['66.3.0', '66.3.1'])
        expect(how(`kube-prometheus-stack ${v}`)).toEqual({
          'prometheus-operator/prometheus-operator:v0.93.1': ['image', ''],
          'prometheus-operator/prometheus-config-reloader:v0.93.1': ['args', ''],
          'thanos/thanos:v0.37.2': ['args', ''],
          'ingress-nginx/kube-webhook-certgen:v1.5.2': ['image,hook', 'hook'],
        });
      expect(how('cert-manager v1.16.2')).toEqual({
        'jetstack/cert-manager-controller:v1.16.2': ['image', ''],
        'jetstack/cert-manager-acmesolver:v1.16.2': ['args', ''],
        'jetstack/cert-manager-startupapicheck:v1.16.2': ['image,hook', 'hook'],
      });
      expect(how('ingress-nginx 4.12.1')).toEqual({
        [`ingress-nginx/controller:v1.12.1@${controller.digest}`]: ['image', ''],
        'ingress-nginx/kube-webhook-certgen:v1.5.2': ['image,hook', 'hook'],
      });
      expect(how('grafana 8.6.0')).toEqual({
        'library/busybox:1.31.1': ['image', ''],
        'grafana/grafana:11.3.0': ['image', ''],
        'bats/bats:v1.4.1': ['image,test', 'test'],
      });
      // A chart that fails is named by file and line; the others' images are all planned and read.
      expect(charts.get('broken 0.1.0')!.error).toContain('broken/templates/pod.yaml:5');
      expect(charts.get('badyaml 0.1.0')!.error).toContain('badyaml/templates/cm.yaml:7');
      expect(charts.get('badref 0.1.0')!.error).toMatch(
        /^badref\/templates\/pod\.yaml: Pod\/app \.spec\.containers\[0\]\.image: invalid image reference "quay\.io\/example\/App:v1": repository names must be lowercase/,
      );
      // Two of a chart's images that would land on one destination fail that chart, with a way out.
      expect(charts.get('twins 0.1.0')!.error).toMatch(
        /^two\.example\.com\/library\/busybox:1\.36 and one\.example\.com\/library\/busybox:1\.36 would both be mirrored to library\/busybox:1\.36 \(twins\/templates\/pod\.yaml: Pod\/app \.spec\.containers\[1\]\.image\)\n {2}hint: leave one of them out with a mirror\.blockedImages pattern/,
      );
      const pairs = report.plan as { source: string; context: string; error?: string }[];
      for (const b of seeded)
        expect(
          pairs.map((p) => p.source),
          b.repo,
        ).toContain(`${src.host}/${b.repo}@${b.digest}`);
      expect(pairs.filter((p) => p.error)).toEqual([]);
      // The entry says how its image was found.
      expect(pairs.find((p) => p.source.includes('/cert-manager-acmesolver@'))!.context).toMatch(
        /^helm chart cert-manager v1\.16\.2 \[args\] \(cert-manager\/templates\/deployment\.yaml: Deployment\/airgap-cert-manager \.spec\.template\.spec\.containers\[0\]\.args\[3\]\)$/,
      );
      expect(report.warnings).toContain(
        'helm repository "corpus" lists no charts: every version of every chart, 8 chart(s) in 9 version(s)',
      );

      const t = await plan(false);
      expect(t.exitCode, t.stderr).toBe(1);
      const host = src.host.replace(/[.]/g, '\\.');
      expect(t.stdout).toMatch(/chart {4}kube-prometheus-stack 66\.3\.1 \(corpus\): 4 image\(s\)/);
      expect(t.stdout).toMatch(
        new RegExp(
          `\\n {11}${host}/prometheus-operator/prometheus-config-reloader:v0\\.93\\.1: not in an image: field, from args \\(kube-prometheus-stack/templates/prometheus-operator/deployment\\.yaml: Deployment/`,
        ),
      );
      expect(t.stdout).toMatch(
        new RegExp(`\\n {11}${host}/ingress-nginx/kube-webhook-certgen:v1\\.5\\.2: only in hooks \\(`),
      );
      expect(t.stdout).toMatch(
        new RegExp(
          `\\n {11}${host}/bats/bats:v1\\.4\\.1: only in test pods \\(helm test\\) \\(grafana/templates/tests/test\\.yaml: Pod/`,
        ),
      );
      expect(t.stdout).toContain('list it in mirror.blockedImages of the ImageSetConfiguration');
      expect(t.stdout).not.toMatch(/grafana\/grafana:11\.3\.0:/);
      expect(t.stdout).toMatch(
        /chart {4}badyaml 0\.1\.0 \(corpus\): FAILED, YAML parse error on badyaml\/templates\/cm\.yaml: bad indentation of a mapping entry \(7:5\)\n[^]*\(badyaml\/templates\/cm\.yaml:7\)\n +hint: line 7 is of the template's output/,
      );
      expect(t.stdout).toContain(
        'warning  helm repository "corpus" lists no charts: every version of every chart, 8 chart(s) in 9 version(s)',
      );

      // The way out works: blocked chart images are left out before they are named or pinned.
      const twins = await writeChart(join(dir, 'twins-local', 'twins'), {
        'Chart.yaml': 'apiVersion: v2\nname: twins\nversion: 0.1.0\n',
        'templates/pod.yaml':
          'apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: a\n      image: one.example.com/library/busybox:1.36\n    - name: b\n      image: two.example.com/library/busybox:1.36\n',
      });
      const blockedIsc = await writeMirrorConfig(join(dir, 'twins.yaml'), {
        helm: { local: [{ name: 'twins', path: twins }] },
        blockedImages: [{ name: '^one\\.example\\.com/' }, { name: '^two\\.example\\.com/' }],
      });
      const b = await airgap([
        'mirror',
        'plan',
        '-c',
        blockedIsc,
        `file://${join(dir, 'twins-out')}`,
        ...access(),
        '--json',
      ]);
      expect(b.exitCode, b.stderr).toBe(0);
      const blockedReport = JSON.parse(b.stdout);
      expect(blockedReport.charts[0].error).toBeUndefined();
      expect(blockedReport.blocked.map((x: { origin: string }) => x.origin).sort()).toEqual([
        'one.example.com/library/busybox:1.36',
        'two.example.com/library/busybox:1.36',
      ]);
      expect(blockedReport.plan).toEqual([]);
    } finally {
      await corpusRepo.stop();
    }
  }, 90_000);
});
