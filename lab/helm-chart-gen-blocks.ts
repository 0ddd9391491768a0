/**
 * The blocks the parent values.yaml of the generated monitoring stack (lab/helm-chart-gen-values.ts)
 * repeats for its components (service, ServiceMonitor, ingress, pod scheduling, custom resource
 * spec), and the operator's and Prometheus's sections, which are made of them.
 */
import { imageYaml, type ImageValue } from './helm-chart-gen-subcharts.js';
import type { ParentImages } from './helm-chart-gen-values.js';

/** Indent every line of `text` by `pad`. */
export const at = (pad: string, text: string): string =>
  text
    .split('\n')
    .map((l) => (l ? pad + l : l))
    .join('\n');

/** Relabelings as kube-prometheus-stack's values document them (`n` of them). */
export function relabelings(n: number, action: 'drop' | 'replace'): string {
  return Array.from({ length: n }, (_, i) =>
    action === 'drop'
      ? `- action: drop\n  regex: (apiserver_request_duration_seconds_bucket|etcd_request_duration_seconds_bucket_${i})\n  sourceLabels: [__name__, le]`
      : `- sourceLabels: [__meta_kubernetes_pod_node_name]\n  separator: ;\n  regex: ^(.*)$\n  targetLabel: nodename_${i}\n  replacement: $1\n  action: replace`,
  ).join('\n');
}

export function serviceMonitorBlock(jobLabel: string, drops: number, selector = '{}'): string {
  return `serviceMonitor:
  enabled: true
  ## Scrape interval. If not set, the Prometheus default scrape interval is used.
  ##
  interval: ""
  ## SampleLimit defines per-scrape limit on number of scraped samples that will be accepted.
  ##
  sampleLimit: 0
  ## TargetLimit defines a limit on the number of scraped targets that will be accepted.
  ##
  targetLimit: 0
  ## Per-scrape limit on number of labels that will be accepted for a sample.
  ##
  labelLimit: 0
  ## Per-scrape limit on length of labels name that will be accepted for a sample.
  ##
  labelNameLengthLimit: 0
  ## Per-scrape limit on length of labels value that will be accepted for a sample.
  ##
  labelValueLengthLimit: 0
  ## proxyUrl: URL of a proxy that should be used for scraping.
  ##
  proxyUrl: ""
  jobLabel: ${jobLabel}
  selector: ${selector}
  ## Enable scraping over https
  https: false
  ## Skip TLS certificate validation when scraping
  insecureSkipVerify: null
  ## Name of the server to use when validating TLS certificate
  serverName: null
  ## MetricRelabelConfigs to apply to samples after scraping, but before ingestion.
  ## ref: https://github.com/prometheus-operator/prometheus-operator/blob/main/Documentation/api.md#relabelconfig
  ##
  metricRelabelings:
${at('    ', relabelings(drops, 'drop'))}
  ## RelabelConfigs to apply to samples before scraping
  ## ref: https://github.com/prometheus-operator/prometheus-operator/blob/main/Documentation/api.md#relabelconfig
  ##
  relabelings:
${at('    ', relabelings(2, 'replace'))}
  ## Additional labels
  ##
  additionalLabels: {}
  #  foo: bar
  ## defines the labels which are transferred from the associated Kubernetes Service object onto the ingested metrics.
  ##
  targetLabels: []`;
}

export function serviceBlock(port: number, targetPort: number): string {
  return `service:
  enabled: true
  ## Port for the service to listen on
  ##
  port: ${port}
  ## Target port to scrape on the pods
  ##
  targetPort: ${targetPort}
  ## Annotations for the service
  ##
  annotations: {}
  labels: {}
  clusterIP: ""
  ipDualStack:
    enabled: false
    ipFamilies: ["IPv6", "IPv4"]
    ipFamilyPolicy: "PreferDualStack"
  ## List of IP addresses at which the service is available
  ## Ref: https://kubernetes.io/docs/user-guide/services/#external-ips
  ##
  externalIPs: []
  loadBalancerIP: ""
  loadBalancerSourceRanges: []
  ## Denotes if this Service desires to route external traffic to node-local or cluster-wide endpoints
  ##
  externalTrafficPolicy: Cluster
  ## Service type
  ##
  type: ClusterIP
  ## Additional ports to open for the service
  ##
  additionalPorts: []
  # - name: oauth-proxy
  #   port: 8081
  #   targetPort: 8081
  # - name: oauth-metrics
  #   port: 8082
  #   targetPort: 8082
  selector: {}`;
}

