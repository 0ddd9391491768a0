/**
 * A large, real-shaped Helm chart for tests and benchmarks, in the shape of kube-prometheus-stack
 * (test infrastructure, not product): a parent chart of 116 templates (the operator's Deployment,
 * admission webhooks and their hook Jobs, Prometheus and Alertmanager custom resources, RBAC,
 * Services and ServiceMonitors of the Kubernetes components, 36 PrometheusRules whose alert texts
 * are `{{`{{`}}`-escaped, 29 dashboard ConfigMaps loaded with `.Files.Get` and one with
 * `.Files.Glob`, extra manifests and user rules through `tpl`), a _helpers.tpl of many defines
 * included from one another, a values.yaml of about 3,500 lines, and six subcharts: grafana,
 * kube-state-metrics, prometheus-node-exporter, prometheus-windows-exporter, crds (CRDs under
 * crds/) and a Bitnami-style `common` library whose defines the others include. It uses only the
 * functions airgap's template engine has (src/mirror/helm/template).
 *
 * Rendered with its defaults (release "airgap" in "default") it makes 133 manifests naming
 * {@link stackChartImages}: the container images of its pods, and the Prometheus and Alertmanager
 * images of their custom resources' `.spec.image` (found with the image path `{.spec.image}`).
 * The same options give the same bytes.
 */
import type { ChartFiles } from '../test/fixtures/helm/charts.js';
import { grafanaChart } from './helm-chart-gen-charts.js';
import { crdsChart, kubeStateMetricsChart } from './helm-chart-gen-kube.js';
import {
  DASHBOARDS,
  EXTRA_DASHBOARDS,
  RULE_GROUPS,
  dashboardJson,
  dashboardTemplate,
  exporterTemplates,
  ruleTemplate,
} from './helm-chart-gen-data.js';
import { parentHelpers } from './helm-chart-gen-helpers.js';
import { parentWorkloads } from './helm-chart-gen-parent.js';
import { commonChart, daemonSetChart, type ImageValue } from './helm-chart-gen-subcharts.js';
import { parentValues, type ParentImages } from './helm-chart-gen-values.js';

export interface StackChartOptions {
  /** Every image from this registry (`global.imageRegistry`), e.g. a loopback registry's host. */
  registry?: string;
  /** Images pinned by digest (each image's `sha`), as `sha256:<hex>` per repository; others by tag. */
  digests?: Record<string, string>;
  /** Bytes of dashboard JSON in files/dashboards (default 3 MB, as a few MB of real dashboards). */
  dashboardBytes?: number;
  /** Bytes of CRDs under charts/crds/crds (default 1 MB). */
  crdBytes?: number;
  /** Alerts per PrometheusRule (default 8: 240 alerts in 30 rules). */
  alertsPerRule?: number;
}

/** The images the chart's values name, by role (registry, repository, tag: real ones' shape). */
const IMAGES = {
  operator: { registry: 'quay.io', repository: 'prometheus-operator/prometheus-operator', tag: 'v0.79.2' },
  reloader: {
    registry: 'quay.io',
    repository: 'prometheus-operator/prometheus-config-reloader',
    tag: 'v0.79.2',
  },
  certgen: { registry: 'registry.k8s.io', repository: 'ingress-nginx/kube-webhook-certgen', tag: 'v1.5.0' },
  prometheus: { registry: 'quay.io', repository: 'prometheus/prometheus', tag: 'v3.1.0' },
  alertmanager: { registry: 'quay.io', repository: 'prometheus/alertmanager', tag: 'v0.28.0' },
  thanos: { registry: 'quay.io', repository: 'thanos/thanos', tag: 'v0.37.2' },
  grafana: { registry: 'docker.io', repository: 'grafana/grafana', tag: '11.4.0' },
  sidecar: { registry: 'quay.io', repository: 'kiwigrid/k8s-sidecar', tag: '1.28.0' },
  busybox: { registry: 'docker.io', repository: 'library/busybox', tag: '1.31.1' },
  bats: { registry: 'docker.io', repository: 'bats/bats', tag: 'v1.4.1' },
  kubeStateMetrics: {
    registry: 'registry.k8s.io',
    repository: 'kube-state-metrics/kube-state-metrics',
    tag: 'v2.14.0',
  },
  nodeExporter: { registry: 'quay.io', repository: 'prometheus/node-exporter', tag: 'v1.8.2' },
  windowsExporter: {
    registry: 'ghcr.io',
    repository: 'prometheus-community/windows-exporter',
    tag: '0.29.2',
  },
} satisfies Record<string, ImageValue>;

