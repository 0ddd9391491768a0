/**
 * The parent chart's _helpers.tpl of the generated monitoring stack (lab/helm-chart-gen.ts): names,
 * labels, service accounts, images with the global registry and digests, and the small helpers
 * kube-prometheus-stack's templates include everywhere, many of them through `include` of `include`.
 */

/** The defines of one workload's names (`operator`, `prometheus`, …). */
function componentNames(c: string, suffix: string, values: string): string {
  return `{{/* Fullname of the ${c} */}}
{{- define "kube-prom-stack.${c}.fullname" -}}
{{- if .Values.cleanPrometheusOperatorObjectNames }}
{{- include "kube-prom-stack.fullname" . }}
{{- else }}
{{- printf "%s-%s" (include "kube-prom-stack.fullname" .) "${suffix}" | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Name of the ${c} */}}
{{- define "kube-prom-stack.${c}.name" -}}
{{- printf "%s-%s" (include "kube-prom-stack.name" .) "${suffix}" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* Create the name of the ${c} service account to use */}}
{{- define "kube-prom-stack.${c}.serviceAccountName" -}}
{{- if ${values}.serviceAccount.create -}}
    {{ default (include "kube-prom-stack.${c}.fullname" .) ${values}.serviceAccount.name }}
{{- else -}}
    {{ default "default" ${values}.serviceAccount.name }}
{{- end -}}
{{- end -}}
`;
}

/** The chart's and its components' names, and the custom resources'. */
const NAMES = `{{/* vim: set filetype=mustache: */}}
{{/* Expand the name of the chart. This is suffixed with -alertmanager, which means subtract 13 from longest 63 available */}}
{{- define "kube-prom-stack.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 50 | trimSuffix "-" -}}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
The components in this chart create additional resources that expand the longest created name strings.
The longest name that gets created adds and extra 37 characters, so truncation should be 63-35=26.
*/}}
{{- define "kube-prom-stack.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 26 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 26 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 26 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

${componentNames('operator', 'operator', '.Values.prometheusOperator')}
${componentNames('prometheus', 'prometheus', '.Values.prometheus')}
${componentNames('alertmanager', 'alertmanager', '.Values.alertmanager')}
${componentNames('thanosRuler', 'thanos-ruler', '.Values.thanosRuler')}
${componentNames('admission', 'admission', '.Values.prometheusOperator.admissionWebhooks.patch')}

{{/* Prometheus custom resource instance name */}}
{{- define "kube-prom-stack.prometheus.crname" -}}
{{- if .Values.cleanPrometheusOperatorObjectNames }}
{{- include "kube-prom-stack.fullname" . }}
{{- else }}
{{- print (include "kube-prom-stack.fullname" .) "-prometheus" }}
{{- end }}
{{- end }}

{{/* Alertmanager custom resource instance name */}}
{{- define "kube-prom-stack.alertmanager.crname" -}}
{{- if .Values.cleanPrometheusOperatorObjectNames }}
{{- include "kube-prom-stack.fullname" . }}
{{- else }}
{{- print (include "kube-prom-stack.fullname" .) "-alertmanager" -}}
{{- end }}
{{- end }}

`;

/** Labels, namespaces and job names. */
const LABELS = `{{/* Create chart name and version as used by the chart label. */}}
{{- define "kube-prom-stack.chartref" -}}
{{- replace "+" "_" .Chart.Version | printf "%s-%s" .Chart.Name -}}
{{- end }}

{{/* Generate basic labels */}}
{{- define "kube-prom-stack.labels" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: "{{ replace "+" "_" .Chart.Version }}"
app.kubernetes.io/part-of: {{ template "kube-prom-stack.name" . }}
chart: {{ template "kube-prom-stack.chartref" . }}
release: {{ $.Release.Name | quote }}
heritage: {{ $.Release.Service | quote }}
{{- if .Values.commonLabels}}
{{ toYaml .Values.commonLabels }}
{{- end }}
{{- end }}

{{/*
Allow the release namespace to be overridden for multi-namespace deployments in combined charts
*/}}
{{- define "kube-prom-stack.namespace" -}}
  {{- if .Values.namespaceOverride -}}
    {{- .Values.namespaceOverride -}}
  {{- else -}}
    {{- .Release.Namespace -}}
  {{- end -}}
{{- end -}}

{{/* Use the grafana namespace override for multi-namespace deployments in combined charts */}}
{{- define "kube-prom-stack-grafana.namespace" -}}
  {{- if .Values.grafana.namespaceOverride -}}
    {{- .Values.grafana.namespaceOverride -}}
  {{- else -}}
    {{- .Release.Namespace -}}
  {{- end -}}
{{- end -}}

{{/* The kube-state-metrics job name, as the subchart names it */}}
{{- define "kube-prom-stack-kube-state-metrics.name" -}}
{{- $kubeStateMetricsValues := (index .Values "kube-state-metrics") -}}
{{- default "kube-state-metrics" $kubeStateMetricsValues.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* The kubelet job name */}}
{{- define "kube-prom-stack.kubelet.jobName" -}}
{{- if .Values.prometheusOperator.kubeletService.enabled -}}
kubelet
{{- else -}}
{{- .Values.kubelet.serviceMonitor.jobLabel | default "kubelet" -}}
{{- end -}}
{{- end }}

`;

