/**
 * The subcharts of the generated monitoring stack (lab/helm-chart-gen.ts), shaped as the community
 * charts a kube-prometheus-stack-sized chart carries are: grafana (a Deployment with sidecars, an
 * init container, RBAC, a config checksum, a test hook), kube-state-metrics (a ClusterRole from a
 * range over the collectors), prometheus-node-exporter and prometheus-windows-exporter (DaemonSets),
 * crds (CustomResourceDefinitions under crds/, which `helm template` does not render, and a disabled
 * upgrade job) and a Bitnami-style `common` library chart whose defines the others include.
 */
import type { ChartFiles } from '../test/fixtures/helm/charts.js';

/** An image as the values name it: registry, repository, tag and an optional digest (without sha256:). */
export interface ImageValue {
  registry: string;
  repository: string;
  tag: string;
  sha?: string;
}

/** The YAML of an image value, indented by `pad`. */
export function imageYaml(i: ImageValue, pad: string): string {
  return [
    `${pad}registry: ${i.registry}`,
    `${pad}repository: ${i.repository}`,
    `${pad}tag: ${JSON.stringify(i.tag)}`,
    `${pad}sha: ${JSON.stringify(i.sha ?? '')}`,
    // Bitnami's common.images.image reads a digest, and names the image by it alone.
    `${pad}digest: ${JSON.stringify(i.sha ? `sha256:${i.sha}` : '')}`,
    `${pad}pullPolicy: IfNotPresent`,
  ].join('\n');
}

/** The usual name helpers of a community chart, under `prefix`. */
function nameHelpers(prefix: string, extra = ''): string {
  return `{{/*
Expand the name of the chart.
*/}}
{{- define "${prefix}.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "${prefix}.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "${prefix}.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "${prefix}.namespace" -}}
{{- if .Values.namespaceOverride }}
{{- .Values.namespaceOverride }}
{{- else }}
{{- .Release.Namespace }}
{{- end }}
{{- end }}

{{- define "${prefix}.selectorLabels" -}}
app.kubernetes.io/name: {{ include "${prefix}.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "${prefix}.labels" -}}
helm.sh/chart: {{ include "${prefix}.chart" . }}
{{ include "${prefix}.selectorLabels" . }}
{{- if or .Chart.AppVersion .Values.image.tag }}
app.kubernetes.io/version: {{ mustRegexReplaceAllLiteral "@sha.*" .Values.image.tag "" | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: metrics
app.kubernetes.io/part-of: {{ include "${prefix}.name" . }}
{{- with .Values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- with .Values.releaseLabel }}
release: {{ $.Release.Name }}
{{- end }}
{{- end }}

{{- define "${prefix}.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "${prefix}.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The image to use, with the global registry override and an optional digest.
*/}}
{{- define "${prefix}.image" -}}
{{- $registry := .Values.global.imageRegistry | default .Values.image.registry -}}
{{- if .Values.image.sha -}}
{{- printf "%s/%s:%s@sha256:%s" $registry .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) .Values.image.sha }}
{{- else -}}
{{- printf "%s/%s:%s" $registry .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}
${extra}`;
}

/** The ServiceMonitor every exporter chart ships, for `prefix`'s chart. */
function serviceMonitor(prefix: string, port: string): string {
  return `{{- if .Values.prometheus.monitor.enabled }}
apiVersion: {{ .Values.prometheus.monitor.apiVersion | default "monitoring.coreos.com/v1" }}
kind: ServiceMonitor
metadata:
  name: {{ include "${prefix}.fullname" . }}
  namespace: {{ include "${prefix}.namespace" . }}
  labels:
    {{- include "${prefix}.labels" . | nindent 4 }}
    {{- with .Values.prometheus.monitor.additionalLabels }}
    {{- tpl (toYaml . | nindent 4) $ }}
    {{- end }}
spec:
  jobLabel: {{ default "app.kubernetes.io/name" .Values.prometheus.monitor.jobLabel }}
  {{- include "common.monitor.scrapeLimits" .Values.prometheus.monitor | nindent 2 }}
  selector:
    matchLabels:
      {{- include "${prefix}.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: ${port}
      scheme: {{ .Values.prometheus.monitor.scheme }}
      {{- with .Values.prometheus.monitor.interval }}
      interval: {{ . }}
      {{- end }}
      {{- with .Values.prometheus.monitor.scrapeTimeout }}
      scrapeTimeout: {{ . }}
      {{- end }}
      {{- with .Values.prometheus.monitor.relabelings }}
      relabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.prometheus.monitor.metricRelabelings }}
      metricRelabelings:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
`;
}

