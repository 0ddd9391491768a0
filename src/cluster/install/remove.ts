/**
 * Taking hosts out of a hosted cluster, as `airgap cluster scale` does when the site file no longer
 * lists them: each host's CAPI Machine marked for deletion (so the NodePool's MachineSet removes
 * that node and not another), the NodePool scaled down, the Agents released (their node drained
 * and gone from the hosted cluster), then the BareMetalHosts deleted (metal3 deprovisions and
 * powers them off), with their BMC Secrets, NMStateConfigs and any Agent left behind.
 */
import { AirgapError } from '../../util/errors.js';
import { field } from '../conditions.js';
import { ClusterError } from '../errors.js';
import { API, BMH_LABEL, viewAgent, viewBareMetalHost } from '../describe.js';
import { describeRef, type KubeObject, type ObjectRef } from '../kube.js';
import { bmcSecretName } from '../render/index.js';
import { waitFor } from '../wait.js';
import type { InstallContext } from './context.js';

/** CAPI's MachineSet deletes Machines carrying this annotation first, whatever its deletion policy. */
const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
const MACHINE = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine' } as const;
/** The CAPI agent provider's machines, newest API first. */
const AGENT_MACHINE_VERSIONS = [
  'capi-provider.agent-install.openshift.io/v1beta1',
  'capi-provider.agent-install.openshift.io/v1alpha1',
];

/**
 * The CAPI Machine that holds each Agent (by Agent name): the AgentMachine whose `status.agentRef`
 * names the Agent, and the Machine that owns it. Empty when the hub has no such objects.
 */
async function machinesByAgent(ctx: InstallContext): Promise<Map<string, ObjectRef>> {
  const cpNs = ctx.agentNs;
  const out = new Map<string, ObjectRef>();
  for (const apiVersion of AGENT_MACHINE_VERSIONS) {
    if (!(await ctx.kube.resource(apiVersion, 'AgentMachine'))) continue;
    const { items } = await ctx.kube.list(apiVersion, 'AgentMachine', { namespace: cpNs });
    for (const am of items) {
      const agent = field(am, 'status.agentRef.name') as string | undefined;
      const agentNs = (field(am, 'status.agentRef.namespace') as string | undefined) ?? cpNs;
      if (!agent || agentNs !== ctx.agentNs || out.has(agent)) continue;
      const owners =
        (field(am, 'metadata.ownerReferences') as { kind?: string; name?: string }[] | undefined) ?? [];
      const owner = owners.find((r) => r.kind === 'Machine');
      out.set(agent, { ...MACHINE, namespace: cpNs, name: owner?.name ?? am.metadata.name });
    }
  }
  return out;
}

/**
 * Mark the Machine of each Agent for deletion. An Agent whose Machine cannot be found is reported:
 * the NodePool may then remove another node than the one asked for.
 */
export async function markMachines(ctx: InstallContext, agents: KubeObject[]): Promise<string[]> {
  const marked: string[] = [];
  const machines = agents.length ? await machinesByAgent(ctx) : new Map<string, ObjectRef>();
  for (const agent of agents) {
    const host = agent.metadata.labels?.[BMH_LABEL] ?? agent.metadata.name;
    const machine = machines.get(agent.metadata.name);
    if (!machine) {
      ctx.report({
        phase: 'scale',
        level: 'warn',
        message: `no CAPI Machine holds Agent ${agent.metadata.name} (host ${host}): the NodePool picks which node to remove`,
      });
      continue;
    }
    const live = await ctx.kube.get(machine);
    if (live?.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] === undefined)
      await ctx.kube.mergePatch(machine, {
        metadata: { annotations: { [DELETE_MACHINE_ANNOTATION]: 'yes' } },
      });
    ctx.report({
      phase: 'scale',
      object: describeRef(machine),
      message: `host ${host} marked to be removed (${DELETE_MACHINE_ANNOTATION})`,
    });
    marked.push(machine.name);
  }
  return marked;
}

