/**
 * A local OpenShift update service (Cincinnati policy engine) for tests and the demo: answers
 * `GET /api/upgrades_info/v1/graph?channel=&arch=` from graphs held in memory.
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
import Fastify, { type FastifyInstance } from 'fastify';
import type { UpdateGraph } from '../mirror/openshift/graph.js';

/** Options of {@link startGraphServer}. */
export interface GraphServerOptions {
  /** Graphs keyed by `<channel>/<arch>`, e.g. `stable-4.13/amd64`. */
  graphs: Record<string, UpdateGraph>;
  /** Loopback address to listen on; default 127.0.0.1. */
  host?: string;
  /** Serve HTTPS with this certificate. */
  tls?: { certPem: string; keyPem: string };
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
  /** Replace or add a graph while running. */
  graphs: Record<string, UpdateGraph>;
  stop(): Promise<void>;
}

export const GRAPH_PATH = '/api/upgrades_info/v1/graph';
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

  await app.listen({ host, port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('graph server has no TCP address');
  const hostPart = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${hostPart}:${addr.port}${GRAPH_PATH}`,
    requests,
    graphs,
    stop: async () => {
      await app.close();
    },
  };
}
