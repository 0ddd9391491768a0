/**
 * Node-by-node updates of a NodePool, time-compressed, as HyperShift rolls a release out to the pool's
 * hosts. Each guest Node records the release it runs (annotation `hypershift.openshift.io/release-version`,
 * `status.nodeInfo.osImage` "Red Hat Enterprise Linux CoreOS <version>", its kubelet version). When the
 * version of the pool's spec.release.image differs from what its Nodes run, the hosts are updated one
 * at a time, in the order of their Node names:
 * - `InPlace`: the Node is cordoned (machine-config daemon state Working), reboots (Ready=Unknown,
 *   NodeStatusUnknown, for a couple of steps), comes back Ready on the new version and is uncordoned;
 * - `Replace` (the default): the Machine is deleted and the Node drained; the host reboots into discovery
 *   (Node NotReady, the Machine waiting on the provider's pre-terminate hook); then the Node and the old
 *   Machine go, and a new Machine of the same name (a new AgentMachine, the Agent relabelled, still
 *   bound) reprovisions the same host, whose Node comes back Ready on the new version a few steps later.
 * Fault `nodeNotReturning`: the listed hosts never come back from that reboot.
 */
import type { HubStore, KubeObject } from '../types.js';
import { releaseVersion, type Ctx } from './context.js';
import {
  createMachine,
  deleteMachine,
  machineName,
  machineOf,
  removeMachine,
  reserveAgent,
  type MachineUpdateStage,
} from './machines.js';
import { cordon, guestNode, nodeDown, nodeName, nodeUp, nodeVersion } from './nodes.js';
import { L, T, create, get, hcpNamespace, rec, remove, str } from './util.js';

export type UpgradeType = 'InPlace' | 'Replace';
type Stage = 'cordon' | 'reboot' | 'uncordon' | 'drain' | 'shutdown' | 'reprovision';

/** Steps each stage lasts. */
const STEPS: Record<Stage, number> = {
  cordon: 1,
  reboot: 2,
  uncordon: 1,
  drain: 1,
  shutdown: 1,
  reprovision: 3,
};
const NEXT: Record<Stage, Stage | undefined> = {
  cordon: 'reboot',
  reboot: 'uncordon',
  uncordon: undefined,
  drain: 'shutdown',
  shutdown: 'reprovision',
  reprovision: undefined,
};
/** The Machine side of a Replace stage. */
const MACHINE_STAGE: Partial<Record<Stage, MachineUpdateStage>> = {
  drain: 'draining',
  shutdown: 'waiting-hook',
  reprovision: 'reprovisioning',
};

interface InFlight {
  agent: string;
  node: string;
  mode: UpgradeType;
  stage: Stage;
}

/** Where a NodePool's update stands. */
export interface UpdateView {
  /** The version of spec.release.image. */
  target: string;
  /** Some host does not run `target` yet (or is still coming back from its update). */
  updating: boolean;
  /** The host being updated. */
  current?: { agent: string; node: string; machine: string; text: string };
  /** Hosts on `target` (not counting the current one), of `total` installed. */
  updated: number;
  total: number;
  /** What the update does to Machines (by Agent name), for syncMachines. */
  machineStages: Map<string, MachineUpdateStage>;
}

function upgradeTypeOf(np: KubeObject): UpgradeType {
  return rec(rec(np.spec).management).upgradeType === 'InPlace' ? 'InPlace' : 'Replace';
}

function installed(agent: KubeObject): boolean {
  return str(rec(agent.status?.debugInfo).state) === 'added-to-existing-cluster';
}

export class NodePoolUpdater {
  private readonly inflight = new Map<string, InFlight>();

  constructor(private readonly ctx: Ctx) {}

  /** The Agent (name) whose host a NodePool is updating, if any. */
  updatingAgent(np: KubeObject): string | undefined {
    return this.inflight.get(np.metadata.uid ?? '')?.agent;
  }

  forget(np: KubeObject): void {
    const f = this.inflight.get(np.metadata.uid ?? '');
    if (f) this.ctx.dwell.forget(this.clock(np, f));
    this.inflight.delete(np.metadata.uid ?? '');
  }

