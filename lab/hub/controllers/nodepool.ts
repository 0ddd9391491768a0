/**
 * The HyperShift NodePool controller together with the CAPI agent provider, time-compressed: for
 * `spec.replicas` N it reserves Agents in the HostedCluster's agent namespace the way the provider's
 * `findAgent` does (approved, Validated=True, Connected=True, Bound=False, matching
 * `spec.platform.agent.agentLabelSelector`), each through a Machine and AgentMachine in the hosted
 * control plane namespace (machines.ts), and binds them (`spec.clusterDeploymentName`). Scaling down
 * releases Agents (those whose Machine is deleting or annotated `cluster.x-k8s.io/delete-machine`
 * first, as CAPI's MachineSet picks them), deletes their Machines and removes their Nodes from the
 * hosted cluster; a Machine deleted by hand releases its Agent too. A new release is rolled out node by
 * node (updates.ts); `status.version` moves once every Node runs it. `status.replicas` counts installed
 * Agents whose Node is Ready; the conditions say what is missing. With the legacy operator and no Role
 * `capi-provider-role` in the agent namespace, the provider cannot list Agents (forbidden).
 */
import type { KubeObject } from '../types.js';
import type { Ctx, Reconciler } from './context.js';
import { releaseVersion } from './context.js';
import { nodeName } from './nodes.js';
import { agentNamespaceOf, desiredReplicas } from './hypershift.js';
import {
  createMachine,
  machineName,
  machineOf,
  machinesOfPool,
  markedForDeletion,
  removeMachine,
  reserveAgent,
  syncMachines,
  type MachineUpdateStage,
} from './machines.js';
import { hypershiftOperatorReady } from './mce.js';
import { NodePoolUpdater, type UpdateView } from './updates.js';
import {
  L,
  T,
  addFinalizer,
  condition,
  conditionIs,
  get,
  hcpNamespace,
  list,
  matchesSelector,
  metaConditions,
  patch,
  patchStatus,
  rec,
  remove,
  removeFinalizer,
  str,
  type Cond,
} from './util.js';

const NP_FINALIZER = 'hypershift.openshift.io/finalizer';

const INSTALL_ORDER = [
  'binding',
  'discovering',
  'insufficient',
  'known',
  'installing',
  'installing-in-progress',
  'added-to-existing-cluster',
];