export function ingressBlock(): string {
  return `ingress:
  enabled: false
  # For Kubernetes >= 1.18 you should specify the ingress-controller via the field ingressClassName
  # See https://kubernetes.io/blog/2020/04/02/improvements-to-the-ingress-api-in-kubernetes-1.18/#specifying-the-class-of-an-ingress
  # ingressClassName: nginx
  annotations: {}
  labels: {}
  ## Override ingress to a different defined port on the service
  # servicePort: 8081
  ## Hosts must be provided if Ingress is enabled.
  ##
  hosts: []
  # - prometheus.domain.com
  ## Paths to use for ingress rules
  ##
  paths: []
  # - /
  ## For Kubernetes >= 1.18 you should specify the pathType (determines how Ingress paths should be matched)
  # pathType: ImplementationSpecific
  ## TLS configuration for the ingress
  ## Secret must be manually created in the namespace
  ##
  tls: []
  # - secretName: prometheus-general-tls
  #   hosts:
  #     - prometheus.example.com`;
}

/** Pod scheduling and resources, as every workload's values have them. */
function podBlock(runAsUser: number): string {
  return `## Resource limits & requests
##
resources: {}
# requests:
#   memory: 400Mi
## Define which Nodes the Pods are scheduled on.
## ref: https://kubernetes.io/docs/user-guide/node-selection/
##
nodeSelector: {}
## Tolerations for use with node taints
## ref: https://kubernetes.io/docs/concepts/configuration/taint-and-toleration/
##
tolerations: []
# - key: "key"
#   operator: "Equal"
#   value: "value"
#   effect: "NoSchedule"
## Pod anti-affinity can prevent the scheduler from placing replicas on the same node.
## The default value "soft" means that the scheduler should *prefer* to not schedule two replica pods onto the same node but no guarantee is provided.
## The value "hard" means that the scheduler is *required* to not schedule two replica pods onto the same node.
## The value "" will disable pod anti-affinity so that no anti-affinity rules will be configured.
podAntiAffinity: "soft"
## If anti-affinity is enabled sets the topologyKey to use for anti-affinity.
## This can be changed to, for example, failure-domain.beta.kubernetes.io/zone
##
podAntiAffinityTopologyKey: kubernetes.io/hostname
## Assign custom affinity rules
## ref: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/
##
affinity: {}
# nodeAffinity:
#   requiredDuringSchedulingIgnoredDuringExecution:
#     nodeSelectorTerms:
#     - matchExpressions:
#       - key: kubernetes.io/e2e-az-name
#         operator: In
#         values:
#         - e2e-az1
#         - e2e-az2
topologySpreadConstraints: []
# - maxSkew: 1
#   topologyKey: topology.kubernetes.io/zone
#   whenUnsatisfiable: DoNotSchedule
#   labelSelector:
#     matchLabels:
#       app: prometheus
## SecurityContext holds pod-level security attributes and common container settings.
## This defaults to non root user with uid 1000 and gid 2000.
## https://kubernetes.io/docs/concepts/policy/pod-security-policy/
##
securityContext:
  runAsGroup: 2000
  runAsNonRoot: true
  runAsUser: ${runAsUser}
  fsGroup: 2000
  seccompProfile:
    type: RuntimeDefault
containerSecurityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop:
    - ALL
priorityClassName: ""
podMetadata: {}
## Labels to add to the pods
##
podLabels: {}
## Annotations to add to the pods
##
podAnnotations: {}`;
}