  /** Move the NodePool's update on by what the time spent allows; report where it stands. */
  step(np: KubeObject, hc: KubeObject, guest: HubStore | undefined, bound: KubeObject[]): UpdateView {
    const { ctx } = this;
    const target = releaseVersion(ctx, str(rec(rec(np.spec).release).image) ?? '');
    const hosts = bound.filter(installed).sort((a, b) => nodeName(a).localeCompare(nodeName(b)));
    const id = np.metadata.uid ?? '';
    let f = this.inflight.get(id);
    if (f && !hosts.some((a) => a.metadata.name === f!.agent)) {
      this.forget(np);
      f = undefined;
    }
    const view: UpdateView = {
      target,
      updating: false,
      updated: 0,
      total: hosts.length,
      machineStages: new Map(),
    };
    if (!guest) return view;
    const versionOf = (a: KubeObject): string | undefined => {
      const node = get(guest, T.node, nodeName(a));
      return node ? nodeVersion(node) : undefined;
    };
    if (!f) {
      const next = hosts.find((a) => {
        const v = versionOf(a);
        return v !== undefined && v !== target;
      });
      if (next) {
        f = { agent: next.metadata.name, node: nodeName(next), mode: upgradeTypeOf(np), stage: 'cordon' };
        if (f.mode === 'Replace') f.stage = 'drain';
        this.inflight.set(id, f);
        this.enter(np, hc, guest, next, f, target);
      }
    }
    if (f) {
      const agent = hosts.find((a) => a.metadata.name === f!.agent)!;
      if (this.advance(np, hc, guest, agent, f, target)) {
        this.forget(np);
        f = undefined;
      }
    }
    view.updated = hosts.filter((a) => a.metadata.name !== f?.agent && versionOf(a) === target).length;
    view.updating =
      f !== undefined || hosts.some((a) => versionOf(a) !== undefined && versionOf(a) !== target);
    if (f) {
      const agent = hosts.find((a) => a.metadata.name === f!.agent)!;
      const stage = MACHINE_STAGE[f.stage];
      if (stage) view.machineStages.set(f.agent, stage);
      view.current = {
        agent: f.agent,
        node: f.node,
        machine: machineName(np, agent),
        text: this.describe(f, target, machineName(np, agent)),
      };
    }
    return view;
  }

  private clock(np: KubeObject, f: InFlight): string {
    return `nodeupdate/${np.metadata.uid}/${f.agent}`;
  }

  private describe(f: InFlight, target: string, machine: string): string {
    switch (f.stage) {
      case 'cordon':
        return `cordoned and draining (InPlace)`;
      case 'reboot':
        return `rebooting into ${target} (InPlace)`;
      case 'uncordon':
        return `back Ready on ${target}, uncordoning (InPlace)`;
      case 'drain':
        return `draining, Machine ${machine} deleting (Replace)`;
      case 'shutdown':
        return `rebooting into discovery to be reprovisioned (Replace)`;
      case 'reprovision':
        return `reprovisioning with ${target}, Machine ${machine} provisioning (Replace)`;
    }
  }

  /** What starting a stage does. */
  private enter(
    np: KubeObject,
    hc: KubeObject,
    guest: HubStore,
    agent: KubeObject,
    f: InFlight,
    target: string,
  ): void {
    const { ctx } = this;
    ctx.dwell.steps(this.clock(np, f), f.stage);
    const now = ctx.now();
    const node = get(guest, T.node, f.node);
    switch (f.stage) {
      case 'cordon':
      case 'drain':
        if (node) cordon(guest, node, true, f.mode === 'InPlace' ? { [L.mcdState]: 'Working' } : {}, now);
        if (f.stage === 'drain') {
          const machine = machineOf(ctx, np, hc, agent);
          if (machine) deleteMachine(ctx.store, machine);
        }
        break;
      case 'reboot':
      case 'shutdown':
        if (node) nodeDown(guest, node, now);
        break;
      case 'uncordon':
        if (node) nodeUp(guest, node, target, now);
        break;
      case 'reprovision': {
        if (node) remove(guest, T.node, node.metadata.name);
        const cpNs = hcpNamespace(hc);
        removeMachine(ctx.store, machineName(np, agent), cpNs);
        const am = createMachine(ctx, np, hc, agent, target);
        reserveAgent(ctx, agent, am, `${np.metadata.namespace}/${np.metadata.name}`, {
          name: hc.metadata.name,
          namespace: cpNs,
        });
        break;
      }
    }
  }

  /** Advance one stage when its time is up; true when the host is done. */
  private advance(
    np: KubeObject,
    hc: KubeObject,
    guest: HubStore,
    agent: KubeObject,
    f: InFlight,
    target: string,
  ): boolean {
    const { ctx } = this;
    const node = get(guest, T.node, f.node);
    // A Node that vanished during an in-place update (deleted by hand) ends it.
    if (!node && f.mode === 'InPlace') return true;
    if (ctx.dwell.steps(this.clock(np, f), f.stage) < STEPS[f.stage]) return false;
    const stuck = (ctx.options.faults.nodeNotReturning ?? []).includes(f.node);
    if ((f.stage === 'reboot' || f.stage === 'shutdown') && stuck) return false;
    const now = ctx.now();
    if (f.stage === 'uncordon') {
      if (node) cordon(guest, node, false, { [L.mcdState]: 'Done' }, now);
      return true;
    }
    if (f.stage === 'reprovision') {
      if (!node) create(guest, guestNode(ctx, agent, target, now));
      return true;
    }
    f.stage = NEXT[f.stage]!;
    this.enter(np, hc, guest, agent, f, target);
    return false;
  }
}
