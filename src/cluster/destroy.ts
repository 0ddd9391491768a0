/**
 * `airgap cluster destroy`: take a hosted cluster apart in the order that returns its hosts:
 *   1. every NodePool of the cluster scaled to 0, and its Agents released (no longer bound);
 *   2. the NodePools and the HostedCluster deleted, and gone (HyperShift removes the control plane);
 *   3. in the agent namespace: BareMetalHosts, Agents, NMStateConfigs, InfraEnv, BMC secrets, the
 *      pull secret and Role airgap created, then the namespace itself;
 *   4. in the HostedCluster namespace: the cluster's pull secret, SSH key, etcd key and
 *      `user-ca-bundle` (the namespace stays: other clusters may share it).
 * `dryRun` lists what would go and deletes nothing.
 */
import { field } from './conditions.js';
import { API } from './describe.js';
import { controlPlaneNamespace, openTarget, type ClusterIdentity, type ClusterTarget } from './identity.js';
import { describeRef, refOf, type Kube, type KubeObject, type ObjectRef } from './kube.js';
import { dedupe, type InstallReporter } from './progress.js';
import { waitFor } from './wait.js';

export interface DestroyOptions {
  kube: Kube;
  cluster: ClusterIdentity;
  dryRun?: boolean;
  report: InstallReporter;
  phaseTimeoutMs?: number;
  resyncMs?: number;
}

export interface DestroyResult {
  /** Objects deleted (or, with dryRun, that would be). */
  objects: string[];
  dryRun: boolean;
}

async function listIn(
  kube: Kube,
  t: { apiVersion: string; kind: string },
  namespace: string,
): Promise<KubeObject[]> {
  // A type the hub does not serve holds nothing to delete; any other failure stops the destroy.
  return kube.listServed(t.apiVersion, t.kind, { namespace });
}

/** What destroy would delete, in order. */
async function destroyPlan(
  kube: Kube,
  cluster: ClusterIdentity,
): Promise<{ steps: { name: string; refs: ObjectRef[] }[]; agentNamespace: string }> {
  const hc = await kube.get({ ...API.hostedCluster, ...cluster });
  const agentNs =
    ((hc?.spec?.platform as { agent?: { agentNamespace?: string } } | undefined)?.agent?.agentNamespace as
      string | undefined) || controlPlaneNamespace(cluster);
  const pools = (await listIn(kube, API.nodePool, cluster.namespace)).filter(
    (np) => np.spec?.clusterName === cluster.name,
  );
  const [bmhs, agents, nmstates, infraEnvs] = await Promise.all([
    listIn(kube, API.bareMetalHost, agentNs),
    listIn(kube, API.agent, agentNs),
    listIn(kube, API.nmStateConfig, agentNs),
    listIn(kube, API.infraEnv, agentNs),
  ]);
  const secretRefs = bmhs
    .map((b) => field(b, 'spec.bmc.credentialsName') as string | undefined)
    .filter((n): n is string => !!n)
    .map((name) => ({ ...API.secret, namespace: agentNs, name }));
  const present = async (refs: ObjectRef[]) =>
    (await Promise.all(refs.map(async (r) => ((await kube.get(r)) ? r : undefined)))).filter(
      (r): r is ObjectRef => !!r,
    );
  const agentSide = await present([
    ...secretRefs,
    { ...API.secret, namespace: agentNs, name: 'pull-secret' },
    { ...API.role, namespace: agentNs, name: 'capi-provider-role' },
  ]);
  const nsSide = await present(
    [`${cluster.name}-pull-secret`, `${cluster.name}-ssh-key`, `${cluster.name}-etcd-encryption-key`]
      .map((name) => ({ ...API.secret, namespace: cluster.namespace, name }) as ObjectRef)
      .concat([{ ...API.configMap, namespace: cluster.namespace, name: 'user-ca-bundle' }]),
  );
  const agentNsObj = await kube.get({ ...API.namespace, name: agentNs });
  return {
    agentNamespace: agentNs,
    steps: [
      { name: 'release hosts', refs: pools.map(refOf) },
      { name: 'control plane', refs: [...pools.map(refOf), ...(hc ? [refOf(hc)] : [])] },
      { name: 'hosts', refs: [...bmhs, ...agents, ...nmstates, ...infraEnvs].map(refOf).concat(agentSide) },
      { name: 'namespaces', refs: [...(agentNsObj ? [refOf(agentNsObj)] : []), ...nsSide] },
    ],
  };
}

/** `airgap cluster destroy`: the selected cluster taken apart (or, with dryRun, listed). */
export async function destroySelectedCluster(
  o: ClusterTarget & { dryRun?: boolean; report: InstallReporter; phaseTimeoutMs?: number },
): Promise<{ cluster: ClusterIdentity; destroyed: DestroyResult }> {
  const { kube, cluster } = await openTarget(o);
  const destroyed = await destroyCluster({
    kube,
    cluster,
    dryRun: o.dryRun,
    report: o.report,
    phaseTimeoutMs: o.phaseTimeoutMs,
  });
  return { cluster, destroyed };
}

async function destroyCluster(opts: DestroyOptions): Promise<DestroyResult> {
  const { kube, cluster } = opts;
  const report = dedupe(opts.report);
  const timeoutMs = opts.phaseTimeoutMs ?? 30 * 60_000;
  const resync = opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {};
  const plan = await destroyPlan(kube, cluster);
  const [release, control, hosts, namespaces] = plan.steps;
  const deleted = [...control.refs, ...hosts.refs, ...namespaces.refs].map(describeRef);
  if (opts.dryRun) {
    for (const step of plan.steps.slice(1))
      for (const r of step.refs)
        report({ phase: 'dry-run', object: describeRef(r), message: `would be deleted (${step.name})` });
    return { objects: deleted, dryRun: true };
  }

  // 1. scale to 0 and wait for the Agents to be released
  for (const np of release.refs) {
    await kube.mergePatch(np, { spec: { replicas: 0 } });
    report({ phase: 'scale-down', object: describeRef(np), message: 'replicas 0' });
  }
  await waitFor(
    kube,
    { ...API.agent, namespace: plan.agentNamespace },
    (agents) => {
      const bound = agents.filter((a) => field(a, 'spec.clusterDeploymentName.name') === cluster.name);
      return {
        done: bound.length === 0,
        state: bound.length
          ? `${bound.length} Agents still bound to ${cluster.name}`
          : 'every Agent released',
      };
    },
    {
      what: `the Agents of ${cluster.name} to be released`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'scale-down', message: s }),
    },
  );

  // 2-4. delete in order, each step waiting until its objects are gone
  for (const step of [control, hosts, namespaces]) {
    for (const r of step.refs)
      if (await kube.delete(r)) report({ phase: step.name, object: describeRef(r), message: 'deleting' });
    for (const r of step.refs) await waitGone(kube, r, timeoutMs, resync, report, step.name);
  }
  return { objects: deleted, dryRun: false };
}

async function waitGone(
  kube: Kube,
  ref: ObjectRef,
  timeoutMs: number,
  resync: { resyncMs?: number },
  report: InstallReporter,
  phase: string,
): Promise<void> {
  await waitFor(
    kube,
    ref,
    ([o]) => ({
      done: !o,
      state: o
        ? `still there${o.metadata.finalizers?.length ? ` (finalizers: ${o.metadata.finalizers.join(', ')})` : ''}`
        : 'deleted',
    }),
    {
      what: `${describeRef(ref)} to be deleted`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase, object: describeRef(ref), message: s }),
    },
  );
}
