/**
 * A local OpenShift update service (Cincinnati policy engine) for tests and the demo: answers
 * `GET /api/upgrades_info/v1/graph?channel=&arch=` from graphs held in memory, and
 * `GET /api/upgrades_info/graph-data` with a synthetic graph-data tarball built from the same graphs
 * (see {@link syntheticGraphData}).
 *
 * Behaviour copied from the real service (openshift/cincinnati policy-engine):
 * - no `channel` → 400 `{"kind":"missing_params","value":"mandatory client parameters missing: channel"}`;
 * - an Accept header that allows neither application/json nor
 *   application/vnd.redhat.cincinnati.v1+json → 406 `{"kind":"invalid_content_type",…}`;
 * - `arch` absent → amd64;
 * - a channel (or arch) the service does not know → 200 with an empty graph
 *   (`{"version":1,"nodes":[],"edges":[],"conditionalEdges":[]}`), not 404: channels are only a
 *   filter over node metadata, so an unknown one simply matches no node.
 */
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { Header } from 'tar';
import { compareSemver, parseSemver } from '../src/mirror/isc/semver.js';
import type { GraphRisk, UpdateGraph } from '../src/mirror/openshift/graph.js';
import { toYaml } from '../src/util/yaml.js';

/** Options of {@link startGraphServer}. */
export interface GraphServerOptions {
  /** Graphs keyed by `<channel>/<arch>`, e.g. `stable-4.13/amd64`. */
  graphs: Record<string, UpdateGraph>;
  /** Loopback address to listen on; default 127.0.0.1. */
  host?: string;
  /** Serve HTTPS with this certificate. */
  tls?: { certPem: string; keyPem: string };
  /**
   * The body of `GET /api/upgrades_info/graph-data`, served as is (a broken archive, a GitHub-style
   * tarball); default: {@link syntheticGraphData} of the graphs at the time of the request.
   */
  graphData?: Buffer;
}

/** One request the server saw. */
export interface GraphRequest {
  path: string;
  query: Record<string, string>;
  accept?: string;
}

/** A running graph server. */
export interface GraphServer {
  /** The graph endpoint, e.g. `http://127.0.0.1:40123/api/upgrades_info/v1/graph`. */
  url: string;
  /** Every request, in order. */
  requests: GraphRequest[];
  /** The graph-data tarball URL, e.g. `http://127.0.0.1:40123/api/upgrades_info/graph-data`. */
  graphDataUrl: string;
  /** Replace or add a graph while running. */
  graphs: Record<string, UpdateGraph>;
  /** Set to serve these bytes as the graph-data tarball instead of the synthetic one. */
  graphData?: Buffer;
  stop(): Promise<void>;
}

const GRAPH_PATH = '/api/upgrades_info/v1/graph';
export const GRAPH_DATA_PATH = '/api/upgrades_info/graph-data';
const ACCEPTED = ['application/json', 'application/vnd.redhat.cincinnati.v1+json', '*/*', 'application/*'];

function acceptable(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => ACCEPTED.includes(part.split(';')[0].trim().toLowerCase()));
}

