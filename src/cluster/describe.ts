/**
 * One reading of the objects an install watches, shared by the install's progress lines, its stall
 * explanations and `airgap cluster status`: where a HostedCluster, NodePool, InfraEnv,
 * BareMetalHost or Agent stands, in words, and — for an Agent that is not picked by the NodePool —
 * which of the CAPI agent provider's rules it fails (approved, Validated, Connected, not bound
 * elsewhere, matching the NodePool's agentLabelSelector).
 */
import { conditionIs, describeCondition, field, findCondition } from './conditions.js';
import type { KubeObject } from './kube.js';

export const API = {
  hostedCluster: { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'HostedCluster' },
  nodePool: { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'NodePool' },
  infraEnv: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'InfraEnv' },
  agent: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'Agent' },
  nmStateConfig: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'NMStateConfig' },
  agentServiceConfig: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'AgentServiceConfig' },
  bareMetalHost: { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost' },
  multiClusterEngine: { apiVersion: 'multicluster.openshift.io/v1', kind: 'MultiClusterEngine' },
  clusterVersion: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion' },
  node: { apiVersion: 'v1', kind: 'Node' },
  secret: { apiVersion: 'v1', kind: 'Secret' },
  configMap: { apiVersion: 'v1', kind: 'ConfigMap' },
  namespace: { apiVersion: 'v1', kind: 'Namespace' },
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment' },
  storageClass: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' },
  role: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
} as const;

/** Label the assisted-service puts on Agents of an InfraEnv and BMAC requires on BareMetalHosts. */
export const INFRAENV_LABEL = 'infraenvs.agent-install.openshift.io';
/** Label BMAC puts on an Agent booted through a BareMetalHost. */
export const BMH_LABEL = 'agent-install.openshift.io/bmh';

// ---------------------------------------------------------------- HostedCluster

/** The conditions that block a HostedCluster when False. */
const HC_BLOCKING = [
  'ValidConfiguration',
  'SupportedHostedCluster',
  'ValidReleaseImage',
  'ReconciliationSucceeded',
];

export interface HostedClusterView {
  available: boolean;
  progress?: string; // Partial | Completed
  version?: string;
  completionTime?: string;
  kubeconfigSecret?: string;
  /** One line: Available, then any blocking condition that is False. */
  summary: string;
}

export function viewHostedCluster(hc: KubeObject | undefined): HostedClusterView {
  if (!hc) return { available: false, summary: 'not created yet' };
  const history = field(hc, 'status.version.history') as
    { state?: string; version?: string; completionTime?: string | null }[] | undefined;
  const top = history?.[0];
  const blocking = HC_BLOCKING.map((t) => findCondition(hc, t)).filter((c) => c && c.status === 'False');
  const parts = [
    describeCondition(findCondition(hc, 'Available'), 'Available'),
    ...blocking.map((c) => describeCondition(c)),
  ];
  if (top?.state) parts.push(`version ${top.version ?? '?'} ${top.state}`);
  return {
    available: conditionIs(hc, 'Available'),
    ...(top?.state ? { progress: top.state } : {}),
    ...(top?.version ? { version: top.version } : {}),
    ...(top?.completionTime ? { completionTime: top.completionTime } : {}),
    ...(typeof field(hc, 'status.kubeconfig.name') === 'string'
      ? { kubeconfigSecret: field(hc, 'status.kubeconfig.name') as string }
      : {}),
    summary: parts.join('; '),
  };
}

/**
 * Where a HostedCluster's update to `image` stands, as the hosted cluster-version operator reports
 * it: the newest version history entry, ClusterVersionProgressing's message (`Working towards
 * 4.18.3: 712 of 890 done`), and, when the update does not succeed, why (ClusterVersionSucceeding
 * False, or ClusterVersionFailing True on older operators).
 */