function selectorText(selector: unknown): string {
  const s = rec(selector);
  const parts = Object.entries(rec(s.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of Array.isArray(s.matchExpressions) ? s.matchExpressions : []) {
    const x = rec(e);
    const values = Array.isArray(x.values) ? x.values.join(',') : '';
    parts.push(`${String(x.key)} ${String(x.operator)}${values ? ` (${values})` : ''}`);
  }
  return parts.length > 0 ? parts.join(',') : '<everything>';
}

/** How AllMachinesReady reports a Machine an update is replacing. */
const MACHINE_STAGE_TEXT: Record<MachineUpdateStage, string> = {
  draining: 'Deleting, draining its Node for the update',
  'waiting-hook': 'Deleting, waiting for its host to reboot into discovery',
  reprovisioning: 'Provisioning, the host is being reprovisioned with the new release',
};

function isInstalled(agent: KubeObject): boolean {
  return str(rec(agent.status?.debugInfo).state) === 'added-to-existing-cluster';
}

export class NodePoolController implements Reconciler {
  readonly name = 'nodepool';
  private readonly updater: NodePoolUpdater;

  constructor(private readonly ctx: Ctx) {
    this.updater = new NodePoolUpdater(ctx);
  }

  reconcile(): void {
    if (!hypershiftOperatorReady(this.ctx)) return;
    for (const np of list(this.ctx.store, T.nodePool)) {
      try {
        this.reconcileOne(np);
      } catch (err) {
        this.ctx.error(`NodePool ${np.metadata.namespace}/${np.metadata.name}`, err);
      }
    }
  }

  private reconcileOne(np: KubeObject): void {
    const { ctx } = this;
    const ns = np.metadata.namespace ?? '';
    const poolRef = `${ns}/${np.metadata.name}`;
    const spec = rec(np.spec);
    const hc = get(ctx.store, T.hostedCluster, str(spec.clusterName) ?? '', ns);
    const agentNs = hc ? agentNamespaceOf(hc) : undefined;
    const mine = agentNs
      ? list(ctx.store, T.agent, { namespace: agentNs }).filter(
          (a) =>
            a.metadata.annotations?.[L.nodePoolAnnotation] === poolRef && rec(a.spec).clusterDeploymentName,
        )
      : [];

    if (np.metadata.deletionTimestamp) {
      if (!(np.metadata.finalizers ?? []).includes(NP_FINALIZER)) return;
      for (const agent of mine) this.release(np, agent, hc);
      if (hc)
        for (const m of machinesOfPool(ctx, np, hc))
          removeMachine(ctx.store, m.metadata.name, hcpNamespace(hc));
      this.updater.forget(np);
      removeFinalizer(ctx.store, np, NP_FINALIZER);
      return;
    }
    np = addFinalizer(ctx.store, np, NP_FINALIZER);
    const now = ctx.now();
    const gen = np.metadata.generation ?? 1;
    const image = str(rec(spec.release).image) ?? '';
    const desired = desiredReplicas(np);
    const conds: Cond[] = [
      image
        ? {
            type: 'ValidReleaseImage',
            status: 'True',
            reason: 'AsExpected',
            message: `Using release image: ${image}`,
          }
        : {
            type: 'ValidReleaseImage',
            status: 'False',
            reason: 'ValidationFailed',
            message: 'spec.release.image is empty',
          },
      {
        type: 'AutoscalingEnabled',
        status: spec.autoScaling ? 'True' : 'False',
        reason: 'AsExpected',
        message: '',
      },
      {
        type: 'AutorepairEnabled',
        status: rec(spec.management).autoRepair === true ? 'True' : 'False',
        reason: 'AsExpected',
        message: '',
      },
      { type: 'UpdateManagementEnabled', status: 'True', reason: 'AsExpected', message: '' },
      {
        type: 'ReconciliationActive',
        status: 'True',
        reason: 'AsExpected',
        message: 'Reconciliation active on resource',
      },
      { type: 'ValidMachineConfig', status: 'True', reason: 'AsExpected', message: '' },
      {
        type: 'ValidGeneratedPayload',
        status: 'True',
        reason: 'AsExpected',
        message: 'Payload generated successfully',
      },
    ];

    const guest = hc ? ctx.guests.get(hc.metadata.uid ?? '')?.api?.store : undefined;
    let problem: { reason: string; message: string } | undefined;
    let bound = mine;
    let view: UpdateView | undefined;
    if (!hc || !agentNs) {
      problem = {
        reason: 'HostedClusterNotFound',
        message: hc
          ? 'HostedCluster has no spec.platform.agent.agentNamespace'
          : `HostedCluster ${ns}/${String(spec.clusterName)} not found`,
      };
    } else {
      const cpNs = hcpNamespace(hc);
      const role = ctx.options.hypershift === 'current' ? `capi-provider-role-${cpNs}` : 'capi-provider-role';
      if (!get(ctx.store, T.role, role, agentNs)) {
        problem = {
          reason: 'AgentNotYetFound',
          message:
            `agents.agent-install.openshift.io is forbidden: User "system:serviceaccount:${cpNs}:capi-provider" cannot list resource "agents" in API group "agent-install.openshift.io" in the namespace "${agentNs}"` +
            (ctx.options.hypershift === 'legacy'
              ? ` (this HyperShift operator expects Role "capi-provider-role" granting agents in namespace "${agentNs}")`
              : ''),
        };
      } else if (!str(hc.status?.ignitionEndpoint)) {
        problem = {
          reason: 'WaitingForIgnitionEndpoint',
          message: 'Waiting for the hosted control plane ignition endpoint',
        };
      } else {
        bound = this.scale(np, hc, agentNs, cpNs, mine, desired);
        if (bound.length < desired) problem = this.shortage(np, agentNs, desired, bound.length);
        view = this.updater.step(np, hc, guest, bound);
        syncMachines(ctx, np, hc, bound, guest, view.machineStages);
      }
    }
    conds.push(updatingVersion(view), {
      type: 'UpdatingConfig',
      status: 'False',
      reason: 'AsExpected',
      message: '',
    });

    const nodeOf = (a: KubeObject): KubeObject | undefined =>
      guest ? get(guest, T.node, nodeName(a)) : undefined;
    const ready = bound.filter((a) => isInstalled(a) && conditionIs(nodeOf(a), 'Ready', 'True'));
    const reachedIgnition = bound.some((a) => {
      const stage = str(rec(a.status?.progress).currentStage) ?? '';
      return ['Configuring', 'Joined', 'Done'].includes(stage);
    });
    // Machines not ready: Agents still installing, and hosts an update is deleting or reprovisioning.
    const machinesPending = bound
      .filter((a) => !isInstalled(a) || view?.machineStages.has(a.metadata.name))
      .map((a) => {
        const replacing = view?.machineStages.get(a.metadata.name);
        if (replacing) return `Machine ${machineName(np, a)}: ${MACHINE_STAGE_TEXT[replacing]}`;
        const state = str(rec(a.status?.debugInfo).state) ?? 'binding';
        const progress = rec(a.status?.progress);
        const stage = str(progress.currentStage);
        return `Machine ${machineName(np, a)}: Agent ${a.metadata.name} is ${state}${stage ? ` (${stage}, ${String(progress.installationPercentage ?? 0)}%)` : ''}`;
      });
    // Installed hosts whose Node is not Ready, named with why.
    const unhealthy = bound
      .filter((a) => isInstalled(a) && !ready.includes(a))
      .map((a) => nodeProblem(nodeName(a), machineName(np, a), nodeOf(a)));
    const machinesReady = bound.length === desired && machinesPending.length === 0;
    const nodesHealthy = ready.length === desired && bound.length === desired;
    const details = unhealthy.length > 0 ? `: ${unhealthy.map((u) => u.text).join('; ')}` : '';
    conds.push(
      machinesReady
        ? { type: 'AllMachinesReady', status: 'True', reason: 'AsExpected', message: 'All is well' }
        : {
            type: 'AllMachinesReady',
            status: 'False',
            reason:
              problem?.reason ??
              ([...(view?.machineStages.values() ?? [])].some((st) => st !== 'reprovisioning')
                ? 'Deleting'
                : 'WaitingForInstallation'),
            message: [problem?.message, ...machinesPending].filter(Boolean).join('; '),
          },
      nodesHealthy
        ? { type: 'AllNodesHealthy', status: 'True', reason: 'AsExpected', message: 'All is well' }
        : {
            type: 'AllNodesHealthy',
            status: 'False',
            reason: unhealthy.some((u) => u.registered) ? 'NodeConditionsFailed' : 'NodeProvisioning',
            message: `${ready.length} of ${desired} Nodes are healthy${details}`,
          },
      reachedIgnition || (desired === 0 && condition(np, 'ReachedIgnitionEndpoint')?.status === 'True')
        ? { type: 'ReachedIgnitionEndpoint', status: 'True', reason: 'AsExpected', message: '' }
        : { type: 'ReachedIgnitionEndpoint', status: 'False', reason: 'ignitionNotReached', message: '' },
      ready.length >= desired
        ? { type: 'Ready', status: 'True', reason: 'AsExpected', message: '' }
        : {
            type: 'Ready',
            status: 'False',
            reason: 'WaitingForAvailableMachines',
            message: `Minimum availability requires ${desired} replicas, current ${ready.length} available${details}`,
          },
    );
    const statusPatch: Record<string, unknown> = {
      replicas: ready.length,
      conditions: metaConditions(np.status?.conditions, conds, gen, now),
    };
    // The pool's version is the release every one of its Nodes runs.
    if (ready.length > 0 && view && !view.updating) statusPatch.version = view.target;
    patchStatus(ctx.store, np, statusPatch);
  }

  /** Bind or release Agents until `desired` are bound; returns the bound ones. */
  private scale(
    np: KubeObject,
    hc: KubeObject,
    agentNs: string,
    cpNs: string,
    mine: KubeObject[],
    desired: number,
  ): KubeObject[] {
    const { ctx } = this;
    const poolRef = `${np.metadata.namespace}/${np.metadata.name}`;
    // A Machine deleted by hand (not by an update replacing it) gives its Agent up, as the provider's
    // pre-terminate hook does; the MachineSet then reserves another one.
    const updating = this.updater.updatingAgent(np);
    const lost = mine.filter((a) => {
      const m = machineOf(ctx, np, hc, a);
      return !m || (m.metadata.deletionTimestamp !== undefined && a.metadata.name !== updating);
    });
    for (const agent of lost) this.release(np, agent, hc);
    mine = mine.filter((a) => !lost.includes(a));
    if (mine.length > desired) {
      // CAPI's MachineSet deletes first Machines already deleting, then those annotated delete-machine.
      const rank = (a: KubeObject): number => {
        const m = machineOf(ctx, np, hc, a);
        return m?.metadata.deletionTimestamp ? 0 : markedForDeletion(m) ? 1 : 2;
      };
      const order = (a: KubeObject): number =>
        INSTALL_ORDER.indexOf(str(rec(a.status?.debugInfo).state) ?? '');
      const extra = [...mine]
        .sort(
          (a, b) =>
            rank(a) - rank(b) || order(a) - order(b) || b.metadata.name.localeCompare(a.metadata.name),
        )
        .slice(0, mine.length - desired);
      for (const agent of extra) this.release(np, agent, hc);
      return mine.filter((a) => !extra.includes(a));
    }
    if (mine.length === desired) return mine;
    const selector = rec(rec(rec(np.spec).platform).agent).agentLabelSelector;
    const candidates = list(ctx.store, T.agent, { namespace: agentNs })
      .filter((a) => isEligible(a) && matchesSelector(a.metadata.labels, selector))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const version = releaseVersion(ctx, str(rec(rec(np.spec).release).image) ?? '');
    const bound = [...mine];
    for (const agent of candidates.slice(0, desired - mine.length)) {
      removeMachine(ctx.store, machineName(np, agent), cpNs);
      const am = createMachine(ctx, np, hc, agent, version);
      bound.push(reserveAgent(ctx, agent, am, poolRef, { name: hc.metadata.name, namespace: cpNs }));
    }
    return bound;
  }

  /** Why fewer Agents than wanted could be reserved. */
  private shortage(
    np: KubeObject,
    agentNs: string,
    desired: number,
    have: number,
  ): { reason: string; message: string } {
    const selector = rec(rec(rec(np.spec).platform).agent).agentLabelSelector;
    const all = list(this.ctx.store, T.agent, { namespace: agentNs });
    const head = `Cannot reserve an Agent for ${desired - have} of ${desired} machines: no suitable Agent in namespace ${agentNs} matching selector ${selectorText(selector)} (an Agent must be approved, Validated=True, Connected=True and not bound)`;
    if (all.length === 0) {
      return {
        reason: 'NoSuitableAgents',
        message: `${head}; there are no Agents in ${agentNs}: boot hosts with the discovery ISO of an InfraEnv in ${agentNs} (BareMetalHosts labelled ${L.infraEnv}=<infraenv>)`,
      };
    }
    const reasons: string[] = [];
    const notMatching = all.filter((a) => !matchesSelector(a.metadata.labels, selector));
    if (notMatching.length > 0) reasons.push(`${notMatching.length} not matching the selector`);
    for (const a of all) {
      if (!matchesSelector(a.metadata.labels, selector)) continue;
      const cd = rec(rec(a.spec).clusterDeploymentName);
      const why: string[] = [];
      if (rec(a.spec).approved !== true) why.push('not approved');
      if (!conditionIs(a, 'Validated', 'True'))
        why.push(`Validated=${String(condition(a, 'Validated')?.status ?? 'Unknown')}`);
      if (!conditionIs(a, 'Connected', 'True')) why.push('not connected');
      if (str(cd.name)) why.push(`bound to ${String(cd.namespace)}/${String(cd.name)}`);
      else if (!conditionIs(a, 'Bound', 'False'))
        why.push(`Bound=${String(condition(a, 'Bound')?.status ?? 'Unknown')}`);
      if (
        why.length > 0 &&
        a.metadata.annotations?.[L.nodePoolAnnotation] !== `${np.metadata.namespace}/${np.metadata.name}`
      ) {
        reasons.push(
          `Agent ${a.metadata.name}${a.metadata.labels?.[L.bmh] ? ` (host ${a.metadata.labels[L.bmh]})` : ''}: ${why.join(', ')}`,
        );
      }
    }
    return {
      reason: 'NoSuitableAgents',
      message: `${head}; ${reasons.join('; ') || `only ${have} Agents available`}`,
    };
  }

  /** Release an Agent from its cluster, delete its Machine and remove its Node from the hosted cluster. */
  private release(np: KubeObject, agent: KubeObject, hc: KubeObject | undefined): void {
    const { ctx } = this;
    patch(ctx.store, agent, {
      metadata: {
        labels: { [L.agentMachineRef]: null },
        annotations: { [L.nodePoolAnnotation]: null, [L.agentMachineRefNamespace]: null },
      },
      spec: { clusterDeploymentName: null },
    });
    if (!hc) return;
    removeMachine(ctx.store, machineName(np, agent), hcpNamespace(hc));
    const guest = ctx.guests.get(hc.metadata.uid ?? '')?.api;
    if (guest) remove(guest.store, T.node, nodeName(agent));
  }
}

/** The CAPI provider's rule for an Agent it may reserve. */
function isEligible(agent: KubeObject): boolean {
  return (
    !agent.metadata.deletionTimestamp &&
    rec(agent.spec).approved === true &&
    !str(rec(rec(agent.spec).clusterDeploymentName).name) &&
    conditionIs(agent, 'Validated', 'True') &&
    conditionIs(agent, 'Connected', 'True') &&
    conditionIs(agent, 'Bound', 'False')
  );
}

/** UpdatingVersion: True while some Node of the pool does not run the release yet. */
function updatingVersion(view: UpdateView | undefined): Cond {
  if (!view?.updating) return { type: 'UpdatingVersion', status: 'False', reason: 'AsExpected', message: '' };
  const c = view.current;
  return {
    type: 'UpdatingVersion',
    status: 'True',
    reason: 'AsExpected',
    message:
      `Updating version in progress. Target version: ${view.target}` +
      (c ? `; node ${c.node} (${view.updated + 1} of ${view.total}): ${c.text}` : ''),
  };
}

/** Why an installed host's Node is not Ready. */
function nodeProblem(
  name: string,
  machine: string,
  node: KubeObject | undefined,
): { registered: boolean; text: string } {
  if (!node) return { registered: false, text: `Node ${name} (Machine ${machine}) is not registered` };
  const ready = condition(node, 'Ready');
  const why = ready
    ? `Ready=${String(ready.status)} ${String(ready.reason)}: ${String(ready.message)}`
    : 'no Ready condition';
  return {
    registered: true,
    text: `Node ${name} (Machine ${machine}) is ${node.spec?.unschedulable ? 'cordoned and ' : ''}NotReady (${why})`,
  };
}