/** Start a graph server on a free loopback port. */
export async function startGraphServer(opts: GraphServerOptions): Promise<GraphServer> {
  const host = opts.host ?? '127.0.0.1';
  const app: FastifyInstance = opts.tls
    ? (Fastify({
        logger: false,
        https: { cert: opts.tls.certPem, key: opts.tls.keyPem },
      }) as unknown as FastifyInstance)
    : Fastify({ logger: false });
  const requests: GraphRequest[] = [];
  const graphs = opts.graphs;

  app.get(GRAPH_PATH, async (req, reply) => {
    const query = Object.fromEntries(
      Object.entries(req.query as Record<string, unknown>).map(([k, v]) => [
        k,
        String(Array.isArray(v) ? v[0] : v),
      ]),
    );
    const accept = req.headers.accept;
    requests.push({ path: GRAPH_PATH, query, ...(accept ? { accept } : {}) });
    if (!acceptable(accept)) {
      return reply
        .code(406)
        .type('application/json')
        .send({ kind: 'invalid_content_type', value: 'invalid Content-Type requested' });
    }
    const channel = query.channel;
    if (!channel) {
      return reply
        .code(400)
        .type('application/json')
        .send({ kind: 'missing_params', value: 'mandatory client parameters missing: channel' });
    }
    const graph = graphs[`${channel}/${query.arch || 'amd64'}`];
    return reply
      .code(200)
      .type('application/json')
      .send(graph ?? { version: 1, nodes: [], edges: [], conditionalEdges: [] });
  });

  const server: Omit<GraphServer, 'url' | 'graphDataUrl'> = {
    requests,
    graphs,
    ...(opts.graphData ? { graphData: opts.graphData } : {}),
    stop: async () => {
      await app.close();
    },
  };

  app.get(GRAPH_DATA_PATH, async (req, reply) => {
    const query = Object.fromEntries(
      Object.entries(req.query as Record<string, unknown>).map(([k, v]) => [
        k,
        String(Array.isArray(v) ? v[0] : v),
      ]),
    );
    const accept = req.headers.accept;
    requests.push({ path: GRAPH_DATA_PATH, query, ...(accept ? { accept } : {}) });
    return reply
      .code(200)
      .type('application/gzip')
      .send(server.graphData ?? syntheticGraphData(server.graphs));
  });

  await app.listen({ host, port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('graph server has no TCP address');
  const hostPart = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  const origin = `${opts.tls ? 'https' : 'http'}://${hostPart}:${addr.port}`;
  return Object.assign(server, {
    url: `${origin}${GRAPH_PATH}`,
    graphDataUrl: `${origin}${GRAPH_DATA_PATH}`,
  });
}

/** The fixed modification time of every entry of the synthetic graph-data tarball. */
const GRAPH_DATA_MTIME = new Date('2025-01-01T00:00:00Z');

/** One tar entry: a directory (`dir/`) or a file with its bytes. */
function tarEntry(path: string, body?: Buffer): Buffer[] {
  const header = Buffer.alloc(512);
  const isDir = body === undefined;
  new Header({
    path,
    mode: isDir ? 0o755 : 0o644,
    uid: 0,
    gid: 0,
    size: isDir ? 0 : body.length,
    mtime: GRAPH_DATA_MTIME,
    type: isDir ? 'Directory' : 'File',
    uname: 'root',
    gname: 'root',
  }).encode(header, 0);
  if (isDir) return [header];
  return [header, body, Buffer.alloc((512 - (body.length % 512)) % 512)];
}

const bySemver = (a: string, b: string): number => {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  return pa && pb ? compareSemver(pa, pb) : a < b ? -1 : a > b ? 1 : 0;
};

/**
 * A regular expression matching exactly these versions, anchored as the real blocked-edges `from`
 * fields are (`^4[.]17[.]3[+].*$`: the update service matches it against `<version>+<arch>`).
 */
function versionsRegex(versions: string[]): string {
  const esc = versions.sort(bySemver).map((v) => v.replace(/[.+]/g, (c) => `[${c}]`));
  return `^(${esc.join('|')})[+].*$`;
}

/**
 * A graph-data tarball shaped like the one api.openshift.com serves (the cincinnati-graph-data
 * repository, entries at the root of the archive: `version`, `LICENSE`, `channels/<channel>.yaml`
 * with `name` and `versions`, `blocked-edges/<to>-<risk>.yaml` for every conditional update risk,
 * `raw/metadata.json`), built from graphs keyed `<channel>/<arch>`. Deterministic: the same graphs
 * give the same bytes (fixed mtimes, sorted entries, gzip without a timestamp).
 */
export function syntheticGraphData(graphs: Record<string, UpdateGraph>): Buffer {
  const channels = new Map<string, Set<string>>();
  const blocked = new Map<string, { to: string; from: Set<string>; risk: GraphRisk }>();
  for (const [key, graph] of Object.entries(graphs)) {
    const channel = key.split('/')[0];
    const versions = channels.get(channel) ?? new Set<string>();
    channels.set(channel, versions);
    for (const n of graph.nodes) versions.add(n.version);
    for (const ce of graph.conditionalEdges) {
      for (const e of ce.edges) {
        for (const risk of ce.risks) {
          const name = `${e.to}-${risk.name}.yaml`;
          const b = blocked.get(name) ?? { to: e.to, from: new Set<string>(), risk };
          b.from.add(e.from);
          blocked.set(name, b);
        }
      }
    }
  }
  const parts: Buffer[] = [];
  const file = (path: string, text: string) => parts.push(...tarEntry(path, Buffer.from(text)));
  file('LICENSE', 'Synthetic update graph data for the airgap lab. Not for production use.\n');
  file('version', '1.1.0\n');
  parts.push(...tarEntry('blocked-edges/'));
  for (const name of [...blocked.keys()].sort()) {
    const b = blocked.get(name)!;
    file(
      `blocked-edges/${name}`,
      toYaml({
        to: b.to,
        from: versionsRegex([...b.from]),
        url: b.risk.url,
        name: b.risk.name,
        message: b.risk.message,
        matchingRules: b.risk.matchingRules,
      }),
    );
  }
  parts.push(...tarEntry('channels/'));
  for (const name of [...channels.keys()].sort()) {
    file(`channels/${name}.yaml`, toYaml({ name, versions: [...channels.get(name)!].sort(bySemver) }));
  }
  parts.push(...tarEntry('raw/'));
  file('raw/metadata.json', '{}\n');
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}
