/**
 * Hubs with the simulated controllers for the controller tests: the real store with every CRD schema,
 * or the simulator's own schemas where the real CRDs are not here (a status field a schema does not
 * declare is recorded in `pruned`), a real guest API server behind
 * each hosted cluster, and the objects of the runbook (HostedCluster, NodePool, InfraEnv, BareMetalHosts).
 * A test file calls `stopHubs()` after each test.
 */
import { expect } from 'vitest';
import { load } from 'js-yaml';
import { Agent, fetch } from 'undici';
import { builtinTypes } from '../../../lab/hub/builtin.js';
import {
  seedHub,
  startControllers,
  startGuestApi,
  type ControllerOptions,
  type Controllers,
} from '../../../lab/hub/controllers/index.js';
import { customResourceTypes } from '../../../lab/hub/index.js';
import { createStore } from '../../../lab/hub/store.js';
import type { HubStore, KubeObject, ResourceType } from '../../../lab/hub/types.js';

export const STEP = 10;
export const pruned: string[] = [];
export const TYPES: ResourceType[] = [...builtinTypes(), ...customResourceTypes()].map((t) => {
  const normalize = t.normalize;
  if (!normalize || t.source === 'builtin') return t;
  return {
    ...t,
    normalize(obj: KubeObject) {
      const r = normalize(obj);
      if (r.unknownFields.length > 0)
        pruned.push(`${obj.kind} ${obj.metadata.name}: ${r.unknownFields.join(', ')}`);
      return r;
    },
  };
});

export const HC = 'hypershift.openshift.io/v1beta1';
export const AI = 'agent-install.openshift.io/v1beta1';
export const RELEASE = `registry.example.com:5000/openshift/release-images@sha256:${'ab'.repeat(32)}`;
export const NS = 'clusters';
export const CP = 'clusters-example';

export interface Hub {
  store: HubStore;
  controllers: Controllers;
}
const running: Controllers[] = [];

/** Stop every hub started since the last call (an afterEach of each test file). */
export async function stopHubs(): Promise<void> {
  while (running.length > 0) await running.pop()!.stop();
  pruned.length = 0;
}

export function startHub(options: Partial<ControllerOptions> = {}, seed = true): Hub {
  const store = createStore(TYPES);
  if (seed) seedHub(store, { faults: options.faults });
  const controllers = startControllers(store, {
    stepMs: STEP,
    guest: { startApi: () => startGuestApi() },
    releaseVersions: { [RELEASE]: '4.17.3' },
    onError: (where, err) => console.error(`[controller error] ${where}:`, err),
    ...options,
  });
  running.push(controllers);
  return { store, controllers };
}

export async function until<T>(
  what: string,
  fn: () => T | undefined | null | false,
  timeoutMs = 8000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, STEP / 2));
  }
}

export function get(
  store: HubStore,
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): KubeObject | undefined {
  return store.get({ apiVersion, kind, name, namespace });
}

