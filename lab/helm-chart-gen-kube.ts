/**
 * The kube-state-metrics and crds subcharts of the generated monitoring stack (lab/helm-chart-gen.ts),
 * shaped as the community charts are.
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

/** kube-state-metrics' ClusterRoleBinding. */
const KSM_BINDING = `{{- if and .Values.rbac.create .Values.rbac.useClusterRole -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
    {{- include "kube-state-metrics.labels" . | nindent 4 }}
  name: {{ template "kube-state-metrics.fullname" . }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ template "kube-state-metrics.fullname" . }}
subjects:
- kind: ServiceAccount
  name: {{ template "kube-state-metrics.serviceAccountName" . }}
  namespace: {{ template "kube-state-metrics.namespace" . }}
{{- end -}}
`;

/** kube-state-metrics' Deployment. */
const KSM_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ template "kube-state-metrics.fullname" . }}
  namespace: {{ template "kube-state-metrics.namespace" . }}
  labels:
    {{- include "kube-state-metrics.labels" . | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "kube-state-metrics.selectorLabels" . | nindent 6 }}
  replicas: {{ .Values.replicas }}
  template:
    metadata:
      labels:
        {{- include "kube-state-metrics.labels" . | nindent 8 }}
    spec:
      serviceAccountName: {{ template "kube-state-metrics.serviceAccountName" . }}
      containers:
      - name: {{ template "kube-state-metrics.name" . }}
        args:
        - --port=8080
        - --resources={{ .Values.collectors | join "," }}
        {{- if .Values.metricLabelsAllowlist }}
        - --metric-labels-allowlist={{ .Values.metricLabelsAllowlist | join "," }}
        {{- end }}
        image: {{ include "kube-state-metrics.image" . }}
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        ports:
        - containerPort: 8080
          name: http
        resources:
{{ toYaml .Values.resources | indent 10 }}
`;

/** kube-state-metrics' values.yaml. */
function ksmValues(image: ImageValue, collectors: string[]): string {
  return `global:
  imageRegistry: ""
  imagePullSecrets: []
image:
${imageYaml(image, '  ')}
replicas: 1
rbac:
  create: true
  useClusterRole: true
  useExistingRole: false
  extraRules: []
namespaces: ""
serviceAccount:
  create: true
  name:
  annotations: {}
  imagePullSecrets: []
  automountServiceAccountToken: true
releaseLabel: false
podLabels: {}
service:
  type: ClusterIP
  port: 8080
  targetPort: 8080
  annotations: {}
prometheus:
  monitor:
    enabled: false
    scheme: http
    relabelings: []
    metricRelabelings: []
metricLabelsAllowlist: []
collectors:
${collectors.map((c) => `  - ${c}`).join('\n')}
resources: {}
`;
}

/** kube-state-metrics' Role or ClusterRole, a rule per collector. */
function ksmRole(rules: string): string {
  return `{{- if and (eq .Values.rbac.create true) (not .Values.rbac.useExistingRole) -}}
{{- range (ternary (join "," .Values.namespaces | split "," ) (list "") (eq $.Values.rbac.useClusterRole false)) }}
---
apiVersion: rbac.authorization.k8s.io/v1
{{- if eq $.Values.rbac.useClusterRole false }}
kind: Role
{{- else }}
kind: ClusterRole
{{- end }}
metadata:
  labels:
    {{- include "kube-state-metrics.labels" $ | nindent 4 }}
  name: {{ template "kube-state-metrics.fullname" $ }}
