/**
 * Shared pieces of the simulated hub controllers: resource coordinates, idempotent writes (a write
 * happens only when it would change something, so reconciles settle), condition lists in the two
 * shapes the real APIs use (metav1 with observedGeneration; conditionsv1 with heartbeats), a per-object
 * dwell clock for time-compressed state machines, and a label-selector matcher.
 */
import { createHash } from 'node:crypto';
import { HubApiError, type HubStore, type KubeObject, type ListOptions, type ObjectKey } from '../types.js';

/** apiVersion + kind of every type the controllers read or write. */
export const T = {
  namespace: { apiVersion: 'v1', kind: 'Namespace' },
  secret: { apiVersion: 'v1', kind: 'Secret' },
  configMap: { apiVersion: 'v1', kind: 'ConfigMap' },
  node: { apiVersion: 'v1', kind: 'Node' },
  pod: { apiVersion: 'v1', kind: 'Pod' },
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment' },
  statefulSet: { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  role: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
  roleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
  storageClass: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass' },
  clusterVersion: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion' },
  image: { apiVersion: 'config.openshift.io/v1', kind: 'Image' },
  idms: { apiVersion: 'config.openshift.io/v1', kind: 'ImageDigestMirrorSet' },
  itms: { apiVersion: 'config.openshift.io/v1', kind: 'ImageTagMirrorSet' },
  icsp: { apiVersion: 'operator.openshift.io/v1alpha1', kind: 'ImageContentSourcePolicy' },
  mce: { apiVersion: 'multicluster.openshift.io/v1', kind: 'MultiClusterEngine' },
  hostedCluster: { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'HostedCluster' },
  nodePool: { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'NodePool' },
  agent: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'Agent' },
  infraEnv: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'InfraEnv' },
  agentServiceConfig: { apiVersion: 'agent-install.openshift.io/v1beta1', kind: 'AgentServiceConfig' },
  bmh: { apiVersion: 'metal3.io/v1alpha1', kind: 'BareMetalHost' },
  machine: { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine' },
  agentMachine: { apiVersion: 'capi-provider.agent-install.openshift.io/v1beta1', kind: 'AgentMachine' },
} as const;

export type TypeRef = { apiVersion: string; kind: string };

/** Labels and annotations with meaning across controllers. */
export const L = {
  infraEnv: 'infraenvs.agent-install.openshift.io',
  bmh: 'agent-install.openshift.io/bmh',
  hcpNamespace: 'hypershift.openshift.io/hosted-control-plane',
  nodePoolAnnotation: 'hypershift.openshift.io/nodePool',
  /** On Machines (the NodePool's name) and guest Nodes. */
  nodePoolLabel: 'hypershift.openshift.io/nodePool',
  /** On an Agent: the uid of the AgentMachine that reserved it (cluster-api-provider-agent). */
  agentMachineRef: 'agentMachineRef',
  /** On an Agent: the namespace of that AgentMachine. */
  agentMachineRefNamespace: 'agentMachineRefNamespace',
  clusterName: 'cluster.x-k8s.io/cluster-name',
  /** On a Machine (any value): CAPI's MachineSet deletes it first when scaling down. */
  deleteMachine: 'cluster.x-k8s.io/delete-machine',
  /** On a guest Node: the OpenShift release version it runs. */
  releaseVersion: 'hypershift.openshift.io/release-version',
  /** On a guest Node: the machine-config daemon's state (Working while an in-place update runs, else Done). */
  mcdState: 'machineconfiguration.openshift.io/state',
  /** On a BareMetalHost: metal3's reboot request (set-and-forget; the operator removes it). */
  reboot: 'reboot.metal3.io',
  createdBy: 'airgap.lab/simulated-by',
  bmacHostname: 'bmac.agent-install.openshift.io/hostname',
  bmacRole: 'bmac.agent-install.openshift.io/role',
  inspect: 'inspect.metal3.io',
} as const;

function key(ref: TypeRef, name: string, namespace?: string): ObjectKey {
  return namespace === undefined
    ? { apiVersion: ref.apiVersion, kind: ref.kind, name }
    : { apiVersion: ref.apiVersion, kind: ref.kind, name, namespace };
}

function keyOf(obj: KubeObject): ObjectKey {
  return key({ apiVersion: obj.apiVersion, kind: obj.kind }, obj.metadata.name, obj.metadata.namespace);
}