export function cond(obj: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  return ((obj?.status?.conditions as Record<string, unknown>[] | undefined) ?? []).find(
    (c) => c.type === type,
  );
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

export function secret(
  name: string,
  namespace: string,
  data: Record<string, string>,
  type = 'Opaque',
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

export function namespace(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function enableMce(store: HubStore): void {
  store.mergePatch(
    { apiVersion: 'multicluster.openshift.io/v1', kind: 'MultiClusterEngine', name: 'multiclusterengine' },
    {
      spec: {
        overrides: {
          components: ['assisted-service', 'hypershift', 'hypershift-local-hosting', 'local-cluster'].map(
            (name) => ({
              name,
              enabled: true,
            }),
          ),
        },
      },
    },
  );
}

export function agentServiceConfig(mirrorRef?: string): KubeObject {
  const pvc = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } };
  return {
    apiVersion: AI,
    kind: 'AgentServiceConfig',
    metadata: { name: 'agent' },
    spec: {
      databaseStorage: pvc,
      filesystemStorage: pvc,
      imageStorage: pvc,
      ...(mirrorRef ? { mirrorRegistryRef: { name: mirrorRef } } : {}),
      osImages: [
        {
          openshiftVersion: '4.17',
          version: '417.94.202410211619-0',
          cpuArchitecture: 'x86_64',
          url: 'http://bastion.example.com:8080/images/rhcos-4.17.2-x86_64-live.x86_64.iso',
        },
      ],
    },
  };
}

export function hostedCluster(opts: { image?: string; pullSecret?: string; v6?: boolean } = {}): KubeObject {
  const route = (service: string) => ({ service, servicePublishingStrategy: { type: 'Route' } });
  return {
    apiVersion: HC,
    kind: 'HostedCluster',
    metadata: { name: 'example', namespace: NS },
    spec: {
      release: { image: opts.image ?? RELEASE },
      pullSecret: { name: opts.pullSecret ?? 'example-pull-secret' },
      sshKey: { name: 'example-ssh-key' },
      dns: { baseDomain: 'example.com' },
      etcd: {
        managementType: 'Managed',
        managed: { storage: { type: 'PersistentVolume', persistentVolume: { size: '8Gi' } } },
      },
      networking: {
        networkType: 'OVNKubernetes',
        clusterNetwork: [{ cidr: opts.v6 ? 'fd01::/48' : '10.132.0.0/14' }],
        serviceNetwork: [{ cidr: opts.v6 ? 'fd02::/112' : '172.31.0.0/16' }],
      },
      platform: { type: 'Agent', agent: { agentNamespace: CP } },
      controllerAvailabilityPolicy: 'SingleReplica',
      services: [
        { service: 'APIServer', servicePublishingStrategy: { type: 'LoadBalancer' } },
        route('OAuthServer'),
        route('OIDC'),
        route('Konnectivity'),
        route('Ignition'),
      ],
    },
  };
}

function nodePool(replicas = 0): KubeObject {
  return {
    apiVersion: HC,
    kind: 'NodePool',
    metadata: { name: 'example', namespace: NS },
    spec: {
      clusterName: 'example',
      replicas,
      arch: 'amd64',
      management: { upgradeType: 'InPlace', autoRepair: false },
      platform: { type: 'Agent', agent: {} },
      release: { image: RELEASE },
    },
  };
}

export function infraEnv(pullSecret = 'pull-secret'): KubeObject {
  return {
    apiVersion: AI,
    kind: 'InfraEnv',
    metadata: { name: 'example', namespace: CP },
    spec: {
      pullSecretRef: { name: pullSecret },
      sshAuthorizedKey: 'ssh-ed25519 AAAA test',
      agentLabels: { size: 'medium' },
    },
  };
}

export function bmh(i: number, opts: { address?: string; secret?: string } = {}): KubeObject[] {
  const name = `example-worker${i}`;
  return [
    secret(`${name}-bmc-secret`, CP, { username: 'admin', password: 'password' }),
    {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: {
        name,
        namespace: CP,
        labels: { 'infraenvs.agent-install.openshift.io': 'example' },
        annotations: { 'inspect.metal3.io': 'disabled', 'bmac.agent-install.openshift.io/hostname': name },
      },
      spec: {
        online: true,
        automatedCleaningMode: 'disabled',
        bootMACAddress: `aa:aa:aa:aa:02:1${i}`,
        bmc: {
          address:
            opts.address ?? `redfish-virtualmedia://[192.168.126.1]:9000/redfish/v1/Systems/local/${name}`,
          credentialsName: opts.secret ?? `${name}-bmc-secret`,
          disableCertificateVerification: true,
        },
        rootDeviceHints: { deviceName: '/dev/sda' },
      },
    },
  ];
}

/** The objects of phases 5–8 of the runbook: namespaces, secrets, HostedCluster, NodePool, InfraEnv. */
export function applyCluster(store: HubStore, opts: { withInfraEnv?: boolean; hc?: KubeObject } = {}): void {
  store.create(namespace(NS));
  store.create(namespace(CP));
  const dockercfg = JSON.stringify({ auths: { 'registry.example.com:5000': { auth: b64('u:p') } } });
  store.create(
    secret('example-pull-secret', NS, { '.dockerconfigjson': dockercfg }, 'kubernetes.io/dockerconfigjson'),
  );
  store.create(
    secret('pull-secret', CP, { '.dockerconfigjson': dockercfg }, 'kubernetes.io/dockerconfigjson'),
  );
  store.create(secret('example-ssh-key', NS, { 'id_rsa.pub': 'ssh-ed25519 AAAA test' }));
  store.create(opts.hc ?? hostedCluster());
  store.create(nodePool(0));
  if (opts.withInfraEnv !== false) store.create(infraEnv());
}

export function createAll(store: HubStore, objs: KubeObject[]): void {
  for (const o of objs) store.create(o);
}

export function agents(store: HubStore): KubeObject[] {
  return store.list(AI, 'Agent', { namespace: CP });
}

export function scale(store: HubStore, replicas: number): void {
  store.mergePatch(
    { apiVersion: HC, kind: 'NodePool', name: 'example', namespace: NS },
    { spec: { replicas } },
  );
}

export async function readyHub(options: Partial<ControllerOptions> = {}): Promise<Hub> {
  const hub = startHub(options);
  enableMce(hub.store);
  hub.store.create(agentServiceConfig());
  await until(
    'assisted-service and the HyperShift operator',
    () =>
      hub.store.get({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'operator',
        namespace: 'hypershift',
      }) && cond(get(hub.store, AI, 'AgentServiceConfig', 'agent'), 'DeploymentsHealthy')?.status === 'True',
  );
  return hub;
}

/** A hub with the cluster applied, two hosts booted and their Agents validated. */
export async function hubWithAgents(options: Partial<ControllerOptions> = {}): Promise<Hub> {
  const hub = await readyHub(options);
  applyCluster(hub.store);
  createAll(hub.store, [...bmh(0), ...bmh(1)]);
  await until('two validated Agents', () => {
    const list = agents(hub.store);
    return list.length === 2 && list.every((a) => cond(a, 'Validated')?.status === 'True') && list;
  });
  return hub;
}

/**
 * Nothing keeps writing once things are done: the resourceVersion stays put across a second boundary
 * (so a timestamp rewritten on every pass would show).
 */
export async function expectSettled(store: HubStore): Promise<void> {
  await new Promise((r) => setTimeout(r, STEP * 3));
  const rv = store.resourceVersion();
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + STEP * 4));
  expect(store.resourceVersion()).toBe(rv);
}

