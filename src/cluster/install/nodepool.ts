/**
 * The NodePool's side of the install: scaled to the Agents ready to install (phase scale), then
 * every one of those Agents bound and installed and the NodePool's nodes ready (phase install). An
 * Agent the NodePool does not pick is explained (approved / validated / connected / bound /
 * selector), so a stall says why.
 */
import { field } from '../conditions.js';
import {
  API,
  BMH_LABEL,
  viewAgent,
  viewNodePool,
  whyAgentNotPicked,
  type NodePoolView,
} from '../describe.js';
import { describeRef, refOf, type KubeObject, type ObjectRef } from '../kube.js';
import { waitFor } from '../wait.js';
import { agentLine } from './agents.js';
import type { InstallContext } from './context.js';

/** A NodePool `agentLabelSelector` (metav1.LabelSelector). */
export interface AgentLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Phase scale: the NodePool's replicas set to `desired` (the rendered NodePool, applied again). */
export async function scaleNodePool(
  ctx: InstallContext,
  nodePool: KubeObject,
  desired: number,
): Promise<void> {
  const npRef = refOf(nodePool);
  const liveNp = await ctx.kube.get(npRef);
  if (Number(field(liveNp, 'spec.replicas') ?? 0) !== desired) {
    await ctx.kube.apply({ ...nodePool, spec: { ...nodePool.spec, replicas: desired } });
    ctx.report({ phase: 'scale', object: describeRef(npRef), message: `replicas ${desired}` });
  } else {
    ctx.report({ phase: 'scale', object: describeRef(npRef), message: `replicas ${desired} (already)` });
  }
}

/** Phase install, first half: each of `agents` bound to this cluster and installed. */
export async function waitAgentsInstalled(
  ctx: InstallContext,
  agents: KubeObject[],
  selector: AgentLabelSelector | undefined,
): Promise<void> {
  const { cluster, agentNs } = ctx;
  const agentNames = new Set(agents.map((a) => a.metadata.name));
  await waitFor(
    ctx.kube,
    { ...API.agent, namespace: agentNs },
    (objs) => {
      const mine = objs.filter((a) => agentNames.has(a.metadata.name));
      const boundHere = mine.filter((a) => viewAgent(a).boundTo === cluster.name);
      const lines: string[] = [];
      for (const a of mine) {
        const v = viewAgent(a);
        const name = describeRef({ kind: 'Agent', namespace: agentNs, name: a.metadata.name });
        ctx.report({ phase: 'install', object: name, message: agentLine(v, a.metadata.labels?.[BMH_LABEL]) });
        if (v.boundTo !== cluster.name) {
          const why = whyAgentNotPicked(a, cluster.name, selector);
          lines.push(
            `${v.hostname ?? a.metadata.name} not picked by the NodePool${why.length ? `: ${why.join(', ')}` : ' yet'}`,
          );
        } else if (!v.installed)
          lines.push(`${v.hostname ?? a.metadata.name} ${v.stage ?? v.state ?? 'installing'}`);
      }
      const installed = boundHere.filter((a) => viewAgent(a).installed).length;
      return {
        done: installed === agentNames.size,
        state: `${installed}/${agentNames.size} Agents installed${lines.length ? `; ${lines.join('; ')}` : ''}`,
      };
    },
    {
      what: `the Agents of ${cluster.name} to be installed`,
      ...ctx.wait,
      // Each Agent reports its own line; the summary is a redrawn line on a terminal.
      onState: (s) => ctx.report({ phase: 'install', message: s, transient: true }),
    },
  );
}

/** Phase install, second half: the NodePool ready with `desired` current nodes. */
export async function waitNodePoolReady(
  ctx: InstallContext,
  npRef: ObjectRef,
  desired: number,
): Promise<NodePoolView> {
  return waitFor(
    ctx.kube,
    { ...API.nodePool, namespace: npRef.namespace, name: npRef.name },
    ([o]) => {
      const v = viewNodePool(o);
      return { done: v.ready && v.current === desired, value: v, state: v.summary };
    },
    {
      what: `${describeRef(npRef)} to have ${desired} ready nodes`,
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'install', object: describeRef(npRef), message: s }),
    },
  );
}
