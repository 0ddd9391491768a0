/**
 * `airgap install cluster`: apply the rendered hosted-cluster objects to the hub with server-side
 * apply, in dependency order, then drive and report each phase until the hosted cluster's nodes
 * are Ready through its own kubeconfig:
 *
 *   control-plane  HostedCluster Available (conditions shown as they change)
 *   iso            InfraEnv ImageCreated and status.isoDownloadURL (ImageCreationError fails at once)
 *   hosts          each BareMetalHost registering → provisioning → provisioned (errors reported;
 *                  a failed host does not stop the others, but the run exits non-zero)
 *   agents         one Agent per provisioned host, approved (when the site says so), validated,
 *                  connected; hostname and role shown
 *   scale          NodePool replicas = the Agents ready to install
 *   install        Agents bound and installed, NodePool ready replicas; an Agent the NodePool does
 *                  not pick is explained (approved / validated / connected / bound / selector)
 *   complete       status.version.history[0].completionTime
 *   kubeconfig     admin kubeconfig written 0600; the hosted cluster's Nodes Ready through it
 *
 * Every phase is a wait that returns at once when its state is already reached, so a second run
 * continues where the first stopped and creates nothing twice. The phases live in ./install/, one
 * file per part of the cluster they drive; this file runs them in order.
 */
import { BMH_LABEL, viewAgent, type HostView } from './describe.js';
import { controlPlaneNamespace, type ClusterIdentity } from './identity.js';
import { refOf, type Kube, type KubeObject } from './kube.js';
import { dedupe, type InstallReporter } from './progress.js';
import { applyObjects, nodePoolOf, type AppliedObject } from './install/apply.js';
import { waitAgentsReady } from './install/agents.js';
import { DEFAULT_PHASE_TIMEOUT_MS, type InstallContext } from './install/context.js';
import { waitControlPlaneAvailable, waitRolloutComplete } from './install/control-plane.js';
import { writeKubeconfigAndWaitNodes, type GuestNode } from './install/guest.js';
import { applyHostObjects, infraEnvNameOf, waitDiscoveryIso, waitHostsProvisioned } from './install/hosts.js';
import {
  scaleNodePool,
  waitAgentsInstalled,
  waitNodePoolReady,
  type AgentLabelSelector,
} from './install/nodepool.js';

export interface InstallClusterOptions {
  kube: Kube;
  cluster: ClusterIdentity;
  /** The rendered objects applied first, in order (no status): namespaces … InfraEnv. */
  objects: KubeObject[];
  /** The rendered host objects (NMStateConfigs, BMC secrets, BareMetalHosts), applied once the ISO exists. */
  hostObjects: KubeObject[];
  /** Host names of the site (BareMetalHost names), in site order. */
  hosts: string[];
  /** Approve Agents that are not approved yet. */
  approveAgents: boolean;
  /** NodePool agentLabelSelector, for stall explanations. */
  agentLabelSelector?: AgentLabelSelector;
  /** Where the hosted cluster's admin kubeconfig is written (0600). */
  kubeconfigOut: string;
  report: InstallReporter;
  /** Limit of each wait (default 60 min). */
  phaseTimeoutMs?: number;
  /** Re-list period of the waits (default 10 s). */
  resyncMs?: number;
}

export interface HostOutcome {
  name: string;
  state: string;
  agent?: string;
  hostname?: string;
  role?: string;
  error?: string;
}

export interface InstallClusterResult {
  cluster: ClusterIdentity;
  releaseVersion?: string;
  applied: AppliedObject[];
  hosts: HostOutcome[];
  nodePool: { desired: number; ready: number };
  kubeconfig?: string;
  nodes: GuestNode[];
  /** What failed (hosts that did not provision, …): the exit code is 1 when not empty. */
  failures: string[];
}

/** Run the whole install; see the file comment. */
export async function installCluster(opts: InstallClusterOptions): Promise<InstallClusterResult> {
  const { cluster } = opts;
  const ctx: InstallContext = {
    kube: opts.kube,
    cluster,
    agentNs: controlPlaneNamespace(cluster),
    report: dedupe(opts.report),
    wait: {
      timeoutMs: opts.phaseTimeoutMs ?? DEFAULT_PHASE_TIMEOUT_MS,
      ...(opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {}),
    },
    failures: [],
  };
  const applied = await applyObjects(ctx.kube, opts.objects, ctx.report);
  const nodePool = nodePoolOf(opts.objects);
  const releaseVersion = await waitControlPlaneAvailable(ctx);

  const infraEnvName = infraEnvNameOf(opts.objects, cluster.name);
  await waitDiscoveryIso(ctx, infraEnvName);
  applied.push(...(await applyHostObjects(ctx, opts.hostObjects)));
  const hosts = await waitHostsProvisioned(ctx, infraEnvName, opts.hosts);
  const agents = await waitAgentsReady(ctx, hosts.provisioned, opts.approveAgents);

  const desired = agents.length;
  await scaleNodePool(ctx, nodePool, desired);
  await waitAgentsInstalled(ctx, agents, opts.agentLabelSelector);
  const np = await waitNodePoolReady(ctx, refOf(nodePool), desired);
  const done = await waitRolloutComplete(ctx);
  const nodes = await writeKubeconfigAndWaitNodes(ctx, opts.kubeconfigOut, desired);

  return {
    cluster,
    ...((done.version ?? releaseVersion) ? { releaseVersion: done.version ?? releaseVersion } : {}),
    applied,
    hosts: hostOutcomes(hosts.views, agents),
    nodePool: { desired, ready: np.current },
    kubeconfig: opts.kubeconfigOut,
    nodes,
    failures: ctx.failures,
  };
}

/** Each host as the install leaves it, with its Agent's name, hostname and role. */
function hostOutcomes(hosts: HostView[], agents: KubeObject[]): HostOutcome[] {
  const agentViews = new Map(agents.map((a) => [a.metadata.labels?.[BMH_LABEL] ?? '', viewAgent(a)]));
  return hosts.map((h) => {
    const a = agentViews.get(h.name);
    return {
      name: h.name,
      state: h.state,
      ...(a ? { agent: a.name } : {}),
      ...(a?.hostname ? { hostname: a.hostname } : {}),
      ...(a?.role ? { role: a.role } : {}),
      ...(h.error ? { error: h.error } : {}),
    };
  });
}
