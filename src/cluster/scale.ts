/**
 * `airgap cluster scale`: make the hosted cluster's nodes match the site file, or a replica count.
 *
 * From the site file (no --replicas), the hosts it lists are the cluster's nodes:
 *   1. Hosts the hub has (BareMetalHosts of the cluster's InfraEnv) that the site no longer lists
 *      leave first: their CAPI Machines marked for deletion, the NodePool scaled down, their Agents
 *      released, then the BareMetalHosts deleted (deprovisioned) with their Secrets (install/remove.ts).
 *   2. Hosts the site lists whose Agent is not in the NodePool join: the new ones' NMStateConfigs,
 *      BMC Secrets and BareMetalHosts applied, each host provisioned and its Agent approved and
 *      validated, then the NodePool scaled up and the Agents installed, as the install does.
 * With --replicas N, the NodePool is scaled within the Agents already on the hub; the site file
 * must match the hub's hosts.
 * Before anything changes, what would leave a NodePool with no node (or ask for more Agents than
 * can be picked) is refused. Every step looks at the hub first, so an interrupted run is started
 * again and goes on; --dry-run prints the plan.
 */
import { usageError } from '../util/errors.js';
import { field } from './conditions.js';
import { API, BMH_LABEL, INFRAENV_LABEL, viewAgent, whyAgentNotPicked } from './describe.js';
import { ClusterError } from './errors.js';
import { connectHub, controlPlaneNamespace, type HubConnection } from './identity.js';
import { applyObjects } from './install/apply.js';
import { waitAgentsReady } from './install/agents.js';
import type { InstallContext } from './install/context.js';
import { rebootReleasedHosts, waitDiscoveryIso, waitHostsProvisioned } from './install/hosts.js';
import { waitAgentsInstalled, waitNodePoolReady } from './install/nodepool.js';
import { deprovisionHosts, markMachines, waitAgentsReleased } from './install/remove.js';
import { describeRef, type KubeObject } from './kube.js';
import { prepareSite, type PreparedSite } from './prepare.js';
import { waitFor } from './wait.js';
import { dedupe, type InstallReporter } from './progress.js';
import { renderHostObjects } from './render/index.js';
import { resolveSite } from './site/inputs.js';

export interface ScaleOptions {
  siteFile: string;
  hub: HubConnection;
  /** Scale the NodePool to this many nodes among the Agents on the hub (the site must match the hub). */
  replicas?: number;
  /** Allow a NodePool with no node. */
  force?: boolean;
  /** Print the plan; change nothing. */
  dryRun?: boolean;
  report: InstallReporter;
  phaseTimeoutMs: number;
  resyncMs?: number;
}

export interface ScalePlan {
  cluster: string;
  nodePool: string;
  replicas: { from: number; to: number };
  /** Site hosts that join the NodePool; `create` when their BareMetalHost is not on the hub yet. */
  join: { host: string; create: boolean }[];
  /** Hosts the site no longer lists: released (when in the NodePool), then deprovisioned. */
  remove: { host: string; agent?: string; inNodePool: boolean }[];
}

export interface ScaleResult extends ScalePlan {
  dryRun: boolean;
  /** The NodePool's nodes at the end. */
  ready: number;
  /** What failed (a host that did not provision, …): the exit code is 1 when not empty. */
  failures: string[];
}

/** A NodePool's (or HostedCluster's) reference on the hub. */
type HubRef = { apiVersion: string; kind: string; namespace: string; name: string };

/** The hosted cluster to scale: the site, the hub, and the cluster's HostedCluster and NodePool there. */
interface ScaleTarget extends PreparedSite {
  ctx: InstallContext;
  hcRef: HubRef;
  npRef: HubRef;
  np: KubeObject;
}

/** The hosts the hub has for the cluster (BareMetalHosts of its InfraEnv), and the Agents. */
interface HubHosts {
  agents: KubeObject[];
  /** Each host's Agent, by host name. */
  agentOf: Map<string, KubeObject>;
  onHub: Set<string>;
  /** Whether the host's Agent is bound to the cluster (it is in the NodePool). */
  inPool(host: string): boolean;
  /** The hosts the site lists. */
  siteHosts: string[];
}