type Role = keyof typeof IMAGES;

/**
 * The roles whose images the default render names: in pod specs (the reloader and thanos in the
 * operator's args), or a custom resource's `.spec.image`.
 */
const RENDERED: Role[] = [
  'operator',
  'reloader',
  'thanos',
  'certgen',
  'prometheus',
  'alertmanager',
  'grafana',
  'sidecar',
  'busybox',
  'bats',
  'kubeStateMetrics',
  'nodeExporter',
  'windowsExporter',
];
/** The roles whose images Bitnami's common.images.image names: by digest alone when there is one. */
const BY_DIGEST_ALONE: Role[] = ['grafana', 'sidecar', 'busybox'];
/** The roles found in custom resources only (with the image path `{.spec.image}`). */
const IN_CUSTOM_RESOURCES: Role[] = ['prometheus', 'alertmanager'];

function imagesFor(o: StackChartOptions): Record<Role, ImageValue> {
  const out = {} as Record<Role, ImageValue>;
  for (const [role, i] of Object.entries(IMAGES) as [Role, ImageValue][]) {
    const digest = o.digests?.[i.repository];
    out[role] = digest ? { ...i, sha: digest.replace(/^sha256:/, '') } : i;
  }
  return out;
}

/**
 * The images a default render names, as references: the container images of its pods, and with
 * `customResources` the Prometheus and Alertmanager images too (`{.spec.image}`).
 */
export function stackChartImages(o: StackChartOptions = {}, customResources = true): string[] {
  const images = imagesFor(o);
  return RENDERED.filter((r) => customResources || !IN_CUSTOM_RESOURCES.includes(r)).map((r) => {
    const i = images[r];
    const repo = `${o.registry ?? i.registry}/${i.repository}`;
    if (!i.sha) return `${repo}:${i.tag}`;
    return BY_DIGEST_ALONE.includes(r) ? `${repo}@sha256:${i.sha}` : `${repo}:${i.tag}@sha256:${i.sha}`;
  });
}

/** The subcharts, under charts/<name>/. */
function subcharts(images: Record<Role, ImageValue>, crdBytes: number): ChartFiles {
  const charts: Record<string, ChartFiles> = {
    common: commonChart(),
    crds: crdsChart(crdBytes),
    grafana: grafanaChart(images),
    'kube-state-metrics': kubeStateMetricsChart(images.kubeStateMetrics),
    'prometheus-node-exporter': daemonSetChart({
      name: 'prometheus-node-exporter',
      prefix: 'prometheus-node-exporter',
      version: '4.43.1',
      appVersion: '1.8.2',
      image: images.nodeExporter,
      port: 9100,
      os: 'linux',
      args: [
        '--path.procfs=/host/proc',
        '--path.sysfs=/host/sys',
        '--path.rootfs=/host/root',
        '--web.listen-address=[$(HOST_IP)]:{{ .Values.service.port }}',
      ],
      extraValues: 'hostRootFsMount:\n  enabled: true\n  mountPropagation: HostToContainer\n',
    }),
    'prometheus-windows-exporter': daemonSetChart({
      name: 'prometheus-windows-exporter',
      prefix: 'prometheus-windows-exporter',
      version: '0.8.0',
      appVersion: '0.29.2',
      image: images.windowsExporter,
      port: 9182,
      os: 'windows',
      args: [
        '--config.file=%CONFIG_DIR%\\config.yml',
        '--collector.textfile.directories=%CONFIG_DIR%',
        '--web.listen-address=:{{ .Values.service.port }}',
      ],
      extraValues: `config: |-\n  collectors:\n    enabled: '[defaults],memory,container'\n`,
      configMap: `{{- if .Values.config }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "prometheus-windows-exporter.fullname" . }}
  namespace: {{ include "prometheus-windows-exporter.namespace" . }}
  labels:
    {{- include "prometheus-windows-exporter.labels" . | nindent 4 }}
data:
  config.yml: |
    {{- tpl .Values.config . | nindent 4 }}
{{- end }}
`,
    }),
  };
  const out: ChartFiles = {};
  for (const [name, files] of Object.entries(charts))
    for (const [path, text] of Object.entries(files)) out[`charts/${name}/${path}`] = text;
  return out;
}