/**
 * Wait until none of `hosts`' Agents is bound to the cluster (their nodes are drained and gone).
 * When one of the `kept` hosts leaves the NodePool instead, the NodePool chose another node than
 * the one asked for: that fails at once, saying so.
 */
export async function waitAgentsReleased(
  ctx: InstallContext,
  hosts: string[],
  kept: string[],
): Promise<void> {
  const set = new Set(hosts);
  await waitFor(
    ctx.kube,
    { ...API.agent, namespace: ctx.agentNs },
    (objs) => {
      const views = objs.map(viewAgent);
      const bound = views.filter((v) => set.has(v.host ?? '') && v.boundTo === ctx.cluster.name);
      const wrong = kept.filter((h) => !views.some((v) => v.host === h && v.boundTo === ctx.cluster.name));
      return {
        done: bound.length === 0,
        ...(wrong.length
          ? {
              failed: new AirgapError(
                ClusterError.SCALE_WRONG_NODE,
                `the NodePool of ${ctx.cluster.name} released ${wrong.join(', ')}, which the site file keeps, instead of ${hosts.join(', ')}`,
                {
                  hint:
                    'its Machines could not be marked for deletion; run airgap cluster scale -f <site> again to bring the kept hosts back, and check oc get machines.cluster.x-k8s.io -n ' +
                    ctx.agentNs,
                },
              ),
            }
          : {}),
        state: bound.length
          ? `waiting for ${bound.map((v) => `${v.host} (${v.state ?? 'bound'})`).join(', ')} to leave the NodePool`
          : `${hosts.join(', ')} released`,
      };
    },
    {
      what: `the Agents of ${hosts.join(', ')} to be released from ${ctx.cluster.name}`,
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'release', message: s }),
      hint: 'the NodePool drains each node before it releases its Agent: airgap cluster status shows each Agent',
    },
  );
}

/**
 * Delete the hosts' BareMetalHosts (metal3 deprovisions and powers each off), BMC Secrets and
 * NMStateConfigs; wait for the BareMetalHosts to be gone, then delete any Agent left.
 */
export async function deprovisionHosts(ctx: InstallContext, hosts: string[]): Promise<void> {
  const ns = ctx.agentNs;
  for (const host of hosts) {
    const bmh = { ...API.bareMetalHost, namespace: ns, name: host };
    if (await ctx.kube.delete(bmh))
      ctx.report({ phase: 'deprovision', object: describeRef(bmh), message: 'deleted' });
  }
  const set = new Set(hosts);
  await waitFor(
    ctx.kube,
    { ...API.bareMetalHost, namespace: ns },
    (objs) => {
      const left = objs.filter((o) => set.has(o.metadata.name)).map(viewBareMetalHost);
      for (const v of left)
        ctx.report({
          phase: 'deprovision',
          object: describeRef({ kind: 'BareMetalHost', namespace: ns, name: v.name }),
          message: v.state,
        });
      return {
        done: left.length === 0,
        state: left.length ? left.map((v) => `${v.name} ${v.state}`).join(', ') : 'every host deprovisioned',
      };
    },
    {
      what: `the BareMetalHosts ${hosts.join(', ')} to be deprovisioned and gone`,
      ...ctx.wait,
      hint:
        'metal3 powers each host off through its BMC before it lets the BareMetalHost go: oc get bmh -n ' +
        ns,
    },
  );
  const { items: agents } = await ctx.kube.list(API.agent.apiVersion, API.agent.kind, { namespace: ns });
  const leftovers: ObjectRef[] = [
    ...agents
      .filter((a) => set.has(a.metadata.labels?.[BMH_LABEL] ?? ''))
      .map((a) => ({ ...API.agent, namespace: ns, name: a.metadata.name })),
    ...hosts.map((h) => ({ ...API.secret, namespace: ns, name: bmcSecretName(h) })),
    ...hosts.map((h) => ({ ...API.nmStateConfig, namespace: ns, name: h })),
  ];
  for (const ref of leftovers)
    if (await ctx.kube.delete(ref))
      ctx.report({ phase: 'deprovision', object: describeRef(ref), message: 'deleted' });
}
