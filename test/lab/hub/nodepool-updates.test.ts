/**
 * The NodePool controller's Cluster API side and its node-by-node updates: a Machine and an AgentMachine
 * per bound Agent (gone on release; a Machine annotated cluster.x-k8s.io/delete-machine goes first on
 * scale down), InPlace and Replace updates one Node at a time with status.version moving only at the
 * end, and the faults nodeNotReturning and controlPlaneUpdateStuck.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { builtinTypes } from '../../../lab/hub/builtin.js';
import type { ControllerOptions } from '../../../lab/hub/controllers/index.js';
import type { HubStore, KubeObject } from '../../../lab/hub/types.js';
import {
  AI,
  CP,
  HC,
  NS,
  RELEASE,
  STEP,
  agents,
  cond,
  get,
  hubWithAgents,
  pruned,
  scale,
  state,
  stopHubs,
  until,
  type Hub,
} from './controller-hub.js';

afterEach(stopHubs);

const CAPI = 'cluster.x-k8s.io/v1beta1';
const CAPA = 'capi-provider.agent-install.openshift.io/v1beta1';
const NEW = RELEASE.replace(/ab/g, 'cd');
const VERSIONS = { [RELEASE]: '4.17.3', [NEW]: '4.17.5' };
const WORKERS = ['example-worker0', 'example-worker1'];

const np = (store: HubStore) => get(store, HC, 'NodePool', 'example', NS);
const hc = (store: HubStore) => get(store, HC, 'HostedCluster', 'example', NS);
const machines = (store: HubStore) => store.list(CAPI, 'Machine', { namespace: CP });
const agentMachines = (store: HubStore) => store.list(CAPA, 'AgentMachine', { namespace: CP });
const bound = (store: HubStore) => agents(store).filter((a) => a.spec?.clusterDeploymentName);
const rec = (v: unknown) => (v ?? {}) as Record<string, unknown>;
const hostOf = (a: KubeObject) => String(a.spec?.hostname);
const nodeVersion = (n: KubeObject | undefined) =>
  n?.metadata.annotations?.['hypershift.openshift.io/release-version'];

function guestStore(hub: Hub): HubStore {
  const g = hub.controllers.guests().get(`${NS}/example`);
  if (!g) throw new Error('no guest API');
  return g.store;
}

function history(store: HubStore): { state: string; version: string }[] {
  return (rec(hc(store)?.status?.version).history ?? []) as { state: string; version: string }[];
}

function patchRelease(store: HubStore, kind: 'HostedCluster' | 'NodePool', image: string): void {
  store.mergePatch(
    { apiVersion: HC, kind, name: 'example', namespace: NS },
    { spec: { release: { image } } },
  );
}

function setUpgradeType(store: HubStore, upgradeType: 'InPlace' | 'Replace'): void {
  store.mergePatch(
    { apiVersion: HC, kind: 'NodePool', name: 'example', namespace: NS },
    { spec: { management: { upgradeType } } },
  );
}

/** A hub whose NodePool has two workers Ready on 4.17.3. */
async function twoWorkers(options: Partial<ControllerOptions> = {}, upgradeType?: 'Replace'): Promise<Hub> {
  const hub = await hubWithAgents({ releaseVersions: VERSIONS, ...options });
  if (upgradeType) setUpgradeType(hub.store, upgradeType);
  scale(hub.store, 2);
  await until(
    'two Ready replicas on 4.17.3',
    () => np(hub.store)?.status?.replicas === 2 && np(hub.store)?.status?.version === '4.17.3',
    10000,
  );
  return hub;
}

/** The control plane first, as the CLI does: its update completes while the workers run 4.17.3. */
async function updateControlPlane(store: HubStore): Promise<void> {
  patchRelease(store, 'HostedCluster', NEW);
  await until('control plane on 4.17.5', () => {
    const h = history(store);
    return h.length === 2 && h[0].version === '4.17.5' && h[0].state === 'Completed';
  });
  expect(np(store)?.status?.version).toBe('4.17.3');
}

interface Observed {
  /** Most Nodes not Ready (or absent) at once. */
  maxDown: number;
  /** `<node> down|gone|up <version>` as it happened. */
  timeline: string[];
  /** NodePool status.version values, with the Node versions when each was written. */
  versions: { version: unknown; nodes: (string | undefined)[]; ready: boolean[] }[];
  replicas: Set<unknown>;
  updating: string[];
}

