/**
 * The Kube client (real @kubernetes/client-node over HTTPS) and the kubectl-wait-like waits,
 * against the hub simulator's API server with its controllers stopped, so the test alone changes
 * the objects.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA } from '../../src/certs/mint.js';
import { conditionIs } from '../../src/cluster/conditions.js';
import { Kube, type KubeObject } from '../../src/cluster/kube.js';
import { waitFor } from '../../src/cluster/wait.js';
import { startHub, type Hub } from '../../lab/hub/index.js';
import { AirgapError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/fixtures.js';
import { ClusterError } from '../../src/cluster/errors.js';

const HC = { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'HostedCluster' };

function hostedCluster(name: string): KubeObject {
  return {
    ...HC,
    metadata: { name, namespace: 'clusters' },
    spec: {
      release: { image: 'mirror.example.com:8443/openshift/release-images@sha256:' + 'a'.repeat(64) },
      platform: { type: 'Agent', agent: { agentNamespace: `clusters-${name}` } },
      networking: {
        clusterNetwork: [{ cidr: '10.132.0.0/14' }],
        serviceNetwork: [{ cidr: '172.31.0.0/16' }],
        networkType: 'OVNKubernetes',
      },
      etcd: {
        managementType: 'Managed',
        managed: { storage: { type: 'PersistentVolume', persistentVolume: { size: '8Gi' } } },
      },
      services: [],
      pullSecret: { name: `${name}-pull-secret` },
      dns: { baseDomain: 'example.com' },
    },
  };
}

const available = (generation: number, status = 'True') => ({
  type: 'Available',
  status,
  reason: 'AsExpected',
  message: 'The hosted control plane is available',
  lastTransitionTime: new Date().toISOString(),
  observedGeneration: generation,
});

describe('Kube client and waits against the simulator', () => {
  let hub: Hub;
  let kube: Kube;

  beforeAll(async () => {
    const dir = await tempDir();
    hub = await startHub({ dir: join(dir, 'hub') });
    await hub.controllers.stop(); // nothing but the test changes objects
    kube = Kube.connect({ kubeconfig: hub.kubeconfigFile, baseDelayMs: 20 });
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'clusters' } });
  });
  afterAll(async () => {
    await hub?.server.close();
  });

  it('server-side apply creates, then leaves an unchanged object alone; get of a missing object is undefined', async () => {
    const first = await kube.apply(hostedCluster('one'));
    const again = await kube.apply(hostedCluster('one'));
    expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(first.metadata.managedFields).toBeDefined();
    expect(await kube.get({ ...HC, namespace: 'clusters', name: 'missing' })).toBeUndefined();
  });

  it('one client reuses its connections: 30 applies and reads open two at most, not one per call', async () => {
    const hubHost = new URL(hub.url).host;
    const opened: string[] = [];
    // undici (the HTTP client of client-node 2.x) reports every connection it opens here.
    const onConnected = (m: unknown) =>
      opened.push((m as { connectParams: { host: string } }).connectParams.host);
    subscribe('undici:client:connected', onConnected);
    try {
      const fresh = Kube.connect({ kubeconfig: hub.kubeconfigFile });
      for (let i = 0; i < 30; i++) {
        const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'clusters', name: `reuse-${i}` };
        const metadata = { name: ref.name, namespace: ref.namespace };
        await fresh.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { i: `${i}` } });
        expect((await fresh.get(ref))?.data).toEqual({ i: `${i}` });
      }
    } finally {
      unsubscribe('undici:client:connected', onConnected);
    }
    const toHub = opened.filter((h) => h === hubHost).length;
    expect(toHub).toBeGreaterThanOrEqual(1);
    expect(toHub).toBeLessThanOrEqual(2);
  });

  it('a merge patch of a custom resource goes through (the content type is set explicitly)', async () => {
    const patched = await kube.mergePatch(
      { ...HC, namespace: 'clusters', name: 'one' },
      { metadata: { annotations: { a: 'b' } } },
    );
    expect(patched.metadata.annotations).toEqual({ a: 'b' });
    const ct = hub.server
      .requests()
      .filter((r) => r.method === 'PATCH')
      .map((r) => r.status);
    expect(ct.every((s) => s === 200 || s === 201)).toBe(true);
  });

  it('an invalid object is refused with the field path, as a usage of the API the person can read', async () => {
    const bad = hostedCluster('bad');
    // A number where a string belongs: refused by the real CRDs and by the simulator's own schemas.
    (bad.spec as { platform: { type: unknown } }).platform.type = 42;
    const e = await kube.apply(bad).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AirgapError);
    expect((e as AirgapError).code).toBe(ClusterError.KUBE_INVALID);
    expect((e as AirgapError).message).toContain('spec.platform.type');
    expect((e as AirgapError).message).toContain('HostedCluster clusters/bad');
  });

  it('waits like kubectl: not met until the condition observes the current generation', async () => {
    const hc = hub.store.get({ ...HC, namespace: 'clusters', name: 'one' })!;
    const gen = hc.metadata.generation!;
    // Available=True, but for an older generation: not met yet.
    hub.store.updateStatus({ ...hc, status: { conditions: [available(gen - 1)] } });
    const states: string[] = [];
    const waiting = waitFor(
      kube,
      { ...HC, namespace: 'clusters', name: 'one' },
      ([o]) => ({
        done: conditionIs(o, 'Available'),
        state: o ? `generation ${o.metadata.generation}` : 'gone',
      }),
      { what: 'one Available', timeoutMs: 10_000, resyncMs: 5_000, onState: (s) => states.push(s) },
    );
    await new Promise((r) => setTimeout(r, 300));
    hub.server.faults.dropWatches(); // the wait re-lists and watches again
    await new Promise((r) => setTimeout(r, 300));
    const now = hub.store.get({ ...HC, namespace: 'clusters', name: 'one' })!;
    hub.store.updateStatus({ ...now, status: { conditions: [available(gen)] } });
    await expect(waiting).resolves.toBeUndefined();
    const watches = hub.server
      .requests()
      .filter((r) => r.query.includes('watch=true') && r.path.endsWith('/hostedclusters'));
    expect(watches.length).toBeGreaterThanOrEqual(2);
  });

  it('survives API 500s while listing, and a timeout names the object and its last state', async () => {
    hub.server.faults.failNext({ method: 'GET', path: /hostedclusters$/, status: 500, times: 2 });
    const e = await waitFor(
      kube,
      { ...HC, namespace: 'clusters', name: 'one' },
      ([o]) => ({ done: false, state: `still ${o?.metadata.name} at generation ${o?.metadata.generation}` }),
      { what: 'HostedCluster clusters/one to do the impossible', timeoutMs: 1_500, resyncMs: 500 },
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AirgapError);
    expect((e as AirgapError).code).toBe(ClusterError.WAIT_TIMEOUT);
    expect((e as AirgapError).message).toContain('HostedCluster clusters/one to do the impossible');
    expect((e as AirgapError).message).toContain('last seen: still one at generation');
  });

  it('a kubeconfig whose token the hub refuses gives a clear error, not a stack', async () => {
    const { readFile, writeFile } = await import('node:fs/promises');
    const text = (await readFile(hub.kubeconfigFile, 'utf8')).replace(/token: .*/, 'token: sha256~wrong');
    const file = `${hub.kubeconfigFile}.bad`;
    await writeFile(file, text, { mode: 0o600 });
    const e = await Kube.connect({ kubeconfig: file, attempts: 1 })
      .get({ ...HC, namespace: 'clusters', name: 'one' })
      .catch((x: unknown) => x);
    expect((e as AirgapError).code).toBe(ClusterError.KUBE_FORBIDDEN);
    expect((e as AirgapError).hint).toContain('log in again');
    expect((e as AirgapError).message).not.toContain('sha256~wrong');
  });

  it('an API server nobody listens on, or one whose certificate another CA signed, is named as such, with the cause', async () => {
    const { readFile, writeFile } = await import('node:fs/promises');
    const text = await readFile(hub.kubeconfigFile, 'utf8');
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    const closed = `${hub.kubeconfigFile}.closed`;
    await writeFile(closed, text.replace(/server: .*/, `server: https://127.0.0.1:${port}`), { mode: 0o600 });
    const ref = { ...HC, namespace: 'clusters', name: 'one' };
    const refused = await Kube.connect({ kubeconfig: closed, attempts: 1 })
      .get(ref)
      .catch((x: unknown) => x);
    expect((refused as AirgapError).code).toBe(ClusterError.KUBE_UNREACHABLE);
    expect((refused as AirgapError).message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect((refused as AirgapError).cause).toBeInstanceOf(Error);

    const other = await createCA({ commonName: 'Another CA', keyType: 'ecdsa-p256' });
    const otherCa = `${hub.kubeconfigFile}.other-ca`;
    const data = Buffer.from(other.certPem).toString('base64');
    await writeFile(
      otherCa,
      text.replace(/certificate-authority-data: .*/, `certificate-authority-data: ${data}`),
      {
        mode: 0o600,
      },
    );
    const untrusted = await Kube.connect({ kubeconfig: otherCa, attempts: 1 })
      .get(ref)
      .catch((x: unknown) => x);
    expect((untrusted as AirgapError).code).toBe(ClusterError.KUBE_TLS);
    expect((untrusted as AirgapError).message).toContain(`TLS verification of ${hub.url} failed`);
    expect((untrusted as AirgapError).hint).toContain('certificate-authority-data');
    expect((untrusted as AirgapError).cause).toBeInstanceOf(Error);
  });
});
