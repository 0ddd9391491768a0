/**
 * The values.yaml of the generated monitoring stack's parent chart (lab/helm-chart-gen.ts): about
 * 3,500 lines, most of them documentation and commented-out examples as in kube-prometheus-stack's,
 * built from blocks every component repeats (service, ServiceMonitor, ingress, pod scheduling).
 */
import { DASHBOARDS, RULE_GROUPS, ruleKey } from './helm-chart-gen-data.js';
import {
  additionalRules,
  at,
  componentBlock,
  ingressBlock,
  operatorValues,
  prometheusValues,
  relabelings,
  serviceBlock,
  serviceMonitorBlock,
  specBlock,
} from './helm-chart-gen-blocks.js';
import type { ImageValue } from './helm-chart-gen-subcharts.js';

export interface ParentImages {
  operator: ImageValue;
  reloader: ImageValue;
  certgen: ImageValue;
  prometheus: ImageValue;
  alertmanager: ImageValue;
  thanos: ImageValue;
}

/** The parent chart's values.yaml. */
export function parentValues(images: ParentImages, registry: string): string {
  const rules = RULE_GROUPS.map(ruleKey);
  return `# Default values for kube-prom-stack.
# This is a YAML-formatted file.
# Declare variables to be passed into your templates.

## Provide a name in place of kube-prom-stack for \`app:\` labels
##
nameOverride: ""
## Override the deployment namespace
##
namespaceOverride: ""
## Provide a k8s version to auto dashboard import script example: kubeTargetVersionOverride: 1.26.6
##
kubeTargetVersionOverride: ""
## Provide a name to substitute for the full names of resources
##
fullnameOverride: ""
## Labels to apply to all resources
##
commonLabels: {}
# scmhash: abc123
# myLabel: aakkmd
crds:
  enabled: true
windowsMonitoring:
  ## Deploys the windows-exporter and Windows-specific dashboards and rules (job name must be 'windows-exporter')
  enabled: true
## Create default rules for monitoring the cluster
##
defaultRules:
  create: true
  rules:
${rules.map((r) => `    ${r}: true`).join('\n')}
  ## Reduce app namespace alert scope
  appNamespacesTarget: ".*"
  ## Set keep_firing_for for all alerts
  keepFiringFor: ""
  ## Labels for default rules
  labels: {}
  ## Annotations for default rules
  annotations: {}
  ## Additional labels for PrometheusRule alerts
  additionalRuleLabels: {}
  ## Additional annotations for PrometheusRule alerts
  additionalRuleAnnotations: {}
  ## Additional labels for specific PrometheusRule alert groups
  additionalRuleGroupLabels:
${rules.map((r) => `    ${r}: {}`).join('\n')}
  ## Additional annotations for specific PrometheusRule alerts groups
  additionalRuleGroupAnnotations:
${rules.map((r) => `    ${r}: {}`).join('\n')}
  additionalRuleGroupPartialResponseStrategy: ""
  ## Prefix for runbook URLs. Use this to override the first part of the runbookURLs that is common to all rules.
  runbookUrl: "https://runbooks.example.com/runbooks"
  ## Disabled PrometheusRule alerts
  disabled: {}
  # KubeAPIDown: true
  # NodeRAIDDegraded: true
## Provide custom recording or alerting rules to be deployed into the cluster.
##
additionalPrometheusRulesMap:
${additionalRules()}
global:
  rbac:
    create: true
    ## Create ClusterRoles that extend the existing view, edit and admin ClusterRoles to interact with prometheus-operator CRDs
    ## Ref: https://kubernetes.io/docs/reference/access-authn-authz/rbac/#aggregated-clusterroles
    createAggregateClusterRoles: false
  ## Global image registry to use if it needs to be overridden for some specific use cases (e.g local registries, custom images, ...)
  ##
  imageRegistry: ${JSON.stringify(registry)}
  ## Reference to one or more secrets to be used when pulling images
  ## ref: https://kubernetes.io/docs/tasks/configure-pod-container/pull-image-private-registry/
  ##
  imagePullSecrets: []
  # - name: "image-pull-secret"
  # or
  # - "image-pull-secret"
## Extra manifests to deploy as an array, each rendered with tpl
extraManifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: "{{ .Release.Name }}-extra"
      labels:
        release: "{{ .Release.Name }}"
    data:
      chart: "{{ .Chart.Name }}-{{ .Chart.Version }}"
      namespace: "{{ .Release.Namespace }}"
${alertmanagerValues(images)}
${grafanaValues()}
${componentsValues()}
${operatorValues(images)}
${prometheusValues(images)}
## Configuration for thanosRuler
## ref: https://thanos.io/tip/components/rule.md/
##
thanosRuler:
  ## Deploy thanosRuler
  ##
  enabled: false
  annotations: {}
  serviceAccount:
    create: true
    name: ""
    annotations: {}
  podDisruptionBudget:
    enabled: false
    minAvailable: 1
${at('  ', ingressBlock())}
${at('  ', serviceBlock(10902, 10902))}
${at('  ', serviceMonitorBlock('thanos-ruler', 2))}
  thanosRulerSpec:
${at('    ', specBlock(images.thanos, 'queryEndpoints: []\nalertmanagersUrl: []\nruleSelectorNilUsesHelmValues: true'))}
cleanPrometheusOperatorObjectNames: false
`;
}

