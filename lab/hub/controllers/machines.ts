/**
 * The Cluster API objects of Agent NodePools, as HyperShift's CAPI controllers and
 * cluster-api-provider-agent keep them in the hosted control plane namespace:
 * - one `Machine` per Agent a NodePool reserves (labels `cluster.x-k8s.io/cluster-name` = the
 *   HostedCluster's infraID and `hypershift.openshift.io/nodePool`; spec.infrastructureRef → its
 *   AgentMachine; spec.version the release it was created for; finalizer `machine.cluster.x-k8s.io`
 *   and the provider's pre-terminate hook annotation); status.phase Provisioning → Provisioned →
 *   Running (the Agent is installed and its guest Node exists: status.nodeRef), Deleting while it goes;
 * - one `AgentMachine` of the same name owned by it (spec.providerID `agent://<agent>`, status.agentRef,
 *   status.addresses, status.ready once the Agent is installed, conditions copied from the Agent).
 * The Agent's `agentMachineRef` label holds the AgentMachine's uid (and `agentMachineRefNamespace` its
 * namespace), as the provider writes them. Conditions are CAPI v1beta1 conditions (severity on False).
 */
import type { HubStore, KubeObject } from '../types.js';
import { nodeName } from './nodes.js';
import type { Ctx } from './context.js';
import {
  L,
  T,
  arr,
  condition,
  conditionIs,
  create,
  get,
  hcpNamespace,
  list,
  patch,
  patchStatus,
  rec,
  remove,
  removeFinalizer,
  shortHash,
  str,
} from './util.js';

const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
/** The provider's pre-terminate hook: a deleting Machine waits until its Agent is unbound. */
const DELETE_HOOK = 'pre-terminate.delete.hook.machine.cluster.x-k8s.io/agentmachine';

/** The Machine (and AgentMachine) name of an Agent in a NodePool. */
export function machineName(np: KubeObject, agent: KubeObject): string {
  return `${np.metadata.name}-${shortHash(agent.metadata.name, 5)}`;
}

/** The CAPI cluster name of a HostedCluster: its infraID. */
function capiClusterName(hc: KubeObject): string {
  return str(rec(hc.spec).infraID) || hc.metadata.name;
}

/** The Machine of an Agent in a NodePool, if any. */
export function machineOf(
  ctx: Ctx,
  np: KubeObject,
  hc: KubeObject,
  agent: KubeObject,
): KubeObject | undefined {
  return get(ctx.store, T.machine, machineName(np, agent), hcpNamespace(hc));
}

/** Does a Machine carry CAPI's delete-machine annotation (any value)? */
export function markedForDeletion(machine: KubeObject | undefined): boolean {
  return machine?.metadata.annotations?.[L.deleteMachine] !== undefined;
}

/**
 * The Machine holding an Agent, found the way the provider links them: the AgentMachine whose uid is the
 * Agent's `agentMachineRef` label, and the Machine owning it.
 */
export function machineOfAgent(ctx: Ctx, agent: KubeObject): KubeObject | undefined {
  const uid = agent.metadata.labels?.[L.agentMachineRef];
  const ns = agent.metadata.annotations?.[L.agentMachineRefNamespace];
  if (!uid || !ns) return undefined;
  const am = list(ctx.store, T.agentMachine, { namespace: ns }).find((m) => m.metadata.uid === uid);
  const owner = arr(am?.metadata.ownerReferences)
    .map(rec)
    .find((r) => r.kind === 'Machine');
  return owner ? get(ctx.store, T.machine, String(owner.name), ns) : undefined;
}

/**
 * Create the Machine and the AgentMachine for an Agent a NodePool reserves (the Machine first, as the
 * MachineSet does, then its infrastructure), and return the AgentMachine.
 */
