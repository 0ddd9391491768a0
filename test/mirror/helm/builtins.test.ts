import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import type { RenderOptions } from '../../../src/mirror/helm/render.js';
import { imagesOf } from '../../../src/mirror/helm/images.js';
import { loadYaml } from '../../../src/mirror/helm/yaml.js';
import { writeChart, type ChartFiles } from '../../fixtures/helm/charts.js';
import { OBSERVABILITY, PROMETHEUS } from '../../fixtures/helm/corpus/builtins.js';

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helm-builtins-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Write a chart, load it as a user's chart is loaded, and render it. */
async function render(files: ChartFiles, options: RenderOptions = {}) {
  const chart = await loadChart(await writeChart(join(tmp, `chart-${++n}`), files));
  return renderChart(chart, options).manifests;
}

const imagesIn = (manifests: Awaited<ReturnType<typeof render>>) =>
  imagesOf(manifests)
    .map((i) => i.image)
    .sort();

const textOf = (manifests: Awaited<ReturnType<typeof render>>, template: string) => {
  const m = manifests.find((x) => x.template === template);
  if (!m) throw new Error(`${template} was not rendered: ${manifests.map((x) => x.template).join(', ')}`);
  return m.text;
};

describe('a chart shaped like prometheus-community/prometheus: .Subcharts and .Files', () => {
  const options = { releaseName: 'monitoring', namespace: 'monitoring' };

  it('renders every component with the images helm template gives', async () => {
    expect(imagesIn(await render(PROMETHEUS, options))).toEqual([
      'quay.io/prometheus-operator/prometheus-config-reloader:v0.76.0',
      'quay.io/prometheus/alertmanager:v0.27.0',
      'quay.io/prometheus/node-exporter:v1.8.2',
      'quay.io/prometheus/prometheus:v2.54.1',
      'quay.io/prometheus/pushgateway:v1.9.0',
      'registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0',
    ]);
  });

  it('finds the alertmanager and the pushgateway through their own helpers, values and Chart', async () => {
    const manifests = await render(PROMETHEUS, {
      ...options,
      values: { alertmanager: { service: { port: 9094 } } },
    });
    const cm = loadYaml(textOf(manifests, 'prometheus/templates/cm.yaml')) as {
      data: Record<string, string>;
    };
    const config = loadYaml(cm.data['prometheus.yml']!) as Record<string, unknown>;
    expect(config['alerting']).toEqual({
      alertmanagers: [{ static_configs: [{ targets: ['monitoring-alertmanager.monitoring.svc:9094'] }] }],
    });
    expect(config['scrape_configs']).toContainEqual({
      job_name: 'pushgateway',
      honor_labels: true,
      static_configs: [{ targets: ['monitoring-prometheus-pushgateway.monitoring.svc:9091'] }],
    });
    expect(cm.data['prometheus.yml']).toContain('# alertmanager v0.27.0 (alertmanager chart 1.12.0)');
    const deploy = textOf(manifests, 'prometheus/templates/deploy.yaml');
    // The parent's values for the subchart (persistence.size: 2Gi) are in the subchart's .Values.
    expect(deploy).toContain('alertmanager-storage: 2Gi');
    expect(deploy).toContain('--web.external-url=http://monitoring-alertmanager:9094');
  });

  it('leaves a disabled subchart out of .Subcharts, its image out of the list', async () => {
    const manifests = await render(PROMETHEUS, {
      ...options,
      values: { 'prometheus-pushgateway': { enabled: false }, alertmanager: { enabled: false } },
    });
    const config = textOf(manifests, 'prometheus/templates/cm.yaml');
    expect(config).not.toContain('pushgateway');
    expect(config).not.toContain('alerting');
    expect(textOf(manifests, 'prometheus/templates/deploy.yaml')).not.toContain('external-url');
    const images = imagesIn(manifests);
    expect(images).not.toContain('quay.io/prometheus/pushgateway:v1.9.0');
    expect(images).not.toContain('quay.io/prometheus/alertmanager:v0.27.0');
  });

  it('ranges over .Files.Glob: the rule files, not the README beside them', async () => {
    const manifests = await render(PROMETHEUS, options);
    const cm = loadYaml(textOf(manifests, 'prometheus/templates/cm.yaml')) as {
      data: Record<string, string>;
    };
    expect(Object.keys(cm.data).sort()).toEqual(['alerts.yaml', 'prometheus.yml', 'recording.yaml']);
    expect(cm.data['alerts.yaml']).toContain('alert: InstanceDown');
    const config = loadYaml(cm.data['prometheus.yml']!) as Record<string, unknown>;
    expect(config['rule_files']).toEqual(['/etc/config/alerts.yaml', '/etc/config/recording.yaml']);
  });
});

