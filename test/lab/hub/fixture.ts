/**
 * A hub API server for tests: the real CRDs (or, where they are not here, the simulator's own
 * schemas: lab/hub/index.ts customResourceTypes) plus the built-in types, TLS from the test PKI, and
 * a small HTTPS client (undici, trusting the test CA) that speaks JSON. `sampleObjects` reads a real
 * sample: tests that use it need the realdata (`withRealdata`).
 */
import { readFileSync } from 'node:fs';
import { loadAll } from 'js-yaml';
import { Agent, fetch } from 'undici';
import { builtinTypes } from '../../../lab/hub/builtin.js';
import { customResourceTypes } from '../../../lab/hub/index.js';
import { startApiServer, type ApiServer } from '../../../lab/hub/server.js';
import { createStore, type StoreOptions } from '../../../lab/hub/store.js';
import type { HubStore, KubeObject, ResourceType } from '../../../lab/hub/types.js';
import { testCertificates } from '../../helpers/tls.js';
import { realdata } from '../../helpers/realdata.js';

export const TOKEN = 'hub-test-token';
export const RELEASE = 'quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64';

let crdTypes: ResourceType[] | undefined;
/** The built-in types and every real CRD, or the own schemas (loaded once per test file). */
export function allTypes(): ResourceType[] {
  crdTypes ??= customResourceTypes();
  return [...builtinTypes(), ...crdTypes];
}

export function newStore(opts: StoreOptions = {}): HubStore {
  return createStore(allTypes(), opts);
}

export interface Hub {
  store: HubStore;
  api: ApiServer;
  /** JSON request with the bearer token (unless `token: null`). */
  req(
    method: string,
    path: string,
    body?: unknown,
    opts?: { contentType?: string; token?: string | null; accept?: string },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  /** A raw streaming request (for watches). */
  stream(path: string): Promise<Response>;
  close(): Promise<void>;
}

const agents = new Map<string, Agent>();
function agent(): Agent {
  const ca = testCertificates().ca.certPem;
  let a = agents.get(ca);
  if (!a) agents.set(ca, (a = new Agent({ connect: { ca } })));
  return a;
}

export async function startHub(
  opts: { host?: string; store?: HubStore; bookmarkIntervalMs?: number } = {},
): Promise<Hub> {
  const { server } = testCertificates();
  const store = opts.store ?? newStore();
  const api = await startApiServer({
    store,
    host: opts.host,
    token: TOKEN,
    tls: { cert: server.certPem, key: server.keyPem },
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
  });
  const dispatcher = agent();
  return {
    store,
    api,
    async req(method, path, body, o = {}) {
      const headers: Record<string, string> = {};
      if (o.token !== null) headers.authorization = `Bearer ${o.token ?? TOKEN}`;
      if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
      if (o.accept) headers.accept = o.accept;
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        dispatcher,
      });
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = { text };
      }
      return { status: res.status, body: parsed, headers: res.headers as unknown as Headers };
    },
    async stream(path) {
      return (await fetch(`${api.url}${path}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        dispatcher,
      })) as unknown as Response;
    },
    close: () => api.close(),
  };
}

/** Reads newline-delimited JSON events from a watch response. */
export function eventReader(res: Response): {
  next(timeoutMs?: number): Promise<{ type: string; object: KubeObject } | 'end'>;
  cancel(): Promise<void>;
} {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let ended = false;
  return {
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const nl = buf.indexOf('\n');
        if (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          return JSON.parse(line) as { type: string; object: KubeObject };
        }
        if (ended) return 'end';
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no watch event in time');
        let timer: NodeJS.Timeout | undefined;
        const r = await Promise.race([
          reader.read().catch(() => ({ done: true, value: undefined })),
          new Promise<never>(
            (_, reject) => (timer = setTimeout(() => reject(new Error('no watch event in time')), left)),
          ),
        ]).finally(() => clearTimeout(timer));
        if (r.done) ended = true;
        else buf += decoder.decode(r.value, { stream: true });
      }
    },
    async cancel() {
      await reader.cancel().catch(() => undefined);
    },
  };
}

/** The real `hcp create cluster agent --render` sample: Namespace, two Secrets, HostedCluster, NodePool; no status, release image filled. */
export function sampleObjects(): KubeObject[] {
  const text = readFileSync(
    realdata('samples/cr-examples/hypershift/hcp-create-cluster-agent-render.yaml'),
    'utf8',
  );
  const docs = (loadAll(text) as (KubeObject | null)[]).filter((d): d is KubeObject => !!d && !!d.kind);
  for (const d of docs) {
    delete d.status;
    const spec = d.spec as Record<string, Record<string, unknown>> | undefined;
    if (d.kind === 'HostedCluster' || d.kind === 'NodePool') spec!.release!.image = RELEASE;
    if (d.kind === 'HostedCluster')
      (spec!.platform!.agent as Record<string, unknown>).agentNamespace = 'agents';
  }
  return docs;
}

export function sampleOf(kind: string): KubeObject {
  const o = sampleObjects().find((d) => d.kind === kind);
  if (!o) throw new Error(`no ${kind} in the sample`);
  return o;
}
