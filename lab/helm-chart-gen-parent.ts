/**
 * The parent chart's workload templates of the generated monitoring stack (lab/helm-chart-gen.ts):
 * the operator (a Deployment, its admission webhooks and their hook Jobs), the Prometheus,
 * Alertmanager and ThanosRuler custom resources with their services, ServiceMonitors and RBAC. The
 * rule, dashboard and Kubernetes component templates are in lab/helm-chart-gen-data.ts.
 */
import type { ChartFiles } from '../test/fixtures/helm/charts.js';

/** Labels every parent manifest carries, under `metadata:` (4 spaces). */
const LABELS = `  labels:
    app: {{ template "kube-prom-stack.name" . }}-%s
{{ include "kube-prom-stack.labels" . | indent 4 }}`;
const labels = (app: string) => LABELS.replace('%s', app);

/** ServiceAccount, ClusterRole and ClusterRoleBinding of a component. */
function rbac(dir: string, c: string, app: string, enabled: string, rules: string): ChartFiles {
  const meta = (
    kind: string,
  ) => `apiVersion: ${kind === 'ServiceAccount' ? 'v1' : 'rbac.authorization.k8s.io/v1'}
kind: ${kind}
metadata:
  name: {{ template "kube-prom-stack.${c}.${kind === 'ServiceAccount' ? 'serviceAccountName' : 'fullname'}" . }}
  {{- if eq "${kind}" "ServiceAccount" }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
  {{- end }}
${labels(app)}`;
  return {
    [`templates/${dir}/serviceaccount.yaml`]: `{{- if and ${enabled} .serviceAccount.create }}
${meta('ServiceAccount')}
{{- with .serviceAccount.annotations }}
  annotations:
{{ toYaml . | indent 4 }}
{{- end }}
automountServiceAccountToken: {{ .serviceAccount.automountServiceAccountToken | default true }}
{{- if .Values.global.imagePullSecrets }}
imagePullSecrets:
{{ include "kube-prom-stack.imagePullSecrets" . | trim | indent 2 }}
{{- end }}
{{- end }}
`,
    [`templates/${dir}/clusterrole.yaml`]: `{{- if and ${enabled} .Values.global.rbac.create }}
${meta('ClusterRole')}
rules:
${rules}
{{- end }}
`,
    [`templates/${dir}/clusterrolebinding.yaml`]: `{{- if and ${enabled} .Values.global.rbac.create }}
${meta('ClusterRoleBinding')}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ template "kube-prom-stack.${c}.fullname" . }}
subjects:
  - kind: ServiceAccount
    name: {{ template "kube-prom-stack.${c}.serviceAccountName" . }}
    namespace: {{ template "kube-prom-stack.namespace" . }}
{{- end }}
`,
  };
}