/** Watch the guest Nodes and the NodePool through an update. */
function observe(hub: Hub): Observed {
  const guest = guestStore(hub);
  const o: Observed = { maxDown: 0, timeline: [], versions: [], replicas: new Set(), updating: [] };
  const last = new Map<string, string>();
  guest.watch((e) => {
    if (e.object.kind !== 'Node') return;
    const down = WORKERS.filter((n) => {
      const node = get(guest, 'v1', 'Node', n);
      return !node || cond(node, 'Ready')?.status !== 'True';
    });
    o.maxDown = Math.max(o.maxDown, down.length);
    const n = e.object;
    const now =
      e.type === 'DELETED' ? 'gone' : cond(n, 'Ready')?.status === 'True' ? `up ${nodeVersion(n)}` : 'down';
    if (last.get(n.metadata.name) !== now) o.timeline.push(`${n.metadata.name} ${now}`);
    last.set(n.metadata.name, now);
  });
  hub.store.watch((e) => {
    if (e.object.kind !== 'NodePool') return;
    const nodes = WORKERS.map((n) => get(guest, 'v1', 'Node', n));
    o.versions.push({
      version: e.object.status?.version,
      nodes: nodes.map(nodeVersion),
      ready: nodes.map((n) => cond(n, 'Ready')?.status === 'True'),
    });
    o.replicas.add(e.object.status?.replicas);
    const u = cond(e.object, 'UpdatingVersion');
    if (u?.status === 'True') o.updating.push(String(u.message));
  });
  return o;
}

/** The update went node by node and status.version moved only once both Nodes ran 4.17.5. */
function expectNodeByNode(o: Observed): void {
  expect(o.maxDown).toBe(1);
  const firstOf = (entry: RegExp) => o.timeline.findIndex((t) => entry.test(t));
  const w0Back = firstOf(/^example-worker0 up 4\.17\.5$/);
  const w1Leaves = firstOf(/^example-worker1 (down|gone)$/);
  expect(firstOf(/^example-worker0 (down|gone)$/)).toBeGreaterThanOrEqual(0);
  expect(w0Back).toBeGreaterThan(0);
  expect(w1Leaves).toBeGreaterThan(w0Back);
  expect(o.timeline.at(-1)).toBe('example-worker1 up 4.17.5');
  for (const v of o.versions) {
    if (v.version === '4.17.5') {
      expect(v.nodes).toEqual(['4.17.5', '4.17.5']);
      expect(v.ready).toEqual([true, true]);
    } else {
      expect(v.version).toBe('4.17.3');
    }
  }
  expect(o.versions.at(-1)?.version).toBe('4.17.5');
  expect(o.replicas).toContain(1);
  expect(o.updating[0]).toMatch(
    /^Updating version in progress\. Target version: 4\.17\.5; node example-worker0 \(1 of 2\): /,
  );
  expect(o.updating.some((m) => m.includes('; node example-worker1 (2 of 2): '))).toBe(true);
}