/** RFC 3339 with seconds, as the API server writes times. */
export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function rec(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Would a JSON merge patch of `patch` leave `target` unchanged? */
function patchIsNoop(patch: Record<string, unknown>, target: unknown): boolean {
  const t = rec(target);
  return Object.entries(patch).every(([k, v]) => {
    if (v === undefined) return true;
    if (v === null) return t[k] === undefined || t[k] === null;
    if (isRecord(v)) return isRecord(t[k]) ? patchIsNoop(v, t[k]) : false;
    return deepEqual(v, t[k]);
  });
}

export function isNotFound(err: unknown): boolean {
  return err instanceof HubApiError && err.code === 404;
}

/** Objects of a type; empty when the store does not serve the type. */
export function list(store: HubStore, ref: TypeRef, options?: ListOptions): KubeObject[] {
  if (!store.typeFor(ref.apiVersion, ref.kind)) return [];
  return store.list(ref.apiVersion, ref.kind, options);
}

export function get(store: HubStore, ref: TypeRef, name: string, namespace?: string): KubeObject | undefined {
  if (!store.typeFor(ref.apiVersion, ref.kind)) return undefined;
  return store.get(key(ref, name, namespace));
}

/** JSON merge patch of the main resource, only when it changes something. */
export function patch(store: HubStore, obj: KubeObject, body: Record<string, unknown>): KubeObject {
  if (patchIsNoop(body, obj)) return obj;
  return store.mergePatch(keyOf(obj), body);
}

/** JSON merge patch of `status`, only when it changes something. */
export function patchStatus(store: HubStore, obj: KubeObject, status: Record<string, unknown>): KubeObject {
  if (patchIsNoop(status, obj.status ?? {})) return obj;
  return store.mergePatch(keyOf(obj), { status }, 'status');
}

/**
 * Replace top-level `status` fields (a PUT of the status subresource, so values may be null where the
 * schema allows it, which a merge patch cannot express), only when it changes something.
 */
export function setStatus(store: HubStore, obj: KubeObject, fields: Record<string, unknown>): KubeObject {
  const next: Record<string, unknown> = { ...(obj.status ?? {}) };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) delete next[k];
    else next[k] = v;
  }
  if (deepEqual(next, obj.status ?? {})) return obj;
  return store.updateStatus({ ...obj, status: next });
}

/**
 * Create an object (its status written through the status subresource afterwards, as a controller
 * would), or return the existing one untouched.
 */
export function ensure(store: HubStore, obj: KubeObject): KubeObject {
  const existing = store.get(keyOf(obj));
  if (existing) return existing;
  return create(store, obj);
}

/** Create an object and then, if given, write its status. */
export function create(store: HubStore, obj: KubeObject): KubeObject {
  const { status, ...rest } = obj;
  let created = store.create(rest as KubeObject);
  if (status && Object.keys(status).length > 0) created = patchStatus(store, created, status);
  return created;
}

/** Delete, ignoring NotFound. */
export function remove(store: HubStore, ref: TypeRef, name: string, namespace?: string): void {
  if (!store.typeFor(ref.apiVersion, ref.kind)) return;
  try {
    store.delete(key(ref, name, namespace));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return (obj.metadata.finalizers ?? []).includes(finalizer);
}

export function addFinalizer(store: HubStore, obj: KubeObject, finalizer: string): KubeObject {
  if (hasFinalizer(obj, finalizer) || obj.metadata.deletionTimestamp) return obj;
  return store.mergePatch(keyOf(obj), {
    metadata: { finalizers: [...(obj.metadata.finalizers ?? []), finalizer] },
  });
}

export function removeFinalizer(store: HubStore, obj: KubeObject, finalizer: string): void {
  if (!hasFinalizer(obj, finalizer)) return;
  const rest = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  store.mergePatch(keyOf(obj), { metadata: { finalizers: rest.length > 0 ? rest : null } });
}

export type CondStatus = 'True' | 'False' | 'Unknown';
export interface Cond {
  type: string;
  status: CondStatus;
  reason: string;
  message: string;
}

function byType(existing: unknown): Map<string, Record<string, unknown>> {
  const m = new Map<string, Record<string, unknown>>();
  for (const c of arr(existing)) if (isRecord(c) && typeof c.type === 'string') m.set(c.type, c);
  return m;
}

/**
 * metav1.Condition list (HostedCluster, NodePool): the desired conditions in order, each keeping its
 * lastTransitionTime while its status is unchanged, then the existing conditions of other types.
 */
export function metaConditions(
  existing: unknown,
  desired: Cond[],
  generation: number | undefined,
  now: string,
): Record<string, unknown>[] {
  const old = byType(existing);
  const out = desired.map((c) => {
    const prev = old.get(c.type);
    const since = prev && prev.status === c.status && typeof prev.lastTransitionTime === 'string';
    const cond: Record<string, unknown> = {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: since ? prev.lastTransitionTime : now,
    };
    if (generation !== undefined) cond.observedGeneration = generation;
    return cond;
  });
  const types = new Set(desired.map((c) => c.type));
  for (const [t, c] of old) if (!types.has(t)) out.push(c);
  return out;
}

/**
 * conditionsv1 list (Agent, InfraEnv, AgentServiceConfig): no observedGeneration; the heartbeat moves
 * when reason or message change, the transition time only when the status does.
 */
export function v1Conditions(existing: unknown, desired: Cond[], now: string): Record<string, unknown>[] {
  const old = byType(existing);
  const out = desired.map((c): Record<string, unknown> => {
    const prev = old.get(c.type);
    const sameStatus = prev !== undefined && prev.status === c.status;
    const same = sameStatus && prev.reason === c.reason && prev.message === c.message;
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastHeartbeatTime: same && typeof prev.lastHeartbeatTime === 'string' ? prev.lastHeartbeatTime : now,
      lastTransitionTime:
        sameStatus && typeof prev.lastTransitionTime === 'string' ? prev.lastTransitionTime : now,
    };
  });
  const types = new Set(desired.map((c) => c.type));
  for (const [t, c] of old) if (!types.has(t)) out.push(c);
  return out;
}