/** A Service and a ServiceMonitor of a component whose values are at `v`. */
function serviceAndMonitor(dir: string, c: string, app: string, v: string, port: string): ChartFiles {
  return {
    [`templates/${dir}/service.yaml`]: `{{- if and ${v}.enabled ${v}.service.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ template "kube-prom-stack.${c}.fullname" . }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
${labels(app)}
    self-monitor: {{ ${v}.serviceMonitor.selfMonitor | default false | quote }}
{{- with ${v}.service.labels }}
{{ toYaml . | indent 4 }}
{{- end }}
{{- if ${v}.service.annotations }}
  annotations:
{{ toYaml ${v}.service.annotations | indent 4 }}
{{- end }}
spec:
{{- if ${v}.service.clusterIP }}
  clusterIP: {{ ${v}.service.clusterIP }}
{{- end }}
{{- if ${v}.service.ipDualStack.enabled }}
  ipFamilies: {{ toYaml ${v}.service.ipDualStack.ipFamilies | nindent 4 }}
  ipFamilyPolicy: {{ ${v}.service.ipDualStack.ipFamilyPolicy }}
{{- end }}
{{- if ${v}.service.externalIPs }}
  externalIPs:
{{ toYaml ${v}.service.externalIPs | indent 4 }}
{{- end }}
  ports:
  - name: ${port}
    port: {{ ${v}.service.port }}
    targetPort: {{ ${v}.service.targetPort }}
    protocol: TCP
{{- if ${v}.service.additionalPorts }}
{{ toYaml ${v}.service.additionalPorts | indent 2 }}
{{- end }}
  selector:
    app.kubernetes.io/name: ${app}
    ${app}: {{ template "kube-prom-stack.${c}.fullname" . }}
  type: "{{ ${v}.service.type }}"
{{- end }}
`,
    [`templates/${dir}/servicemonitor.yaml`]: `{{- if and ${v}.enabled ${v}.serviceMonitor.selfMonitor }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ template "kube-prom-stack.${c}.fullname" . }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
${labels(app)}
{{- with ${v}.serviceMonitor.additionalLabels }}
{{- toYaml . | nindent 4 }}
{{- end }}
spec:
  {{- include "kube-prom-stack.servicemonitor.scrapeLimits" ${v}.serviceMonitor | nindent 2 }}
  selector:
    matchLabels:
      app: {{ template "kube-prom-stack.name" . }}-${app}
      release: {{ $.Release.Name | quote }}
      self-monitor: "true"
  namespaceSelector:
    matchNames:
      - {{ printf "%s" (include "kube-prom-stack.namespace" .) | quote }}
  endpoints:
  - port: ${port}
    {{- if ${v}.serviceMonitor.interval }}
    interval: {{ ${v}.serviceMonitor.interval }}
    {{- end }}
    {{- if ${v}.serviceMonitor.proxyUrl }}
    proxyUrl: {{ ${v}.serviceMonitor.proxyUrl }}
    {{- end }}
    path: "{{ trimSuffix "/" (${v}.routePrefix | default "") }}/metrics"
{{- if ${v}.serviceMonitor.metricRelabelings }}
    metricRelabelings:
{{ tpl (toYaml ${v}.serviceMonitor.metricRelabelings | indent 6) . }}
{{- end }}
{{- if ${v}.serviceMonitor.relabelings }}
    relabelings:
{{ toYaml ${v}.serviceMonitor.relabelings | indent 6 }}
{{- end }}
{{- end }}
`,
  };
}

/** A custom resource (Prometheus, Alertmanager, ThanosRuler) whose spec values are at `v`.Spec. */
function customResource(kind: string, c: string, app: string, v: string, extra: string): string {
  return `{{- if ${v}.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ${kind}
metadata:
  name: {{ template "kube-prom-stack.${c}.crname" . }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
${labels(app)}
{{- if ${v}.annotations }}
  annotations:
{{ toYaml ${v}.annotations | indent 4 }}
{{- end }}
spec:
  image: {{ include "kube-prom-stack.image" (dict "image" ${v}.${c}Spec.image "context" $) | quote }}
  replicas: {{ ${v}.${c}Spec.replicas }}
  serviceAccountName: {{ template "kube-prom-stack.${c}.serviceAccountName" . }}
  logLevel: {{ ${v}.${c}Spec.logLevel }}
  logFormat: {{ ${v}.${c}Spec.logFormat }}
  retention: {{ ${v}.${c}Spec.retention | quote }}
  paused: {{ ${v}.${c}Spec.paused }}
{{- if ${v}.${c}Spec.externalUrl }}
  externalUrl: "{{ tpl ${v}.${c}Spec.externalUrl . }}"
{{- else }}
  externalUrl: http://{{ template "kube-prom-stack.fullname" . }}-${app}.{{ template "kube-prom-stack.namespace" . }}:{{ ${v}.service.port }}
{{- end }}
  routePrefix: {{ ${v}.${c}Spec.routePrefix | quote }}
{{- if ${v}.${c}Spec.storage }}
  storage:
{{ tpl (toYaml ${v}.${c}Spec.storage | indent 4) . }}
{{- end }}
{{- if ${v}.${c}Spec.podMetadata }}
  podMetadata:
{{ toYaml ${v}.${c}Spec.podMetadata | indent 4 }}
{{- end }}
{{- if ${v}.${c}Spec.resources }}
  resources:
{{ toYaml ${v}.${c}Spec.resources | indent 4 }}
{{- end }}
{{- with ${v}.${c}Spec.securityContext }}
  securityContext:
{{ toYaml . | indent 4 }}
{{- end }}
  {{- include "kube-prom-stack.scheduling" (dict "component" "${app}" "values" ${v}.${c}Spec "context" $) | nindent 2 }}
  portName: http-web
${extra}
{{- end }}
`;
}

