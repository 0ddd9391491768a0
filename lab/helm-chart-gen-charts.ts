/**
 * The grafana, kube-state-metrics and crds subcharts of the generated monitoring stack
 * (lab/helm-chart-gen.ts), shaped as the community charts are. The exporters and the library chart
 * are in lab/helm-chart-gen-subcharts.ts.
 */
import type { ChartFiles } from '../test/fixtures/helm/charts.js';
import {
  imageYaml,
  nameHelpers,
  service,
  serviceAccount,
  serviceMonitor,
  type ImageValue,
} from './helm-chart-gen-subcharts.js';

/** Grafana's pod spec, a define the Deployment includes (as the real chart's _pod.tpl). */
const GRAFANA_POD = `{{- define "grafana.pod" -}}
{{- $sidecar := .Values.sidecar }}
{{- $root := . }}
serviceAccountName: {{ include "grafana.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.autoMount }}
{{- with .Values.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if or (and .Values.persistence.enabled .Values.initChownData.enabled) .Values.initChownData.enabled .Values.sidecar.datasources.enabled }}
initContainers:
{{- end }}
{{- if .Values.initChownData.enabled }}
  - name: init-chown-data
    image: {{ include "common.images.image" (dict "imageRoot" .Values.initChownData.image "global" .Values.global) | quote }}
    imagePullPolicy: {{ .Values.initChownData.image.pullPolicy }}
    command:
      - chown
      - -R
      - {{ .Values.securityContext.runAsUser }}:{{ .Values.securityContext.runAsGroup }}
      - /var/lib/grafana
    securityContext:
      {{- toYaml .Values.initChownData.securityContext | nindent 6 }}
    volumeMounts:
      - name: storage
        mountPath: "/var/lib/grafana"
{{- end }}
{{- if .Values.sidecar.datasources.enabled }}
  - name: {{ include "grafana.name" . }}-sc-datasources
    image: {{ include "common.images.image" (dict "imageRoot" .Values.sidecar.image "global" .Values.global) | quote }}
    imagePullPolicy: {{ .Values.sidecar.imagePullPolicy }}
    env:
      - name: METHOD
        value: "LIST"
      - name: LABEL
        value: "{{ tpl .Values.sidecar.datasources.label $root }}"
      {{- with .Values.sidecar.datasources.labelValue }}
      - name: LABEL_VALUE
        value: {{ quote (tpl . $root) }}
      {{- end }}
      - name: FOLDER
        value: "/etc/grafana/provisioning/datasources"
      - name: RESOURCE
        value: {{ quote .Values.sidecar.datasources.resource }}
    resources:
      {{- toYaml .Values.sidecar.resources | nindent 6 }}
{{- end }}
containers:
{{- if .Values.sidecar.dashboards.enabled }}
  - name: {{ include "grafana.name" . }}-sc-dashboard
    image: {{ include "common.images.image" (dict "imageRoot" .Values.sidecar.image "global" .Values.global) | quote }}
    imagePullPolicy: {{ .Values.sidecar.imagePullPolicy }}
    env:
      {{- range $key, $value := .Values.sidecar.dashboards.env }}
      - name: "{{ $key }}"
        value: "{{ $value }}"
      {{- end }}
      - name: METHOD
        value: {{ .Values.sidecar.dashboards.watchMethod }}
      - name: LABEL
        value: "{{ tpl .Values.sidecar.dashboards.label $root }}"
      {{- with .Values.sidecar.dashboards.labelValue }}
      - name: LABEL_VALUE
        value: {{ quote (tpl . $root) }}
      {{- end }}
      - name: FOLDER
        value: "{{ .Values.sidecar.dashboards.folder }}{{- with .Values.sidecar.dashboards.defaultFolderName }}/{{ . }}{{- end }}"
      - name: RESOURCE
        value: {{ quote .Values.sidecar.dashboards.resource }}
      {{- if .Values.sidecar.dashboards.searchNamespace }}
      - name: NAMESPACE
        value: "{{ tpl (.Values.sidecar.dashboards.searchNamespace | join ",") $root }}"
      {{- end }}
    resources:
      {{- toYaml .Values.sidecar.resources | nindent 6 }}
    volumeMounts:
      - name: sc-dashboard-volume
        mountPath: {{ .Values.sidecar.dashboards.folder | quote }}
{{- end }}
  - name: {{ .Chart.Name }}
    image: {{ include "common.images.image" (dict "imageRoot" .Values.image "global" .Values.global "chart" .Chart) | quote }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    ports:
      - name: grafana
        containerPort: {{ .Values.service.targetPort }}
        protocol: TCP
    env:
      - name: POD_IP
        valueFrom:
          fieldRef:
            fieldPath: status.podIP
      - name: GF_SECURITY_ADMIN_USER
        valueFrom:
          secretKeyRef:
            name: {{ include "grafana.fullname" . }}
            key: admin-user
      - name: GF_SECURITY_ADMIN_PASSWORD
        valueFrom:
          secretKeyRef:
            name: {{ include "grafana.fullname" . }}
            key: admin-password
      {{- range $key, $value := .Values.env }}
      - name: "{{ tpl $key $ }}"
        value: {{ tpl (print $value) $ | quote }}
      {{- end }}
    livenessProbe:
      {{- toYaml .Values.livenessProbe | nindent 6 }}
    readinessProbe:
      {{- toYaml .Values.readinessProbe | nindent 6 }}
    resources:
      {{- toYaml .Values.resources | nindent 6 }}
    volumeMounts:
      - name: config
        mountPath: "/etc/grafana/grafana.ini"
        subPath: grafana.ini
      - name: storage
        mountPath: "/var/lib/grafana"
      {{- range .Values.extraConfigmapMounts }}
      - name: {{ tpl .name $root }}
        mountPath: {{ tpl .mountPath $root }}
        subPath: {{ tpl (.subPath | default "") $root }}
        readOnly: {{ .readOnly }}
      {{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "grafana.fullname" . }}
  - name: storage
    emptyDir: {}
  - name: sc-dashboard-volume
    emptyDir: {}
{{- range .Values.extraConfigmapMounts }}
  - name: {{ tpl .name $root }}
    configMap:
      name: {{ tpl .configMap $root }}
{{- end }}
{{- end }}
`;