describe('import-values, as Helm 3.13.1 and later process them', () => {
  it("takes an umbrella's image defaults from its dependencies' exports, its own values winning", async () => {
    expect(imagesIn(await render(OBSERVABILITY))).toEqual([
      // The collector's own deployment: its values.yaml.
      'acme/config-reloader:1.3.0',
      // The umbrella's job: the repository imported from the collector, the tag its values.yaml pins.
      'docker.io/otel/opentelemetry-collector-contrib:0.108.0',
      'docker.io/otel/opentelemetry-collector-contrib:0.109.0',
      // Imported through the collector from its own subchart.
      'ghcr.io/acme/config-reloader:1.3.0',
      // The image catalog's exports; the disabled legacy agent's are not imported.
      'ghcr.io/acme/gateway:3.2.0',
    ]);
  });

  it("puts the user's values over imported ones", async () => {
    const images = imagesIn(
      await render(OBSERVABILITY, {
        values: { images: { gateway: { tag: '3.2.1' } }, collectorImage: { tag: '0.110.0' } },
      }),
    );
    expect(images).toContain('ghcr.io/acme/gateway:3.2.1');
    expect(images).toContain('docker.io/otel/opentelemetry-collector-contrib:0.110.0');
    // Imports read the charts' values, not the user's: the collector's own image changes, not the import.
    const own = imagesIn(
      await render(OBSERVABILITY, {
        values: { collector: { image: { repository: 'mirror.example.com/otel/collector' } } },
      }),
    );
    expect(own).toContain('mirror.example.com/otel/collector:0.108.0');
    expect(own).toContain('docker.io/otel/opentelemetry-collector-contrib:0.109.0');
  });

  it('imports from a dependency once it is enabled, the first listed winning', async () => {
    const images = imagesIn(await render(OBSERVABILITY, { values: { legacyAgent: { enabled: true } } }));
    expect(images).toContain('registry.example.com/legacy/acme/gateway:0.0.1-legacy');
    expect(images).toContain('registry.example.com/legacy/agent:0.9.4');
    expect(images).not.toContain('ghcr.io/acme/gateway:3.2.0');
  });

  it('imports through an alias, and nothing for a path that is not a table', async () => {
    const files: ChartFiles = {
      ...OBSERVABILITY,
      'Chart.yaml': OBSERVABILITY['Chart.yaml']!.replace(
        '      - child: image\n        parent: collectorImage\n',
        '      - child: image\n        parent: collectorImage\n      - child: mode\n        parent: collectorMode\n',
      ),
      'templates/mode.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: mode
data:
  mode: {{ .Values.collectorMode | default "none" | quote }}
  imported: {{ .Values.collectorImage | toJson | quote }}
`,
    };
    const text = textOf(await render(files), 'observability/templates/mode.yaml');
    expect(text).toContain('mode: "none"');
    expect(text).toContain(
      `imported: "{\\"repository\\":\\"docker.io/otel/opentelemetry-collector-contrib\\",\\"tag\\":\\"0.109.0\\"}"`,
    );
  });
});

/** A one-template chart with a subchart `child` (alias `sub`, behind a condition) and files. */
function probe(template: string, extra: ChartFiles = {}): ChartFiles {
  return {
    'Chart.yaml': `apiVersion: v2
name: probe
version: 1.0.0
dependencies:
  - name: child
    alias: sub
    version: 1.0.0
    repository: file://charts/child
    condition: sub.enabled
    import-values:
      - data
`,
    'values.yaml': 'sub:\n  enabled: true\n',
    'templates/probe.yaml': template,
    'charts/child/Chart.yaml': 'name: child\nversion: 1.0.0\n',
    'charts/child/values.yaml': 'port: 80\nexports:\n  data:\n    fromChild: hello\n',
    'charts/child/templates/svc.yaml': 'kind: Service\nport: {{ .Values.port }}\n',
    'files/a.conf': 'a=1\n',
    'files/b.conf': 'b=2\n',
    'files/c.json': '{}\n',
    'files/sub/d.conf': 'd=4\n',
    ...extra,
  };
}

async function probeText(template: string, values: Record<string, unknown> = {}): Promise<string> {
  return textOf(await render(probe(template), { values }), 'probe/templates/probe.yaml');
}

describe("the other built-in objects, as Helm's", () => {
  it('globs as gobwas/glob does: classes, alternatives, ** across directories, bad patterns matching all', async () => {
    const t = (p: string) => `{{ range $k, $_ := .Files.Glob ${JSON.stringify(p)} }}{{ $k }} {{ end }}`;
    expect(await probeText(t('files/[ab].conf'))).toBe('files/a.conf files/b.conf ');
    expect(await probeText(t('files/[!a].*'))).toBe('files/b.conf files/c.json ');
    expect(await probeText(t('files/{*.json,sub/*}'))).toBe('files/c.json files/sub/d.conf ');
    expect(await probeText(t('files/*.conf'))).toBe('files/a.conf files/b.conf ');
    expect(await probeText(t('files/**.conf'))).toBe('files/a.conf files/b.conf files/sub/d.conf ');
    // A range and a list in one class is not gobwas syntax: Helm then globs "**".
    expect(await probeText(`{{ len (.Files.Glob "files/[a-b0-9].conf") }}`)).toBe('4');
  });

  it("matches a chart's glob in time linear in the name: a pattern built to backtrack stops at once", async () => {
    // A backtracking matcher tries each way of placing 30 stars over 80 a's: longer than the test runs.
    const hostile = `files/${'*a'.repeat(30)}b`;
    const files = probe(
      `{{ len (.Files.Glob ${JSON.stringify(hostile)}) }}|{{ len (.Files.Glob "files/*ab") }}`,
      {
        [`files/${'a'.repeat(80)}`]: 'x\n',
        [`files/${'a'.repeat(80)}b`]: 'y\n',
      },
    );
    expect(textOf(await render(files), 'probe/templates/probe.yaml')).toBe('1|1');
  });

  it('gives AsConfig of no files as {}, Lines without the final empty line, a map to index', async () => {
    expect(await probeText('{{ (.Files.Glob "none/*").AsConfig }}')).toBe('{}');
    expect(await probeText('{{ .Files.Lines "files/a.conf" | len }}')).toBe('1');
    expect(await probeText('{{ index .Files "files/b.conf" | toString }}')).toBe('b=2\n');
    expect(await probeText('{{ if .Files.Glob "none/*" }}some{{ else }}none{{ end }}')).toBe('none');
  });

  it("holds in .Files what Helm's loader puts there: not Chart.lock or the schema, requirements only in v1", async () => {
    const lock = 'dependencies: []\ndigest: sha256:0\ngenerated: "2024-09-01T00:00:00Z"\n';
    const files = probe(
      `{{ range $k, $_ := .Files }}{{ $k }} {{ end }}| {{ range $k, $_ := .Subcharts.sub.Files }}{{ $k }} {{ end }}`,
      {
        'Chart.lock': lock,
        'values.schema.json': '{"type": "object"}\n',
        'requirements.lock': lock,
        'charts/child/requirements.yaml': 'dependencies: []\n',
        'charts/child/NOTICE': 'child notice\n',
      },
    );
    expect(textOf(await render(files), 'probe/templates/probe.yaml')).toBe(
      'files/a.conf files/b.conf files/c.json files/sub/d.conf | NOTICE requirements.yaml ',
    );
  });

  it('knows the group/versions helm template knows, not Kinds, unless asked', async () => {
    const t =
      '{{ .Capabilities.APIVersions.Has "policy/v1beta1" }} {{ .Capabilities.APIVersions.Has "autoscaling/v2/HorizontalPodAutoscaler" }}';
    expect(await probeText(t)).toBe('true false');
    const chart = await loadChart(await writeChart(join(tmp, `chart-${++n}`), probe(t)));
    const asked = renderChart(chart, { apiVersions: ['autoscaling/v2/HorizontalPodAutoscaler'] });
    expect(textOf(asked.manifests, 'probe/templates/probe.yaml')).toBe('true true');
  });

  it('gives .Chart as Helm leaves it: IsRoot, dependencies by alias, apiVersion v1 by default', async () => {
    const t = `{{ range .Chart.Dependencies }}{{ .Name }} {{ .Enabled }} {{ .ImportValues }}{{ end }}
{{ with .Subcharts.sub }}{{ .Chart.Name }} {{ .Chart.APIVersion }} {{ .Chart.IsRoot }} {{ .Template.Name }}{{ end }}
{{ .Chart.IsRoot }} {{ .Values.fromChild }}`;
    expect(await probeText(t)).toBe(
      'sub true [map[child:exports.data parent:.]]\nsub v1 false probe/charts/sub/templates/svc.yaml\ntrue hello',
    );
  });

  it('renders a dependency declared `enabled: false` without a condition or tags, as Helm 3 does', async () => {
    const files = probe('kind: x');
    files['Chart.yaml'] = files['Chart.yaml']!.replace(
      '    condition: sub.enabled\n',
      '    enabled: false\n',
    );
    expect(textOf(await render(files), 'probe/charts/sub/templates/svc.yaml')).toBe(
      'kind: Service\nport: 80\n',
    );
  });

  it("keeps a disabled subchart's values.yaml out of the parent's values", async () => {
    expect(await probeText('{{ toJson .Values.sub }}', { sub: { enabled: false } })).toBe(
      '{"enabled":false}',
    );
  });

  it("removes a subchart's default with a null the user sets over the parent's value for it", async () => {
    const files = probe('kind: x', { 'values.yaml': 'sub:\n  enabled: true\n  port: 8080\n' });
    const manifests = await render(files, { values: { sub: { port: null } } });
    expect(textOf(manifests, 'probe/charts/sub/templates/svc.yaml')).toBe('kind: Service\nport: \n');
  });
});