const PROMETHEUS_EXTRA = `{{- if .Values.prometheus.prometheusSpec.externalLabels }}
  externalLabels:
{{ tpl (toYaml .Values.prometheus.prometheusSpec.externalLabels | indent 4) . }}
{{- end }}
  scrapeInterval: {{ .Values.prometheus.prometheusSpec.scrapeInterval }}
  evaluationInterval: {{ .Values.prometheus.prometheusSpec.evaluationInterval }}
  walCompression: {{ .Values.prometheus.prometheusSpec.walCompression }}
  alerting:
    alertmanagers:
      - namespace: {{ template "kube-prom-stack.namespace" . }}
        name: {{ template "kube-prom-stack.fullname" . }}-alertmanager
        port: http-web
        pathPrefix: "{{ .Values.alertmanager.alertmanagerSpec.routePrefix }}"
        apiVersion: {{ .Values.alertmanager.apiVersion }}
{{- range $sel := list "rule" "serviceMonitor" "podMonitor" "probe" "scrapeConfig" }}
{{- $spec := $.Values.prometheus.prometheusSpec }}
{{- $selector := index $spec (printf "%sSelector" $sel) }}
{{- if $selector }}
  {{ $sel }}Selector:
{{ tpl (toYaml $selector | indent 4) $ }}
{{- else if index $spec (printf "%sSelectorNilUsesHelmValues" $sel) }}
  {{ $sel }}Selector:
    matchLabels:
      release: {{ $.Release.Name | quote }}
{{- else }}
  {{ $sel }}Selector: {}
{{- end }}
{{- end }}
{{- if .Values.prometheus.prometheusSpec.additionalScrapeConfigs }}
  additionalScrapeConfigs:
    name: {{ template "kube-prom-stack.fullname" . }}-prometheus-scrape-confg
    key: additional-scrape-configs.yaml
{{- end }}`;

/** The operator's Deployment: env from a map, args naming the reloader and thanos images. */
const OPERATOR_DEPLOYMENT = `{{- $namespace := printf "%s" (include "kube-prom-stack.namespace" .) }}
{{- if .Values.prometheusOperator.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ template "kube-prom-stack.operator.fullname" . }}
  namespace: {{ $namespace }}
${labels('operator')}
{{- if .Values.prometheusOperator.labels }}
{{ toYaml .Values.prometheusOperator.labels | indent 4 }}
{{- end }}
spec:
  replicas: 1
  revisionHistoryLimit: {{ .Values.prometheusOperator.revisionHistoryLimit }}
  selector:
    matchLabels:
      app: {{ template "kube-prom-stack.name" . }}-operator
      release: {{ $.Release.Name | quote }}
  template:
    metadata:
      labels:
        app: {{ template "kube-prom-stack.name" . }}-operator
{{ include "kube-prom-stack.labels" . | indent 8 }}
{{- if .Values.prometheusOperator.podLabels }}
{{ toYaml .Values.prometheusOperator.podLabels | indent 8 }}
{{- end }}
    spec:
      containers:
        - name: {{ template "kube-prom-stack.name" . }}
          image: {{ include "kube-prom-stack.image" (dict "image" .Values.prometheusOperator.image "context" $) | quote }}
          imagePullPolicy: "{{ .Values.prometheusOperator.image.pullPolicy }}"
          args:
            - --kubelet-service={{ .Values.prometheusOperator.kubeletService.namespace }}/{{ default (printf "%s-kubelet" (include "kube-prom-stack.fullname" .)) .Values.prometheusOperator.kubeletService.name }}
            - --localhost=127.0.0.1
            - --prometheus-config-reloader={{ include "kube-prom-stack.image" (dict "image" .Values.prometheusOperator.prometheusConfigReloader.image "context" $) }}
            - --thanos-default-base-image={{ include "kube-prom-stack.image" (dict "image" .Values.prometheusOperator.thanosImage "context" $) }}
            {{- with .Values.prometheusOperator.secretFieldSelector }}
            - --secret-field-selector={{ tpl (toString .) $ }}
            {{- end }}
            {{- range .Values.prometheusOperator.extraArgs }}
            - {{ . }}
            {{- end }}
            - --web.enable-tls={{ .Values.prometheusOperator.tls.enabled }}
            - --web.tls-min-version={{ .Values.prometheusOperator.tls.tlsMinVersion }}
            - --web.listen-address=:{{ .Values.prometheusOperator.tls.internalPort }}
          ports:
            - containerPort: {{ .Values.prometheusOperator.tls.internalPort }}
              name: https
          env:
          {{- range $key, $value := .Values.prometheusOperator.env }}
            - name: {{ $key }}
              value: {{ $value | quote }}
          {{- end }}
          resources:
{{ toYaml .Values.prometheusOperator.resources | indent 12 }}
          securityContext:
{{ toYaml .Values.prometheusOperator.containerSecurityContext | indent 12 }}
      securityContext:
{{ toYaml .Values.prometheusOperator.securityContext | indent 8 }}
      serviceAccountName: {{ template "kube-prom-stack.operator.serviceAccountName" . }}
      automountServiceAccountToken: {{ .Values.prometheusOperator.serviceAccount.automountServiceAccountToken }}
      {{- include "kube-prom-stack.scheduling" (dict "component" "operator" "values" .Values.prometheusOperator "context" $) | nindent 6 }}
{{- end }}
`;