export function viewControlPlaneUpdate(
  hc: KubeObject | undefined,
  image: string,
): { done: boolean; state: string; failing?: string } {
  const top = (
    field(hc, 'status.version.history') as { image?: string; version?: string; state?: string }[] | undefined
  )?.[0];
  const done = top?.image === image && top.state === 'Completed';
  const progressing = findCondition(hc, 'ClusterVersionProgressing');
  const succeeding = findCondition(hc, 'ClusterVersionSucceeding');
  const failingCond = findCondition(hc, 'ClusterVersionFailing');
  const failing =
    succeeding?.status === 'False'
      ? (succeeding.message ?? succeeding.reason)
      : failingCond?.status === 'True'
        ? (failingCond.message ?? failingCond.reason)
        : undefined;
  const parts = [
    top?.image === image ? `version ${top.version ?? '?'} ${top.state ?? '?'}` : 'update not started yet',
    ...(!done && progressing?.status === 'True' && progressing.message ? [progressing.message] : []),
    ...(!done && failing ? [`not succeeding: ${failing}`] : []),
  ];
  return { done, state: parts.join('; '), ...(failing && !done ? { failing } : {}) };
}

// ---------------------------------------------------------------- NodePool

/**
 * Where a NodePool's update to `version` stands: Ready nodes, the version it reports, the
 * UpdatingVersion message (which node is being updated, and how), and the nodes that are not healthy.
 */
export function viewNodePoolUpdate(
  np: KubeObject | undefined,
  version: string,
): { done: boolean; state: string } {
  const v = viewNodePool(np);
  const healthy = findCondition(np, 'AllNodesHealthy');
  return {
    done: v.version === version && v.ready && v.updating === undefined,
    state: [v.summary, ...(healthy?.status === 'False' && healthy.message ? [healthy.message] : [])].join(
      '; ',
    ),
  };
}

export interface NodePoolView {
  desired: number;
  current: number;
  ready: boolean;
  /** The release all its nodes run (`status.version`). */
  version?: string;
  /** While UpdatingVersion is True, its message (which node is being updated, and how). */
  updating?: string;
  summary: string;
}

export function viewNodePool(np: KubeObject | undefined): NodePoolView {
  if (!np) return { desired: 0, current: 0, ready: false, summary: 'not created yet' };
  const desired = Number(field(np, 'spec.replicas') ?? 0);
  const current = Number(field(np, 'status.replicas') ?? 0);
  const ready = findCondition(np, 'Ready');
  const version = field(np, 'status.version') as string | undefined;
  const updatingCond = findCondition(np, 'UpdatingVersion');
  const updating = updatingCond?.status === 'True' ? (updatingCond.message ?? 'updating') : undefined;
  return {
    desired,
    current,
    ready: conditionIs(np, 'Ready') && current === desired,
    ...(version ? { version } : {}),
    ...(updating ? { updating } : {}),
    summary: [
      `${current}/${desired} nodes${version ? ` on ${version}` : ''}`,
      ...(ready ? [describeCondition(ready)] : []),
      ...(updating ? [updating] : []),
    ].join('; '),
  };
}

// ---------------------------------------------------------------- InfraEnv

export interface InfraEnvView {
  isoReady: boolean;
  isoUrl?: string;
  /** ImageCreated=False with ImageCreationError: a failure, not a wait. */
  error?: string;
  summary: string;
}

export function viewInfraEnv(ie: KubeObject | undefined): InfraEnvView {
  if (!ie) return { isoReady: false, summary: 'not created yet' };
  const c = findCondition(ie, 'ImageCreated');
  const url = field(ie, 'status.isoDownloadURL') as string | undefined;
  const isoReady = conditionIs(ie, 'ImageCreated') && !!url;
  const error =
    c?.status === 'False' && c.reason === 'ImageCreationError'
      ? (c.message ?? 'image creation failed')
      : undefined;
  return {
    isoReady,
    ...(url ? { isoUrl: url } : {}),
    ...(error ? { error } : {}),
    summary: isoReady ? 'discovery ISO created' : describeCondition(c, 'ImageCreated'),
  };
}

// ---------------------------------------------------------------- BareMetalHost

export interface HostView {
  name: string;
  state: string;
  provisioned: boolean;
  error?: string;
}

