/**
 * The hub simulator where the real CRDs are not here (a clone without the realdata): it serves the
 * kinds it simulates from its own schemas (lab/hub/own-schemas.ts), accepts what airgap renders,
 * refuses a wrong type, and says once on stderr that validation against the real CRDs is off.
 * The realdata is looked for in a directory that does not exist, as in a plain clone.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type Hub } from '../../../lab/hub/index.js';
import { OWN_KINDS } from '../../../lab/hub/own-schemas.js';
import { CRD_DIR_ENV, REALDATA_ENV } from '../../../lab/realdata.js';
import { renderCluster, renderHub, type KubeObject } from '../../../src/cluster/render/index.js';
import { loadSite, readSiteInputs, resolveSite } from '../../../src/cluster/site/index.js';
import { tempDir } from '../../helpers/fixtures.js';
import { CPO_IMAGE, RELEASE_DIGEST, writeSiteFixture } from '../../cluster/site/fixture.js';

const ABSENT = '/nonexistent/airgap-realdata';
const saved = { realdata: process.env[REALDATA_ENV], crds: process.env[CRD_DIR_ENV] };
const stderr: string[] = [];
const write = process.stderr.write.bind(process.stderr);
let dir: string;
let hubs: Hub[] = [];
let dispatcher: Agent;
let token: string;

/** A request to the first hub's API, JSON in and out. */
async function req(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${hubs[0]!.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': contentType }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The path of an object of a CRD kind the hub serves (its plural from discovery). */
async function pathOf(o: KubeObject): Promise<string> {
  const list = await req('GET', `/apis/${o.apiVersion}`);
  const r = (list.body.resources as { name: string; kind: string }[]).find((x) => x.kind === o.kind);
  if (!r) throw new Error(`${o.kind} is not served`);
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `/apis/${o.apiVersion}${ns}/${r.name}/${o.metadata.name}`;
}

/** Server-side apply as airgap does it, refusing any field the schema does not declare. */
async function apply(o: KubeObject): Promise<{ status: number; body: Record<string, unknown> }> {
  const q = 'fieldManager=airgap&force=true&fieldValidation=Strict';
  return req('PATCH', `${await pathOf(o)}?${q}`, o, 'application/apply-patch+yaml');
}

beforeAll(async () => {
  process.env[REALDATA_ENV] = ABSENT;
  delete process.env[CRD_DIR_ENV];
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    stderr.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  dir = await tempDir('airgap-own-schemas-');
  try {
    hubs = [await startHub({ dir: join(dir, 'a') }), await startHub({ dir: join(dir, 'b') })];
  } finally {
    process.stderr.write = write;
  }
  const kubeconfig = load(await readFile(hubs[0]!.kubeconfigFile, 'utf8')) as {
    users: { user: { token: string } }[];
  };
  token = kubeconfig.users[0]!.user.token;
  dispatcher = new Agent({ connect: { ca: hubs[0]!.caPem } });
}, 60_000);

afterAll(async () => {
  await Promise.all(hubs.map((h) => h.stop()));
  await dispatcher?.close();
  for (const [k, v] of [
    [REALDATA_ENV, saved.realdata],
    [CRD_DIR_ENV, saved.crds],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('the hub simulator without the real CRDs', () => {
  it('says once, in one line on stderr, that validation against the real CRDs is off and how to turn it on', () => {
    const lines = stderr.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(1); // two hubs started, one notice
    expect(lines[0]).toMatch(
      /^hub simulator: validation against the real CRDs is off \((.+)\/crds is not here\): objects are checked against the simulator's own schemas only; to turn it on, set AIRGAP_CRD_DIR to a directory of the real CRDs, or put the realdata beside the repository \(.+\) or set AIRGAP_REALDATA to where it is$/,
    );
    expect(lines[0]).toContain(`${ABSENT}/crds is not here`);
  });

  it('serves every kind it simulates, with its names, scope and status subresource', async () => {
    expect(OWN_KINDS.map((k) => k.kind)).toEqual(
      expect.arrayContaining(['HostedCluster', 'NodePool', 'Agent', 'InfraEnv', 'BareMetalHost']),
    );
    for (const k of OWN_KINDS) {
      const list = await req('GET', `/apis/${k.group}/${k.version}`);
      expect(list.status, k.kind).toBe(200);
      const resources = list.body.resources as Record<string, unknown>[];
      expect(resources, k.kind).toContainEqual(
        expect.objectContaining({ name: k.plural, kind: k.kind, namespaced: k.namespaced }),
      );
      expect(resources.map((r) => r.name)).toContain(`${k.plural}/status`);
    }
    const hc = await req('GET', '/apis/hypershift.openshift.io/v1beta1');
    expect(hc.body.resources).toContainEqual(
      expect.objectContaining({ name: 'hostedclusters', shortNames: ['hc', 'hcs'] }),
    );
    // What the controllers seeded went through the same schemas.
    const mce = await req('GET', '/apis/multicluster.openshift.io/v1/multiclusterengines/multiclusterengine');
    expect(mce.status).toBe(200);
  });

  it('accepts every object airgap renders for the hub and a hosted cluster, field for field', async () => {
    const site = await loadSite(join(await siteDir(), 'site.yaml'));
    const resolved = resolveSite(site, await readSiteInputs(site), {
      releaseImage: RELEASE_DIGEST,
      releaseVersion: '4.17.3',
      controlPlaneOperatorImage: CPO_IMAGE,
    });
    const rendered = [...renderHub(resolved), ...renderCluster(resolved)].map((i) => i.object);
    const crdKinds = new Set(OWN_KINDS.map((k) => k.kind));
    const objects = rendered.filter((o) => crdKinds.has(o.kind));
    expect(new Set(objects.map((o) => o.kind))).toEqual(
      new Set([
        'Image',
        'ImageDigestMirrorSet',
        'ImageTagMirrorSet',
        'CatalogSource',
        'MultiClusterEngine',
        'AgentServiceConfig',
        'HostedCluster',
        'NodePool',
        'InfraEnv',
        'NMStateConfig',
        'BareMetalHost',
      ]),
    );
    for (const ns of new Set(rendered.map((o) => o.metadata.namespace).filter((n) => n !== undefined))) {
      const r = await req('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      });
      expect([201, 409], ns).toContain(r.status);
    }
    for (const o of objects) {
      const r = await apply(o);
      expect(r.status, `${o.kind} ${o.metadata.name}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
      // Nothing pruned, nothing changed: what airgap wrote is what the hub keeps.
      const back = await req('GET', await pathOf(o));
      expect(back.body.spec, o.kind).toMatchObject(o.spec ?? {});
    }
  });

  it('refuses an object whose field has the wrong type, naming the field as the API server does', async () => {
    const np = {
      apiVersion: 'hypershift.openshift.io/v1beta1',
      kind: 'NodePool',
      metadata: { name: 'wrong', namespace: 'default' },
      spec: { clusterName: 'x', release: { image: 'r' }, replicas: 'two' },
    };
    const r = await apply(np);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(
      'NodePool.hypershift.openshift.io "wrong" is invalid: spec.replicas: Invalid value: "two": spec.replicas in body must be of type integer: "string"',
    );
    const idms = {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ImageDigestMirrorSet',
      metadata: { name: 'wrong' },
      spec: { imageDigestMirrors: [{ source: 'quay.io/a', mirrors: 'm.local/a' }] },
    };
    const i = await apply(idms);
    expect(i.status).toBe(422);
    expect(i.body.message).toContain('spec.imageDigestMirrors[0].mirrors');
    expect((await req('GET', await pathOf(idms))).status).toBe(404);
  });
});

let site: string | undefined;
/** A site directory with every file the example site names (written once). */
async function siteDir(): Promise<string> {
  if (!site) {
    site = join(dir, 'site');
    await writeSiteFixture(site);
  }
  return site;
}