/** grafana.ini from the values, each value through tpl. */
const GRAFANA_CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "grafana.fullname" . }}
  namespace: {{ include "grafana.namespace" . }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
data:
  grafana.ini: |
    {{- range $elem, $elemVal := index .Values "grafana.ini" }}
    {{- if not (kindIs "map" $elemVal) }}
    {{- if kindIs "invalid" $elemVal }}
    {{ $elem }} =
    {{- else if kindIs "string" $elemVal }}
    {{ $elem }} = {{ tpl $elemVal $ }}
    {{- else }}
    {{ $elem }} = {{ $elemVal }}
    {{- end }}
    {{- end }}
    {{- end }}
    {{- range $key, $value := index .Values "grafana.ini" }}
    {{- if kindIs "map" $value }}
    [{{ $key }}]
    {{- range $elem, $elemVal := $value }}
    {{- if kindIs "invalid" $elemVal }}
    {{ $elem }} =
    {{- else if kindIs "string" $elemVal }}
    {{ $elem }} = {{ tpl $elemVal $ }}
    {{- else }}
    {{ $elem }} = {{ $elemVal }}
    {{- end }}
    {{- end }}
    {{- end }}
    {{- end }}
`;

/** The admin credentials. */
const GRAFANA_SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: {{ include "grafana.fullname" . }}
  namespace: {{ include "grafana.namespace" . }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
type: Opaque
data:
  admin-user: {{ .Values.adminUser | b64enc | quote }}
  {{- if .Values.adminPassword }}
  admin-password: {{ .Values.adminPassword | b64enc | quote }}
  {{- else }}
  admin-password: {{ randAlphaNum 40 | b64enc | quote }}
  {{- end }}
`;

/** The Deployment, with checksums of the rendered ConfigMap and Secret. */
const GRAFANA_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "grafana.fullname" . }}
  namespace: {{ include "grafana.namespace" . }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  revisionHistoryLimit: {{ .Values.revisionHistoryLimit }}
  selector:
    matchLabels:
      {{- include "grafana.selectorLabels" . | nindent 6 }}
  strategy:
    {{- toYaml .Values.deploymentStrategy | nindent 4 }}
  template:
    metadata:
      labels:
        {{- include "grafana.selectorLabels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
        checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
        kubectl.kubernetes.io/default-container: {{ .Chart.Name }}
    spec:
      {{- include "grafana.pod" . | nindent 6 }}
`;

/** The dashboards provider of the sidecar. */
const GRAFANA_PROVIDER = `{{- if .Values.sidecar.dashboards.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "grafana.fullname" . }}-config-dashboards
  namespace: {{ include "grafana.namespace" . }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
data:
  provider.yaml: |-
    apiVersion: 1
    providers:
      - name: '{{ .Values.sidecar.dashboards.provider.name }}'
        orgId: {{ .Values.sidecar.dashboards.provider.orgid }}
        folder: '{{ .Values.sidecar.dashboards.provider.folder }}'
        type: {{ .Values.sidecar.dashboards.provider.type }}
        disableDeletion: {{ .Values.sidecar.dashboards.provider.disableDelete }}
        allowUiUpdates: {{ .Values.sidecar.dashboards.provider.allowUiUpdates }}
        updateIntervalSeconds: {{ .Values.sidecar.dashboards.provider.updateIntervalSeconds | default 30 }}
        options:
          foldersFromFilesStructure: {{ .Values.sidecar.dashboards.provider.foldersFromFilesStructure }}
          path: {{ .Values.sidecar.dashboards.folder }}{{- with .Values.sidecar.dashboards.defaultFolderName }}/{{ . }}{{- end }}
{{- end }}
`;

/** The test hook's script. */
const GRAFANA_TEST_CONFIGMAP = `{{- if .Values.testFramework.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "grafana.fullname" . }}-test
  namespace: {{ include "grafana.namespace" . }}
  annotations:
    "helm.sh/hook": test
    "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"
data:
  run.sh: |-
    @test "Test Health" {
      url="http://{{ include "grafana.fullname" . }}/api/health"
      code=$(wget --server-response --spider --timeout 90 --tries 10 \${url} 2>&1 | awk '/^  HTTP/{print $2}')
      [ "$code" == "200" ]
    }
{{- end }}
`;

/** The test hook's Pod. */
const GRAFANA_TEST_POD = `{{- if .Values.testFramework.enabled }}
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "grafana.fullname" . }}-test
  namespace: {{ include "grafana.namespace" . }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
  annotations:
    "helm.sh/hook": test
    "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"
spec:
  containers:
    - name: {{ .Release.Name }}-test
      image: "{{ .Values.global.imageRegistry | default .Values.testFramework.image.registry }}/{{ .Values.testFramework.image.repository }}:{{ .Values.testFramework.image.tag }}"
      command: ["/opt/bats/bin/bats", "-t", "/tests/run.sh"]
      volumeMounts:
        - mountPath: /tests
          name: tests
          readOnly: true
  volumes:
    - name: tests
      configMap:
        name: {{ include "grafana.fullname" . }}-test
  restartPolicy: Never
{{- end }}
`;

function grafanaTemplates(): ChartFiles {
  const rbac = (kind: 'Role' | 'ClusterRole', binding: boolean) => {
    const scoped = kind === 'Role';
    const head = `{{- if and .Values.rbac.create ${scoped ? '.Values.rbac.namespaced' : '(not .Values.rbac.namespaced)'} }}
apiVersion: {{ include "common.capabilities.rbac.apiVersion" . }}
kind: ${binding ? `${kind}Binding` : kind}
metadata:
  name: {{ include "grafana.fullname" . }}${scoped ? '' : '-clusterrole'}${binding ? 'binding' : ''}
  {{- if ${scoped ? 'true' : 'false'} }}
  namespace: {{ include "grafana.namespace" . }}
  {{- end }}
  labels:
    {{- include "grafana.labels" . | nindent 4 }}
`;
    return binding
      ? `${head}roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ${kind}
  name: {{ include "grafana.fullname" . }}${scoped ? '' : '-clusterrole'}
subjects:
  - kind: ServiceAccount
    name: {{ include "grafana.serviceAccountName" . }}
    namespace: {{ include "grafana.namespace" . }}
{{- end }}
`
      : `${head}rules:
  {{- if or .Values.sidecar.dashboards.enabled .Values.sidecar.datasources.enabled }}
  - apiGroups: [""]
    resources: ["configmaps", "secrets"]
    verbs: ["get", "watch", "list"]
  {{- end }}
  {{- with .Values.rbac.extraClusterRoleRules }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
`;
  };
  return {
    'templates/_pod.tpl': GRAFANA_POD,
    'templates/serviceaccount.yaml': serviceAccount('grafana'),
    'templates/service.yaml': service('grafana', 80, 'http-web'),
    'templates/servicemonitor.yaml': serviceMonitor('grafana', 'http-web'),
    'templates/clusterrole.yaml': rbac('ClusterRole', false),
    'templates/clusterrolebinding.yaml': rbac('ClusterRole', true),
    'templates/role.yaml': rbac('Role', false),
    'templates/rolebinding.yaml': rbac('Role', true),
    'templates/configmap.yaml': GRAFANA_CONFIGMAP,
    'templates/secret.yaml': GRAFANA_SECRET,
    'templates/deployment.yaml': GRAFANA_DEPLOYMENT,
    'templates/configmap-dashboard-provider.yaml': GRAFANA_PROVIDER,
    'templates/tests/test-configmap.yaml': GRAFANA_TEST_CONFIGMAP,
    'templates/tests/test.yaml': GRAFANA_TEST_POD,
  };
}

/** The images grafana's values name. */
interface GrafanaImages {
  grafana: ImageValue;
  sidecar: ImageValue;
  busybox: ImageValue;
  bats: ImageValue;
}

/** grafana's values.yaml. */
function grafanaValues(images: GrafanaImages, ini: string): string {
  return `global:
  imageRegistry: ""
  imagePullSecrets: []
rbac:
  create: true
  namespaced: false
  extraRoleRules: []
  extraClusterRoleRules: []
serviceAccount:
  create: true
  name:
  annotations: {}
  autoMount: true
  automountServiceAccountToken: false
replicas: 1
revisionHistoryLimit: 10
deploymentStrategy:
  type: RollingUpdate
podLabels: {}
releaseLabel: false
image:
${imageYaml(images.grafana, '  ')}
testFramework:
  enabled: true
  image:
${imageYaml(images.bats, '    ')}
securityContext:
  runAsNonRoot: true
  runAsUser: 472
  runAsGroup: 472
  fsGroup: 472
service:
  enabled: true
  type: ClusterIP
  port: 80
  targetPort: 3000
  annotations: {}
prometheus:
  monitor:
    enabled: false
    scheme: http
    interval: 30s
    scrapeTimeout: 10s
    relabelings: []
    metricRelabelings: []
livenessProbe:
  httpGet:
    path: /api/health
    port: 3000
  initialDelaySeconds: 60
  timeoutSeconds: 30
  failureThreshold: 10
readinessProbe:
  httpGet:
    path: /api/health
    port: 3000
resources: {}
persistence:
  enabled: false
initChownData:
  enabled: true
  image:
${imageYaml(images.busybox, '    ')}
  securityContext:
    runAsNonRoot: false
    runAsUser: 0
    capabilities:
      add:
        - CHOWN
adminUser: admin
adminPassword: ""
env:
  GF_PATHS_DATA: /var/lib/grafana/
  GF_ANALYTICS_CHECK_FOR_UPDATES: "false"
  GF_RELEASE: "{{ .Release.Name }}"
extraConfigmapMounts: []
grafana.ini:
${ini}
sidecar:
  image:
${imageYaml(images.sidecar, '    ')}
  imagePullPolicy: IfNotPresent
  resources: {}
  dashboards:
    enabled: true
    env:
      REQ_TIMEOUT: "60"
      LOG_LEVEL: INFO
    label: grafana_dashboard
    labelValue: "1"
    folder: /tmp/dashboards
    defaultFolderName: null
    searchNamespace: null
    watchMethod: WATCH
    resource: both
    provider:
      name: sidecarProvider
      orgid: 1
      folder: ""
      type: file
      disableDelete: false
      allowUiUpdates: false
      foldersFromFilesStructure: false
  datasources:
    enabled: true
    label: grafana_datasource
    labelValue: "1"
    resource: both
`;
}

/** The grafana subchart. */
export function grafanaChart(images: GrafanaImages): ChartFiles {
  const iniSections = ['paths', 'analytics', 'log', 'grafana_net', 'server', 'auth', 'users', 'security'];
  const ini = iniSections
    .map(
      (s, i) =>
        `  ${s}:\n${Array.from({ length: 6 }, (_, j) => `    key_${i}_${j}: ${j % 2 ? `"{{ .Release.Name }}-${j}"` : j}`).join('\n')}`,
    )
    .join('\n');
  return {
    'Chart.yaml': `apiVersion: v2
name: grafana
version: 8.8.2
appVersion: 11.4.0
kubeVersion: "^1.8.0-0"
description: The leading tool for querying and visualizing time series and metrics.
home: https://grafana.com
type: application
`,
    'templates/_helpers.tpl': nameHelpers('grafana'),
    ...grafanaTemplates(),
    'values.yaml': grafanaValues(images, ini),
  };
}