/** A Kubernetes component scraped through a Service in kube-system (kube-controller-manager, …). */
export function componentBlock(name: string, port: number, component: string): string {
  return `## Component scraping the ${name}
##
${name}:
  enabled: true
  ## If your ${name} is not deployed as a pod, specify IPs it can be found on
  ##
  endpoints: []
  # - 10.141.4.22
  # - 10.141.4.23
  # - 10.141.4.24
  ## If using ${name} as a static pod, the selector is the component label.
  ##
${at('  ', serviceBlock(port, port).replace(/\n {2}selector: \{\}$/, `\n  selector:\n    component: ${component}`))}
${at('  ', serviceMonitorBlock(`jobLabel`, 4))}
`;
}

/** The Prometheus, Alertmanager and ThanosRuler spec blocks share most of their keys. */
export function specBlock(image: ImageValue, extra: string): string {
  return `## Image of the server
##
image:
${imageYaml(image, '  ')}
## Number of replicas
##
replicas: 1
## Log level
##
logLevel: info
logFormat: logfmt
## Time duration to keep data for
##
retention: 10d
## Storage is the definition of how storage will be used by the instances.
## ref: https://github.com/prometheus-operator/prometheus-operator/blob/main/Documentation/user-guides/storage.md
##
storage: {}
# volumeClaimTemplate:
#   spec:
#     storageClassName: gluster
#     accessModes: ["ReadWriteOnce"]
#     resources:
#       requests:
#         storage: 50Gi
#   selector: {}
## The external URL the instances will be available under.
##
externalUrl: ""
routePrefix: /
## If set to true all actions on the underlying managed objects are not going to be performed, except for delete actions.
##
paused: false
${podBlock(1000)}
${extra}`;
}

/** kube-prometheus-stack's additionalScrapeConfigs example, as `n` real jobs. */
function scrapeConfigs(n: number): string {
  return Array.from(
    { length: n },
    (_, i) => `- job_name: external-service-${i}
  honor_labels: true
  scrape_interval: ${15 + i}s
  metrics_path: /metrics
  scheme: https
  tls_config:
    insecure_skip_verify: false
  static_configs:
    - targets: ["svc-${i}.example.internal:9${String(i).padStart(3, '0')}"]
      labels:
        team: "{{ .Release.Name }}-team-${i % 4}"
  relabel_configs:
    - source_labels: [__address__]
      target_label: instance
      regex: ([^:]+):\\d+`,
  ).join('\n');
}