export function viewBareMetalHost(bmh: KubeObject): HostView {
  const state = (field(bmh, 'status.provisioning.state') as string | undefined) || 'pending';
  const errorType = field(bmh, 'status.errorType') as string | undefined;
  const errorMessage = field(bmh, 'status.errorMessage') as string | undefined;
  return {
    name: bmh.metadata.name,
    state,
    provisioned: state === 'provisioned' && !errorType,
    ...(errorType ? { error: `${errorType}${errorMessage ? `: ${errorMessage}` : ''}` } : {}),
  };
}

// ---------------------------------------------------------------- Agent

export interface AgentView {
  name: string;
  host?: string;
  hostname?: string;
  role?: string;
  approved: boolean;
  validated: boolean;
  connected: boolean;
  bound: boolean;
  /** `spec.clusterDeploymentName.name`, once the NodePool picked this Agent. */
  boundTo?: string;
  installed: boolean;
  state?: string;
  stage?: string;
  percent?: number;
  summary: string;
}

export function viewAgent(agent: KubeObject): AgentView {
  const labels = agent.metadata.labels ?? {};
  const hostname =
    (field(agent, 'spec.hostname') as string | undefined) ||
    (field(agent, 'status.inventory.hostname') as string | undefined);
  const role =
    (field(agent, 'status.role') as string | undefined) ?? (field(agent, 'spec.role') as string | undefined);
  const state = field(agent, 'status.debugInfo.state') as string | undefined;
  const stage = field(agent, 'status.progress.currentStage') as string | undefined;
  const percent = field(agent, 'status.progress.installationPercentage') as number | undefined;
  const boundTo = field(agent, 'spec.clusterDeploymentName.name') as string | undefined;
  const view = {
    name: agent.metadata.name,
    ...(labels[BMH_LABEL] ? { host: labels[BMH_LABEL] } : {}),
    ...(hostname ? { hostname } : {}),
    ...(role ? { role } : {}),
    approved: field(agent, 'spec.approved') === true,
    validated: conditionIs(agent, 'Validated'),
    connected: conditionIs(agent, 'Connected'),
    bound: conditionIs(agent, 'Bound'),
    ...(boundTo ? { boundTo } : {}),
    installed: conditionIs(agent, 'Installed'),
    ...(state ? { state } : {}),
    ...(stage ? { stage } : {}),
    ...(percent !== undefined ? { percent } : {}),
  };
  const where = [
    state,
    stage && stage !== state ? stage : undefined,
    percent !== undefined ? `${percent}%` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return {
    ...view,
    summary: `${hostname ?? agent.metadata.name}${role ? ` (${role})` : ''}: ${where || 'discovering'}`,
  };
}

/** metav1.LabelSelector matching (matchLabels and matchExpressions In/NotIn/Exists/DoesNotExist). */
export function matchesSelector(
  labels: Record<string, string>,
  selector:
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values?: string[] }[];
      }
    | undefined,
): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    if (e.operator === 'In' && !inValues) return false;
    if (e.operator === 'NotIn' && inValues) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/**
 * Why the NodePool cannot pick this Agent, in the CAPI agent provider's terms; empty when it can.
 * `cluster` is the HostedCluster name the Agent should end up bound to.
 */
export function whyAgentNotPicked(
  agent: KubeObject,
  cluster: string,
  selector?: Parameters<typeof matchesSelector>[1],
): string[] {
  const v = viewAgent(agent);
  if (v.boundTo === cluster) return [];
  const reasons: string[] = [];
  if (v.boundTo) reasons.push(`it is bound to another cluster (${v.boundTo})`);
  if (!v.approved) reasons.push('it is not approved (spec.approved is false)');
  if (!v.validated)
    reasons.push(
      `its validations do not pass (${describeCondition(findCondition(agent, 'Validated'), 'Validated')})`,
    );
  if (!v.connected)
    reasons.push(
      `it is not connected (${describeCondition(findCondition(agent, 'Connected'), 'Connected')})`,
    );
  if (!matchesSelector(agent.metadata.labels ?? {}, selector))
    reasons.push('its labels do not match the NodePool agentLabelSelector');
  return reasons;
}