/** The ServiceAccount of `prefix`'s chart. */
function serviceAccount(prefix: string): string {
  return `{{- if .Values.serviceAccount.create -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "${prefix}.serviceAccountName" . }}
  namespace: {{ include "${prefix}.namespace" . }}
  labels:
    {{- include "${prefix}.labels" . | nindent 4 }}
  {{- with .Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
{{- with .Values.serviceAccount.imagePullSecrets }}
imagePullSecrets:
  {{- include "common.images.renderPullSecrets" (dict "images" (list) "context" $) | nindent 2 }}
{{- end }}
{{- end }}
`;
}

/** A Service on one port for `prefix`'s chart. */
function service(prefix: string, port: number, name: string): string {
  return `apiVersion: v1
kind: Service
metadata:
  name: {{ include "${prefix}.fullname" . }}
  namespace: {{ include "${prefix}.namespace" . }}
  labels:
    {{- include "${prefix}.labels" . | nindent 4 }}
  {{- with .Values.service.annotations }}
  annotations:
    {{- include "common.tplvalues.render" (dict "value" . "context" $) | nindent 4 }}
  {{- end }}
spec:
  type: {{ .Values.service.type }}
  ports:
    - port: {{ .Values.service.port | default ${port} }}
      targetPort: {{ .Values.service.targetPort | default ${port} }}
      protocol: TCP
      name: ${name}
  selector:
    {{- include "${prefix}.selectorLabels" . | nindent 4 }}
`;
}

/** Common values of the exporter charts: service account, service, monitor, resources, scheduling. */
function exporterValues(image: ImageValue, port: number, extra: string): string {
  const relabel = (i: number) =>
    [
      `      - sourceLabels: [__meta_kubernetes_pod_node_name]`,
      `        separator: ;`,
      `        regex: ^(.*)$`,
      `        targetLabel: nodename${i}`,
      `        replacement: $1`,
      `        action: replace`,
    ].join('\n');
  return `global:
  imageRegistry: ""
  imagePullSecrets: []
nameOverride: ""
fullnameOverride: ""
namespaceOverride: ""
image:
${imageYaml(image, '  ')}
imagePullSecrets: []
serviceAccount:
  # Specifies whether a ServiceAccount should be created
  create: true
  # The name of the ServiceAccount to use.
  # If not set and create is true, a name is generated using the fullname template
  name:
  annotations: {}
  imagePullSecrets: []
  automountServiceAccountToken: false
releaseLabel: false
podLabels: {}
podAnnotations:
  cluster-autoscaler.kubernetes.io/safe-to-evict: "true"
service:
  enabled: true
  type: ClusterIP
  port: ${port}
  targetPort: ${port}
  annotations:
    prometheus.io/scrape: "true"
prometheus:
  monitor:
    enabled: false
    apiVersion: ""
    jobLabel: ""
    additionalLabels: {}
    scheme: http
    interval: ""
    scrapeTimeout: 10s
    sampleLimit: 0
    targetLimit: 0
    labelLimit: 0
    labelNameLengthLimit: 0
    labelValueLengthLimit: 0
    relabelings:
${[1, 2, 3].map(relabel).join('\n')}
    metricRelabelings: []
resources:
  limits:
    cpu: 200m
    memory: 50Mi
  requests:
    cpu: 100m
    memory: 30Mi
securityContext:
  fsGroup: 65534
  runAsGroup: 65534
  runAsNonRoot: true
  runAsUser: 65534
containerSecurityContext:
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop:
      - ALL
nodeSelector:
  kubernetes.io/os: linux
tolerations:
  - effect: NoSchedule
    operator: Exists
affinity: {}
extraArgs: []
${extra}`;
}