export function state(a: KubeObject): string | undefined {
  return (a.status?.debugInfo as { state?: string } | undefined)?.state;
}

export async function guestNodes(
  store: HubStore,
): Promise<{ names: string[]; ready: boolean[]; ips: string[] }> {
  const secretObj = get(store, 'v1', 'Secret', 'example-admin-kubeconfig', NS);
  expect(secretObj).toBeDefined();
  const kubeconfig = load(
    Buffer.from(String((secretObj!.data as Record<string, string>).kubeconfig), 'base64').toString(),
  ) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const { server, 'certificate-authority-data': caData } = kubeconfig.clusters[0].cluster;
  const dispatcher = new Agent({ connect: { ca: Buffer.from(caData, 'base64').toString() } });
  try {
    const res = await fetch(`${server}/api/v1/nodes`, {
      headers: { authorization: `Bearer ${kubeconfig.users[0].user.token}` },
      dispatcher,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: KubeObject[] };
    return {
      names: body.items.map((n) => n.metadata.name).sort(),
      ready: body.items.map((n) => cond(n, 'Ready')?.status === 'True'),
      ips: body.items.flatMap((n) =>
        ((n.status?.addresses as { type: string; address: string }[]) ?? [])
          .filter((a) => a.type === 'InternalIP')
          .map((a) => a.address),
      ),
    };
  } finally {
    await dispatcher.close();
  }
}