rules:
${rules}
{{- if $.Values.rbac.extraRules }}
{{ toYaml $.Values.rbac.extraRules }}
{{- end }}
{{- end -}}
{{- end -}}
`;
}

/** The kube-state-metrics subchart. */
export function kubeStateMetricsChart(image: ImageValue): ChartFiles {
  const collectors = [
    'certificatesigningrequests',
    'configmaps',
    'cronjobs',
    'daemonsets',
    'deployments',
    'endpoints',
    'horizontalpodautoscalers',
    'ingresses',
    'jobs',
    'leases',
    'limitranges',
    'mutatingwebhookconfigurations',
    'namespaces',
    'networkpolicies',
    'nodes',
    'persistentvolumeclaims',
    'persistentvolumes',
    'poddisruptionbudgets',
    'pods',
    'replicasets',
    'replicationcontrollers',
    'resourcequotas',
    'secrets',
    'services',
    'statefulsets',
    'storageclasses',
    'validatingwebhookconfigurations',
    'volumeattachments',
  ];
  const groups: Record<string, string> = {
    certificatesigningrequests: 'certificates.k8s.io',
    cronjobs: 'batch',
    jobs: 'batch',
    daemonsets: 'apps',
    deployments: 'apps',
    replicasets: 'apps',
    statefulsets: 'apps',
    horizontalpodautoscalers: 'autoscaling',
    ingresses: 'networking.k8s.io',
    networkpolicies: 'networking.k8s.io',
    leases: 'coordination.k8s.io',
    mutatingwebhookconfigurations: 'admissionregistration.k8s.io',
    poddisruptionbudgets: 'policy',
    validatingwebhookconfigurations: 'admissionregistration.k8s.io',
    storageclasses: 'storage.k8s.io',
    volumeattachments: 'storage.k8s.io',
  };
  const rules = collectors
    .map(
      (c) => `{{ if has "${c}" $.Values.collectors }}
- apiGroups: [${JSON.stringify(groups[c] ?? '')}]
  resources:
  - ${c}
  verbs: ["list", "watch"]
{{ end -}}`,
    )
    .join('\n');
  return {
    'Chart.yaml': `apiVersion: v2
name: kube-state-metrics
description: Install kube-state-metrics to generate and expose cluster-level metrics
version: 5.28.0
appVersion: 2.14.0
type: application
`,
    'templates/_helpers.tpl': nameHelpers('kube-state-metrics'),
    'templates/serviceaccount.yaml': serviceAccount('kube-state-metrics'),
    'templates/service.yaml': service('kube-state-metrics', 8080, 'http'),
    'templates/servicemonitor.yaml': serviceMonitor('kube-state-metrics', 'http'),
    'templates/role.yaml': ksmRole(rules),
    'templates/clusterrolebinding.yaml': KSM_BINDING,
    'templates/deployment.yaml': KSM_DEPLOYMENT,
    'values.yaml': ksmValues(image, collectors),
  };
}

/** One CustomResourceDefinition of about `bytes` bytes (the schema's properties are what makes them large). */
function crd(kind: string, bytes: number): string {
  const plural = `${kind.toLowerCase()}s`;
  const head = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.5
    operator.prometheus.io/version: 0.79.2
  name: ${plural}.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  names:
    kind: ${kind}
    listKind: ${kind}List
    plural: ${plural}
    singular: ${kind.toLowerCase()}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
`;
  const props: string[] = [];
  for (let i = 0, size = head.length; size < bytes; i++) {
    const p = `              field${i}:
                description: |-
                  Field${i} of the ${kind} specification. When set, the operator reconciles the
                  resource with this value; see the API reference for its defaults.
                type: ${i % 3 ? 'string' : 'object'}
`;
    props.push(p);
    size += p.length;
  }
  return head + props.join('');
}

/** The crds subchart: CRDs under crds/ (not rendered by `helm template`) and a disabled upgrade job. */
export function crdsChart(bytes: number): ChartFiles {
  const kinds = [
    'Alertmanager',
    'AlertmanagerConfig',
    'PodMonitor',
    'Probe',
    'Prometheus',
    'PrometheusAgent',
    'PrometheusRule',
    'ScrapeConfig',
    'ServiceMonitor',
    'ThanosRuler',
  ];
  const out: ChartFiles = {
    'Chart.yaml': `apiVersion: v2
name: crds
version: 0.0.0
description: The CustomResourceDefinitions of the monitoring stack
`,
    'values.yaml': `upgradeJob:\n  enabled: false\n`,
    'templates/upgrade/job.yaml': `{{- if .Values.upgradeJob.enabled }}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-crds-upgrade
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
spec:
  template:
    spec:
      containers:
        - name: kubectl
          image: registry.k8s.io/kubectl:v1.31.0
{{- end }}
`,
  };
  for (const k of kinds) out[`crds/crd-${k.toLowerCase()}s.yaml`] = crd(k, bytes / kinds.length);
  return out;
}