/** Two PrometheusRules a user adds, their alert texts escaped for Helm as a user must. */
export function additionalRules(): string {
  return ['team-a', 'team-b']
    .map(
      (team) => `  ${team}-rules:
    additionalLabels:
      team: ${team}
    groups:
${Array.from(
  { length: 4 },
  (_, i) => `      - name: ${team}.group${i}
        rules:
          - alert: ${team.replace('-', '')}Job${i}Failed
            expr: kube_job_status_failed{namespace="${team}"} > ${i}
            for: 10m
            labels:
              severity: warning
            annotations:
              summary: 'Job {{\`{{ $labels.job_name }}\`}} failed in ${team}'
              description: |-
                The job has failed {{\`{{ $value }}\`}} times in the last hour.
                Check its pods' logs for the reason.`,
).join('\n')}`,
    )
    .join('\n');
}

/** The operator's admission webhooks and the hook Jobs that make their certificate. */
function admissionValues(images: ParentImages): string {
  return `  ## Admission webhook support for PrometheusRules resources added in Prometheus Operator 0.30 can be enabled to prevent incorrectly formatted
  ## rules from making their way into prometheus and potentially preventing the container from starting
  admissionWebhooks:
    ## Valid values: Fail, Ignore, IgnoreOnInstallOnly
    ## IgnoreOnInstallOnly - If Release.IsInstall returns "true", set "Ignore" otherwise "Fail"
    failurePolicy: ""
    ## The default timeoutSeconds is 10 and the maximum value is 30.
    timeoutSeconds: 10
    enabled: true
    ## A PEM encoded CA bundle which will be used to validate the webhook's server certificate.
    ## If unspecified, system trust roots on the apiserver are used.
    caBundle: ""
    ## If enabled, generate a self-signed certificate, then patch the webhook configurations with the generated data.
    ## On chart upgrades (or if the secret exists) the cert will not be re-generated. You can use this to provide your own
    ## certs ahead of time if you wish.
    ##
    annotations: {}
    #   argocd.argoproj.io/hook: PreSync
    #   argocd.argoproj.io/hook-delete-policy: HookSucceeded
    namespaceSelector: {}
    objectSelector: {}
    mutatingWebhookConfiguration:
      annotations: {}
    validatingWebhookConfiguration:
      annotations: {}
    patch:
      enabled: true
      serviceAccount:
        create: true
        name: ""
        annotations: {}
        automountServiceAccountToken: true
      image:
${imageYaml(images.certgen, '        ')}
      resources: {}
      ## Provide a priority class name to the webhook patching job
      ##
      priorityClassName: ""
      ttlSecondsAfterFinished: 60
      annotations: {}
      #   argocd.argoproj.io/hook: PreSync
      #   argocd.argoproj.io/hook-delete-policy: HookSucceeded
      podAnnotations: {}
      nodeSelector: {}
      affinity: {}
      tolerations: []
      ## SecurityContext holds pod-level security attributes and common container settings.
      ## This defaults to non root user with uid 2000 and gid 2000. *v1.PodSecurityContext  false
      ## ref: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
      ##
      securityContext:
        runAsGroup: 2000
        runAsNonRoot: true
        runAsUser: 2000
        seccompProfile:
          type: RuntimeDefault
    # Security context for create job container
    createSecretJob:
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop:
          - ALL
    # Security context for patch job container
    patchWebhookJob:
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop:
          - ALL
    # Use certmanager to generate webhook certs
    certManager:
      enabled: false`;
}

export function operatorValues(images: ParentImages): string {
  return `## Manages Prometheus and Alertmanager components
##
prometheusOperator:
  enabled: true
  ## Use '{{ template "kube-prom-stack.fullname" . }}-operator' by default
  fullnameOverride: ""
  ## Number of old replicasets to retain ##
  ## The default value is 10, 0 will garbage-collect old replicasets ##
  revisionHistoryLimit: 10
  ## Strategy of the deployment
  ##
  strategy: {}
  ## Prometheus-Operator v0.39.0 and later support TLS natively.
  ##
  tls:
    enabled: true
    # Value must match version names from https://golang.org/pkg/crypto/tls/#pkg-constants
    tlsMinVersion: VersionTLS13
    # The default webhook port is 10250 in order to work out-of-the-box in GKE private clusters and avoid adding firewall rules.
    internalPort: 10250
${admissionValues(images)}
  ## Namespaces to scope the interaction of the Prometheus Operator and the apiserver (allow list).
  ## This is mutually exclusive with denyNamespaces. Setting this to an empty object will disable the configuration
  ##
  namespaces: {}
  # releaseNamespace: true
  # additional:
  # - kube-system
  ## Namespaces not to scope the interaction of the Prometheus Operator (deny list).
  ##
  denyNamespaces: []
  networkPolicy:
    ## Enable creation of NetworkPolicy resources.
    ##
    enabled: false
  ## Service account for Prometheus Operator to use.
  ## ref: https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/
  ##
  serviceAccount:
    create: true
    name: ""
    automountServiceAccountToken: true
    annotations: {}
${at('  ', serviceBlock(8080, 8080))}
  ## Labels to add to the operator deployment
  ##
  labels: {}
  ## Annotations to add to the operator deployment
  ##
  annotations: {}
  ## If true, the operator will create and maintain a service for scraping kubelets
  ## ref: https://github.com/prometheus-operator/prometheus-operator/blob/main/helm/prometheus-operator/README.md
  ##
  kubeletService:
    enabled: true
    namespace: kube-system
    ## Use '{{ template "kube-prom-stack.fullname" . }}-kubelet' by default
    name: ""
  ## Create a servicemonitor for the operator
  ##
${at('  ', serviceMonitorBlock('', 2))}
    selfMonitor: true
  ## Environment variables of the operator
  env:
    GOGC: "30"
${at('  ', podBlock(65534))}
  dnsConfig: {}
  hostNetwork: false
  ## Prometheus-operator image
  ##
  image:
${imageYaml(images.operator, '    ')}
  ## Prometheus-config-reloader
  ##
  prometheusConfigReloader:
    image:
${imageYaml(images.reloader, '      ')}
    # resource config for prometheusConfigReloader
    resources: {}
  ## Thanos side-car image when configured
  ##
  thanosImage:
${imageYaml(images.thanos, '    ')}
  ## Set a Label Selector to filter watched prometheus and prometheusAgent
  ##
  prometheusInstanceSelector: ""
  ## If enabled, the operator watches the Secret fields given here only
  secretFieldSelector: "type!=kubernetes.io/dockercfg,type!=kubernetes.io/service-account-token,type!=helm.sh/release.v1"
  extraArgs: []`;
}

export function prometheusValues(images: ParentImages): string {
  return `## Deploy a Prometheus instance
##
prometheus:
  enabled: true
  ## Toggle prometheus into agent mode
  ##
  agentMode: false
  ## Annotations for Prometheus
  ##
  annotations: {}
  ## Service account for Prometheuses to use.
  ## ref: https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/
  ##
  serviceAccount:
    create: true
    name: ""
    annotations: {}
    automountServiceAccountToken: true
  # Service for thanos service discovery on sidecar
  thanosService:
    enabled: false
  podDisruptionBudget:
    enabled: false
    minAvailable: 1
${at('  ', ingressBlock())}
${at('  ', serviceBlock(9090, 9090))}
    reloaderWebPort: 8080
    sessionAffinity: None
  servicePerReplica:
    enabled: false
${at('  ', serviceMonitorBlock('', 2))}
    selfMonitor: true
  ## Settings affecting prometheusSpec
  ## ref: https://github.com/prometheus-operator/prometheus-operator/blob/main/Documentation/api.md#prometheusspec
  ##
  prometheusSpec:
    ## Interval between consecutive scrapes.
    ##
    scrapeInterval: "30s"
    scrapeTimeout: ""
    evaluationInterval: "30s"
    ## If true, a nil or {} value for prometheus.prometheusSpec.ruleSelector will cause the
    ## prometheus resource to be created with selectors based on values in the helm deployment,
    ## which will also match the PrometheusRule resources created
    ##
    ruleSelectorNilUsesHelmValues: true
    serviceMonitorSelectorNilUsesHelmValues: true
    podMonitorSelectorNilUsesHelmValues: true
    probeSelectorNilUsesHelmValues: true
    scrapeConfigSelectorNilUsesHelmValues: true
    ruleSelector: {}
    ruleNamespaceSelector: {}
    serviceMonitorSelector: {}
    serviceMonitorNamespaceSelector: {}
    podMonitorSelector: {}
    podMonitorNamespaceSelector: {}
    ## External labels to add to any time series or alerts when communicating with external systems
    ##
    externalLabels:
      cluster: "{{ .Release.Name }}-cluster"
      region: lab
    enableAdminAPI: false
    enableFeatures: []
    walCompression: true
    retentionSize: ""
    ## AdditionalScrapeConfigs allows specifying additional Prometheus scrape configurations, rendered with tpl
    ##
    additionalScrapeConfigs:
${at('      ', scrapeConfigs(52))}
    remoteWrite: []
    remoteRead: []
${at('    ', specBlock(images.prometheus, 'shards: 1\nreplicaExternalLabelName: ""\nprometheusExternalLabelName: ""\nenableRemoteWriteReceiver: false\nportName: http-web\nthanos: {}\ncontainers: []\ninitContainers: []'))}
  additionalRulesForClusterRole: []
  additionalServiceMonitors: []
  additionalPodMonitors: []`;
}