const CHART_YAML = `apiVersion: v2
description: kube-prometheus-stack collects Kubernetes manifests, Grafana dashboards, and Prometheus rules combined with documentation and scripts to provide easy to operate end-to-end Kubernetes cluster monitoring with Prometheus using the Prometheus Operator.
icon: https://raw.githubusercontent.com/prometheus/prometheus.github.io/master/assets/prometheus_logo-cb55bb5c346.png
type: application
maintainers:
  - name: lab
    email: lab@example.com
name: kube-prom-stack
sources:
  - https://github.com/prometheus-community/helm-charts
version: 67.9.0
appVersion: v0.79.2
kubeVersion: ">=1.19.0-0"
home: https://github.com/prometheus-operator/kube-prometheus
keywords:
  - operator
  - prometheus
  - kube-prometheus
annotations:
  "artifacthub.io/license": Apache-2.0
  "artifacthub.io/operator": "true"
dependencies:
  - name: crds
    version: "0.0.0"
    condition: crds.enabled
  - name: kube-state-metrics
    version: "5.28.*"
    repository: https://prometheus-community.github.io/helm-charts
    condition: kubeStateMetrics.enabled
  - name: prometheus-node-exporter
    version: "4.43.*"
    repository: https://prometheus-community.github.io/helm-charts
    condition: nodeExporter.enabled
  - name: grafana
    version: "8.8.*"
    repository: https://grafana.github.io/helm-charts
    condition: grafana.enabled
  - name: prometheus-windows-exporter
    repository: https://prometheus-community.github.io/helm-charts
    version: "0.8.*"
    condition: windowsMonitoring.enabled
  - name: common
    version: "2.x.x"
    repository: oci://registry-1.docker.io/bitnamicharts
`;

/** The parent's grafana datasource ConfigMap (rendered with tpl), the glob dashboards, extra manifests, notes. */
function parentMisc(): ChartFiles {
  return {
    'templates/NOTES.txt': `{{ $.Chart.Name }} has been installed. Check its status by running:
  kubectl --namespace {{ template "kube-prom-stack.namespace" . }} get pods -l "release={{ $.Release.Name }}"
`,
    'templates/extra-objects.yaml': `{{ range .Values.extraManifests }}
---
{{ tpl (toYaml .) $ }}
{{ end }}
`,
    'templates/grafana/configmaps-datasources.yaml': `{{- if or (and .Values.grafana.enabled .Values.grafana.sidecar.datasources.enabled) .Values.grafana.forceDeployDatasources }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-grafana-datasource
  namespace: {{ template "kube-prom-stack-grafana.namespace" . }}
  labels:
    {{ $.Values.grafana.sidecar.datasources.label }}: {{ $.Values.grafana.sidecar.datasources.labelValue | quote }}
    app: {{ template "kube-prom-stack.name" $ }}-grafana
{{ include "kube-prom-stack.labels" $ | indent 4 }}
data:
  datasource.yaml: |-
    apiVersion: 1
    datasources:
{{- $scrapeInterval := .Values.grafana.sidecar.datasources.defaultDatasourceScrapeInterval | default .Values.prometheus.prometheusSpec.scrapeInterval | default "30s" }}
{{- if .Values.grafana.sidecar.datasources.defaultDatasourceEnabled }}
    - name: "{{ .Values.grafana.sidecar.datasources.name }}"
      type: prometheus
      uid: {{ .Values.grafana.sidecar.datasources.uid }}
      url: {{ default (printf "http://%s-prometheus.%s:%v/" (include "kube-prom-stack.fullname" .) (include "kube-prom-stack.namespace" .) .Values.prometheus.service.port) .Values.grafana.sidecar.datasources.url }}
      access: proxy
      isDefault: {{ .Values.grafana.sidecar.datasources.isDefaultDatasource }}
      jsonData:
        httpMethod: {{ .Values.grafana.sidecar.datasources.httpMethod }}
        timeInterval: {{ $scrapeInterval }}
{{- end }}
{{- if .Values.grafana.sidecar.datasources.alertmanager.enabled }}
    - name: {{ .Values.grafana.sidecar.datasources.alertmanager.name }}
      type: alertmanager
      uid: {{ .Values.grafana.sidecar.datasources.alertmanager.uid }}
      url: http://{{ template "kube-prom-stack.fullname" . }}-alertmanager.{{ template "kube-prom-stack.namespace" . }}:{{ .Values.alertmanager.service.port }}/
      access: proxy
      jsonData:
        handleGrafanaManagedAlerts: {{ .Values.grafana.sidecar.datasources.alertmanager.handleGrafanaManagedAlerts }}
        implementation: {{ .Values.grafana.sidecar.datasources.alertmanager.implementation }}
{{- end }}
{{- if .Values.grafana.additionalDataSources }}
{{ tpl (toYaml .Values.grafana.additionalDataSources | indent 4) . }}
{{- end }}
{{- end }}
`,
    'templates/prometheus/additionalPrometheusRules.yaml': `{{- if or .Values.additionalPrometheusRules .Values.additionalPrometheusRulesMap }}
apiVersion: v1
kind: List
metadata:
  name: {{ include "kube-prom-stack.fullname" $ }}-additional-prometheus-rules
  namespace: {{ template "kube-prom-stack.namespace" . }}
items:
{{- range $prometheusRuleName, $prometheusRule := .Values.additionalPrometheusRulesMap }}
  - apiVersion: monitoring.coreos.com/v1
    kind: PrometheusRule
    metadata:
      name: {{ template "kube-prom-stack.name" $ }}-{{ $prometheusRuleName }}
      namespace: {{ template "kube-prom-stack.namespace" $ }}
      labels:
        app: {{ template "kube-prom-stack.name" $ }}
{{ include "kube-prom-stack.labels" $ | indent 8 }}
    {{- if $prometheusRule.additionalLabels }}
{{ toYaml $prometheusRule.additionalLabels | indent 8 }}
    {{- end }}
    spec:
      groups:
{{ tpl (toYaml $prometheusRule.groups | indent 8) $ }}
{{- end }}
{{- end }}
`,
    'templates/grafana/dashboards-extra.yaml': `{{- if and .Values.grafana.enabled .Values.grafana.defaultDashboardsEnabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-extra-dashboards
  namespace: {{ template "kube-prom-stack-grafana.namespace" . }}
  labels:
    {{ $.Values.grafana.sidecar.dashboards.label }}: {{ $.Values.grafana.sidecar.dashboards.labelValue | quote }}
{{ include "kube-prom-stack.labels" $ | indent 4 }}
data:
{{ (.Files.Glob "files/dashboards/extra/*.json").AsConfig | indent 2 }}
{{- end }}
`,
  };
}