describe('Machines and AgentMachines', () => {
  it('exist for bound Agents (Provisioning → Running, nodeRef, agentRef) and go on release; status.version on install', async () => {
    const hub = await hubWithAgents();
    const { store } = hub;
    const phases = new Set<string>();
    store.watch((e) => {
      if (e.object.kind === 'Machine') phases.add(String(e.object.status?.phase));
    });
    scale(store, 2);
    await until(
      'two Running Machines',
      () => {
        const ms = machines(store);
        return ms.length === 2 && ms.every((m) => m.status?.phase === 'Running') && ms;
      },
      10000,
    );
    expect([...phases]).toEqual(expect.arrayContaining(['Provisioning', 'Running']));
    const pool = await until('version on install', () =>
      np(store)?.status?.version ? np(store) : undefined,
    );
    expect(pool.status?.version).toBe('4.17.3');
    expect(cond(pool, 'UpdatingVersion')?.status).toBe('False');

    const ams = agentMachines(store);
    expect(ams).toHaveLength(2);
    for (const agent of bound(store)) {
      const am = ams.find((m) => rec(m.status?.agentRef).name === agent.metadata.name)!;
      expect(am, agent.metadata.name).toBeDefined();
      expect(am.status).toMatchObject({
        agentRef: { namespace: CP, name: agent.metadata.name },
        ready: true,
      });
      expect(am.spec?.providerID).toBe(`agent://${agent.metadata.name}`);
      // What cluster-api-provider-agent writes: the AgentMachine's uid, not the Machine name.
      expect(agent.metadata.labels?.agentMachineRef).toBe(am.metadata.uid);
      expect(agent.metadata.annotations?.agentMachineRefNamespace).toBe(CP);
      const m = get(store, CAPI, 'Machine', am.metadata.name, CP)!;
      expect(am.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          apiVersion: CAPI,
          kind: 'Machine',
          name: m.metadata.name,
          uid: m.metadata.uid,
        }),
      ]);
      expect(m.metadata.name).toMatch(/^example-[0-9a-f]{5}$/);
      expect(m.metadata.labels).toMatchObject({
        'cluster.x-k8s.io/cluster-name': 'example',
        'hypershift.openshift.io/nodePool': 'example',
      });
      expect(m.spec).toMatchObject({
        clusterName: 'example',
        infrastructureRef: { apiVersion: CAPA, kind: 'AgentMachine', name: am.metadata.name, namespace: CP },
        version: '4.17.3',
      });
      expect(m.status).toMatchObject({ phase: 'Running', nodeRef: { kind: 'Node', name: hostOf(agent) } });
      const node = get(guestStore(hub), 'v1', 'Node', hostOf(agent))!;
      expect(nodeVersion(node)).toBe('4.17.3');
      expect(rec(node.status?.nodeInfo).osImage).toBe('Red Hat Enterprise Linux CoreOS 4.17.3');
    }

    scale(store, 1);
    await until('one Machine left', () => machines(store).length === 1 && agentMachines(store).length === 1);
    const released = await until('a released Agent', () =>
      agents(store).find((a) => !a.spec?.clusterDeploymentName),
    );
    expect(released.metadata.labels?.agentMachineRef).toBeUndefined();
    expect(released.metadata.annotations?.agentMachineRefNamespace).toBeUndefined();
    expect(rec(agentMachines(store)[0].status?.agentRef).name).not.toBe(released.metadata.name);

    scale(store, 0);
    await until('no Machines', () => machines(store).length === 0 && agentMachines(store).length === 0);
    expect(hub.controllers.errors()).toEqual([]);
    expect(pruned).toEqual([]);
  });

  it('a Machine annotated cluster.x-k8s.io/delete-machine is the one removed on scale down', async () => {
    const { store } = await twoWorkers();
    // Without the annotation the Agent with the greater name goes; mark the other one's Machine.
    const [keep, marked] = bound(store).sort((a, b) => b.metadata.name.localeCompare(a.metadata.name));
    const mark = machines(store).find(
      (m) => m.status?.nodeRef && rec(m.status.nodeRef).name === hostOf(marked),
    )!;
    store.mergePatch(
      { apiVersion: CAPI, kind: 'Machine', name: mark.metadata.name, namespace: CP },
      { metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } } },
    );
    scale(store, 1);
    await until('one bound Agent', () => bound(store).length === 1);
    expect(bound(store).map((a) => a.metadata.name)).toEqual([keep.metadata.name]);
    expect(get(store, CAPI, 'Machine', mark.metadata.name, CP)).toBeUndefined();
    await until('the released Agent unbinding', () =>
      state(get(store, AI, 'Agent', marked.metadata.name, CP)!)?.startsWith('unbinding'),
    );
  });

  it('deleting a Machine by hand releases its Agent', async () => {
    const { store } = await twoWorkers();
    const victim = machines(store)[0];
    const agent = bound(store).find((a) => hostOf(a) === rec(victim.status?.nodeRef).name)!;
    store.delete({ apiVersion: CAPI, kind: 'Machine', name: victim.metadata.name, namespace: CP });
    await until(
      'its Agent released',
      () => !get(store, AI, 'Agent', agent.metadata.name, CP)?.spec?.clusterDeploymentName,
    );
    await until(
      'Machine and AgentMachine gone',
      () =>
        !get(store, CAPI, 'Machine', victim.metadata.name, CP) &&
        !get(store, CAPA, 'AgentMachine', victim.metadata.name, CP),
    );
    await until('replicas 1', () => np(store)?.status?.replicas === 1);
  });

  it('are served with the printer columns of the real CRD', () => {
    const machine = builtinTypes().find((t) => t.kind === 'Machine')!;
    expect(machine).toMatchObject({
      apiVersion: CAPI,
      plural: 'machines',
      namespaced: true,
      hasStatus: true,
    });
    expect(machine.printerColumns?.map((c) => c.name)).toEqual([
      'Cluster',
      'NodeName',
      'ProviderID',
      'Phase',
      'Age',
      'Version',
    ]);
    expect(builtinTypes().find((t) => t.kind === 'AgentMachine')).toMatchObject({
      apiVersion: CAPA,
      plural: 'agentmachines',
      namespaced: true,
      hasStatus: true,
    });
  });
});