/** A DaemonSet exporter chart (node-exporter, windows-exporter). */
function daemonSetChart(o: {
  name: string;
  prefix: string;
  version: string;
  appVersion: string;
  image: ImageValue;
  port: number;
  args: string[];
  os: string;
  extraValues: string;
  configMap?: string;
}): ChartFiles {
  const p = o.prefix;
  return {
    'Chart.yaml': `apiVersion: v2
name: ${o.name}
description: A Helm chart for ${o.name}
type: application
version: ${o.version}
appVersion: ${o.appVersion}
keywords:
  - metrics
  - prometheus
maintainers:
  - name: lab
`,
    'values.yaml': exporterValues(o.image, o.port, o.extraValues),
    'templates/_helpers.tpl': nameHelpers(p),
    'templates/serviceaccount.yaml': serviceAccount(p),
    'templates/service.yaml': service(p, o.port, 'metrics'),
    'templates/servicemonitor.yaml': serviceMonitor(p, 'metrics'),
    ...(o.configMap ? { 'templates/config.yaml': o.configMap } : {}),
    'templates/daemonset.yaml': `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ include "${p}.fullname" . }}
  namespace: {{ include "${p}.namespace" . }}
  labels:
    {{- include "${p}.labels" . | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "${p}.selectorLabels" . | nindent 6 }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  template:
    metadata:
      annotations:
        {{- toYaml .Values.podAnnotations | nindent 8 }}
        checksum/config: {{ toJson .Values | sha256sum | trunc 16 }}
      labels:
        {{- include "${p}.labels" . | nindent 8 }}
    spec:
      automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
      serviceAccountName: {{ include "${p}.serviceAccountName" . }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      containers:
        - name: ${o.name.replace(/^prometheus-/, '')}
          image: {{ include "${p}.image" . }}
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          args:
${o.args.map((a) => `            - ${a}`).join('\n')}
            {{- range .Values.extraArgs }}
            - {{ . }}
            {{- end }}
          securityContext:
            {{- toYaml .Values.containerSecurityContext | nindent 12 }}
          env:
            - name: HOST_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.hostIP
          ports:
            - name: metrics
              containerPort: {{ .Values.service.targetPort }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /
              port: {{ .Values.service.targetPort }}
          readinessProbe:
            httpGet:
              path: /
              port: {{ .Values.service.targetPort }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      nodeSelector:
        kubernetes.io/os: ${o.os}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      hostNetwork: true
      hostPID: true
`,
  };
}

/** common's image helpers: the image name, the pull secrets. */
const COMMON_IMAGES = `{{/*
Return the proper image name.
{{ include "common.images.image" ( dict "imageRoot" .Values.path.to.the.image "global" .Values.global "chart" .Chart ) }}
*/}}
{{- define "common.images.image" -}}
{{- $registryName := default .imageRoot.registry ((.global).imageRegistry) -}}
{{- $repositoryName := .imageRoot.repository -}}
{{- $separator := ":" -}}
{{- $termination := .imageRoot.tag | toString -}}
{{- if not .imageRoot.tag }}
  {{- if .chart }}
    {{- $termination = .chart.AppVersion | toString -}}
  {{- end -}}
{{- end -}}
{{- if .imageRoot.digest }}
    {{- $separator = "@" -}}
    {{- $termination = .imageRoot.digest | toString -}}
{{- end -}}
{{- if $registryName }}
    {{- printf "%s/%s%s%s" $registryName $repositoryName $separator $termination -}}
{{- else -}}
    {{- printf "%s%s%s"  $repositoryName $separator $termination -}}
{{- end -}}
{{- end -}}

{{/*
Return the proper Docker Image Registry Secret Names evaluating values as templates.
*/}}
{{- define "common.images.renderPullSecrets" -}}
  {{- $pullSecrets := list }}
  {{- $context := .context }}
  {{- range (($context.Values.global).imagePullSecrets) -}}
    {{- if kindIs "map" . -}}
      {{- $pullSecrets = append $pullSecrets (include "common.tplvalues.render" (dict "value" .name "context" $context)) -}}
    {{- else -}}
      {{- $pullSecrets = append $pullSecrets (include "common.tplvalues.render" (dict "value" . "context" $context)) -}}
    {{- end -}}
  {{- end -}}
  {{- range .images -}}
    {{- range .pullSecrets -}}
      {{- $pullSecrets = append $pullSecrets (include "common.tplvalues.render" (dict "value" . "context" $context)) -}}
    {{- end -}}
  {{- end -}}
  {{- if (not (empty $pullSecrets)) -}}
{{- range $pullSecrets | uniq }}
- name: {{ . }}
{{- end }}
  {{- end }}
{{- end -}}
`;