export function createMachine(
  ctx: Ctx,
  np: KubeObject,
  hc: KubeObject,
  agent: KubeObject,
  version: string,
): KubeObject {
  const { store } = ctx;
  const namespace = hcpNamespace(hc);
  const name = machineName(np, agent);
  const cluster = capiClusterName(hc);
  const labels = { [L.clusterName]: cluster, [L.nodePoolLabel]: np.metadata.name };
  const providerID = `agent://${agent.metadata.name}`;
  const machine = create(store, {
    apiVersion: T.machine.apiVersion,
    kind: T.machine.kind,
    metadata: {
      name,
      namespace,
      labels,
      annotations: {
        [L.nodePoolAnnotation]: `${np.metadata.namespace}/${np.metadata.name}`,
        [DELETE_HOOK]: '',
      },
      finalizers: [MACHINE_FINALIZER],
    },
    spec: {
      clusterName: cluster,
      bootstrap: { dataSecretName: `user-data-${np.metadata.name}-${shortHash(`${np.metadata.uid}`, 8)}` },
      infrastructureRef: {
        apiVersion: T.agentMachine.apiVersion,
        kind: T.agentMachine.kind,
        name,
        namespace,
      },
      providerID,
      version,
    },
    status: {
      phase: 'Provisioning',
      bootstrapReady: true,
      infrastructureReady: false,
      lastUpdated: ctx.now(),
    },
  });
  const selector = rec(rec(rec(np.spec).platform).agent).agentLabelSelector;
  return create(store, {
    apiVersion: T.agentMachine.apiVersion,
    kind: T.agentMachine.kind,
    metadata: {
      name,
      namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: T.machine.apiVersion,
          kind: T.machine.kind,
          name,
          uid: machine.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { providerID, ...(selector ? { agentLabelSelector: selector } : {}) },
    status: {
      agentRef: { namespace: agent.metadata.namespace, name: agent.metadata.name },
      addresses: addressesOf(agent),
      ready: false,
    },
  });
}

/** Remove a Machine and its AgentMachine now (finalizer dropped: what is left of its deletion is done). */
export function removeMachine(store: HubStore, name: string, namespace: string): void {
  const machine = get(store, T.machine, name, namespace);
  if (machine) {
    removeFinalizer(store, machine, MACHINE_FINALIZER);
    remove(store, T.machine, name, namespace);
  }
  remove(store, T.agentMachine, name, namespace);
}

/** Start deleting a Machine (it stays, Deleting, until its finalizer goes). */
export function deleteMachine(store: HubStore, machine: KubeObject): void {
  remove(store, T.machine, machine.metadata.name, machine.metadata.namespace);
}

/** Machines of a NodePool in its hosted control plane namespace. */
export function machinesOfPool(ctx: Ctx, np: KubeObject, hc: KubeObject): KubeObject[] {
  return list(ctx.store, T.machine, { namespace: hcpNamespace(hc) }).filter(
    (m) => m.metadata.labels?.[L.nodePoolLabel] === np.metadata.name,
  );
}

/** Where a NodePool update has a host, as far as its Machine shows it. */
export type MachineUpdateStage = 'draining' | 'waiting-hook' | 'reprovisioning';

/**
 * Bring the status of each bound Agent's Machine and AgentMachine up to date, and remove the Machines
 * of the pool no bound Agent has. `stages` says which hosts an update is taking through deletion or
 * reprovisioning (by Agent name).
 */
export function syncMachines(
  ctx: Ctx,
  np: KubeObject,
  hc: KubeObject,
  bound: KubeObject[],
  guest: HubStore | undefined,
  stages: Map<string, MachineUpdateStage>,
): void {
  const { store } = ctx;
  const now = ctx.now();
  const names = new Set<string>();
  for (const agent of bound) {
    const name = machineName(np, agent);
    names.add(name);
    const machine = machineOf(ctx, np, hc, agent);
    const am = machine && get(store, T.agentMachine, name, machine.metadata.namespace);
    if (!machine || !am) continue;
    const stage = stages.get(agent.metadata.name);
    const installed = str(rec(agent.status?.debugInfo).state) === 'added-to-existing-cluster';
    const ready = installed && stage !== 'reprovisioning';
    const node = guest && stage !== 'reprovisioning' ? get(guest, T.node, nodeName(agent)) : undefined;
    patchStatus(store, am, {
      agentRef: { namespace: agent.metadata.namespace, name: agent.metadata.name },
      addresses: addressesOf(agent),
      ready,
      conditions: capiConditions(am.status?.conditions, agentMachineConditions(agent, stage), now),
    });
    const deleting = machine.metadata.deletionTimestamp !== undefined;
    const phase = deleting ? 'Deleting' : !ready ? 'Provisioning' : node ? 'Running' : 'Provisioned';
    const nodeReady = node !== undefined && conditionIs(node, 'Ready', 'True');
    const nodeCond = condition(node, 'Ready');
    const conds: CapiCond[] = [
      deleting
        ? { type: 'Ready', status: 'False', reason: 'Deleting', severity: 'Info' }
        : ready
          ? { type: 'Ready', status: 'True' }
          : { type: 'Ready', status: 'False', reason: 'WaitingForInfrastructure', severity: 'Info' },
      { type: 'BootstrapReady', status: 'True' },
      ready
        ? { type: 'InfrastructureReady', status: 'True' }
        : {
            type: 'InfrastructureReady',
            status: 'False',
            reason: 'WaitingForInfrastructure',
            severity: 'Info',
            message: `AgentMachine ${name} is not ready`,
          },
      nodeReady
        ? { type: 'NodeHealthy', status: 'True' }
        : node
          ? {
              type: 'NodeHealthy',
              status: 'False',
              reason: 'NodeConditionsFailed',
              severity: 'Warning',
              message: `Node condition Ready is ${String(nodeCond?.status ?? 'Unknown')}`,
            }
          : { type: 'NodeHealthy', status: 'False', reason: 'NodeProvisioning', severity: 'Info' },
    ];
    if (deleting) {
      conds.push(
        stage === 'draining'
          ? {
              type: 'DrainingSucceeded',
              status: 'False',
              reason: 'Draining',
              severity: 'Info',
              message: `Draining the node before deletion`,
            }
          : { type: 'DrainingSucceeded', status: 'True' },
        stage === 'draining'
          ? { type: 'PreTerminateDeleteHookSucceeded', status: 'True' }
          : {
              type: 'PreTerminateDeleteHookSucceeded',
              status: 'False',
              reason: 'WaitingExternalHook',
              severity: 'Info',
            },
      );
    }
    const prev = rec(machine.status);
    patchStatus(store, machine, {
      phase,
      bootstrapReady: true,
      infrastructureReady: ready,
      nodeRef: node
        ? { apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }
        : null,
      addresses: addressesOf(agent),
      lastUpdated: prev.phase === phase ? (prev.lastUpdated ?? now) : now,
      conditions: capiConditions(prev.conditions, conds, now),
    });
  }
  for (const m of machinesOfPool(ctx, np, hc)) {
    if (!names.has(m.metadata.name)) removeMachine(store, m.metadata.name, m.metadata.namespace ?? '');
  }
}

/** The provider's addresses of an Agent: its IPv4 addresses as ExternalIP, its hostname as InternalDNS. */
function addressesOf(agent: KubeObject): { type: string; address: string }[] {
  const out: { type: string; address: string }[] = [];
  for (const iface of arr(rec(agent.status?.inventory).interfaces).map(rec)) {
    for (const a of arr(iface.ipV4Addresses))
      out.push({ type: 'ExternalIP', address: String(a).split('/')[0] });
  }
  out.push({ type: 'InternalDNS', address: nodeName(agent) });
  return out;
}

/** The AgentMachine's conditions, from the Agent's (a host being reprovisioned is not installed). */
function agentMachineConditions(agent: KubeObject, stage: MachineUpdateStage | undefined): CapiCond[] {
  const from = (type: string, agentType: string, severity: string): CapiCond => {
    const c = condition(agent, agentType);
    if (c?.status === 'True') return { type, status: 'True' };
    return {
      type,
      status: 'False',
      reason: str(c?.reason) ?? '',
      severity,
      message: str(c?.message) ?? '',
    };
  };
  const installed: CapiCond =
    stage === 'reprovisioning'
      ? {
          type: 'Installed',
          status: 'False',
          reason: 'InstallationInProgress',
          severity: 'Info',
          message: 'The host is being reprovisioned',
        }
      : from('Installed', 'Installed', 'Info');
  const rest = [
    { type: 'AgentReserved', status: 'True' } as CapiCond,
    from('AgentSpecSynced', 'SpecSynced', 'Error'),
    from('AgentValidated', 'Validated', 'Error'),
    from('AgentRequirementsMet', 'RequirementsMet', 'Error'),
    installed,
  ];
  const failing = rest.find((c) => c.status !== 'True');
  const ready: CapiCond = failing
    ? { ...failing, type: 'Ready', message: failing.message ?? '' }
    : { type: 'Ready', status: 'True' };
  return [ready, ...rest];
}

interface CapiCond {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  severity?: string;
  message?: string;
}

/** A CAPI v1beta1 condition list: lastTransitionTime kept while the status is unchanged. */
function capiConditions(existing: unknown, desired: CapiCond[], now: string): Record<string, unknown>[] {
  const old = new Map(
    arr(existing)
      .map(rec)
      .map((c) => [str(c.type) ?? '', c] as const),
  );
  return desired.map((c) => {
    const prev = old.get(c.type);
    const out: Record<string, unknown> = {
      type: c.type,
      status: c.status,
      lastTransitionTime:
        prev && prev.status === c.status && typeof prev.lastTransitionTime === 'string'
          ? prev.lastTransitionTime
          : now,
    };
    if (c.reason) out.reason = c.reason;
    if (c.severity && c.status === 'False') out.severity = c.severity;
    if (c.message) out.message = c.message;
    return out;
  });
}

/** Label an Agent as reserved by an AgentMachine and bind it to the hosted cluster. */
export function reserveAgent(
  ctx: Ctx,
  agent: KubeObject,
  am: KubeObject,
  poolRef: string,
  cluster: { name: string; namespace: string },
): KubeObject {
  return patch(ctx.store, agent, {
    metadata: {
      labels: { [L.agentMachineRef]: am.metadata.uid ?? '' },
      annotations: {
        [L.nodePoolAnnotation]: poolRef,
        [L.agentMachineRefNamespace]: am.metadata.namespace ?? '',
      },
    },
    spec: { clusterDeploymentName: cluster },
  });
}