/** The condition of a type in `obj.status.conditions`, if any. */
export function condition(obj: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  return arr(obj?.status?.conditions).find(
    (c): c is Record<string, unknown> => isRecord(c) && c.type === type,
  );
}

export function conditionIs(obj: KubeObject | undefined, type: string, status: CondStatus): boolean {
  return condition(obj, type)?.status === status;
}

/**
 * How long an object has been in a phase, in simulated steps. The first call for a phase starts its
 * clock; asking about another phase restarts it.
 */
export class Dwell {
  private readonly seen = new Map<string, { phase: string; at: number }>();
  constructor(private readonly stepMs: number) {}

  steps(id: string, phase: string): number {
    const now = Date.now();
    const entry = this.seen.get(id);
    if (!entry || entry.phase !== phase) {
      this.seen.set(id, { phase, at: now });
      return 0;
    }
    return Math.floor((now - entry.at) / this.stepMs);
  }

  forget(id: string): void {
    this.seen.delete(id);
  }
}

/** A Kubernetes LabelSelector (`matchLabels`, `matchExpressions`) against a label map. */
export function matchesSelector(labels: Record<string, string> | undefined, selector: unknown): boolean {
  const l = labels ?? {};
  const sel = rec(selector);
  for (const [k, v] of Object.entries(rec(sel.matchLabels))) if (l[k] !== v) return false;
  for (const raw of arr(sel.matchExpressions)) {
    const e = rec(raw);
    const k = String(e.key ?? '');
    const values = arr(e.values).map(String);
    switch (e.operator) {
      case 'In':
        if (!(k in l) || !values.includes(l[k])) return false;
        break;
      case 'NotIn':
        if (k in l && values.includes(l[k])) return false;
        break;
      case 'Exists':
        if (!(k in l)) return false;
        break;
      case 'DoesNotExist':
        if (k in l) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** A short stable hex digest of a string (for tokens and names derived from uids). */
export function shortHash(s: string, length = 10): string {
  return createHash('sha256').update(s).digest('hex').slice(0, length);
}

export function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

/** The value of a Secret key, from `data` (base64) or `stringData`. */
export function secretValue(secret: KubeObject | undefined, k: string): string | undefined {
  if (!secret) return undefined;
  const data = rec(secret.data);
  if (typeof data[k] === 'string') return Buffer.from(data[k], 'base64').toString('utf8');
  const sd = rec(secret.stringData);
  return typeof sd[k] === 'string' ? sd[k] : undefined;
}

/** The HyperShift hosted control plane namespace of a HostedCluster. */
export function hcpNamespace(hc: KubeObject): string {
  return `${hc.metadata.namespace}-${hc.metadata.name.replace(/\./g, '-')}`;
}

/** `major.minor` of a version like 4.17.3. */
export function minorOf(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version);
  return m ? `${m[1]}.${m[2]}` : version;
}

/** Create a Namespace if missing. */
export function ensureNamespace(
  store: HubStore,
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): KubeObject {
  const existing = store.get(key(T.namespace, name));
  if (existing) return existing;
  return create(store, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
}

/** What differs between the Nodes the simulator makes (hub nodes, hosted-cluster workers). */
export interface NodeSpec {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  providerID: string;
  addresses: { type: string; address: string }[];
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  /** Conditions before Ready (MemoryPressure, …), if the node reports them. */
  pressure?: Record<string, unknown>[];
  kubelet: string;
  osImage: string;
  kernelVersion?: string;
  ids: { machineID: string; systemUUID: string; bootID: string };
  now: string;
}

/** A Ready RHCOS Node (amd64, CRI-O), as a kubelet registers it. */
export function readyNode(n: NodeSpec): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: n.labels, annotations: n.annotations },
    spec: { providerID: n.providerID },
    status: {
      addresses: [...n.addresses, { type: 'Hostname', address: n.name }],
      capacity: n.capacity,
      allocatable: n.allocatable,
      conditions: [
        ...(n.pressure ?? []),
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: n.now,
          lastTransitionTime: n.now,
        },
      ],
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        kubeletVersion: n.kubelet,
        kubeProxyVersion: n.kubelet,
        containerRuntimeVersion: 'cri-o://1.30.6-3.rhaos4.17',
        osImage: n.osImage,
        ...(n.kernelVersion ? { kernelVersion: n.kernelVersion } : {}),
        ...n.ids,
      },
    },
  };
}
