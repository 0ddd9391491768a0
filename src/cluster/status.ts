/**
 * `airgap cluster status`: the hosted cluster on one screen, read with the same describers the
 * install uses: the HostedCluster's conditions, the NodePool, the InfraEnv, each BareMetalHost and
 * its Agent (and, for an Agent the NodePool does not pick, why).
 */
import { conditionsOf, describeCondition } from './conditions.js';
import {
  API,
  BMH_LABEL,
  viewAgent,
  viewBareMetalHost,
  viewHostedCluster,
  viewInfraEnv,
  viewNodePool,
  whyAgentNotPicked,
  type AgentView,
  type HostView,
} from './describe.js';
import { controlPlaneNamespace, openTarget, type ClusterIdentity, type ClusterTarget } from './identity.js';
import type { Kube, KubeObject } from './kube.js';

export interface ClusterStatus {
  cluster: ClusterIdentity;
  exists: boolean;
  hostedCluster: ReturnType<typeof viewHostedCluster> & {
    conditions: { type: string; status: string; reason?: string; message?: string }[];
  };
  nodePools: ({ name: string } & ReturnType<typeof viewNodePool>)[];
  infraEnv: ReturnType<typeof viewInfraEnv> & { name?: string };
  hosts: (HostView & { agent?: AgentView; notPicked?: string[] })[];
  /** Agents without a BareMetalHost (booted from the ISO by hand). */
  otherAgents: (AgentView & { notPicked?: string[] })[];
}

const SHOWN_CONDITIONS = [
  'Available',
  'Progressing',
  'Degraded',
  'ValidConfiguration',
  'ValidReleaseImage',
  'ReconciliationSucceeded',
  'IgnitionEndpointAvailable',
];

/** `airgap cluster status`: the selected cluster's status (`exists` false when there is none). */
export async function readClusterStatus(t: ClusterTarget): Promise<ClusterStatus> {
  const { kube, cluster } = await openTarget(t);
  return clusterStatus(kube, cluster);
}

async function clusterStatus(kube: Kube, cluster: ClusterIdentity): Promise<ClusterStatus> {
  const ns = controlPlaneNamespace(cluster);
  const hc = await kube.get({ ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name });
  const pools = hc
    ? (
        await kube.list(API.nodePool.apiVersion, API.nodePool.kind, { namespace: cluster.namespace })
      ).items.filter((np) => np.spec?.clusterName === cluster.name)
    : [];
  const agentNs =
    (hc?.spec?.platform as { agent?: { agentNamespace?: string } } | undefined)?.agent?.agentNamespace || ns;
  const [infraEnvs, bmhs, agents] = await Promise.all([
    // None of a type the hub does not serve; a refusal or a fault is an error, not "no hosts".
    kube.listServed(API.infraEnv.apiVersion, API.infraEnv.kind, { namespace: agentNs }),
    kube.listServed(API.bareMetalHost.apiVersion, API.bareMetalHost.kind, { namespace: agentNs }),
    kube.listServed(API.agent.apiVersion, API.agent.kind, { namespace: agentNs }),
  ]);
  const selector = (
    pools[0]?.spec?.platform as
      { agent?: { agentLabelSelector?: Parameters<typeof whyAgentNotPicked>[2] } } | undefined
  )?.agent?.agentLabelSelector;
  const ie = infraEnvs.find((i) => i.metadata.name === cluster.name) ?? infraEnvs[0];
  const byHost = new Map<string, KubeObject>();
  for (const a of agents) if (a.metadata.labels?.[BMH_LABEL]) byHost.set(a.metadata.labels[BMH_LABEL], a);
  const picked = (a: KubeObject) => {
    const why = whyAgentNotPicked(a, cluster.name, selector);
    return why.length ? { notPicked: why } : {};
  };
  return {
    cluster,
    exists: !!hc,
    hostedCluster: {
      ...viewHostedCluster(hc),
      conditions: conditionsOf(hc)
        .filter((c) => SHOWN_CONDITIONS.includes(c.type))
        .map((c) => ({
          type: c.type,
          status: c.status,
          ...(c.reason ? { reason: c.reason } : {}),
          ...(c.message ? { message: c.message } : {}),
        })),
    },
    nodePools: pools.map((np) => ({ name: np.metadata.name, ...viewNodePool(np) })),
    infraEnv: { ...(ie ? { name: ie.metadata.name } : {}), ...viewInfraEnv(ie) },
    hosts: bmhs.map((b) => {
      const a = byHost.get(b.metadata.name);
      return { ...viewBareMetalHost(b), ...(a ? { agent: viewAgent(a), ...picked(a) } : {}) };
    }),
    otherAgents: agents
      .filter((a) => !a.metadata.labels?.[BMH_LABEL])
      .map((a) => ({ ...viewAgent(a), ...picked(a) })),
  };
}

/** The one-screen text of a status. */
export function formatStatus(s: ClusterStatus): string {
  const lines: string[] = [];
  const id = `${s.cluster.namespace}/${s.cluster.name}`;
  if (!s.exists) return `HostedCluster ${id}: not found\n`;
  const hc = s.hostedCluster;
  lines.push(
    `HostedCluster ${id}: ${hc.available ? 'Available' : 'not Available'}${hc.version ? `, version ${hc.version} ${hc.progress ?? ''}` : ''}`,
  );
  for (const c of hc.conditions) lines.push(`  ${describeCondition(c)}`);
  for (const np of s.nodePools) lines.push(`NodePool ${s.cluster.namespace}/${np.name}: ${np.summary}`);
  lines.push(
    `InfraEnv ${s.infraEnv.name ?? '(none)'}: ${s.infraEnv.summary}${s.infraEnv.error ? ` — ${s.infraEnv.error}` : ''}`,
  );
  if (s.hosts.length) lines.push('Hosts:');
  for (const h of s.hosts) {
    const agent = h.agent ? ` — Agent ${h.agent.summary}` : '';
    lines.push(`  ${h.name}: ${h.state}${h.error ? ` (${h.error})` : ''}${agent}`);
    if (h.notPicked?.length) lines.push(`    not picked by the NodePool: ${h.notPicked.join(', ')}`);
  }
  for (const a of s.otherAgents) {
    lines.push(`  Agent ${a.summary}`);
    if (a.notPicked?.length) lines.push(`    not picked by the NodePool: ${a.notPicked.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