/** A Mutating or Validating webhook configuration of PrometheusRules. */
function admissionWebhook(kind: string, verb: string): string {
  return `{{- if and .Values.prometheusOperator.enabled .Values.prometheusOperator.admissionWebhooks.enabled }}
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata:
  name:  {{ template "kube-prom-stack.operator.fullname" . }}
  {{- with .Values.prometheusOperator.admissionWebhooks.${kind.toLowerCase()}WebhookConfiguration.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
${labels('operator-admission')}
webhooks:
  - name: prometheusrule${verb}.monitoring.coreos.com
    failurePolicy: {{ include "kube-prom-stack.operator.admission-webhook.failurePolicy" . }}
    rules:
      - apiGroups:
          - monitoring.coreos.com
        apiVersions:
          - "*"
        resources:
          - prometheusrules
        operations:
          - CREATE
          - UPDATE
    clientConfig:
      service:
        namespace: {{ template "kube-prom-stack.namespace" . }}
        name: {{ template "kube-prom-stack.operator.fullname" $ }}
        path: /admission-prometheusrules/${verb === 'mutate' ? 'mutate' : 'validate'}
      {{- if .Values.prometheusOperator.admissionWebhooks.caBundle }}
      caBundle: {{ .Values.prometheusOperator.admissionWebhooks.caBundle }}
      {{- end }}
    timeoutSeconds: {{ .Values.prometheusOperator.admissionWebhooks.timeoutSeconds }}
    admissionReviewVersions: ["v1", "v1beta1"]
    sideEffects: None
    {{- with .Values.prometheusOperator.admissionWebhooks.namespaceSelector }}
    namespaceSelector:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
`;
}

/** A hook Job of the admission webhooks: `create` makes the certificate, `patch` patches it in. */
function admissionJob(name: string, hook: string, args: string): string {
  return `{{- if and .Values.prometheusOperator.enabled .Values.prometheusOperator.admissionWebhooks.enabled .Values.prometheusOperator.admissionWebhooks.patch.enabled (not .Values.prometheusOperator.admissionWebhooks.certManager.enabled) }}
apiVersion: batch/v1
kind: Job
metadata:
  name:  {{ template "kube-prom-stack.fullname" . }}-admission-${name}
  namespace: {{ template "kube-prom-stack.namespace" . }}
  annotations:
    "helm.sh/hook": ${hook}
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
    {{- with .Values.prometheusOperator.admissionWebhooks.patch.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
${labels('admission-' + name)}
spec:
  ttlSecondsAfterFinished: {{ .Values.prometheusOperator.admissionWebhooks.patch.ttlSecondsAfterFinished }}
  template:
    metadata:
      name:  {{ template "kube-prom-stack.fullname" . }}-admission-${name}
    spec:
      {{- if .Values.prometheusOperator.admissionWebhooks.patch.priorityClassName }}
      priorityClassName: {{ .Values.prometheusOperator.admissionWebhooks.patch.priorityClassName }}
      {{- end }}
      containers:
        - name: ${name}
          image: {{ include "kube-prom-stack.image" (dict "image" .Values.prometheusOperator.admissionWebhooks.patch.image "context" $) | quote }}
          imagePullPolicy: {{ .Values.prometheusOperator.admissionWebhooks.patch.image.pullPolicy }}
          args:
${args}
          resources:
{{ toYaml .Values.prometheusOperator.admissionWebhooks.patch.resources | indent 12 }}
          securityContext:
          {{- toYaml .Values.prometheusOperator.admissionWebhooks.${name === 'create' ? 'createSecretJob' : 'patchWebhookJob'}.securityContext | nindent 12 }}
      restartPolicy: OnFailure
      serviceAccountName: {{ template "kube-prom-stack.admission.serviceAccountName" . }}
      {{- include "kube-prom-stack.scheduling" (dict "component" "admission" "values" .Values.prometheusOperator.admissionWebhooks.patch "context" $) | nindent 6 }}
      securityContext:
{{ toYaml .Values.prometheusOperator.admissionWebhooks.patch.securityContext | indent 8 }}
{{- end }}
`;
}

