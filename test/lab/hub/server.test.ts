import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../lab/hub/types.js';
import { eventReader, sampleOf, startHub, type Hub } from './fixture.js';
import { withRealdata, withRealdataAndCrds } from '../../helpers/realdata.js';

const HCS = '/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters';
const NPS = '/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/nodepools';
const CMS = '/api/v1/namespaces/clusters/configmaps';
const AVAILABLE_FALSE = {
  type: 'Available',
  status: 'False',
  reason: 'WaitingForControlPlane',
  message: 'not yet',
  lastTransitionTime: '2025-01-01T00:00:00Z',
};

let hub: Hub;

beforeAll(async () => {
  hub = await startHub({ bookmarkIntervalMs: 200 });
  await hub.req('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'clusters' },
  });
});
afterAll(async () => {
  await hub?.close();
});

describe('the hub API server (HTTPS on 127.0.0.1)', () => {
  it('wants the bearer token, except on health endpoints', async () => {
    const r = await hub.req('GET', '/api/v1/namespaces', undefined, { token: null });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    expect((await hub.req('GET', '/api/v1/namespaces', undefined, { token: 'wrong' })).status).toBe(401);
    expect((await hub.req('GET', '/healthz', undefined, { token: null })).status).toBe(200);
    expect(hub.api.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves discovery with resources, status subresources, short names and scope', async () => {
    const groups = await hub.req('GET', '/apis');
    expect(groups.body.kind).toBe('APIGroupList');
    expect(groups.body.groups).toContainEqual({
      name: 'hypershift.openshift.io',
      versions: [{ groupVersion: 'hypershift.openshift.io/v1beta1', version: 'v1beta1' }],
      preferredVersion: { groupVersion: 'hypershift.openshift.io/v1beta1', version: 'v1beta1' },
    });
    const list = await hub.req('GET', '/apis/hypershift.openshift.io/v1beta1');
    const resources = list.body.resources as Record<string, unknown>[];
    expect(resources).toContainEqual(
      expect.objectContaining({
        name: 'hostedclusters',
        kind: 'HostedCluster',
        namespaced: true,
        shortNames: ['hc', 'hcs'],
        singularName: 'hostedcluster',
      }),
    );
    expect(resources).toContainEqual(
      expect.objectContaining({ name: 'hostedclusters/status', verbs: ['get', 'patch', 'update'] }),
    );
    const core = await hub.req('GET', '/api/v1');
    expect(core.body.resources).toContainEqual(
      expect.objectContaining({ name: 'namespaces', namespaced: false, kind: 'Namespace' }),
    );
    expect((await hub.req('GET', '/api')).body.versions).toEqual(['v1']);
    expect((await hub.req('GET', '/version')).body.gitVersion).toBe('v1.31.6');
    expect((await hub.req('GET', '/apis/nope.example.com/v1')).status).toBe(404);
  });

  withRealdataAndCrds.it(
    'creates, reads, lists across namespaces, and rejects an invalid object with the field path (422)',
    async () => {
      const created = await hub.req('POST', HCS, sampleOf('HostedCluster'));
      expect(created.status).toBe(201);
      expect((created.body.metadata as Record<string, unknown>).uid).toBeTruthy();
      const got = await hub.req('GET', `${HCS}/example`);
      expect(got.body.spec).toMatchObject({ platform: { type: 'Agent' } });
      const all = await hub.req('GET', '/apis/hypershift.openshift.io/v1beta1/hostedclusters');
      expect(all.body.kind).toBe('HostedClusterList');
      expect((all.body.items as KubeObject[]).map((o) => o.metadata.name)).toEqual(['example']);
      expect((all.body.metadata as Record<string, string>).resourceVersion).toBe(hub.store.resourceVersion());

      const bad = sampleOf('HostedCluster');
      bad.metadata.name = 'bad';
      (bad.spec!.platform as Record<string, unknown>).type = 'Foo';
      const r = await hub.req('POST', HCS, bad);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({
        kind: 'Status',
        reason: 'Invalid',
        code: 422,
        details: { name: 'bad', group: 'hypershift.openshift.io', kind: 'HostedCluster' },
      });
      expect(r.body.message).toMatch(
        /^HostedCluster\.hypershift\.openshift\.io "bad" is invalid: spec\.platform\.type: Unsupported value: "Foo": supported values: "AWS"/,
      );
      expect((r.body.details as { causes: unknown[] }).causes).toContainEqual(
        expect.objectContaining({ field: 'spec.platform.type', reason: 'FieldValueNotSupported' }),
      );
      expect((await hub.req('GET', `${HCS}/bad`)).status).toBe(404);
      const missing = await hub.req('GET', `${HCS}/nope`);
      expect(missing.body).toMatchObject({
        reason: 'NotFound',
        message: 'hostedclusters.hypershift.openshift.io "nope" not found',
      });
    },
  );

  withRealdata.it(
    'prunes unknown fields with a warning, refuses them with fieldValidation=Strict, and dryRun stores nothing',
    async () => {
      const np = {
        ...sampleOf('NodePool'),
        metadata: { name: 'np-warn', namespace: 'clusters' },
      } as KubeObject;
      (np.spec as Record<string, unknown>).bogus = true;
      const strict = await hub.req('POST', `${NPS}?fieldValidation=Strict`, np);
      expect(strict.status).toBe(400);
      expect(strict.body.message).toMatch(/strict decoding error: unknown field "spec.bogus"/);
      const dry = await hub.req('POST', `${NPS}?dryRun=All`, np);
      expect(dry.status).toBe(201);
      expect((await hub.req('GET', `${NPS}/np-warn`)).status).toBe(404);
      const warned = await hub.req('POST', NPS, np);
      expect(warned.status).toBe(201);
      expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\""');
      expect(warned.body.spec).not.toHaveProperty('bogus');
    },
  );

  withRealdataAndCrds.it(
    'refuses a PUT with a stale resourceVersion (409) and keeps status out of main-resource writes',
    async () => {
      const cur = (await hub.req('GET', `${HCS}/example`)).body as unknown as KubeObject;
      const st = await hub.req('PUT', `${HCS}/example/status`, {
        ...cur,
        status: { conditions: [AVAILABLE_FALSE] },
      });
      expect(st.status).toBe(200);
      const afterStatus = st.body as unknown as KubeObject;
      expect(afterStatus.metadata.generation).toBe(1);

      const put = await hub.req('PUT', `${HCS}/example`, {
        ...afterStatus,
        spec: { ...afterStatus.spec, fips: true },
        status: { hacked: true },
      });
      expect(put.status).toBe(200);
      const updated = put.body as unknown as KubeObject;
      expect(updated.metadata.generation).toBe(2);
      expect(updated.status).toEqual({ conditions: [AVAILABLE_FALSE] });
      const badStatus = await hub.req('PUT', `${HCS}/example/status`, {
        ...updated,
        status: { conditions: [{ type: 'Available' }] },
      });
      expect(badStatus.status).toBe(422);
      expect(badStatus.body.message).toContain('status.conditions[0].status: Required value');

      const stale = await hub.req('PUT', `${HCS}/example`, {
        ...afterStatus,
        spec: { ...afterStatus.spec, fips: false },
      });
      expect(stale.status).toBe(409);
      expect(stale.body).toMatchObject({
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on hostedclusters.hypershift.openshift.io "example": the object has been modified; please apply your changes to the latest version and try again',
      });
    },
  );

  withRealdataAndCrds.it(
    'patches by content type: merge, JSON patch (a failed test is 422), strategic as merge, 415 otherwise',
    async () => {
      await hub.req('POST', CMS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'p' },
        data: { a: '1', b: '2' },
      });
      const merge = await hub.req(
        'PATCH',
        `${CMS}/p`,
        { data: { a: null, c: '3' } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(merge.body.data).toEqual({ b: '2', c: '3' });
      const json = await hub.req(
        'PATCH',
        `${CMS}/p`,
        [
          { op: 'test', path: '/data/b', value: '2' },
          { op: 'replace', path: '/data/b', value: 'two' },
          { op: 'add', path: '/metadata/labels', value: { x: 'y' } },
        ],
        { contentType: 'application/json-patch+json' },
      );
      expect(json.status).toBe(200);
      expect(json.body.data).toEqual({ b: 'two', c: '3' });
      const failed = await hub.req('PATCH', `${CMS}/p`, [{ op: 'test', path: '/data/b', value: '2' }], {
        contentType: 'application/json-patch+json',
      });
      expect(failed.status).toBe(422);
      const smp = await hub.req(
        'PATCH',
        `${CMS}/p`,
        { $patch: 'merge', data: { d: '4' } },
        { contentType: 'application/strategic-merge-patch+json' },
      );
      expect(smp.body.data).toEqual({ b: 'two', c: '3', d: '4' });
      const unknown = await hub.req('PATCH', `${CMS}/p`, { data: {} }, { contentType: 'text/plain' });
      expect(unknown.status).toBe(415);
      expect(unknown.body.reason).toBe('UnsupportedMediaType');
      const status = await hub.req(
        'PATCH',
        `${HCS}/example/status`,
        { status: { kubeconfig: { name: 'example-admin-kubeconfig' } } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(status.body.status).toMatchObject({
        conditions: [{ type: 'Available' }],
        kubeconfig: { name: 'example-admin-kubeconfig' },
      });
      const main = await hub.req(
        'PATCH',
        `${HCS}/example`,
        { status: { conditions: [] } },
        { contentType: 'application/merge-patch+json' },
      );
      expect((main.body.status as Record<string, unknown>).conditions).toEqual([AVAILABLE_FALSE]);
    },
  );

  it('server-side apply: ownership, conflicts between managers, force, removal of dropped fields, no-op', async () => {
    const apply = (manager: string, data: Record<string, string>, force = false) =>
      hub.req(
        'PATCH',
        `${CMS}/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`,
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data }),
        { contentType: 'application/apply-patch+yaml' },
      );
    const noManager = await hub.req(
      'PATCH',
      `${CMS}/ssa`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\n',
      {
        contentType: 'application/apply-patch+yaml',
      },
    );
    expect(noManager.status).toBe(400);
    const first = await apply('alice', { a: '1', b: '2' });
    expect(first.status).toBe(201);
    expect((first.body.metadata as { managedFields: unknown[] }).managedFields).toEqual([
      expect.objectContaining({
        manager: 'alice',
        operation: 'Apply',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
      }),
    ]);
    const rv = (first.body.metadata as Record<string, string>).resourceVersion;
    const again = await apply('alice', { a: '1', b: '2' });
    expect((again.body.metadata as Record<string, string>).resourceVersion).toBe(rv);

    const clash = await apply('bob', { a: 'x', c: '3' });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toBe('Apply failed with 1 conflict: conflict with "alice" using v1: .data.a');
    expect((clash.body.details as { causes: unknown[] }).causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice" using v1', field: '.data.a' },
    ]);
    const same = await apply('bob', { a: '1', c: '3' });
    expect(same.status).toBe(200); // same value: shared ownership, no conflict
    const forced = await apply('bob', { a: 'x', c: '3' }, true);
    expect(forced.body.data).toEqual({ a: 'x', b: '2', c: '3' });
    // alice drops b (hers alone: removed) and a (now bob's: kept)
    const dropped = await apply('alice', {});
    expect(dropped.body.data).toEqual({ a: 'x', c: '3' });
  });

  it('watches: events after a resourceVersion, selectors, 410 when too old, bookmarks, dropWatches', async () => {
    const rv = hub.store.resourceVersion();
    await hub.req('POST', CMS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w1', labels: { app: 'w' } },
    });
    await hub.req('POST', CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w2' } });
    const res = await hub.stream(
      `${CMS}?watch=1&resourceVersion=${rv}&labelSelector=app%3Dw&allowWatchBookmarks=true`,
    );
    expect(res.status).toBe(200);
    const events = eventReader(res);
    const first = await events.next();
    expect(first).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w1' } } });
    await hub.req(
      'PATCH',
      `${CMS}/w1`,
      { data: { x: '1' } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(await events.next()).toMatchObject({ type: 'MODIFIED', object: { data: { x: '1' } } });
    let e = await events.next(2000);
    expect(e).toMatchObject({ type: 'BOOKMARK' });
    hub.api.faults.dropWatches();
    do e = await events.next(2000);
    while (e !== 'end' && e.type === 'BOOKMARK');
    expect(e).toBe('end');

    const named = eventReader(
      await hub.stream(`${CMS}?watch=true&fieldSelector=metadata.name%3Dw2&timeoutSeconds=1`),
    );
    expect(await named.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'w2' } } });
    expect(await named.next(3000)).toBe('end'); // timeoutSeconds ends it
  });

  it('answers a watch from a compacted resourceVersion with one 410 ERROR event', async () => {
    const small = await startHub({ store: (await import('./fixture.js')).newStore({ eventLogSize: 2 }) });
    try {
      const old = small.store.resourceVersion();
      for (const n of ['a', 'b', 'c'])
        await small.req('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: n } });
      const events = eventReader(
        await small.stream(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${old}`),
      );
      const e = await events.next();
      expect(e).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
      expect(await events.next()).toBe('end');
    } finally {
      await small.close();
    }
  });

  it('injects faults: 500 then success, a 409 that reads like a real conflict', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f' }, data: { a: '1' } };
    expect((await hub.req('POST', CMS, cm)).status).toBe(201);
    hub.api.faults.failNext({ method: 'GET', path: /\/configmaps\/f$/, status: 500 });
    const failed = await hub.req('GET', `${CMS}/f`);
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect((await hub.req('GET', `${CMS}/f`)).status).toBe(200);
    hub.api.faults.failNext({ method: 'PUT', status: 409, times: 2 });
    const cur = (await hub.req('GET', `${CMS}/f`)).body;
    for (let i = 0; i < 2; i++) {
      const c = await hub.req('PUT', `${CMS}/f`, cur);
      expect(c.status).toBe(409);
      expect(c.body.message).toBe(
        'Operation cannot be fulfilled on configmaps "f": the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    expect((await hub.req('PUT', `${CMS}/f`, cur)).status).toBe(200);
    expect(
      hub.api
        .requests()
        .filter((r) => r.path === `${CMS}/f` && r.method === 'PUT')
        .map((r) => r.status),
    ).toEqual([409, 409, 200]);
  });

  withRealdata.it('deletes with finalizers in two steps, and a namespace with its content', async () => {
    const np = {
      ...sampleOf('NodePool'),
      metadata: { name: 'fin', namespace: 'clusters', finalizers: ['hypershift.openshift.io/finalizer'] },
    };
    await hub.req('POST', NPS, np);
    const del = await hub.req('DELETE', `${NPS}/fin`, { propagationPolicy: 'Foreground' });
    expect(del.status).toBe(200);
    expect((del.body.metadata as Record<string, unknown>).deletionTimestamp).toBeTruthy();
    expect((await hub.req('GET', `${NPS}/fin`)).status).toBe(200);
    await hub.req(
      'PATCH',
      `${NPS}/fin`,
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    expect((await hub.req('GET', `${NPS}/fin`)).status).toBe(404);

    await hub.req('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await hub.req('POST', '/api/v1/namespaces/doomed/secrets', {
      metadata: { name: 's' },
      stringData: { k: 'v' },
    });
    const nsDel = await hub.req('DELETE', '/api/v1/namespaces/doomed');
    expect(nsDel.status).toBe(200);
    expect((await hub.req('GET', '/api/v1/namespaces/doomed/secrets/s')).status).toBe(404);
    expect((await hub.req('GET', '/api/v1/namespaces/doomed')).status).toBe(404);
  });

  withRealdataAndCrds.it('answers kubectl get with a Table of printer columns', async () => {
    const t = await hub.req('GET', HCS, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(t.body.kind).toBe('Table');
    const cols = (t.body.columnDefinitions as { name: string }[]).map((c) => c.name);
    expect(cols.slice(0, 3)).toEqual(['Name', 'Version', 'CP Version']);
    const row = (t.body.rows as { cells: unknown[] }[])[0]!;
    expect(row.cells[0]).toBe('example');
    expect(row.cells[cols.indexOf('Available')]).toBe('False');
    expect(row.cells[cols.indexOf('KubeConfig')]).toBe('example-admin-kubeconfig');
    expect(row.cells[cols.indexOf('Message')]).toBe('not yet');
  });
});

describe('the hub API server on IPv6', () => {
  it('listens on [::1] and serves the same API', async () => {
    const v6 = await startHub({ host: '::1' });
    try {
      expect(v6.api.url).toMatch(/^https:\/\/\[::1\]:\d+$/);
      const r = await v6.req('GET', '/api/v1/namespaces');
      expect((r.body.items as KubeObject[]).map((o) => o.metadata.name)).toContain('default');
    } finally {
      await v6.close();
    }
  });
});
