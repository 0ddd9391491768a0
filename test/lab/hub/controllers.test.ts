/**
 * The hub simulator's controllers against the real store (real CRD schemas: every status they write is
 * validated, and any field a schema does not declare is reported as pruned), with a real guest API
 * server behind each hosted cluster's admin kubeconfig.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { parseBmcAddress, seedHub } from '../../../lab/hub/controllers/index.js';
import { createStore } from '../../../lab/hub/store.js';
import {
  AI,
  CP,
  HC,
  NS,
  RELEASE,
  STEP,
  TYPES,
  agentServiceConfig,
  agents,
  applyCluster,
  bmh,
  cond,
  createAll,
  enableMce,
  expectSettled,
  get,
  guestNodes,
  hostedCluster,
  hubWithAgents,
  infraEnv,
  namespace,
  pruned,
  readyHub,
  scale,
  secret,
  startHub,
  state,
  stopHubs,
  until,
} from './controller-hub.js';

afterEach(stopHubs);

describe('seedHub', () => {
  it('creates what a management cluster already has', () => {
    const store = createStore(TYPES);
    seedHub(store);
    const cv = get(store, 'config.openshift.io/v1', 'ClusterVersion', 'version');
    expect(cv?.status?.desired).toMatchObject({ version: '4.17.3' });
    expect((cv?.status?.history as { state: string }[])[0].state).toBe('Completed');
    const nodes = store.list('v1', 'Node');
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    expect(nodes.every((n) => cond(n, 'Ready')?.status === 'True')).toBe(true);
    const sc = store.list('storage.k8s.io/v1', 'StorageClass');
    expect(
      sc.some((s) => s.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true'),
    ).toBe(true);
    for (const ns of [
      'openshift-config',
      'openshift-marketplace',
      'multicluster-engine',
      'local-cluster',
      'hypershift',
      'openshift-machine-api',
      'default',
    ]) {
      expect(get(store, 'v1', 'Namespace', ns), ns).toBeDefined();
    }
    expect(
      get(store, 'multicluster.openshift.io/v1', 'MultiClusterEngine', 'multiclusterengine')?.status?.phase,
    ).toBe('Available');
    expect(get(store, 'config.openshift.io/v1', 'Image', 'cluster')).toBeDefined();
    expect(pruned).toEqual([]);
    seedHub(store); // idempotent
  });
});

describe('hub controllers', () => {
  it('installs a hosted cluster end to end: Agents from BareMetalHosts, NodePool scaled, guest Nodes Ready', async () => {
    const { store, controllers } = await readyHub();
    expect(cond(get(store, AI, 'AgentServiceConfig', 'agent'), 'ReconcileCompleted')).toMatchObject({
      status: 'True',
      reason: 'ReconcileSucceeded',
    });
    expect(
      get(store, 'apps/v1', 'StatefulSet', 'assisted-image-service', 'multicluster-engine'),
    ).toBeDefined();
    expect(
      store.list('v1', 'Pod', { namespace: 'multicluster-engine' }).map((p) => p.status?.phase),
    ).toContain('Running');

    applyCluster(store);
    const hc = await until('HostedCluster Available', () => {
      const o = get(store, HC, 'HostedCluster', 'example', NS);
      return cond(o, 'Available')?.status === 'True' && o;
    });
    expect(hc.metadata.finalizers).toContain('hypershift.openshift.io/finalizer');
    expect(cond(hc, 'Available')).toMatchObject({
      reason: 'AsExpected',
      message: 'The hosted control plane is available',
      observedGeneration: 1,
    });
    expect(cond(hc, 'ValidReleaseImage')?.status).toBe('True');
    expect(cond(hc, 'Degraded')?.status).toBe('False');
    const version = hc.status?.version as {
      desired: { version: string };
      history: { state: string; completionTime: unknown }[];
    };
    expect(version.desired.version).toBe('4.17.3');
    expect(version.history[0]).toMatchObject({ state: 'Partial', completionTime: null });
    expect(hc.status?.kubeconfig).toEqual({ name: 'example-admin-kubeconfig' });
    expect(hc.status?.ignitionEndpoint).toBe(`ignition-server-${CP}.apps.hub.example.com`);
    expect(
      get(store, 'v1', 'Namespace', CP)?.metadata.labels?.['hypershift.openshift.io/hosted-control-plane'],
    ).toBe('true');
    expect(get(store, 'rbac.authorization.k8s.io/v1', 'Role', `capi-provider-role-${CP}`, CP)).toBeDefined();
    expect(
      get(store, 'rbac.authorization.k8s.io/v1', 'RoleBinding', `cluster-api-agent-${CP}`, CP),
    ).toBeDefined();
    expect(get(store, 'v1', 'Secret', 'example-kubeadmin-password', NS)).toBeDefined();
    expect(
      store.list('v1', 'Pod', { namespace: CP }).some((p) => p.metadata.name.startsWith('kube-apiserver-')),
    ).toBe(true);

    const env = await until('InfraEnv ISO', () => {
      const o = get(store, AI, 'InfraEnv', 'example', CP);
      return o?.status?.isoDownloadURL ? o : undefined;
    });
    expect(env.status?.isoDownloadURL).toMatch(
      /^https:\/\/assisted-image-service-multicluster-engine\.apps\.hub\.example\.com\/byapikey\/[0-9a-f]+\/4\.17\/x86_64\/minimal\.iso$/,
    );
    expect(cond(env, 'ImageCreated')).toMatchObject({
      status: 'True',
      reason: 'ImageCreated',
      message: 'Image has been created',
    });

    const seenStates = new Set<string>();
    store.watch((e) => {
      if (e.object.kind === 'BareMetalHost')
        seenStates.add(String((e.object.status?.provisioning as { state?: string })?.state));
    });
    createAll(store, [...bmh(0), ...bmh(1)]);
    await until('both hosts provisioned', () =>
      store
        .list('metal3.io/v1alpha1', 'BareMetalHost', { namespace: CP })
        .every((h) => (h.status?.provisioning as { state?: string } | undefined)?.state === 'provisioned'),
    );
    expect([...seenStates]).toEqual(expect.arrayContaining(['registering', 'provisioning', 'provisioned']));
    const list = await until('two validated Agents', () => {
      const l = agents(store);
      return l.length === 2 && l.every((a) => cond(a, 'Validated')?.status === 'True') && l;
    });
    for (const a of list) {
      expect(a.metadata.name).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.spec?.approved).toBe(true);
      expect(a.metadata.labels).toMatchObject({
        'infraenvs.agent-install.openshift.io': 'example',
        size: 'medium',
      });
      expect(a.metadata.labels?.['agent-install.openshift.io/bmh']).toMatch(/^example-worker[01]$/);
      expect(a.spec?.hostname).toBe(a.metadata.labels?.['agent-install.openshift.io/bmh']);
      expect(a.spec?.installation_disk_id).toMatch(/^\/dev\/disk\/by-id\/wwn-/);
      expect(state(a)).toBe('known-unbound');
      expect(cond(a, 'Bound')).toMatchObject({ status: 'False', reason: 'Unbound' });
      expect(cond(a, 'RequirementsMet')).toMatchObject({ status: 'True', reason: 'AgentIsReady' });
      const iface = (a.status?.inventory as { interfaces: { macAddress: string; ipV4Addresses: string[] }[] })
        .interfaces[0];
      expect(iface.macAddress).toMatch(/^aa:aa:aa:aa:02:1[01]$/);
      expect(iface.ipV4Addresses[0]).toMatch(/^192\.168\.125\.\d+\/24$/);
    }

    const agentStates = new Set<string>();
    store.watch((e) => {
      if (e.object.kind === 'Agent') agentStates.add(String(state(e.object)));
    });
    scale(store, 2);
    const np = await until('NodePool with 2 ready replicas', () => {
      const o = get(store, HC, 'NodePool', 'example', NS);
      return o?.status?.replicas === 2 && cond(o, 'Ready')?.status === 'True' && o;
    });
    expect(cond(np, 'ValidReleaseImage')?.message).toBe(`Using release image: ${RELEASE}`);
    expect(cond(np, 'ReachedIgnitionEndpoint')?.status).toBe('True');
    expect(cond(np, 'AllMachinesReady')?.status).toBe('True');
    expect(cond(np, 'Ready')?.observedGeneration).toBe(np.metadata.generation);
    expect([...agentStates]).toEqual(
      expect.arrayContaining([
        'binding',
        'discovering',
        'insufficient',
        'installing',
        'installing-in-progress',
        'added-to-existing-cluster',
      ]),
    );
    for (const a of agents(store)) {
      expect(a.spec?.clusterDeploymentName).toEqual({ name: 'example', namespace: CP });
      expect(cond(a, 'Installed')).toMatchObject({ status: 'True', reason: 'InstallationCompleted' });
      expect(cond(a, 'Bound')).toMatchObject({ status: 'True', reason: 'Bound' });
      expect(a.status?.progress).toMatchObject({ currentStage: 'Done', installationPercentage: 100 });
    }
    const done = await until('HostedCluster Completed', () => {
      const o = get(store, HC, 'HostedCluster', 'example', NS);
      const h = (o?.status?.version as { history: { state: string }[] } | undefined)?.history;
      return h?.[0]?.state === 'Completed' && o;
    });
    expect(cond(done, 'Progressing')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(
      (done.status?.version as { history: { completionTime: string }[] }).history[0].completionTime,
    ).toMatch(/Z$/);

    const nodes = await guestNodes(store);
    expect(nodes.names).toEqual(['example-worker0', 'example-worker1']);
    expect(nodes.ready).toEqual([true, true]);
    expect(nodes.ips.every((ip) => ip.startsWith('192.168.125.'))).toBe(true);
    expect([...controllers.guests().keys()]).toEqual([`${NS}/example`]);

    await expectSettled(store);
    expect(controllers.errors()).toEqual([]);
    expect(pruned).toEqual([]);
  });

  it('legacy operator: Agents are not bound until Role capi-provider-role exists', async () => {
    const { store, controllers } = await hubWithAgents({ hypershift: 'legacy' });
    await until(
      'HostedCluster Available',
      () => cond(get(store, HC, 'HostedCluster', 'example', NS), 'Available')?.status === 'True',
    );
    expect(store.list('rbac.authorization.k8s.io/v1', 'Role', { namespace: CP })).toEqual([]);
    scale(store, 1);
    const np = await until('NodePool reporting forbidden', () => {
      const o = get(store, HC, 'NodePool', 'example', NS);
      return String(cond(o, 'AllMachinesReady')?.message ?? '').includes('forbidden') && o;
    });
    expect(cond(np, 'AllMachinesReady')?.message).toContain('cannot list resource "agents"');
    expect(cond(np, 'AllMachinesReady')?.message).toContain('capi-provider-role');
    expect(cond(np, 'Ready')?.message).toBe('Minimum availability requires 1 replicas, current 0 available');
    await new Promise((r) => setTimeout(r, STEP * 5));
    expect(agents(store).every((a) => !a.spec?.clusterDeploymentName)).toBe(true);

    store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'capi-provider-role', namespace: CP },
      rules: [{ apiGroups: ['agent-install.openshift.io'], resources: ['agents'], verbs: ['*'] }],
    });
    await until('NodePool ready', () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 1);
    expect(agents(store).filter((a) => a.spec?.clusterDeploymentName)).toHaveLength(1);
    expect(controllers.errors()).toEqual([]);
    expect(pruned).toEqual([]);
  });

  it('an unapproved Agent is never selected until a client approves it', async () => {
    const { store } = await hubWithAgents({ bmacAutoApprove: false });
    for (const a of agents(store)) {
      expect(a.spec?.approved).toBe(false);
      expect(cond(a, 'RequirementsMet')).toMatchObject({
        status: 'False',
        reason: 'AgentIsNotApproved',
        message: 'The agent is not approved',
      });
    }
    await until(
      'HostedCluster Available',
      () => cond(get(store, HC, 'HostedCluster', 'example', NS), 'Available')?.status === 'True',
    );
    scale(store, 1);
    const np = await until('NodePool explaining the shortage', () => {
      const o = get(store, HC, 'NodePool', 'example', NS);
      return String(cond(o, 'AllMachinesReady')?.message ?? '').includes('not approved') && o;
    });
    expect(cond(np, 'AllMachinesReady')?.reason).toBe('NoSuitableAgents');
    expect(agents(store).every((a) => !a.spec?.clusterDeploymentName)).toBe(true);

    const first = agents(store)[0];
    store.mergePatch(
      { apiVersion: AI, kind: 'Agent', name: first.metadata.name, namespace: CP },
      { spec: { approved: true } },
    );
    await until(
      'the approved Agent installed',
      () => state(get(store, AI, 'Agent', first.metadata.name, CP)!) === 'added-to-existing-cluster',
    );
    expect(
      agents(store)
        .filter((a) => a.spec?.clusterDeploymentName)
        .map((a) => a.metadata.name),
    ).toEqual([first.metadata.name]);
    await until('NodePool ready', () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 1);
  });

  it('scaling down releases an Agent and removes its Node from the hosted cluster', async () => {
    const { store } = await hubWithAgents();
    scale(store, 2);
    await until(
      'two replicas',
      () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 2,
      10000,
    );
    expect((await guestNodes(store)).names).toHaveLength(2);
    scale(store, 1);
    const released = await until('an Agent pending user action', () =>
      agents(store).find((a) => state(a) === 'unbinding-pending-user-action'),
    );
    expect(released.spec?.clusterDeploymentName).toBeUndefined();
    expect(cond(released, 'Bound')).toMatchObject({ status: 'False', reason: 'UnbindingPendingUserAction' });
    await until('one replica', () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 1);
    const nodes = await guestNodes(store);
    expect(nodes.names).toHaveLength(1);
    expect(nodes.names[0]).not.toBe(released.spec?.hostname);
    await expectSettled(store);
  });

  it('deleting the HostedCluster removes its NodePool, access secrets, guest API and RBAC, then the finalizer', async () => {
    const { store, controllers } = await hubWithAgents();
    scale(store, 1);
    await until(
      'one replica',
      () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 1,
      10000,
    );
    const guestUrl = controllers.guests().get(`${NS}/example`)!.url;
    store.delete({ apiVersion: HC, kind: 'HostedCluster', name: 'example', namespace: NS });
    await until('HostedCluster gone', () => !get(store, HC, 'HostedCluster', 'example', NS));
    expect(get(store, HC, 'NodePool', 'example', NS)).toBeUndefined();
    expect(get(store, 'v1', 'Secret', 'example-admin-kubeconfig', NS)).toBeUndefined();
    expect(get(store, 'v1', 'Secret', 'example-kubeadmin-password', NS)).toBeUndefined();
    expect(
      get(store, 'rbac.authorization.k8s.io/v1', 'Role', `capi-provider-role-${CP}`, CP),
    ).toBeUndefined();
    expect(store.list('apps/v1', 'Deployment', { namespace: CP })).toEqual([]);
    expect(agents(store).every((a) => !a.spec?.clusterDeploymentName)).toBe(true);
    // The user's objects in the namespace stay (the operator did not create that namespace).
    expect(get(store, AI, 'InfraEnv', 'example', CP)).toBeDefined();
    expect(store.list('metal3.io/v1alpha1', 'BareMetalHost', { namespace: CP })).toHaveLength(2);
    await until('guest API closed', () => controllers.guests().size === 0);
    await expect(fetch(`${guestUrl}/version`)).rejects.toThrow();
  });

  it('an upgrade (new release digest) adds a history entry and completes while the control plane stays available', async () => {
    const { store } = await hubWithAgents({
      releaseVersions: { [RELEASE]: '4.17.3', [RELEASE.replace(/ab/g, 'cd')]: '4.17.5' },
    });
    scale(store, 1);
    const hcOf = () => get(store, HC, 'HostedCluster', 'example', NS);
    const history = () =>
      (hcOf()?.status?.version as { history: { state: string; version: string }[] }).history;
    await until('Completed', () => history()?.[0]?.state === 'Completed', 10000);
    const unavailable: string[] = [];
    // Every state the upgrade passes through, seen as it is written (polling could miss a short one).
    const states: string[] = [];
    store.watch((e) => {
      if (e.object.kind !== 'HostedCluster') return;
      if (cond(e.object, 'Available')?.status !== 'True') unavailable.push('x');
      const h = (e.object.status?.version as { history?: { state: string; version: string }[] })?.history;
      if (h?.length === 2)
        states.push(`${h[0]!.version} ${h[0]!.state} progressing=${cond(e.object, 'Progressing')?.status}`);
    });
    store.mergePatch(
      { apiVersion: HC, kind: 'HostedCluster', name: 'example', namespace: NS },
      { spec: { release: { image: RELEASE.replace(/ab/g, 'cd') } } },
    );
    await until('upgrade completed', () => history()?.length === 2 && history()[0]!.state === 'Completed');
    expect(states).toContain('4.17.5 Partial progressing=True');
    expect(history().map((h) => `${h.version} ${h.state}`)).toEqual(['4.17.5 Completed', '4.17.3 Completed']);
    expect(cond(hcOf(), 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'AsExpected',
      observedGeneration: 2,
    });
    expect(unavailable).toEqual([]);
  });

  it('failProvisioning: the host reports a provisioning error and gets no Agent', async () => {
    const { store } = await readyHub({ faults: { failProvisioning: ['example-worker1'] } });
    applyCluster(store);
    createAll(store, [...bmh(0), ...bmh(1)]);
    const failed = await until('provisioning error', () => {
      const o = get(store, 'metal3.io/v1alpha1', 'BareMetalHost', 'example-worker1', CP);
      return o?.status?.errorType === 'provisioning error' && o;
    });
    expect(failed.status).toMatchObject({ operationalStatus: 'error', errorCount: 1 });
    expect(String(failed.status?.errorMessage)).toContain('Image provisioning failed');
    await until('the other host provisioned with an Agent', () => agents(store).length === 1);
    expect(agents(store)[0].metadata.labels?.['agent-install.openshift.io/bmh']).toBe('example-worker0');
    await expectSettled(store);
  });

  it('isoCreationFailure: ImageCreated=False and hosts wait in registering', async () => {
    const { store } = await readyHub({ faults: { isoCreationFailure: true } });
    applyCluster(store);
    createAll(store, bmh(0));
    const env = await until('ImageCreationError', () => {
      const o = get(store, AI, 'InfraEnv', 'example', CP);
      return cond(o, 'ImageCreated')?.status === 'False' && o;
    });
    expect(cond(env, 'ImageCreated')).toMatchObject({ reason: 'ImageCreationError' });
    expect(String(cond(env, 'ImageCreated')?.message)).toMatch(/^Failed to create image: /);
    expect(env.status?.isoDownloadURL).toBeUndefined();
    await new Promise((r) => setTimeout(r, STEP * 6));
    const host = get(store, 'metal3.io/v1alpha1', 'BareMetalHost', 'example-worker0', CP);
    expect((host?.status?.provisioning as { state: string }).state).toBe('registering');
    expect(agents(store)).toEqual([]);
  });

  it('missing pull secrets: HostedCluster ValidReleaseImage=False SecretNotFound, InfraEnv ImageCreationError; both recover', async () => {
    const { store } = await readyHub();
    store.create(namespace(NS));
    store.create(namespace(CP));
    store.create(hostedCluster());
    store.create(infraEnv());
    const hc = await until('SecretNotFound', () => {
      const o = get(store, HC, 'HostedCluster', 'example', NS);
      return cond(o, 'ValidReleaseImage')?.status === 'False' && o;
    });
    expect(cond(hc, 'ValidReleaseImage')).toMatchObject({ reason: 'SecretNotFound', observedGeneration: 1 });
    expect(String(cond(hc, 'ValidReleaseImage')?.message)).toContain('example-pull-secret');
    expect(cond(hc, 'Available')).toMatchObject({ status: 'False', reason: 'WaitingForAvailable' });
    expect(cond(hc, 'Progressing')).toMatchObject({ status: 'False', reason: 'Blocked' });
    const env = await until('InfraEnv error', () => {
      const o = get(store, AI, 'InfraEnv', 'example', CP);
      return cond(o, 'ImageCreated')?.status === 'False' && o;
    });
    expect(String(cond(env, 'ImageCreated')?.message)).toMatch(/^Failed to create image: .*pull-secret/);

    const dockercfg = JSON.stringify({ auths: {} });
    store.create(secret('example-pull-secret', NS, { '.dockerconfigjson': dockercfg }));
    store.create(secret('pull-secret', CP, { '.dockerconfigjson': dockercfg }));
    await until(
      'HostedCluster Available',
      () => cond(get(store, HC, 'HostedCluster', 'example', NS), 'Available')?.status === 'True',
    );
    await until('ISO', () => get(store, AI, 'InfraEnv', 'example', CP)?.status?.isoDownloadURL);
    expect(pruned).toEqual([]);
  });

  it('a release image by tag is refused: ValidReleaseImage=False InvalidImage', async () => {
    const { store } = await readyHub();
    applyCluster(store, {
      hc: hostedCluster({ image: 'quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64' }),
    });
    const hc = await until('InvalidImage', () => {
      const o = get(store, HC, 'HostedCluster', 'example', NS);
      return cond(o, 'ValidReleaseImage')?.status === 'False' && o;
    });
    expect(cond(hc, 'ValidReleaseImage')?.reason).toBe('InvalidImage');
    expect(String(cond(hc, 'ValidReleaseImage')?.message)).toContain('digest');
    expect(get(store, 'v1', 'Secret', 'example-admin-kubeconfig', NS)).toBeUndefined();
  });

  it('IPv6 hosted cluster: Agents report IPv6 addresses, guest Nodes get them', async () => {
    const { store } = await readyHub();
    applyCluster(store, { hc: hostedCluster({ v6: true }) });
    createAll(store, bmh(0));
    const a = await until('validated Agent', () =>
      agents(store).find((x) => cond(x, 'Validated')?.status === 'True'),
    );
    const iface = (
      a.status?.inventory as { interfaces: { ipV4Addresses: string[]; ipV6Addresses: string[] }[] }
    ).interfaces[0];
    expect(iface.ipV4Addresses).toEqual([]);
    expect(iface.ipV6Addresses[0]).toMatch(/^fd00:1101::[0-9a-f]+\/64$/);
    scale(store, 1);
    await until(
      'one replica',
      () => get(store, HC, 'NodePool', 'example', NS)?.status?.replicas === 1,
      10000,
    );
    expect((await guestNodes(store)).ips[0]).toMatch(/^fd00:1101::/);
  });

  it('BareMetalHost registration errors: missing credentials, bad BMC address, a driver needing a provisioning network', async () => {
    const { store } = await readyHub();
    applyCluster(store);
    store.create(bmh(0, { secret: 'nope' })[1]);
    createAll(store, bmh(1, { address: 'redfish-virtualmedia://fe80::1:9000/redfish/v1/Systems/1' }));
    createAll(store, bmh(2, { address: 'ipmi://192.168.126.1:6230' }));
    const host = (n: number) => get(store, 'metal3.io/v1alpha1', 'BareMetalHost', `example-worker${n}`, CP);
    await until('three registration errors', () =>
      [0, 1, 2].every((n) => host(n)?.status?.errorType === 'registration error'),
    );
    expect(host(0)?.status).toMatchObject({
      operationalStatus: 'error',
      errorMessage: `The BMC secret ${CP}/nope does not exist`,
    });
    expect(String(host(1)?.status?.errorMessage)).toContain('failed to parse BMC address information');
    expect(host(2)?.status?.errorMessage).toBe('BMC driver ipmi requires a provisioning network');
    expect((host(0)?.status?.provisioning as { state: string }).state).toBe('registering');
    // Fixing the credentials lets the host through.
    store.create(secret('nope', CP, { username: 'admin', password: 'pw' }));
    await until(
      'host 0 provisioned',
      () => (host(0)?.status?.provisioning as { state: string }).state === 'provisioned',
    );
    expect(host(0)?.status?.errorType).toBeUndefined();
    expect(host(0)?.status?.poweredOn).toBe(true);
  });

  it('deleting a BareMetalHost deprovisions it and removes its Agent', async () => {
    const { store } = await hubWithAgents();
    const states = new Set<string>();
    store.watch((e) => {
      if (e.object.kind === 'BareMetalHost')
        states.add(String((e.object.status?.provisioning as { state?: string })?.state));
    });
    store.delete({
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      name: 'example-worker0',
      namespace: CP,
    });
    await until('host gone', () => !get(store, 'metal3.io/v1alpha1', 'BareMetalHost', 'example-worker0', CP));
    expect(states.has('deprovisioning')).toBe(true);
    await until('its Agent gone', () => agents(store).length === 1);
  });

  it('AgentServiceConfig: a mirror registry ConfigMap that is missing or lacks registries.conf fails the reconcile', async () => {
    const { store } = startHub();
    enableMce(store);
    store.create(agentServiceConfig('custom-registries'));
    const asc = () => get(store, AI, 'AgentServiceConfig', 'agent');
    await until('ConfigFailure', () => cond(asc(), 'ReconcileCompleted')?.status === 'False');
    expect(cond(asc(), 'ReconcileCompleted')?.reason).toBe('ConfigFailure');
    expect(String(cond(asc(), 'ReconcileCompleted')?.message)).toContain('"custom-registries" not found');
    store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'custom-registries', namespace: 'multicluster-engine' },
      data: { 'ca-bundle.crt': 'PEM' },
    });
    await until('missing key', () =>
      String(cond(asc(), 'ReconcileCompleted')?.message).includes('missing key registries.conf'),
    );
    expect(cond(asc(), 'ReconcileCompleted')?.message).toContain(
      'Mirror registry configmap custom-registries missing key registries.conf',
    );
    expect(get(store, 'apps/v1', 'Deployment', 'assisted-service', 'multicluster-engine')).toBeUndefined();
    store.mergePatch(
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'custom-registries', namespace: 'multicluster-engine' },
      { data: { 'registries.conf': '[[registry]]\nlocation = "quay.io/openshift-release-dev"\n' } },
    );
    await until('deployed', () => cond(asc(), 'DeploymentsHealthy')?.status === 'True');
    expect(cond(asc(), 'ReconcileCompleted')).toMatchObject({ status: 'True', reason: 'ReconcileSucceeded' });
  });

  it('MCE: nothing runs until the components are enabled; an IDMS restarts each hub kubelet in turn', async () => {
    const { store } = startHub();
    store.create(agentServiceConfig());
    await new Promise((r) => setTimeout(r, STEP * 5));
    expect(get(store, 'apps/v1', 'Deployment', 'operator', 'hypershift')).toBeUndefined();
    expect(get(store, AI, 'AgentServiceConfig', 'agent')?.status).toBeUndefined();
    enableMce(store);
    await until(
      'Progressing',
      () =>
        get(store, 'multicluster.openshift.io/v1', 'MultiClusterEngine', 'multiclusterengine')?.status
          ?.phase === 'Progressing',
    );
    await until('HyperShift operator', () => get(store, 'apps/v1', 'Deployment', 'operator', 'hypershift'));
    const mce = get(store, 'multicluster.openshift.io/v1', 'MultiClusterEngine', 'multiclusterengine');
    expect(mce?.status?.phase).toBe('Available');
    expect((mce?.status?.components as { name: string }[]).map((c) => c.name)).toContain(
      'hypershift-addon-manager',
    );

    const notReady = new Set<string>();
    store.watch((e) => {
      if (e.object.kind === 'Node' && cond(e.object, 'Ready')?.status === 'False')
        notReady.add(e.object.metadata.name);
    });
    store.create({
      apiVersion: 'config.openshift.io/v1',
      kind: 'ImageDigestMirrorSet',
      metadata: { name: 'image-digest-mirror' },
      spec: {
        imageDigestMirrors: [
          {
            source: 'quay.io/openshift-release-dev/ocp-release',
            mirrors: ['registry.example.com:5000/openshift/release-images'],
          },
        ],
      },
    });
    await until('every node restarted', () => notReady.size === 3);
    await until('all Ready again', () =>
      store.list('v1', 'Node').every((n) => cond(n, 'Ready')?.status === 'True'),
    );
    expect(pruned).toEqual([]);
  });

  it('clusterVersionRequired: without the hub ClusterVersion, HostedClusters are not supported', async () => {
    const { store } = await readyHub({ faults: { clusterVersionRequired: true } });
    expect(get(store, 'config.openshift.io/v1', 'ClusterVersion', 'version')).toBeUndefined();
    applyCluster(store);
    const hc = await until('unsupported', () => {
      const o = get(store, HC, 'HostedCluster', 'example', NS);
      return cond(o, 'SupportedHostedCluster')?.status === 'False' && o;
    });
    expect(String(cond(hc, 'SupportedHostedCluster')?.message)).toContain(
      'clusterversions.config.openshift.io "version" not found',
    );
  });
});

describe('parseBmcAddress', () => {
  it('parses BMC URLs the way the bare metal operator does', () => {
    expect(
      parseBmcAddress('redfish-virtualmedia://[fe80::fc33:62ff:fe83:8a76]:8080/redfish/v1/Systems/1'),
    ).toMatchObject({
      driver: 'redfish-virtualmedia',
      host: 'fe80::fc33:62ff:fe83:8a76',
      port: 8080,
      iso: true,
    });
    expect(
      parseBmcAddress('idrac-virtualmedia+https://10.0.0.5/redfish/v1/Systems/System.Embedded.1'),
    ).toMatchObject({
      driver: 'idrac-virtualmedia',
      iso: true,
    });
    expect(parseBmcAddress('192.168.1.10:623')).toMatchObject({
      driver: 'ipmi',
      host: '192.168.1.10',
      port: 623,
      iso: false,
    });
    expect(parseBmcAddress('[fe80::1]:6223')).toMatchObject({ driver: 'ipmi', host: 'fe80::1' });
    expect(
      parseBmcAddress('redfish-virtualmedia://[192.168.125.1]:9000/redfish/v1/Systems/local/vm'),
    ).toMatchObject({ host: '192.168.125.1' });
    expect(parseBmcAddress('foo://host/x')).toEqual({
      error: "Unknown BMC type 'foo' for address foo://host/x",
    });
    expect(parseBmcAddress('redfish://fe80::1/x')).toHaveProperty('error');
    expect(parseBmcAddress('')).toHaveProperty('error');
  });
});