function alertmanagerValues(images: ParentImages): string {
  return `## Configuration for alertmanager
## ref: https://prometheus.io/docs/alerting/alertmanager/
##
alertmanager:
  ## Deploy alertmanager
  ##
  enabled: true
  ## Annotations for Alertmanager
  ##
  annotations: {}
  ## Api that prometheus will use to communicate with alertmanager. Possible values are v1, v2
  ##
  apiVersion: v2
  ## Service account for Alertmanager to use.
  ## ref: https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/
  ##
  serviceAccount:
    create: true
    name: ""
    annotations: {}
    automountServiceAccountToken: true
  ## Configure pod disruption budgets for Alertmanager
  ## ref: https://kubernetes.io/docs/tasks/run-application/configure-pdb/#specifying-a-poddisruptionbudget
  ##
  podDisruptionBudget:
    enabled: false
    minAvailable: 1
    maxUnavailable: ""
  ## Alertmanager configuration directives
  ## ref: https://prometheus.io/docs/alerting/configuration/#configuration-file
  ##      https://prometheus.io/webtools/alerting/routing-tree-editor/
  ##
  config:
    global:
      resolve_timeout: 5m
    inhibit_rules:
${[0, 1, 2, 3]
  .map(
    (i) => `      - source_matchers:
          - 'severity = ${['critical', 'warning', 'info', 'critical'][i]}'
        target_matchers:
          - 'severity =~ warning|info'
        equal:
          - 'namespace'
          - 'alertname'`,
  )
  .join('\n')}
    route:
      group_by: ['namespace']
      group_wait: 30s
      group_interval: 5m
      repeat_interval: 12h
      receiver: 'null'
      routes:
      - receiver: 'null'
        matchers:
          - alertname = "Watchdog"
    receivers:
    - name: 'null'
    templates:
    - '/etc/alertmanager/config/*.tmpl'
  ## Alertmanager configuration directives (as string type, preferred over the config hash map)
  ##
  stringConfig: ""
  ## Pass the Alertmanager configuration directives through Helm's templating
  ## engine. If the Alertmanager configuration contains Alertmanager templates,
  ## they'll need to be properly escaped so that they are not interpreted by
  ## Helm
  ## ref: https://helm.sh/docs/developing_charts/#using-the-tpl-function
  ##      https://prometheus.io/docs/alerting/configuration/#tmpl_string
  ##      https://prometheus.io/docs/alerting/notifications/
  ##      https://prometheus.io/docs/alerting/notification_examples/
  tplConfig: false
  ## Alertmanager template files to format alerts
  ##
  templateFiles: {}
  #
  ## An example template:
  #   template_1.tmpl: |-
  #       {{ define "cluster" }}{{ .ExternalURL | reReplaceAll ".*alertmanager\\\\.(.*)" "$1" }}{{ end }}
${at('  ', ingressBlock())}
${at('  ', serviceBlock(9093, 9093))}
  servicePerReplica:
    enabled: false
${at('  ', serviceMonitorBlock('', 2))}
    selfMonitor: true
  alertmanagerSpec:
${at('    ', specBlock(images.alertmanager, 'useExistingSecret: false\nsecrets: []\nconfigMaps: []\nalertmanagerConfigSelector: {}\nalertmanagerConfigNamespaceSelector: {}\nclusterAdvertiseAddress: false\nforceEnableClusterMode: false\nminReadySeconds: 0'))}
`;
}

