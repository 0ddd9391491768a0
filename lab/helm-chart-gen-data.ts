/**
 * The bulk of the generated monitoring stack (lab/helm-chart-gen.ts): PrometheusRule templates
 * whose alert texts are `{{`{{`}}`-escaped for Prometheus, as kube-prometheus-stack's generated
 * rule files are, and Grafana dashboards as JSON files the chart's ConfigMaps load with
 * `.Files.Get` and `.Files.Glob`, and the Services and ServiceMonitors that scrape the Kubernetes
 * components. Everything is deterministic: the same options give the same bytes.
 */
import type { ChartFiles } from '../test/fixtures/helm/charts.js';

/** The rule groups (one template each), as kube-prometheus-stack names its rule files. */
export const RULE_GROUPS = [
  'alertmanager.rules',
  'config-reloaders',
  'etcd',
  'general.rules',
  'k8s.rules.container-cpu',
  'kube-apiserver-availability.rules',
  'kube-apiserver-burnrate.rules',
  'kube-apiserver-histogram.rules',
  'kube-apiserver-slos',
  'kube-prometheus-general.rules',
  'kube-prometheus-node-recording.rules',
  'kube-scheduler.rules',
  'kube-state-metrics',
  'kubelet.rules',
  'kubernetes-apps',
  'kubernetes-resources',
  'kubernetes-storage',
  'kubernetes-system-apiserver',
  'kubernetes-system-controller-manager',
  'kubernetes-system-kube-proxy',
  'kubernetes-system-kubelet',
  'kubernetes-system-scheduler',
  'kubernetes-system',
  'node-exporter.rules',
  'node-exporter',
  'node-network',
  'node.rules',
  'prometheus-operator',
  'prometheus',
  'windows.rules',
  'k8s.rules.container-memory-cache',
  'k8s.rules.container-memory-rss',
  'k8s.rules.container-memory-swap',
  'k8s.rules.container-resource',
  'k8s.rules.pod-owner',
  'windows.node.rules',
] as const;