/** `airgap cluster scale`; see the file comment. */
export async function scaleCluster(o: ScaleOptions): Promise<ScaleResult> {
  const t = await openTarget(o);
  const { ctx, npRef, np } = t;
  const hosts = await readHubHosts(t);
  const plan = planChanges(t, hosts);
  const from = plan.replicas.from;
  if (o.replicas !== undefined) {
    planReplicas(plan, o.replicas, hosts, t);
  } else {
    plan.replicas.to = from - plan.remove.filter((r) => r.inNodePool).length + plan.join.length;
  }
  if (plan.replicas.to === 0 && from > 0 && !o.force) throw lastNodeRefused(plan, npRef);
  if (o.dryRun)
    return { ...plan, dryRun: true, ready: Number(field(np, 'status.replicas') ?? 0), failures: [] };

  if (plan.remove.length) await removeHosts(t, hosts, plan);
  if (plan.join.length) {
    await joinHosts(t, hosts, plan);
  } else if (o.replicas !== undefined) {
    await setReplicas(ctx, npRef, o.replicas);
  }

  const final = await waitNodePoolReady(ctx, npRef, plan.replicas.to);
  if (o.replicas !== undefined && o.replicas < from) await keepReleasedHosts(t, hosts, from - o.replicas);
  return { ...plan, dryRun: false, ready: final.current, failures: ctx.failures };
}

/** The site read, its warnings said, and the cluster's HostedCluster and NodePool found (not autoscaled) on the hub. */
async function openTarget(o: ScaleOptions): Promise<ScaleTarget> {
  const { site, inputs } = await prepareSite({ siteFile: o.siteFile });
  for (const w of [...site.warnings, ...inputs.warnings])
    o.report({ phase: 'preflight', level: 'warn', message: w });
  const cluster = { name: site.cluster.name, namespace: site.cluster.namespace };
  const ctx: InstallContext = {
    kube: connectHub(o.hub),
    cluster,
    agentNs: controlPlaneNamespace(cluster),
    report: dedupe(o.report),
    wait: { timeoutMs: o.phaseTimeoutMs, ...(o.resyncMs ? { resyncMs: o.resyncMs } : {}) },
    failures: [],
  };
  const hcRef = { ...API.hostedCluster, ...cluster };
  const npRef = { ...API.nodePool, ...cluster };
  const [hc, np] = await Promise.all([ctx.kube.get(hcRef), ctx.kube.get(npRef)]);
  if (!hc || !np)
    throw usageError(
      ClusterError.CLUSTER_NOT_FOUND,
      `there is no ${hc ? describeRef(npRef) : describeRef(hcRef)} on the hub`,
      {
        hint: 'install the cluster first (airgap install cluster -f <site>), or check --kubeconfig and the site file',
      },
    );
  if (field(np, 'spec.autoScaling'))
    throw usageError(
      ClusterError.SCALE_AUTOSCALED,
      `${describeRef(npRef)} is autoscaled (spec.autoScaling): its replicas are not set by hand`,
      { hint: 'change spec.autoScaling.min/max of the NodePool instead' },
    );
  return { site, inputs, ctx, hcRef, npRef, np };
}

/** The cluster's BareMetalHosts and the Agents, as the hub has them now. */
async function readHubHosts(t: ScaleTarget): Promise<HubHosts> {
  const { kube, agentNs, cluster } = t.ctx;
  const [bmhs, agents] = await Promise.all([
    kube.list(API.bareMetalHost.apiVersion, API.bareMetalHost.kind, {
      namespace: agentNs,
      labelSelector: `${INFRAENV_LABEL}=${cluster.name}`,
    }),
    kube.list(API.agent.apiVersion, API.agent.kind, { namespace: agentNs }),
  ]);
  const agentOf = new Map(agents.items.map((a) => [a.metadata.labels?.[BMH_LABEL] ?? '', a]));
  const inPool = (host: string) => {
    const a = agentOf.get(host);
    return !!a && viewAgent(a).boundTo === cluster.name;
  };
  return {
    agents: agents.items,
    agentOf,
    onHub: new Set(bmhs.items.map((b) => b.metadata.name)),
    inPool,
    siteHosts: t.site.hosts.map((h) => h.name),
  };
}

/** The site against the hub: the hosts that join, the hosts that leave; the replicas as they are. */
function planChanges(t: ScaleTarget, hosts: HubHosts): ScalePlan {
  const { agentOf, inPool, onHub, siteHosts } = hosts;
  const from = Number(field(t.np, 'spec.replicas') ?? 0);
  return {
    cluster: describeRef(t.hcRef).replace(/^HostedCluster /, ''),
    nodePool: describeRef(t.npRef).replace(/^NodePool /, ''),
    replicas: { from, to: from },
    join: siteHosts.filter((h) => !inPool(h)).map((h) => ({ host: h, create: !onHub.has(h) })),
    remove: [...onHub]
      .filter((h) => !siteHosts.includes(h))
      .sort()
      .map((h) => ({
        host: h,
        ...(agentOf.get(h) ? { agent: agentOf.get(h)!.metadata.name } : {}),
        inNodePool: inPool(h),
      })),
  };
}

