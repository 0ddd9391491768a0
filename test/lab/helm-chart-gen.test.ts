/**
 * The generated kube-prometheus-stack-sized chart (lab/helm-chart-gen.ts) that bench/helm.ts
 * measures: it loads and renders with the real engine to its 133 manifests, its subcharts among
 * them, and yields the images its values name; the global registry and digests reach every image.
 * If the generator broke (a template that does not parse or render, a subchart dropped, an image
 * lost), the benchmark would measure something else: these say so first.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jsyaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packChart } from '../../lab/chart-repo.js';
import { stackChart, stackChartImages } from '../../lab/helm-chart-gen.js';
import { loadChart, renderChart } from '../../src/mirror/helm/chart.js';
import { imagesOf } from '../../src/mirror/helm/images.js';
import type { RenderedManifest } from '../../src/mirror/helm/render.js';
import { writeChart } from '../fixtures/helm/charts.js';

/** What the chart's values name, written out here rather than taken from the generator. */
const POD_IMAGES = [
  'quay.io/prometheus-operator/prometheus-operator:v0.79.2',
  // In the operator's args: it injects them into every Prometheus and Alertmanager pod.
  'quay.io/prometheus-operator/prometheus-config-reloader:v0.79.2',
  'quay.io/thanos/thanos:v0.37.2',
  'registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.5.0',
  'docker.io/grafana/grafana:11.4.0',
  'quay.io/kiwigrid/k8s-sidecar:1.28.0',
  'docker.io/library/busybox:1.31.1',
  'docker.io/bats/bats:v1.4.1',
  'registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.14.0',
  'quay.io/prometheus/node-exporter:v1.8.2',
  'ghcr.io/prometheus-community/windows-exporter:0.29.2',
];
const CR_IMAGES = ['quay.io/prometheus/prometheus:v3.1.0', 'quay.io/prometheus/alertmanager:v0.28.0'];

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helm-gen-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const sorted = (xs: string[]) => [...xs].sort();
const countBy = (manifests: RenderedManifest[]) => {
  const out: Record<string, number> = {};
  for (const m of manifests) {
    const sub = /\/charts\/([^/]+)\//.exec(m.template)?.[1] ?? '(parent)';
    out[sub] = (out[sub] ?? 0) + 1;
  }
  return out;
};

describe('the generated monitoring stack chart', () => {
  let manifests: RenderedManifest[];

  beforeAll(async () => {
    const dir = await writeChart(join(tmp, 'stack'), stackChart());
    ({ manifests } = renderChart(await loadChart(dir)));
  });

  it('renders to 133 manifests: the parent and four of its subcharts (crds renders none, common is a library)', () => {
    expect(manifests).toHaveLength(133);
    expect(countBy(manifests)).toEqual({
      '(parent)': 107,
      grafana: 11,
      'kube-state-metrics': 6,
      'prometheus-node-exporter': 4,
      'prometheus-windows-exporter': 5,
    });
  });

  it('names the images of its pods, and those of its custom resources with the image path {.spec.image}', () => {
    expect(sorted(imagesOf(manifests).map((i) => i.image))).toEqual(sorted(POD_IMAGES));
    const all = imagesOf(manifests, { imagePaths: ['{.spec.image}'] }).map((i) => i.image);
    expect(sorted(all)).toEqual(sorted([...POD_IMAGES, ...CR_IMAGES]));
    expect(sorted(stackChartImages())).toEqual(sorted(all));
  });

  it('carries its dashboards whole from .Files.Get and .Files.Glob, and its alert texts unescaped', () => {
    const files = stackChart();
    const one = manifests.find((m) => m.template.endsWith('/dashboards-1.14/k8s-resources-pod.yaml'))!;
    const cm = jsyaml.load(one.text) as { data: Record<string, string> };
    expect(cm.data['k8s-resources-pod.json']).toBe(
      files['files/dashboards/k8s-resources-pod.json']!.replaceAll('$__timezone', 'utc'),
    );
    const extra = manifests.find((m) => m.template.endsWith('/dashboards-extra.yaml'))!;
    expect(Object.keys((jsyaml.load(extra.text) as { data: object }).data)).toHaveLength(4);
    const rule = manifests.find((m) => m.template.endsWith('/rules-1.14/kubernetes-apps.yaml'))!;
    expect(rule.text).toContain(
      "description: 'KubernetesAppsDown: pod {{ $labels.namespace }}/{{ $labels.pod }}",
    );
    expect(rule.text).toContain('namespace=~".*"');
  });
});

describe('the generated chart pointed at a mirror', () => {
  it('names every image at the global registry, pinned by the digests given (by digest alone through Bitnami common), from its packed archive', async () => {
    const digests = Object.fromEntries(
      ['grafana/grafana', 'prometheus/prometheus'].map((r, i) => [r, `sha256:${String(i + 1).repeat(64)}`]),
    );
    const opts = { registry: 'mirror.example.com:5000', digests, dashboardBytes: 50_000, crdBytes: 10_000 };
    const dir = await writeChart(join(tmp, 'kube-prom-stack'), stackChart(opts));
    const chart = await loadChart(await packChart(dir), 'kube-prom-stack.tgz');
    const found = imagesOf(renderChart(chart).manifests, { imagePaths: ['{.spec.image}'] }).map(
      (i) => i.image,
    );
    expect(found).toHaveLength(13);
    expect(found.every((i) => i.startsWith('mirror.example.com:5000/'))).toBe(true);
    expect(found).toContain(`mirror.example.com:5000/grafana/grafana@sha256:${'1'.repeat(64)}`);
    expect(found).toContain(`mirror.example.com:5000/prometheus/prometheus:v3.1.0@sha256:${'2'.repeat(64)}`);
    expect(sorted(found)).toEqual(sorted(stackChartImages(opts)));
  });
});