/** Images, pull secrets, API versions, the webhook's failure policy, scrape limits. */
const IMAGES = `{{/*
An image reference from {registry, repository, tag, sha}, the global registry first, the chart's
appVersion when there is no tag.
{{ include "kube-prom-stack.image" (dict "image" .Values.x.image "context" $) }}
*/}}
{{- define "kube-prom-stack.image" -}}
{{- $registry := .context.Values.global.imageRegistry | default .image.registry -}}
{{- $tag := .image.tag | default .context.Chart.AppVersion | toString -}}
{{- if .image.sha -}}
{{- printf "%s/%s:%s@sha256:%s" $registry .image.repository $tag .image.sha -}}
{{- else -}}
{{- printf "%s/%s:%s" $registry .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The pull secrets, given as names or as {name: …} */}}
{{- define "kube-prom-stack.imagePullSecrets" -}}
{{- range .Values.global.imagePullSecrets }}
  {{- if eq (typeOf .) "map[string]interface {}" }}
- {{ toYaml . | trim }}
  {{- else }}
- name: {{ . }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* The API version of an Ingress */}}
{{- define "kube-prom-stack.ingress.apiVersion" -}}
{{- include "common.capabilities.ingress.apiVersion" . -}}
{{- end -}}

{{/* The API version of a PodDisruptionBudget */}}
{{- define "kube-prom-stack.pdb.apiVersion" -}}
{{- include "common.capabilities.policy.apiVersion" . -}}
{{- end -}}

{{/* Whether the webhook's failure policy ignores errors on install */}}
{{- define "kube-prom-stack.operator.admission-webhook.failurePolicy" -}}
{{- $failurePolicy := .Values.prometheusOperator.admissionWebhooks.failurePolicy | default "Fail" -}}
{{- if eq $failurePolicy "IgnoreOnInstallOnly" -}}
{{- ternary "Ignore" "Fail" .Release.IsInstall -}}
{{- else -}}
{{- $failurePolicy -}}
{{- end -}}
{{- end -}}

{{/* The scrape limits of a ServiceMonitor, from its values */}}
{{- define "kube-prom-stack.servicemonitor.scrapeLimits" -}}
{{- include "common.monitor.scrapeLimits" . -}}
{{- end -}}

`;

/** Anti-affinity and the scheduling block of a pod. */
const SCHEDULING = `{{/* Anti-affinity of a component: soft, hard or none. dict "component" "values" "context" */}}
{{- define "kube-prom-stack.podAntiAffinity" -}}
{{- $v := .values -}}
{{- if eq $v.podAntiAffinity "hard" }}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
  - topologyKey: {{ $v.podAntiAffinityTopologyKey }}
    labelSelector:
      matchExpressions:
        - {key: app.kubernetes.io/name, operator: In, values: [{{ .component }}]}
        - {key: {{ .component }}, operator: In, values: [{{ template "kube-prom-stack.fullname" .context }}-{{ .component }}]}
{{- else if eq $v.podAntiAffinity "soft" }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: {{ $v.podAntiAffinityTopologyKey }}
      labelSelector:
        matchExpressions:
          - {key: app.kubernetes.io/name, operator: In, values: [{{ .component }}]}
          - {key: {{ .component }}, operator: In, values: [{{ template "kube-prom-stack.fullname" .context }}-{{ .component }}]}
{{- end }}
{{- with $v.affinity }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Scheduling of a pod: node selector, tolerations, affinity, spread. dict "component" "values" "context" */}}
{{- define "kube-prom-stack.scheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $affinity := include "kube-prom-stack.podAntiAffinity" . }}
{{- if $affinity }}
affinity:
  {{- $affinity | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
`;

/** The parent's _helpers.tpl. */
export function parentHelpers(): string {
  return NAMES + LABELS + IMAGES + SCHEDULING;
}