/** --replicas N: refused when the site file adds or removes hosts, or N is more than the Agents can give. */
function planReplicas(plan: ScalePlan, replicas: number, hosts: HubHosts, t: ScaleTarget): void {
  const changed = [
    ...plan.join.filter((j) => j.create).map((j) => `adds ${j.host}`),
    ...plan.remove.map((r) => `removes ${r.host}`),
  ];
  if (changed.length)
    throw usageError(
      ClusterError.SCALE_SITE_CHANGED,
      `--replicas scales within the Agents on the hub, but the site file ${changed.join(', ')}`,
      { hint: 'run airgap cluster scale -f <site> without --replicas to apply the site file first' },
    );
  plan.join = [];
  plan.replicas.to = replicas;
  if (replicas > plan.replicas.from)
    refuseShortage(hosts.agents, t.ctx.cluster.name, replicas, t.np, t.npRef);
}

/** SCALE_LAST_NODE: the change would leave the NodePool with no node. */
function lastNodeRefused(plan: ScalePlan, npRef: HubRef) {
  const last = plan.remove.filter((r) => r.inNodePool).map((r) => r.host);
  return usageError(
    ClusterError.SCALE_LAST_NODE,
    last.length
      ? `removing ${last.join(', ')} would leave ${describeRef(npRef)} with no node: ${last.at(-1)} carries its last one, and the hosted cluster's ingress, console and workloads run on its nodes`
      : `--replicas 0 would leave ${describeRef(npRef)} with no node: the hosted cluster's ingress, console and workloads run on its nodes`,
    {
      hint: 'add the replacement host to the site file in the same change, or give --force to scale the NodePool to 0',
    },
  );
}

/** 1. Hosts that leave: their Machines marked, the NodePool scaled down, the Agents released, the hosts deprovisioned. */
async function removeHosts(t: ScaleTarget, hosts: HubHosts, plan: ScalePlan): Promise<void> {
  const { ctx, npRef } = t;
  const bound = plan.remove.filter((r) => r.inNodePool).map((r) => hosts.agentOf.get(r.host)!);
  await markMachines(ctx, bound);
  // What stays in the NodePool (counted from the Agents, so a run started again asks the same).
  const staying = hosts.agents.filter((a) => viewAgent(a).boundTo === ctx.cluster.name).length - bound.length;
  await setReplicas(ctx, npRef, staying);
  await waitAgentsReleased(
    ctx,
    plan.remove.map((r) => r.host),
    hosts.siteHosts.filter(hosts.inPool),
  );
  await deprovisionHosts(
    ctx,
    plan.remove.map((r) => r.host),
  );
}

/** 2. Hosts that join: created where new, provisioned, their Agents ready, then picked by the NodePool. */
async function joinHosts(t: ScaleTarget, hosts: HubHosts, plan: ScalePlan): Promise<void> {
  const { ctx, npRef, site, inputs } = t;
  const { kube, cluster, agentNs } = ctx;
  const resolved = resolveSite(site, inputs, {
    releaseImage: '',
    releaseVersion: '',
    controlPlaneOperatorImage: '',
  });
  const rendered = renderHostObjects(
    resolved,
    plan.join.filter((j) => j.create).map((j) => j.host),
  );
  const nmstate = rendered.filter((r) => r.step !== 'hosts').map((r) => r.object);
  if (nmstate.length) {
    await applyObjects(kube, nmstate, ctx.report, 'hosts');
    await waitDiscoveryIso(ctx, cluster.name);
  }
  await applyObjects(
    kube,
    rendered.filter((r) => r.step === 'hosts').map((r) => r.object),
    ctx.report,
    'hosts',
  );
  const provisioned = await waitHostsProvisioned(
    ctx,
    cluster.name,
    plan.join.map((j) => j.host),
  );
  // A host that left the NodePool earlier (--replicas) waits to boot the discovery ISO again.
  await rebootReleasedHosts(
    ctx,
    plan.join.flatMap((j) => hosts.agentOf.get(j.host) ?? []),
  );
  const ready = await waitAgentsReady(ctx, provisioned.provisioned, site.cluster.approveAgents);
  // The nodes it ends with: the Agents in the NodePool now, and the new ones.
  const { items: now } = await kube.list(API.agent.apiVersion, API.agent.kind, { namespace: agentNs });
  const inPoolNow = now.filter((a) => viewAgent(a).boundTo === cluster.name).map((a) => a.metadata.name);
  const want = inPoolNow.length + ready.filter((a) => !inPoolNow.includes(a.metadata.name)).length;
  await setReplicas(ctx, npRef, want);
  plan.replicas.to = want;
  await waitAgentsInstalled(ctx, ready, site.cluster.nodePool.agentLabelSelector);
}