/** The values key of a rule group: `kubernetes-apps` → `kubernetesApps`. */
export function ruleKey(group: string): string {
  const words = group.replace(/\.rules$/, '').split(/[-.]/);
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

const CONDITIONS = [
  'Down',
  'CrashLooping',
  'HighLatency',
  'ErrorsHigh',
  'NotReady',
  'QuotaExceeded',
  'FillingUp',
  'ReplicasMismatch',
  'TargetDown',
  'ClockSkew',
];

/** Escape text for a Helm template so that it renders as itself: `{{` → `{{`{{`}}`. */
function helmEscape(text: string): string {
  return text.replaceAll('{{', '\0').replaceAll('}}', '{{`}}`}}').replaceAll('\0', '{{`{{`}}');
}

/** One alert of a rule template, with the per-alert switches and extra labels kube-prometheus-stack has. */
function alertRule(key: string, alert: string, i: number): string {
  const expr = [
    `sum by (cluster, namespace, pod, container) (`,
    `  rate(container_cpu_usage_seconds_total{job="{{ $kubeletJob }}", namespace=~"{{ $targetNamespace }}", container!=""}[5m])`,
    `) * on (cluster, namespace, pod) group_left(node) topk by (cluster, namespace, pod) (`,
    `  1, max by (cluster, namespace, pod, node) (kube_pod_info{job="{{ $kubeStateMetricsJob }}", node!=""})`,
    `) > ${(i % 7) + 1} * 0.${i % 10}5`,
  ];
  const description = helmEscape(
    `${alert}: pod {{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.container }}) on {{ $labels.node }} has been at {{ $value | humanizePercentage }} for longer than ${(i % 4) * 5 + 5} minutes.`,
  );
  return `{{- if not (.Values.defaultRules.disabled.${alert} | default false) }}
    - alert: ${alert}
      annotations:
{{- if .Values.defaultRules.additionalRuleAnnotations }}
{{ toYaml .Values.defaultRules.additionalRuleAnnotations | indent 8 }}
{{- end }}
{{- if .Values.defaultRules.additionalRuleGroupAnnotations.${key} }}
{{ toYaml .Values.defaultRules.additionalRuleGroupAnnotations.${key} | indent 8 }}
{{- end }}
        description: '${description}'
        runbook_url: {{ .Values.defaultRules.runbookUrl }}/${key.toLowerCase()}/${alert.toLowerCase()}
        summary: '${helmEscape(`${alert} on {{ $labels.cluster }}.`)}'
      expr: |-
${expr.map((l) => `        ${l}`).join('\n')}
      for: ${(i % 3) * 5 + 5}m
      {{- with .Values.defaultRules.keepFiringFor }}
      keep_firing_for: "{{ . }}"
      {{- end }}
      labels:
        severity: ${i % 3 === 0 ? 'critical' : 'warning'}
      {{- if or .Values.defaultRules.additionalRuleLabels .Values.defaultRules.additionalRuleGroupLabels.${key} }}
        {{- with .Values.defaultRules.additionalRuleLabels }}
          {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with .Values.defaultRules.additionalRuleGroupLabels.${key} }}
          {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
{{- end }}`;
}

/** The PrometheusRule template of one rule group, with `alerts` alerts. */
export function ruleTemplate(group: string, alerts: number): string {
  const key = ruleKey(group);
  const pascal = key.charAt(0).toUpperCase() + key.slice(1);
  const rules = Array.from({ length: alerts }, (_, i) =>
    alertRule(key, `${pascal}${CONDITIONS[i % CONDITIONS.length]}${i >= CONDITIONS.length ? i : ''}`, i),
  );
  return `{{- /*
Generated from '${group}' group of the mixin rules.
Do not change in-place! In order to change this file first read the generator's documentation.
*/ -}}
{{- $kubeTargetVersion := default .Capabilities.KubeVersion.GitVersion .Values.kubeTargetVersionOverride }}
{{- if and (semverCompare ">=1.14.0-0" $kubeTargetVersion) (semverCompare "<9.9.9-9" $kubeTargetVersion) .Values.defaultRules.create .Values.defaultRules.rules.${key} }}
{{- $kubeletJob := include "kube-prom-stack.kubelet.jobName" . }}
{{- $kubeStateMetricsJob := include "kube-prom-stack-kube-state-metrics.name" . }}
{{- $targetNamespace := .Values.defaultRules.appNamespacesTarget }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ printf "%s-%s" (include "kube-prom-stack.fullname" .) "${group.replace(/\.rules$/, '').replace(/\./g, '-')}" | trunc 63 | trimSuffix "-" }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
  labels:
    app: {{ template "kube-prom-stack.name" . }}
{{ include "kube-prom-stack.labels" . | indent 4 }}
{{- if .Values.defaultRules.labels }}
{{ toYaml .Values.defaultRules.labels | indent 4 }}
{{- end }}
{{- if .Values.defaultRules.annotations }}
  annotations:
{{ toYaml .Values.defaultRules.annotations | indent 4 }}
{{- end }}
spec:
  groups:
  - name: ${group}
    {{- if .Values.defaultRules.additionalRuleGroupPartialResponseStrategy }}
    partial_response_strategy: {{ .Values.defaultRules.additionalRuleGroupPartialResponseStrategy }}
    {{- end }}
    rules:
${rules.join('\n')}
{{- end }}
`;
}

/** The dashboards, as kube-prometheus-stack names its Grafana dashboards. */
export const DASHBOARDS = [
  'alertmanager-overview',
  'apiserver',
  'cluster-total',
  'controller-manager',
  'etcd',
  'grafana-overview',
  'k8s-coredns',
  'k8s-resources-cluster',
  'k8s-resources-multicluster',
  'k8s-resources-namespace',
  'k8s-resources-node',
  'k8s-resources-pod',
  'k8s-resources-workload',
  'k8s-resources-workloads-namespace',
  'kubelet',
  'namespace-by-pod',
  'namespace-by-workload',
  'node-cluster-rsrc-use',
  'node-rsrc-use',
  'nodes',
  'persistentvolumesusage',
  'pod-total',
  'prometheus',
  'proxy',
  'scheduler',
  'nodes-aix',
  'nodes-darwin',
  'k8s-windows-cluster-rsrc-use',
  'k8s-windows-node-rsrc-use',
] as const;

/** Dashboards only the `.Files.Glob` ConfigMap carries. */
export const EXTRA_DASHBOARDS = [
  'prometheus-remote-write',
  'workload-total',
  'multicluster-overview',
  'capacity',
];

/** A deterministic number generator (an LCG), so the same options make the same dashboards. */
function numbers(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function panel(id: number, rnd: () => number): Record<string, unknown> {
  const metric = [
    'container_cpu_usage_seconds_total',
    'container_memory_working_set_bytes',
    'kube_pod_info',
    'node_network_receive_bytes_total',
    'apiserver_request_total',
  ][Math.floor(rnd() * 5)];
  return {
    datasource: { type: 'prometheus', uid: '${datasource}' },
    description: `Panel ${id}: ${metric} by pod over the selected range, stacked by container.`,
    fieldConfig: {
      defaults: {
        custom: {
          fillOpacity: Math.floor(rnd() * 100),
          lineWidth: 1,
          showPoints: 'never',
          stacking: { mode: 'normal' },
        },
        thresholds: {
          mode: 'absolute',
          steps: [
            { color: 'green', value: null },
            { color: 'red', value: 80 },
          ],
        },
        unit: rnd() > 0.5 ? 'bytes' : 'short',
      },
      overrides: [],
    },
    gridPos: { h: 7, w: 12, x: (id % 2) * 12, y: Math.floor(id / 2) * 7 },
    id,
    interval: '1m',
    options: {
      legend: { asTable: true, displayMode: 'table', placement: 'right', showLegend: true },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
    targets: Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, t) => ({
      datasource: { type: 'prometheus', uid: '${datasource}' },
      expr: `sum(rate(${metric}{job="kubelet", metrics_path="/metrics/cadvisor", cluster="$cluster", namespace="$namespace", pod=~"$pod"}[$__rate_interval])) by (container) * ${t + 1}`,
      format: 'time_series',
      intervalFactor: 2,
      legendFormat: '{{container}}',
      refId: String.fromCharCode(65 + t),
    })),
    title: `${metric.replace(/_/g, ' ')} (${id})`,
    type: 'timeseries',
  };
}

/** A Grafana dashboard of about `bytes` bytes of JSON (4-space indented, as exported). */
export function dashboardJson(name: string, bytes: number): string {
  let seed = 0;
  for (const c of name) seed = (seed * 31 + c.charCodeAt(0)) >>> 0;
  const rnd = numbers(seed);
  const panels: Record<string, unknown>[] = [];
  for (let size = 2000, id = 1; size < bytes; id++) {
    const p = panel(id, rnd);
    panels.push(p);
    size += JSON.stringify(p, null, 4).length + id.toString().length * 8;
  }
  return JSON.stringify(
    {
      annotations: { list: [] },
      editable: true,
      graphTooltip: 0,
      panels,
      refresh: '10s',
      schemaVersion: 39,
      tags: ['kubernetes-mixin'],
      templating: {
        list: ['datasource', 'cluster', 'namespace', 'pod'].map((v) => ({
          name: v,
          type: v === 'datasource' ? 'datasource' : 'query',
          query:
            v === 'datasource' ? 'prometheus' : `label_values(kube_pod_info{job="kube-state-metrics"}, ${v})`,
          hide: 0,
        })),
      },
      time: { from: 'now-1h', to: 'now' },
      timezone: '$__timezone',
      title: `Kubernetes / ${name}`,
      uid: name.slice(0, 40),
      version: 0,
    },
    null,
    4,
  );
}

/** The ConfigMap template of one dashboard, loaded from files/dashboards/<name>.json. */
export function dashboardTemplate(name: string): string {
  return `{{- /*
Generated from '${name}' from the kubernetes mixin dashboards.
*/ -}}
{{- if and (or .Values.grafana.enabled .Values.grafana.forceDeployDashboards) .Values.grafana.defaultDashboardsEnabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  namespace: {{ template "kube-prom-stack-grafana.namespace" . }}
  name: {{ printf "%s-%s" (include "kube-prom-stack.fullname" $) "${name}" | trunc 63 | trimSuffix "-" }}
  annotations:
{{ toYaml .Values.grafana.sidecar.dashboards.annotations | indent 4 }}
  labels:
    {{- if $.Values.grafana.sidecar.dashboards.label }}
    {{ $.Values.grafana.sidecar.dashboards.label }}: {{ ternary $.Values.grafana.sidecar.dashboards.labelValue "1" (not (empty $.Values.grafana.sidecar.dashboards.labelValue)) | quote }}
    {{- end }}
    app: {{ template "kube-prom-stack.name" $ }}-grafana
{{ include "kube-prom-stack.labels" $ | indent 4 }}
data:
  ${name}.json: |-
{{ .Files.Get "files/dashboards/${name}.json" | replace "$__timezone" .Values.grafana.defaultDashboardsTimezone | indent 4 }}
{{- end }}
`;
}

/** A Kubernetes component's Service (in kube-system) and ServiceMonitor. */
export function exporterTemplates(key: string, file: string, app: string, port: string): ChartFiles {
  const v = `.Values.${key}`;
  return {
    [`templates/exporters/${file}/service.yaml`]: `{{- if and ${v}.enabled ${v}.service.enabled .Values.kubernetesServiceMonitors.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-${app}
  namespace: kube-system
  labels:
    app: {{ template "kube-prom-stack.name" . }}-${app}
    jobLabel: ${app}
{{ include "kube-prom-stack.labels" . | indent 4 }}
spec:
  clusterIP: None
  ports:
    - name: ${port}
      port: {{ ${v}.service.port }}
      protocol: TCP
      targetPort: {{ ${v}.service.targetPort }}
{{- if ${v}.endpoints }}{{- else }}
  selector:
    {{- if ${v}.service.selector }}
{{ toYaml ${v}.service.selector | indent 4 }}
    {{- else}}
    component: ${app}
    {{- end}}
{{- end }}
  type: ClusterIP
{{- end }}
`,
    [`templates/exporters/${file}/servicemonitor.yaml`]: `{{- if and ${v}.enabled ${v}.serviceMonitor.enabled .Values.kubernetesServiceMonitors.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-${app}
  namespace: {{ template "kube-prom-stack.namespace" . }}
  labels:
    app: {{ template "kube-prom-stack.name" . }}-${app}
  {{- with ${v}.serviceMonitor.additionalLabels }}
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{ include "kube-prom-stack.labels" . | indent 4 }}
spec:
  jobLabel: {{ ${v}.serviceMonitor.jobLabel | default "jobLabel" }}
  {{- include "kube-prom-stack.servicemonitor.scrapeLimits" ${v}.serviceMonitor | nindent 2 }}
  selector:
    {{- if ${v}.serviceMonitor.selector }}
    {{ tpl (toYaml ${v}.serviceMonitor.selector | nindent 4) . }}
    {{- else }}
    matchLabels:
      app: {{ template "kube-prom-stack.name" . }}-${app}
      release: {{ $.Release.Name | quote }}
    {{- end }}
  namespaceSelector:
    matchNames:
      - "kube-system"
  endpoints:
  - port: ${port}
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    {{- if ${v}.serviceMonitor.interval }}
    interval: {{ ${v}.serviceMonitor.interval }}
    {{- end }}
    {{- if ${v}.serviceMonitor.https }}
    scheme: https
    tlsConfig:
      caFile: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
      {{- with ${v}.serviceMonitor.insecureSkipVerify }}
      insecureSkipVerify: {{ . }}
      {{- end }}
    {{- end }}
{{- if ${v}.serviceMonitor.metricRelabelings }}
    metricRelabelings:
{{ tpl (toYaml ${v}.serviceMonitor.metricRelabelings | indent 4) . }}
{{- end }}
{{- if ${v}.serviceMonitor.relabelings }}
    relabelings:
{{ tpl (toYaml ${v}.serviceMonitor.relabelings | indent 4) . }}
{{- end }}
{{- end }}
`,
  };
}