/** common's value rendering through tpl. */
const COMMON_TPLVALUES = `{{/*
Renders a value that contains template perhaps with scope if the scope is present.
*/}}
{{- define "common.tplvalues.render" -}}
{{- $value := typeIs "string" .value | ternary .value (.value | toYaml) }}
{{- if contains "{{" (toJson .value) }}
  {{- if .scope }}
      {{- tpl (cat "{{- with $.RelativeScope -}}" $value "{{- end }}") (merge (dict "RelativeScope" .scope) .context) }}
  {{- else }}
    {{- tpl $value .context }}
  {{- end }}
{{- else }}
    {{- $value }}
{{- end }}
{{- end -}}

{{/*
Merge a list of values that contains template after rendering them.
*/}}
{{- define "common.tplvalues.merge" -}}
{{- $dst := dict -}}
{{- range .values -}}
{{- $dst = include "common.tplvalues.render" (dict "value" . "context" $.context "scope" $.scope) | fromYaml | merge $dst -}}
{{- end -}}
{{ $dst | toYaml }}
{{- end -}}
`;

/** common's API versions by Kubernetes version. */
const COMMON_CAPABILITIES = `{{- define "common.capabilities.kubeVersion" -}}
{{- default (default .Capabilities.KubeVersion.Version .Values.kubeVersion) ((.Values.global).kubeVersion) -}}
{{- end -}}

{{- define "common.capabilities.policy.apiVersion" -}}
{{- if semverCompare "<1.21-0" (include "common.capabilities.kubeVersion" .) -}}
{{- print "policy/v1beta1" -}}
{{- else -}}
{{- print "policy/v1" -}}
{{- end -}}
{{- end -}}

{{- define "common.capabilities.ingress.apiVersion" -}}
{{- if semverCompare "<1.14-0" (include "common.capabilities.kubeVersion" .) -}}
{{- print "extensions/v1beta1" -}}
{{- else if semverCompare "<1.19-0" (include "common.capabilities.kubeVersion" .) -}}
{{- print "networking.k8s.io/v1beta1" -}}
{{- else -}}
{{- print "networking.k8s.io/v1" -}}
{{- end }}
{{- end -}}

{{- define "common.capabilities.rbac.apiVersion" -}}
{{- if semverCompare "<1.17-0" (include "common.capabilities.kubeVersion" .) -}}
{{- print "rbac.authorization.k8s.io/v1beta1" -}}
{{- else -}}
{{- print "rbac.authorization.k8s.io/v1" -}}
{{- end -}}
{{- end -}}
`;

/** common's labels and names, and the scrape limits the exporters share. */
const COMMON_LABELS = `{{- define "common.labels.standard" -}}
{{- if and (hasKey . "customLabels") (hasKey . "context") -}}
{{- $default := dict "app.kubernetes.io/name" (include "common.names.name" .context) "helm.sh/chart" (include "common.names.chart" .context) "app.kubernetes.io/instance" .context.Release.Name "app.kubernetes.io/managed-by" .context.Release.Service -}}
{{- with .context.Chart.AppVersion -}}
{{- $_ := set $default "app.kubernetes.io/version" . -}}
{{- end -}}
{{ template "common.tplvalues.merge" (dict "values" (list .customLabels $default) "context" .context) }}
{{- else -}}
app.kubernetes.io/name: {{ include "common.names.name" . }}
helm.sh/chart: {{ include "common.names.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
{{- end -}}

{{- define "common.names.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "common.names.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The scrape limits of a monitor, as the prometheus-community charts share them.
*/}}
{{- define "common.monitor.scrapeLimits" -}}
{{- with .sampleLimit }}
sampleLimit: {{ . }}
{{- end }}
{{- with .targetLimit }}
targetLimit: {{ . }}
{{- end }}
{{- with .labelLimit }}
labelLimit: {{ . }}
{{- end }}
{{- with .labelNameLengthLimit }}
labelNameLengthLimit: {{ . }}
{{- end }}
{{- with .labelValueLengthLimit }}
labelValueLengthLimit: {{ . }}
{{- end }}
{{- end -}}
`;

/** The Bitnami-style library chart: image, label, capability and value-rendering helpers. */
function commonChart(): ChartFiles {
  return {
    'Chart.yaml': `apiVersion: v2
name: common
description: A Library Helm Chart for grouping common logic between charts.
type: library
version: 2.26.0
appVersion: 2.26.0
`,
    'values.yaml': `exampleValue: common-chart\n`,
    'templates/_images.tpl': COMMON_IMAGES,
    'templates/_tplvalues.tpl': COMMON_TPLVALUES,
    'templates/_capabilities.tpl': COMMON_CAPABILITIES,
    'templates/_labels.tpl': COMMON_LABELS,
  };
}

export { commonChart, daemonSetChart, nameHelpers, serviceAccount, service, serviceMonitor };