function grafanaValues(): string {
  return `## Using default values from https://github.com/grafana/helm-charts/blob/main/charts/grafana/values.yaml
##
grafana:
  enabled: true
  namespaceOverride: ""
  ## ForceDeployDatasources Create datasource configmap even if grafana deployment has been disabled
  ##
  forceDeployDatasources: false
  ## ForceDeployDashboard Create dashboard configmap even if grafana deployment has been disabled
  ##
  forceDeployDashboards: false
  ## Deploy default dashboards
  ##
  defaultDashboardsEnabled: true
  ## Timezone for the default dashboards
  ## Other options are: browser or a specific timezone, i.e. Europe/Luxembourg
  ##
  defaultDashboardsTimezone: utc
  ## Editable flag for the default dashboards
  ##
  defaultDashboardsEditable: true
  adminPassword: prom-operator
  rbac:
    ## If true, Grafana PSPs will be created
    ##
    pspEnabled: false
  ingress:
    enabled: false
  serviceMonitor:
    enabled: true
    interval: ""
    labels: {}
    relabelings: []
  prometheus:
    monitor:
      enabled: true
      interval: 1m
      labelLimit: 100
  sidecar:
    dashboards:
      enabled: true
      label: grafana_dashboard
      labelValue: "1"
      searchNamespace: ALL
      annotations: {}
      multicluster:
        global:
          enabled: false
        etcd:
          enabled: false
      provider:
        allowUiUpdates: false
    datasources:
      enabled: true
      defaultDatasourceEnabled: true
      isDefaultDatasource: true
      name: Prometheus
      uid: prometheus
      annotations: {}
      httpMethod: POST
      createPrometheusReplicasDatasources: false
      label: grafana_datasource
      labelValue: "1"
      exemplarTraceIdDestinations: {}
      alertmanager:
        enabled: true
        name: Alertmanager
        uid: alertmanager
        handleGrafanaManagedAlerts: false
        implementation: prometheus
  ## The dashboards the chart deploys
  dashboards:
${DASHBOARDS.map((d) => `    ${d}: {}`).join('\n')}
  extraConfigmapMounts: []
  additionalDataSources:
    - name: "{{ .Release.Name }}-loki"
      type: loki
      access: proxy
      url: "http://{{ .Release.Name }}-loki.{{ .Release.Namespace }}:3100"
      jsonData:
        maxLines: 1000
  prune: false
  service:
    portName: http-web
    ipFamilies: []
    ipFamilyPolicy: ""
## Flag to disable all the kubernetes component scrapers
##
kubernetesServiceMonitors:
  enabled: true
## Component scraping the kube api server
##
kubeApiServer:
  enabled: true
  tlsConfig:
    serverName: kubernetes
    insecureSkipVerify: false
${at('  ', serviceMonitorBlock('component', 12, '\n    matchLabels:\n      component: apiserver\n      provider: kubernetes'))}`;
}

function componentsValues(): string {
  return `## Component scraping the kubelet and kubelet-hosted cAdvisor
##
kubelet:
  enabled: true
  namespace: kube-system
${at('  ', serviceMonitorBlock('k8s-app', 4))}
    ## Enable scraping /metrics/cadvisor from kubelet's service
    ##
    cAdvisor: true
    ## Enable scraping /metrics/probes from kubelet's service
    ##
    probes: true
    ## Enable scraping /metrics/resource from kubelet's service
    ##
    resource: false
    resourcePath: "/metrics/resource/v1alpha1"
    ## Metric relabellings to apply to samples before ingestion
    ##
    cAdvisorMetricRelabelings:
${at('      ', relabelings(48, 'drop'))}
    probesMetricRelabelings: []
    cAdvisorRelabelings:
${at('      ', relabelings(3, 'replace'))}
${componentBlock('kubeControllerManager', 10257, 'kube-controller-manager')}
${componentBlock('coreDns', 9153, 'kube-dns')}
${componentBlock('kubeEtcd', 2381, 'etcd')}
${componentBlock('kubeScheduler', 10259, 'kube-scheduler')}
${componentBlock('kubeProxy', 10249, 'kube-proxy')}
## Component scraping kube state metrics
##
kubeStateMetrics:
  enabled: true
## Configuration for kube-state-metrics subchart
##
kube-state-metrics:
  namespaceOverride: ""
  rbac:
    create: true
  releaseLabel: true
  prometheus:
    monitor:
      enabled: true
      interval: ""
      sampleLimit: 0
      scrapeTimeout: ""
      proxyUrl: ""
      honorLabels: true
      metricRelabelings: []
      relabelings: []
  selfMonitor:
    enabled: false
## Deploy node exporter as a daemonset to all nodes
##
nodeExporter:
  enabled: true
  operatingSystems:
    linux:
      enabled: true
    aix:
      enabled: true
    darwin:
      enabled: true
  forceDeployDashboards: false
## Configuration for prometheus-node-exporter subchart
##
prometheus-node-exporter:
  namespaceOverride: ""
  podLabels:
    ## Add the 'node-exporter' label to be used by serviceMonitor to match standard common usage in rules and grafana dashboards
    ##
    jobLabel: node-exporter
  releaseLabel: true
  extraArgs:
    - --collector.filesystem.mount-points-exclude=^/(dev|proc|sys|var/lib/docker/.+|var/lib/kubelet/.+)($|/)
    - --collector.filesystem.fs-types-exclude=^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|sysfs|tracefs)$
  service:
    portName: http-metrics
  prometheus:
    monitor:
      enabled: true
      jobLabel: jobLabel
      interval: ""
      scrapeTimeout: ""
      proxyUrl: ""
      metricRelabelings: []
      relabelings: []
  rbac:
    ## If true, create PSPs for node-exporter
    ##
    pspEnabled: false
## Configuration for prometheus-windows-exporter subchart
##
prometheus-windows-exporter:
  prometheus:
    monitor:
      enabled: true
      jobLabel: jobLabel
  releaseLabel: true
  ## Set job label to 'windows-exporter' as required by the default Prometheus rules and Grafana dashboards
  ##
  podLabels:
    jobLabel: windows-exporter
  config: |-
    collectors:
      enabled: '[defaults],memory,container'`;
}