/** The admission webhooks: two configurations and the two hook Jobs that make and patch the certificate. */
function admission(): ChartFiles {
  const rules = `  - apiGroups:
      - admissionregistration.k8s.io
    resources:
      - validatingwebhookconfigurations
      - mutatingwebhookconfigurations
    verbs:
      - get
      - update`;
  const acc = rbac(
    'prometheus-operator/admission-webhooks/job-patch',
    'admission',
    'admission',
    '.Values.prometheusOperator.admissionWebhooks.enabled',
    rules,
  );
  return {
    ...scoped(acc, '.Values.prometheusOperator.admissionWebhooks.patch'),
    'templates/prometheus-operator/admission-webhooks/mutatingWebhookConfiguration.yaml': admissionWebhook(
      'Mutating',
      'mutate',
    ),
    'templates/prometheus-operator/admission-webhooks/validatingWebhookConfiguration.yaml': admissionWebhook(
      'Validating',
      'validate',
    ),
    'templates/prometheus-operator/admission-webhooks/job-patch/job-createSecret.yaml': admissionJob(
      'create',
      'pre-install,pre-upgrade',
      `            - create
            - --host={{ template "kube-prom-stack.operator.fullname" . }},{{ template "kube-prom-stack.operator.fullname" . }}.{{ template "kube-prom-stack.namespace" . }}.svc
            - --namespace={{ template "kube-prom-stack.namespace" . }}
            - --secret-name={{ template "kube-prom-stack.fullname" . }}-admission`,
    ),
    'templates/prometheus-operator/admission-webhooks/job-patch/job-patchWebhook.yaml': admissionJob(
      'patch',
      'post-install,post-upgrade',
      `            - patch
            - --webhook-name={{ template "kube-prom-stack.operator.fullname" . }}
            - --namespace={{ template "kube-prom-stack.namespace" . }}
            - --secret-name={{ template "kube-prom-stack.fullname" . }}-admission
            - --patch-failure-policy={{ .Values.prometheusOperator.admissionWebhooks.failurePolicy }}`,
    ),
  };
}