/** Agent states (assisted-service) of a host that has finished leaving a cluster: waiting for its reboot, or free. */
const SETTLED_AFTER_UNBIND = new Set([
  'unbinding-pending-user-action',
  'discovering-unbound',
  'known-unbound',
  'insufficient-unbound',
  'disconnected-unbound',
  'disabled-unbound',
]);

/**
 * The hosts the NodePool let go (--replicas down) stay for later: rebooted into the discovery ISO,
 * their Agents free again. `count` Agents leave; the wait ends only when that many have left and
 * each has finished unbinding (an Agent whose cluster reference is cleared still shows its old state
 * until assisted-service next looks at it: read then, it would be passed over and never rebooted).
 */
async function keepReleasedHosts(t: ScaleTarget, hosts: HubHosts, count: number): Promise<void> {
  const { ctx, site } = t;
  const released = await waitFor(
    ctx.kube,
    { ...API.agent, namespace: ctx.agentNs },
    (objs) => {
      const left = objs.filter((a) => {
        const v = viewAgent(a);
        return v.host && hosts.inPool(v.host) && v.boundTo !== ctx.cluster.name;
      });
      const leaving = left.filter((a) => !SETTLED_AFTER_UNBIND.has(viewAgent(a).state ?? ''));
      const pending = Math.max(0, count - left.length) + leaving.length;
      return {
        done: pending === 0,
        value: left,
        state: pending
          ? `waiting for ${leaving.map((a) => viewAgent(a).host).join(', ') || `${count - left.length} Agent(s)`} to leave the cluster`
          : 'released',
      };
    },
    {
      what: 'the Agents the NodePool let go to leave the cluster',
      ...ctx.wait,
      onState: (m) => ctx.report({ phase: 'release', message: m }),
    },
  );
  const rebooted = await rebootReleasedHosts(ctx, released);
  if (rebooted.length) await waitAgentsReady(ctx, rebooted, site.cluster.approveAgents);
}

/** Set the NodePool's replicas (a merge patch; nothing when it has them already). */
async function setReplicas(ctx: InstallContext, npRef: HubRef, n: number): Promise<void> {
  const live = await ctx.kube.get(npRef);
  const have = Number(field(live, 'spec.replicas') ?? 0);
  if (have === n) return;
  await ctx.kube.mergePatch(npRef, { spec: { replicas: n } });
  ctx.report({ phase: 'scale', object: describeRef(npRef), message: `replicas ${have} → ${n}` });
}

/** --replicas N above what the Agents on the hub can give: refused, each Agent's reason said. */
function refuseShortage(
  agents: KubeObject[],
  clusterName: string,
  want: number,
  np: KubeObject,
  npRef: { kind: string; namespace: string; name: string },
): void {
  const selector = field(np, 'spec.platform.agent.agentLabelSelector') as Parameters<
    typeof whyAgentNotPicked
  >[2];
  const usable = agents.filter(
    (a) => !a.metadata.deletionTimestamp && whyAgentNotPicked(a, clusterName, selector).length === 0,
  );
  if (usable.length >= want) return;
  const why = agents
    .map((a) => ({ a, why: whyAgentNotPicked(a, clusterName, selector) }))
    .filter((x) => x.why.length)
    .map(
      (x) =>
        `Agent ${x.a.metadata.name}${x.a.metadata.labels?.[BMH_LABEL] ? ` (host ${x.a.metadata.labels[BMH_LABEL]})` : ''}: ${x.why.join(', ')}`,
    );
  throw usageError(
    ClusterError.SCALE_NOT_ENOUGH_AGENTS,
    `${describeRef(npRef)} cannot have ${want} nodes: ${usable.length} Agent${usable.length === 1 ? '' : 's'} can be picked${why.length ? `; ${why.join('; ')}` : ''}`,
    { hint: 'add hosts to the site file and run airgap cluster scale -f <site>, or ask for fewer replicas' },
  );
}
