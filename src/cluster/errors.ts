/** Every error code src/cluster raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const ClusterError = {
  /** The API server refused the credentials (401) or the action (403) (kube.ts) */
  KUBE_FORBIDDEN: 'KUBE_FORBIDDEN',
  /** The object changed under us (409); retried (kube.ts) */
  KUBE_CONFLICT: 'KUBE_CONFLICT',
  /** The API server rejected the object as invalid (422) (kube.ts) */
  KUBE_INVALID: 'KUBE_INVALID',
  /** Any other API server error (kube.ts) */
  KUBE_API: 'KUBE_API',
  /** AgentServiceConfig agent: … (cluster/install-hub.ts) */
  ASC_RECONCILE_FAILED: 'ASC_RECONCILE_FAILED',
  /** a HostedCluster named … already exists in namespace … (cluster/install/preflight.ts) */
  CLUSTER_NAME_TAKEN: 'CLUSTER_NAME_TAKEN',
  /** HostedCluster …/… does not exist (cluster/kubeconfig.ts, scale.ts) */
  CLUSTER_NOT_FOUND: 'CLUSTER_NOT_FOUND',
  /** the hub does not serve … (cluster/install/preflight.ts) */
  HUB_NOT_READY: 'HUB_NOT_READY',
  /** the hub has no MultiClusterEngine (cluster/install-hub.ts) */
  HUB_NO_MCE: 'HUB_NO_MCE',
  /** the AgentServiceConfig has no osImage for OpenShift … … (it has:… (cluster/install/preflight.ts) */
  HUB_NO_OS_IMAGE: 'HUB_NO_OS_IMAGE',
  /** the hub has no StorageClass … (cluster/install-hub.ts) */
  HUB_NO_STORAGE_CLASS: 'HUB_NO_STORAGE_CLASS',
  /** the hub runs OpenShift …; hosted control planes on bare metal need … or later (cluster/install-hub.ts) */
  HUB_TOO_OLD: 'HUB_TOO_OLD',
  /** …: … (cluster/install/hosts.ts) */
  ISO_CREATION_FAILED: 'ISO_CREATION_FAILED',
  /** HostedCluster …/… does not report a kubeconfig yet (cluster/kubeconfig.ts) */
  KUBECONFIG_NOT_READY: 'KUBECONFIG_NOT_READY',
  /** the kubeconfig has no current cluster (cluster/kube.ts) */
  KUBECONFIG_NO_CLUSTER: 'KUBECONFIG_NO_CLUSTER',
  /** cannot load the kubeconfig: … (cluster/kube.ts) */
  KUBECONFIG_UNREADABLE: 'KUBECONFIG_UNREADABLE',
  /** no kubeconfig: neither --kubeconfig, KUBECONFIG nor ~/.kube/config names one (cluster/kube.ts) */
  KUBECONFIG_MISSING: 'KUBECONFIG_MISSING',
  /** --to "…" is neither a version nor an image (upgrade.ts) */
  UPGRADE_TARGET_INVALID: 'UPGRADE_TARGET_INVALID',
  /** there is no HostedCluster … on the hub (upgrade.ts) */
  UPGRADE_NO_CLUSTER: 'UPGRADE_NO_CLUSTER',
  /** … would be a downgrade (upgrade.ts) */
  UPGRADE_DOWNGRADE: 'UPGRADE_DOWNGRADE',
  /** the update … is conditional / not recommended / not checked (upgrade.ts) */
  UPGRADE_NOT_RECOMMENDED: 'UPGRADE_NOT_RECOMMENDED',
  /** the NodePool is autoscaled: its replicas are not set by hand (scale.ts) */
  SCALE_AUTOSCALED: 'SCALE_AUTOSCALED',
  /** --replicas with a site file that adds or removes hosts (scale.ts) */
  SCALE_SITE_CHANGED: 'SCALE_SITE_CHANGED',
  /** removing … would leave the NodePool with no node (scale.ts) */
  SCALE_LAST_NODE: 'SCALE_LAST_NODE',
  /** the NodePool released another host than the one asked for (install/remove.ts) */
  SCALE_WRONG_NODE: 'SCALE_WRONG_NODE',
  /** the NodePool cannot have … nodes: only … Agents can be picked (scale.ts) */
  SCALE_NOT_ENOUGH_AGENTS: 'SCALE_NOT_ENOUGH_AGENTS',
  /** --context names a context the kubeconfig does not have (cluster/kube.ts) */
  KUBECONFIG_NO_CONTEXT: 'KUBECONFIG_NO_CONTEXT',
  /** … (…) is not served by … (cluster/kube.ts) */
  KUBE_NOT_FOUND: 'KUBE_NOT_FOUND',
  /** …: … (cluster/kube.ts) */
  KUBE_REQUEST: 'KUBE_REQUEST',
  /** …: TLS verification of … failed: … (cluster/kube.ts) */
  KUBE_TLS: 'KUBE_TLS',
  /** …: … (cluster/kube.ts) */
  KUBE_UNREACHABLE: 'KUBE_UNREACHABLE',
  /** the CA file(s) do not verify the mirror …: … (cluster/release.ts) */
  MIRROR_CA_MISMATCH: 'MIRROR_CA_MISMATCH',
  /** no image content source covers …, where release … keeps its components (cluster/release.ts) */
  MIRROR_SOURCES_INCOMPLETE: 'MIRROR_SOURCES_INCOMPLETE',
  /** …: … (cluster/release.ts) */
  MIRROR_UNREACHABLE: 'MIRROR_UNREACHABLE',
  /** no Agent of … can be installed: … (cluster/install/agents.ts) */
  NO_AGENTS_READY: 'NO_AGENTS_READY',
  /** no host of … provisioned: … (cluster/install/hosts.ts) */
  NO_HOSTS_PROVISIONED: 'NO_HOSTS_PROVISIONED',
  /** the mirror … refused the pull secret's credentials for … (cluster/release.ts) */
  PULL_SECRET_REFUSED: 'PULL_SECRET_REFUSED',
  /** the release's hypershift image … is not in the mirror (cluster/release.ts) */
  RELEASE_INCOMPLETE_IN_MIRROR: 'RELEASE_INCOMPLETE_IN_MIRROR',
  /** the release … is not in the mirror (cluster/release.ts) */
  RELEASE_NOT_IN_MIRROR: 'RELEASE_NOT_IN_MIRROR',
  /** release … (4.21 or later) has no Sigstore signature (sha256-<hex>.sig) in the mirror (cluster/release.ts) */
  RELEASE_SIGNATURE_NOT_IN_MIRROR: 'RELEASE_SIGNATURE_NOT_IN_MIRROR',
  /** release … (…) has no hypershift component (cluster/release.ts) */
  RELEASE_NO_HYPERSHIFT: 'RELEASE_NO_HYPERSHIFT',
  /** the rendered objects have no NodePool (cluster/install/apply.ts) */
  RENDER_NO_NODEPOOL: 'RENDER_NO_NODEPOOL',
  /** hub objects with no install step: … (cluster/install-hub.ts) */
  RENDER_STEP_UNKNOWN: 'RENDER_STEP_UNKNOWN',
  /** timed out after … s waiting for …; last seen: … (cluster/wait.ts) */
  WAIT_TIMEOUT: 'WAIT_TIMEOUT',
} as const;
export type ClusterError = (typeof ClusterError)[keyof typeof ClusterError];