/** The whole chart, as its files (write it with writeChart, pack it with lab/chart-repo.ts packChart). */
export function stackChart(o: StackChartOptions = {}): ChartFiles {
  const images = imagesFor(o);
  const dashboardBytes = o.dashboardBytes ?? 3_000_000;
  const perDashboard = dashboardBytes / (DASHBOARDS.length + EXTRA_DASHBOARDS.length);
  const files: ChartFiles = {
    'Chart.yaml': CHART_YAML,
    'values.yaml': parentValues(images as ParentImages, o.registry ?? ''),
    '.helmignore': '# Patterns to ignore when building packages.\n.git/\n*.swp\n*.bak\n*.tmp\n.vscode/\n',
    'templates/_helpers.tpl': parentHelpers(),
    ...parentWorkloads(),
    ...parentMisc(),
    ...exporterTemplates(
      'kubeControllerManager',
      'kube-controller-manager',
      'kube-controller-manager',
      'http-metrics',
    ),
    ...exporterTemplates('coreDns', 'core-dns', 'coredns', 'http-metrics'),
    ...exporterTemplates('kubeEtcd', 'kube-etcd', 'kube-etcd', 'http-metrics'),
    ...exporterTemplates('kubeScheduler', 'kube-scheduler', 'kube-scheduler', 'http-metrics'),
    ...exporterTemplates('kubeProxy', 'kube-proxy', 'kube-proxy', 'http-metrics'),
  };
  // The API server and the kubelet are scraped without a Service of the chart's own.
  for (const [key, file, app] of [
    ['kubeApiServer', 'kube-api-server', 'apiserver'],
    ['kubelet', 'kubelet', 'kubelet'],
  ] as const)
    files[`templates/exporters/${file}/servicemonitor.yaml`] = exporterTemplates(key, file, app, 'https')[
      `templates/exporters/${file}/servicemonitor.yaml`
    ]!;
  for (const g of RULE_GROUPS)
    files[`templates/prometheus/rules-1.14/${g.replace(/\.rules$/, '')}.yaml`] = ruleTemplate(
      g,
      o.alertsPerRule ?? 8,
    );
  for (const d of DASHBOARDS) {
    files[`templates/grafana/dashboards-1.14/${d}.yaml`] = dashboardTemplate(d);
    files[`files/dashboards/${d}.json`] = dashboardJson(d, perDashboard);
  }
  for (const d of EXTRA_DASHBOARDS)
    files[`files/dashboards/extra/${d}.json`] = dashboardJson(d, perDashboard);
  return { ...files, ...subcharts(images, o.crdBytes ?? 1_000_000) };
}