describe('NodePool updates', () => {
  it('InPlace: each Node is cordoned, reboots and comes back on the new version, one at a time', async () => {
    const hub = await twoWorkers();
    const { store } = hub;
    const before = machines(store)
      .map((m) => m.metadata.uid)
      .sort();
    await updateControlPlane(store);
    const o = observe(hub);
    const cordoned = new Set<string>();
    const unknown = new Set<string>();
    guestStore(hub).watch((e) => {
      if (e.object.spec?.unschedulable === true) cordoned.add(e.object.metadata.name);
      const ready = cond(e.object, 'Ready');
      if (ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown')
        unknown.add(e.object.metadata.name);
    });
    const start = Date.now();
    patchRelease(store, 'NodePool', NEW);
    await until('NodePool on 4.17.5', () => np(store)?.status?.version === '4.17.5', 10000);
    expect(Date.now() - start).toBeLessThan(60 * STEP * 5);
    expectNodeByNode(o);
    expect([...cordoned].sort()).toEqual(WORKERS);
    expect([...unknown].sort()).toEqual(WORKERS);
    expect(o.timeline.filter((t) => t.endsWith(' gone'))).toEqual([]);
    const pool = np(store)!;
    expect(cond(pool, 'UpdatingVersion')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(pool.status?.replicas).toBe(2);
    for (const name of WORKERS) {
      const node = get(guestStore(hub), 'v1', 'Node', name)!;
      expect(node.spec?.unschedulable).toBeUndefined();
      expect(rec(node.status?.nodeInfo).osImage).toBe('Red Hat Enterprise Linux CoreOS 4.17.5');
      expect(node.metadata.annotations?.['machineconfiguration.openshift.io/state']).toBe('Done');
    }
    // In place: the same Machines.
    expect(
      machines(store)
        .map((m) => m.metadata.uid)
        .sort(),
    ).toEqual(before);
    expect(hub.controllers.errors()).toEqual([]);
    expect(pruned).toEqual([]);
  });

  it('Replace: each host is drained, deleted and reprovisioned under a new Machine, one at a time', async () => {
    const hub = await twoWorkers({}, 'Replace');
    const { store } = hub;
    const before = new Map(bound(store).map((a) => [a.metadata.name, a.metadata.labels?.agentMachineRef]));
    const oldMachines = machines(store).map((m) => m.metadata.uid);
    await updateControlPlane(store);
    const o = observe(hub);
    const deleting = new Set<string>();
    store.watch((e) => {
      if (
        e.object.kind === 'Machine' &&
        e.object.status?.phase === 'Deleting' &&
        e.object.metadata.deletionTimestamp
      )
        deleting.add(e.object.metadata.name);
    });
    patchRelease(store, 'NodePool', NEW);
    await until('NodePool on 4.17.5', () => np(store)?.status?.version === '4.17.5', 10000);
    expectNodeByNode(o);
    expect(o.timeline).toEqual(expect.arrayContaining(WORKERS.map((n) => `${n} gone`)));
    expect(deleting.size).toBe(2);
    // New Machines of the same names; the Agents stayed bound, relabelled with the new AgentMachines.
    const now = machines(store);
    expect(now.map((m) => m.metadata.name).sort()).toEqual([...deleting].sort());
    expect(now.some((m) => oldMachines.includes(m.metadata.uid))).toBe(false);
    expect(now.every((m) => m.spec?.version === '4.17.5' && m.status?.phase === 'Running')).toBe(true);
    for (const a of bound(store)) {
      expect(before.has(a.metadata.name)).toBe(true);
      expect(a.metadata.labels?.agentMachineRef).not.toBe(before.get(a.metadata.name));
      expect(agentMachines(store).map((m) => m.metadata.uid)).toContain(a.metadata.labels?.agentMachineRef);
      expect(state(a)).toBe('added-to-existing-cluster');
    }
    expect(hub.controllers.errors()).toEqual([]);
    expect(pruned).toEqual([]);
  });
});

describe('faults', () => {
  it('nodeNotReturning: the Node stays NotReady after its update reboot and the update never finishes', async () => {
    const hub = await twoWorkers({ faults: { nodeNotReturning: ['example-worker0'] } });
    const { store } = hub;
    await updateControlPlane(store);
    patchRelease(store, 'NodePool', NEW);
    const node = await until('worker0 Unknown', () => {
      const n = get(guestStore(hub), 'v1', 'Node', 'example-worker0');
      return cond(n, 'Ready')?.status === 'Unknown' && n;
    });
    expect(cond(node, 'Ready')).toMatchObject({
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
    });
    await new Promise((r) => setTimeout(r, STEP * 30));
    expect(cond(get(guestStore(hub), 'v1', 'Node', 'example-worker0'), 'Ready')?.status).toBe('Unknown');
    const worker1 = get(guestStore(hub), 'v1', 'Node', 'example-worker1')!;
    expect(nodeVersion(worker1)).toBe('4.17.3');
    expect(cond(worker1, 'Ready')?.status).toBe('True');
    const pool = np(store)!;
    expect(pool.status?.version).toBe('4.17.3');
    expect(pool.status?.replicas).toBe(1);
    expect(cond(pool, 'UpdatingVersion')).toMatchObject({ status: 'True', reason: 'AsExpected' });
    expect(cond(pool, 'UpdatingVersion')?.message).toContain(
      'Target version: 4.17.5; node example-worker0 (1 of 2)',
    );
    for (const type of ['AllNodesHealthy', 'Ready']) {
      expect(cond(pool, type)?.status, type).toBe('False');
      expect(cond(pool, type)?.message, type).toContain('Node example-worker0 (Machine example-');
      expect(cond(pool, type)?.message, type).toContain(
        'Ready=Unknown NodeStatusUnknown: Kubelet stopped posting node status.',
      );
    }
    expect(cond(pool, 'AllNodesHealthy')?.reason).toBe('NodeConditionsFailed');
  });

  it('nodeNotReturning with Replace: the host never reboots into discovery, its Machine stays Deleting', async () => {
    const hub = await twoWorkers({ faults: { nodeNotReturning: ['example-worker0'] } }, 'Replace');
    const { store } = hub;
    patchRelease(store, 'NodePool', NEW);
    await until(
      'worker0 Unknown',
      () => cond(get(guestStore(hub), 'v1', 'Node', 'example-worker0'), 'Ready')?.status === 'Unknown',
    );
    await new Promise((r) => setTimeout(r, STEP * 30));
    const m = machines(store).find((x) => rec(x.status?.nodeRef).name === 'example-worker0')!;
    expect(m.metadata.deletionTimestamp).toBeDefined();
    expect(m.status?.phase).toBe('Deleting');
    expect(cond(m, 'PreTerminateDeleteHookSucceeded')).toMatchObject({
      status: 'False',
      reason: 'WaitingExternalHook',
    });
    expect(cond(get(guestStore(hub), 'v1', 'Node', 'example-worker0'), 'Ready')?.reason).toBe(
      'NodeStatusUnknown',
    );
    expect(np(store)?.status?.version).toBe('4.17.3');
    expect(cond(np(store), 'UpdatingVersion')?.status).toBe('True');
    expect(nodeVersion(get(guestStore(hub), 'v1', 'Node', 'example-worker1'))).toBe('4.17.3');
  });

  it('controlPlaneUpdateStuck: an update stays Partial with a degraded kube-apiserver; the first install completes', async () => {
    const hub = await hubWithAgents({ releaseVersions: VERSIONS, faults: { controlPlaneUpdateStuck: true } });
    const { store } = hub;
    scale(store, 1);
    await until('install Completed', () => history(store)[0]?.state === 'Completed', 10000);
    expect(cond(hc(store), 'ClusterVersionSucceeding')?.status).toBe('True');
    patchRelease(store, 'HostedCluster', NEW);
    await until(
      'ClusterVersionSucceeding False',
      () => cond(hc(store), 'ClusterVersionSucceeding')?.status === 'False',
    );
    await new Promise((r) => setTimeout(r, STEP * 30));
    const h = hc(store)!;
    expect(history(store).map((x) => `${x.version} ${x.state}`)).toEqual([
      '4.17.5 Partial',
      '4.17.3 Completed',
    ]);
    expect(cond(h, 'ClusterVersionSucceeding')).toMatchObject({
      reason: 'ClusterOperatorDegraded',
      message: 'Cluster operator kube-apiserver is degraded',
    });
    expect(cond(h, 'ClusterVersionProgressing')).toMatchObject({
      status: 'True',
      reason: 'ClusterOperatorDegraded',
      message: 'Unable to apply 4.17.5: the cluster operator kube-apiserver is degraded',
    });
    expect(cond(h, 'ClusterVersionAvailable')).toMatchObject({
      status: 'True',
      message: 'Done applying 4.17.3',
    });
    expect(cond(h, 'Available')?.status).toBe('True');
    expect(cond(h, 'Degraded')?.status).toBe('False');
    expect(cond(h, 'Progressing')?.status).toBe('True');
    const cv = get(guestStore(hub), 'config.openshift.io/v1', 'ClusterVersion', 'version')!;
    expect(cond(cv, 'Failing')).toMatchObject({
      status: 'True',
      reason: 'ClusterOperatorDegraded',
      message: 'Cluster operator kube-apiserver is degraded',
    });
    expect((cv.status?.history as { state: string }[])[0].state).toBe('Partial');
    expect(pruned).toEqual([]);
  });
});
