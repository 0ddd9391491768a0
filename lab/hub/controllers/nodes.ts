/**
 * The guest (hosted cluster) Nodes of Agent hosts, as their kubelets and the node lifecycle controller
 * keep them: the Node a host registers (running a release: annotation
 * `hypershift.openshift.io/release-version`, `status.nodeInfo.osImage` "Red Hat Enterprise Linux CoreOS
 * <version>", its kubelet version), cordoning (spec.unschedulable and its taint), a kubelet that stopped
 * posting status (every condition Unknown, NodeStatusUnknown, unreachable taints) and one back Ready on
 * a new release after a reboot.
 */
import type { HubStore, KubeObject } from '../types.js';
import type { Ctx } from './context.js';
import { guestKubeletVersion } from './hypershift.js';
import { L, arr, patch, patchStatus, readyNode, rec, shortHash, str } from './util.js';

const NODE_NOT_POSTING = 'Kubelet stopped posting node status.';
const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The guest Node a host's kubelet registers, running release `version`. */
export function guestNode(ctx: Ctx, agent: KubeObject, version: string, now: string): KubeObject {
  const name = nodeName(agent);
  const iface = rec(arr(rec(agent.status?.inventory).interfaces)[0]);
  const addresses = [...arr(iface.ipV4Addresses), ...arr(iface.ipV6Addresses)].map((a) => ({
    type: 'InternalIP',
    address: String(a).split('/')[0],
  }));
  const kubelet = guestKubeletVersion(version);
  const np = agent.metadata.annotations?.[L.nodePoolAnnotation]?.split('/')[1];
  return readyNode({
    name,
    labels: {
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      'node-role.kubernetes.io/worker': '',
      'node.openshift.io/os_id': 'rhcos',
      ...(np ? { [L.nodePoolLabel]: np } : {}),
      ...Object.fromEntries(Object.entries(rec(rec(agent.spec).nodeLabels)).map(([k, v]) => [k, String(v)])),
    },
    annotations: { 'cluster.x-k8s.io/owner-kind': 'MachineSet', [L.releaseVersion]: version },
    providerID: `agent://${agent.metadata.name}`,
    addresses,
    capacity: { cpu: '8', memory: '32863628Ki', pods: '250' },
    allocatable: { cpu: '7500m', memory: '31712652Ki', pods: '250' },
    kubelet,
    osImage: `Red Hat Enterprise Linux CoreOS ${version}`,
    ids: {
      machineID: shortHash(`m-${agent.metadata.name}`, 32),
      systemUUID: agent.metadata.name,
      bootID: shortHash(`b-${agent.metadata.name}-${now}`, 32),
    },
    now,
  });
}

/** The hosted cluster Node name of an Agent: the requested hostname, else the discovered one. */
export function nodeName(agent: KubeObject): string {
  return str(rec(agent.spec).hostname) || str(rec(agent.status?.inventory).hostname) || agent.metadata.name;
}

/** The release version a guest Node runs. */
export function nodeVersion(node: KubeObject): string | undefined {
  const annotated = node.metadata.annotations?.[L.releaseVersion];
  if (annotated) return annotated;
  return /CoreOS (\S+)$/.exec(str(rec(node.status?.nodeInfo).osImage) ?? '')?.[1];
}

/** Cordon a Node (spec.unschedulable and its taint), or uncordon it. */
export function cordon(
  guest: HubStore,
  node: KubeObject,
  on: boolean,
  annotations: Record<string, string>,
  now: string,
): void {
  patch(guest, node, {
    metadata: { annotations },
    spec: on
      ? { unschedulable: true, taints: taints(node, [{ key: UNSCHEDULABLE, effect: 'NoSchedule' }], [], now) }
      : { unschedulable: null, taints: taints(node, [], [UNSCHEDULABLE], now) },
  });
}

/** A Node's taints with `add` (kept as they are when present) and without the keys in `drop`. */
function taints(
  node: KubeObject,
  add: { key: string; effect: string }[],
  drop: string[],
  now: string,
): Record<string, unknown>[] | null {
  const old = arr(node.spec?.taints).map(rec);
  const kept = old.filter((t) => !drop.includes(String(t.key)));
  for (const t of add) {
    if (!kept.some((k) => k.key === t.key && k.effect === t.effect)) kept.push({ ...t, timeAdded: now });
  }
  return kept.length > 0 ? kept : null;
}

/** The kubelet stopped posting status (the host rebooted): every condition Unknown, unreachable taints. */
export function nodeDown(guest: HubStore, node: KubeObject, now: string): void {
  const conditions = arr(node.status?.conditions)
    .map(rec)
    .map((c) => ({
      ...c,
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: NODE_NOT_POSTING,
      lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : now,
    }));
  patchStatus(guest, node, { conditions });
  patch(guest, node, {
    spec: {
      taints: taints(
        node,
        [
          { key: UNREACHABLE, effect: 'NoSchedule' },
          { key: UNREACHABLE, effect: 'NoExecute' },
        ],
        [],
        now,
      ),
    },
  });
}

const HEALTHY: Record<string, [string, string]> = {
  MemoryPressure: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  DiskPressure: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  PIDPressure: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
};

/** The host is back, running `version`: Ready, a new boot, the new OS image and kubelet. */
export function nodeUp(guest: HubStore, node: KubeObject, version: string, now: string): void {
  const conditions = arr(node.status?.conditions)
    .map(rec)
    .map((c) => {
      const ready = c.type === 'Ready';
      const [reason, message] = ready
        ? ['KubeletReady', 'kubelet is posting ready status']
        : (HEALTHY[String(c.type)] ?? ['KubeletReady', '']);
      return {
        ...c,
        status: ready ? 'True' : 'False',
        reason,
        message,
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
    });
  const kubelet = guestKubeletVersion(version);
  patchStatus(guest, node, {
    conditions,
    nodeInfo: {
      ...rec(node.status?.nodeInfo),
      osImage: `Red Hat Enterprise Linux CoreOS ${version}`,
      kubeletVersion: kubelet,
      kubeProxyVersion: kubelet,
      bootID: shortHash(`b-${node.metadata.name}-${now}-${version}`, 32),
    },
  });
  patch(guest, node, {
    metadata: { annotations: { [L.releaseVersion]: version } },
    spec: { taints: taints(node, [], [UNREACHABLE], now) },
  });
}
