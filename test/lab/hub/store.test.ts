import { describe, expect, it } from 'vitest';
import { HubApiError, type KubeObject, type StoreEvent } from '../../../lab/hub/types.js';
import { newStore, sampleOf } from './fixture.js';
import { withRealdata, withRealdataAndCrds } from '../../helpers/realdata.js';

const HC = { apiVersion: 'hypershift.openshift.io/v1beta1', kind: 'HostedCluster' };

function thrown(fn: () => unknown): HubApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof HubApiError) return e;
    throw e;
  }
  throw new Error('expected a HubApiError');
}

function ns(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

describe('the hub store', () => {
  withRealdata.it(
    'creates with uid, a global resourceVersion, generation 1 and refuses duplicates and missing namespaces',
    () => {
      const store = newStore();
      const before = Number(store.resourceVersion());
      expect(thrown(() => store.create(sampleOf('HostedCluster'))).message).toBe(
        'namespaces "clusters" not found',
      );
      store.create(ns('clusters'));
      const hc = store.create(sampleOf('HostedCluster'));
      expect(hc.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(hc.metadata.generation).toBe(1);
      expect(Number(hc.metadata.resourceVersion)).toBe(before + 2);
      expect(store.resourceVersion()).toBe(hc.metadata.resourceVersion);
      const dup = thrown(() => store.create(sampleOf('HostedCluster')));
      expect([dup.code, dup.reason, dup.message]).toEqual([
        409,
        'AlreadyExists',
        'hostedclusters.hypershift.openshift.io "example" already exists',
      ]);
      // copies out
      hc.spec!.fips = true;
      expect(store.get({ ...HC, namespace: 'clusters', name: 'example' })!.spec!.fips).toBe(false);
    },
  );

  withRealdataAndCrds.it(
    'applies schema defaults, prunes unknown fields and rejects invalid values with API-server paths',
    () => {
      const store = newStore();
      store.create(ns('clusters'));
      const np = sampleOf('NodePool');
      (np.spec as Record<string, unknown>).bogus = 1;
      const created = store.create(np);
      expect(created.spec).not.toHaveProperty('bogus');
      // NodePool's CRD defaults management.replace when upgradeType is set
      expect((created.spec!.management as Record<string, unknown>).replace).toEqual({
        rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
        strategy: 'RollingUpdate',
      });

      const hc = sampleOf('HostedCluster');
      (hc.spec!.platform as Record<string, unknown>).type = 'Foo';
      delete (hc.spec as Record<string, unknown>).release;
      const e = thrown(() => store.create(hc));
      expect(e.code).toBe(422);
      expect(e.reason).toBe('Invalid');
      expect(e.message).toContain('HostedCluster.hypershift.openshift.io "example" is invalid: [');
      expect(e.message).toContain(
        'spec.platform.type: Unsupported value: "Foo": supported values: "AWS", "Azure", "IBMCloud", "KubeVirt", "Agent", "PowerVS", "None"',
      );
      expect(e.details?.causes).toContainEqual({
        reason: 'FieldValueRequired',
        message: 'Required value',
        field: 'spec.release',
      });
    },
  );

  withRealdata.it(
    'keeps status out of main-resource writes and bumps generation only on spec changes',
    () => {
      const store = newStore();
      store.create(ns('clusters'));
      const hc = store.create({ ...sampleOf('HostedCluster'), status: { foo: 1 } } as KubeObject);
      expect(hc.status).toBeUndefined();
      const withStatus = store.updateStatus({ ...hc, status: { conditions: [] } });
      expect(withStatus.metadata.generation).toBe(1);
      expect(Number(withStatus.metadata.resourceVersion)).toBeGreaterThan(
        Number(hc.metadata.resourceVersion),
      );

      const labelled = store.update({
        ...withStatus,
        metadata: { ...withStatus.metadata, labels: { a: 'b' } },
        status: { conditions: [{ type: 'X' }] },
      });
      expect(labelled.metadata.generation).toBe(1);
      expect(labelled.status).toEqual({ conditions: [] });
      const changed = store.update({ ...labelled, spec: { ...labelled.spec, fips: true } });
      expect(changed.metadata.generation).toBe(2);
      const stale = thrown(() => store.update({ ...labelled, spec: { ...labelled.spec, fips: false } }));
      expect(stale.code).toBe(409);
      expect(stale.message).toMatch(
        /the object has been modified; please apply your changes to the latest version/,
      );
      // a no-op update writes nothing
      expect(store.update(changed).metadata.resourceVersion).toBe(changed.metadata.resourceVersion);
    },
  );

  withRealdata.it('deletes with finalizers in two steps and emits events in order', () => {
    const store = newStore();
    const events: StoreEvent[] = [];
    store.watch((e) => events.push(e));
    store.create(ns('clusters'));
    const hc = store.create({
      ...sampleOf('HostedCluster'),
      metadata: { ...sampleOf('HostedCluster').metadata, finalizers: ['x/y'] },
    });
    const key = { ...HC, namespace: 'clusters', name: 'example' };
    const marked = store.delete(key)!;
    expect(marked.metadata.deletionTimestamp).toBeTruthy();
    expect(store.get(key)).toBeDefined();
    store.mergePatch(key, { metadata: { finalizers: null } });
    expect(store.get(key)).toBeUndefined();
    expect(events.map((e) => `${e.type} ${e.object.kind}`)).toEqual([
      'ADDED Namespace',
      'ADDED HostedCluster',
      'MODIFIED HostedCluster',
      'DELETED HostedCluster',
    ]);
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(new Set(rvs).size).toBe(rvs.length);
    expect(events[3]!.old!.metadata.uid).toBe(hc.metadata.uid);
  });

  withRealdata.it(
    'terminates a namespace: contents go first, objects with finalizers hold it, then it goes',
    () => {
      const store = newStore();
      store.create(ns('clusters'));
      store.create(sampleOf('NodePool'));
      store.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'clusters', finalizers: ['keep'] },
        stringData: { a: 'b' },
      });
      const NS = { apiVersion: 'v1', kind: 'Namespace', name: 'clusters' };
      const terminating = store.delete(NS)!;
      expect(terminating.status).toEqual({ phase: 'Terminating' });
      expect(store.list('hypershift.openshift.io/v1beta1', 'NodePool', { namespace: 'clusters' })).toEqual(
        [],
      );
      const forbidden = thrown(() =>
        store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'clusters' } }),
      );
      expect(forbidden.code).toBe(403);
      expect(store.get(NS)).toBeDefined();
      store.mergePatch(
        { apiVersion: 'v1', kind: 'Secret', namespace: 'clusters', name: 's' },
        { metadata: { finalizers: [] } },
      );
      expect(store.get(NS)).toBeUndefined();
    },
  );

  it('folds Secret stringData into base64 data and rejects data that is not base64', () => {
    const store = newStore();
    const s = store.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ps', namespace: 'default' },
      data: { a: Buffer.from('1').toString('base64') },
      stringData: { b: 'two' },
    });
    expect(s.data).toEqual({ a: 'MQ==', b: 'dHdv' });
    expect(s).not.toHaveProperty('stringData');
    expect(s.type).toBe('Opaque');
    const bad = thrown(() =>
      store.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'x', namespace: 'default' },
        data: { a: 'not base64!' },
      }),
    );
    expect(bad.code).toBe(400);
    expect(bad.message).toMatch(/illegal base64 data/);
  });

  it('selects by labels and fields', () => {
    const store = newStore();
    const cm = (name: string, labels: Record<string, string>) =>
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels } });
    cm('a', { env: 'prod', tier: 'fe' });
    cm('b', { env: 'dev' });
    cm('c', {});
    const names = (labelSelector?: string, fieldSelector?: string) =>
      store.list('v1', 'ConfigMap', { labelSelector, fieldSelector }).map((o) => o.metadata.name);
    expect(names('env=prod')).toEqual(['a']);
    expect(names('env==dev')).toEqual(['b']);
    expect(names('env!=prod')).toEqual(['b', 'c']);
    expect(names('env in (prod, dev),tier')).toEqual(['a']);
    expect(names('env notin (prod)')).toEqual(['b', 'c']);
    expect(names('!env')).toEqual(['c']);
    expect(names(undefined, 'metadata.name=b')).toEqual(['b']);
    expect(names(undefined, 'metadata.namespace!=default')).toEqual([]);
    expect(thrown(() => names('env in prod')).code).toBe(400);
    expect(
      thrown(() => store.list(HC.apiVersion, HC.kind, { fieldSelector: 'spec.fips=true' })).message,
    ).toBe('field label not supported: spec.fips');
  });

  it('keeps a bounded event log to resume from, and says when it no longer reaches back', () => {
    const store = newStore({ eventLogSize: 3 });
    const start = store.resourceVersion();
    for (const n of ['a', 'b', 'c', 'd'])
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'default' } });
    expect(store.eventsSince!(start)).toBeUndefined();
    const rv = Number(store.resourceVersion());
    expect(store.eventsSince!(String(rv - 2))!.map((e) => e.object.metadata.name)).toEqual(['c', 'd']);
    expect(store.eventsSince!(String(rv))).toEqual([]);
  });

  it('runs a dry run without keeping anything or telling anyone', () => {
    const store = newStore();
    const events: StoreEvent[] = [];
    store.watch((e) => events.push(e));
    const rv = store.resourceVersion();
    const made = store.dryRun!(() =>
      store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: 'default' } }),
    );
    expect(made.metadata.uid).toBeTruthy();
    expect(
      store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'dry' }),
    ).toBeUndefined();
    expect(store.resourceVersion()).toBe(rv);
    expect(events).toEqual([]);
  });
});
