/**
 * Phase agents: each provisioned host boots the discovery ISO and registers an Agent, which must be
 * approved (airgap approves it when the site says so), validated and connected before a NodePool
 * can take it. An Agent that refuses the site's input (a root device hint that matches no disk)
 * fails its host at once: waiting would not fix it, and the other hosts go on.
 */
import { AirgapError } from '../../util/errors.js';
import { describeCondition, findCondition } from '../conditions.js';
import { API, BMH_LABEL, viewAgent, type AgentView } from '../describe.js';
import { describeRef, refOf, type KubeObject } from '../kube.js';
import { waitFor } from '../wait.js';
import type { InstallContext } from './context.js';
import { ClusterError } from '../errors.js';

/** What the agents wait keeps across its evaluations. */
interface AgentsRound {
  approveAgents: boolean;
  /** Agents an approval was sent for (once each). */
  approved: Set<string>;
  /** Hosts whose Agent refused its spec, and why. */
  errors: Map<string, string>;
}

/**
 * Wait for an approved, validated, connected Agent on each of `hosts` (the provisioned ones).
 * Returns those Agents, in host order, without the hosts that failed (recorded in the failures);
 * none left is NO_AGENTS_READY.
 */
export async function waitAgentsReady(
  ctx: InstallContext,
  hosts: string[],
  approveAgents: boolean,
): Promise<KubeObject[]> {
  const round: AgentsRound = { approveAgents, approved: new Set(), errors: new Map() };
  const agents = await waitFor(
    ctx.kube,
    { ...API.agent, namespace: ctx.agentNs },
    (objs) => {
      const byHost = new Map<string, KubeObject>();
      for (const a of objs) {
        const host = a.metadata.labels?.[BMH_LABEL];
        if (host && hosts.includes(host)) byHost.set(host, a);
      }
      const pending: string[] = [];
      for (const host of hosts) {
        const why = checkAgent(ctx, round, host, byHost.get(host));
        if (why) pending.push(why);
      }
      return {
        done: pending.length === 0,
        value: hosts.filter((h) => !round.errors.has(h)).map((h) => byHost.get(h) as KubeObject),
        state: pending.length ? `waiting for ${pending.join('; ')}` : 'every Agent is ready',
      };
    },
    {
      what: `an approved, validated Agent for each provisioned host in ${ctx.agentNs}`,
      ...ctx.wait,
      onState: (s) =>
        ctx.report({
          phase: 'agents',
          message: s,
          ...(s.startsWith('waiting for') ? { transient: true } : {}),
        }),
    },
  );
  for (const [host, why] of round.errors) ctx.failures.push(`host ${host}: ${why}`);
  if (agents.length === 0)
    throw new AirgapError(
      ClusterError.NO_AGENTS_READY,
      `no Agent of ${ctx.cluster.name} can be installed: ${ctx.failures.join('; ')}`,
      {
        hint: 'fix what the messages name in the site file (hosts[].rootDeviceHints, BMC settings) and run this again',
      },
    );
  return agents;
}

/**
 * One host's Agent in one evaluation: report it, approve it when asked to, and say what it still
 * waits for (undefined when ready, or when it failed for good).
 */
function checkAgent(
  ctx: InstallContext,
  round: AgentsRound,
  host: string,
  a: KubeObject | undefined,
): string | undefined {
  if (!a) return `${host}: no Agent yet (the host boots the discovery ISO)`;
  const v = viewAgent(a);
  const name = describeRef({ kind: 'Agent', namespace: ctx.agentNs, name: a.metadata.name });
  // Input the site gave that the host cannot satisfy (a root device hint that matches no
  // disk): waiting would not fix it, so the host fails and the others go on.
  const synced = findCondition(a, 'SpecSynced');
  if (synced?.status === 'False' && synced.reason === 'InputError') {
    if (!round.errors.has(host)) {
      round.errors.set(host, synced.message ?? 'the Agent refused its spec');
      ctx.report({
        phase: 'agents',
        object: name,
        level: 'error',
        message: `${host}: ${synced.message ?? synced.reason}`,
      });
    }
    return undefined;
  }
  round.errors.delete(host);
  ctx.report({ phase: 'agents', object: name, message: agentLine(v, host) });
  if (!v.approved && round.approveAgents && !round.approved.has(a.metadata.name)) {
    round.approved.add(a.metadata.name);
    approve(ctx, a, name);
  }
  const why = [
    ...(!v.approved
      ? [
          round.approveAgents
            ? 'being approved'
            : 'not approved (set cluster.approveAgents: true in the site file, or approve it)',
        ]
      : []),
    ...(!v.validated ? [describeCondition(findCondition(a, 'Validated'), 'Validated')] : []),
    ...(!v.connected ? [describeCondition(findCondition(a, 'Connected'), 'Connected')] : []),
  ];
  return why.length ? `${host} (Agent ${a.metadata.name}): ${why.join(', ')}` : undefined;
}

/** Approve an Agent in the background; the wait sees the change through its watch. */
function approve(ctx: InstallContext, a: KubeObject, name: string): void {
  void ctx.kube
    .mergePatch(refOf(a), { spec: { approved: true } })
    .then(() => ctx.report({ phase: 'agents', object: name, message: 'approved' }))
    .catch((e: unknown) =>
      ctx.report({
        phase: 'agents',
        object: name,
        level: 'error',
        message: `approve failed: ${String(e)}`,
      }),
    );
}

/** `worker-0 role worker (host worker-0): Installing, Writing image to disk, 40%; approved, validated, connected; bound to lab`. */
export function agentLine(v: AgentView, host?: string): string {
  const flags = [
    v.approved ? 'approved' : 'not approved',
    v.validated ? 'validated' : 'not validated',
    v.connected ? 'connected' : 'disconnected',
  ];
  const where = [
    v.state,
    v.stage && v.stage !== v.state ? v.stage : undefined,
    v.percent !== undefined ? `${v.percent}%` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return `${v.hostname ?? '?'}${v.role ? ` role ${v.role}` : ''}${host ? ` (host ${host})` : ''}: ${where || 'discovering'}; ${flags.join(', ')}${v.boundTo ? `; bound to ${v.boundTo}` : ''}`;
}