/** Fix the `.serviceAccount` shorthand of {@link rbac} to the component's values. */
function scoped(files: ChartFiles, values: string): ChartFiles {
  return Object.fromEntries(
    Object.entries(files).map(([k, v]) => [
      k,
      v.replace(/(^|[ (])\.serviceAccount\./g, `$1${values}.serviceAccount.`),
    ]),
  );
}

const CR_RULES = `  - apiGroups: [""]
    resources: ["nodes", "nodes/metrics", "services", "endpoints", "pods"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["networking.k8s.io"]
    resources: ["ingresses"]
    verbs: ["get", "list", "watch"]
  - nonResourceURLs: ["/metrics", "/metrics/cadvisor"]
    verbs: ["get"]
{{- if .Values.prometheus.additionalRulesForClusterRole }}
{{ toYaml .Values.prometheus.additionalRulesForClusterRole | indent 2 }}
{{- end }}`;

/** Every workload template of the parent chart. */
export function parentWorkloads(): ChartFiles {
  const op = '.Values.prometheusOperator';
  const opRules = [
    'monitoring.coreos.com',
    'apps',
    '',
    'networking.k8s.io',
    'discovery.k8s.io',
    'storage.k8s.io',
  ]
    .map((g) => `  - apiGroups: [${JSON.stringify(g)}]\n    resources: ["*"]\n    verbs: ["*"]`)
    .join('\n');
  return {
    ...scoped(rbac('prometheus-operator', 'operator', 'operator', `${op}.enabled`, opRules), op),
    ...serviceAndMonitor('prometheus-operator', 'operator', 'operator', op, 'https'),
    'templates/prometheus-operator/deployment.yaml': OPERATOR_DEPLOYMENT,
    ...admission(),
    ...scoped(
      rbac('prometheus', 'prometheus', 'prometheus', '.Values.prometheus.enabled', CR_RULES),
      '.Values.prometheus',
    ),
    ...serviceAndMonitor('prometheus', 'prometheus', 'prometheus', '.Values.prometheus', 'http-web'),
    'templates/prometheus/prometheus.yaml': customResource(
      'Prometheus',
      'prometheus',
      'prometheus',
      '.Values.prometheus',
      PROMETHEUS_EXTRA,
    ),
    'templates/prometheus/additionalScrapeConfigs.yaml': `{{- if and .Values.prometheus.enabled .Values.prometheus.prometheusSpec.additionalScrapeConfigs }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-prometheus-scrape-confg
  namespace: {{ template "kube-prom-stack.namespace" . }}
${labels('prometheus-scrape-confg')}
data:
  additional-scrape-configs.yaml: {{ tpl (toYaml .Values.prometheus.prometheusSpec.additionalScrapeConfigs) $ | b64enc | quote }}
{{- end }}
`,
    'templates/prometheus/ingress.yaml': `{{- if and .Values.prometheus.enabled .Values.prometheus.ingress.enabled }}
apiVersion: {{ include "kube-prom-stack.ingress.apiVersion" . }}
kind: Ingress
metadata:
  name: {{ template "kube-prom-stack.fullname" . }}-prometheus
{{- end }}
`,
    'templates/prometheus/podDisruptionBudget.yaml': `{{- if and .Values.prometheus.enabled .Values.prometheus.podDisruptionBudget.enabled }}
apiVersion: {{ include "kube-prom-stack.pdb.apiVersion" . }}
kind: PodDisruptionBudget
metadata:
  name: {{ template "kube-prom-stack.prometheus.fullname" . }}
{{- end }}
`,
    ...scoped(
      rbac('alertmanager', 'alertmanager', 'alertmanager', '.Values.alertmanager.enabled', '  []'),
      '.Values.alertmanager',
    ),
    ...serviceAndMonitor('alertmanager', 'alertmanager', 'alertmanager', '.Values.alertmanager', 'http-web'),
    'templates/alertmanager/alertmanager.yaml': customResource(
      'Alertmanager',
      'alertmanager',
      'alertmanager',
      '.Values.alertmanager',
      `  configSecret: {{ template "kube-prom-stack.alertmanager.crname" . }}-generated`,
    ),
    'templates/alertmanager/secret.yaml': `{{- if and .Values.alertmanager.enabled (not .Values.alertmanager.alertmanagerSpec.useExistingSecret) }}
apiVersion: v1
kind: Secret
metadata:
  name: alertmanager-{{ template "kube-prom-stack.alertmanager.crname" . }}
  namespace: {{ template "kube-prom-stack.namespace" . }}
${labels('alertmanager')}
data:
{{- if .Values.alertmanager.tplConfig }}
  alertmanager.yaml: {{ tpl (toYaml .Values.alertmanager.config) . | b64enc | quote }}
{{- else if .Values.alertmanager.stringConfig }}
  alertmanager.yaml: {{ .Values.alertmanager.stringConfig | b64enc | quote }}
{{- else }}
  alertmanager.yaml: {{ toYaml .Values.alertmanager.config | b64enc | quote }}
{{- end }}
{{- range $key, $val := .Values.alertmanager.templateFiles }}
  {{ $key }}: {{ $val | b64enc | quote }}
{{- end }}
{{- end }}
`,
    ...scoped(
      rbac('thanos-ruler', 'thanosRuler', 'thanos-ruler', '.Values.thanosRuler.enabled', '  []'),
      '.Values.thanosRuler',
    ),
    ...serviceAndMonitor('thanos-ruler', 'thanosRuler', 'thanos-ruler', '.Values.thanosRuler', 'web'),
  };
}
