/**
 * The OpenShift update graph (Cincinnati): fetch one channel for one architecture and validate the
 * answer. Request and endpoint as oc-mirror v2 sends them (internal/pkg/cincinnati/download.go,
 * internal/pkg/release/client.go): `GET <url>?arch=<arch>&channel=<channel>` with
 * `Accept: application/json`; the URL is api.openshift.com unless `UPDATE_URL_OVERRIDE` is set.
 */
import { AirgapError, usageError } from '../../util/errors.js';
import { getJson, type TlsOptions } from '../../net/http.js';
import { parseSemver } from '../isc/semver.js';
import { MirrorError } from '../errors.js';

/** The public OCP update service. */
export const OCP_UPDATE_URL = 'https://api.openshift.com/api/upgrades_info/v1/graph';

/** Architectures the update service knows (oc-mirror: amd64, arm64, ppc64le, s390x, multi). */
export const GRAPH_ARCHES = ['amd64', 'arm64', 'ppc64le', 's390x', 'multi'] as const;
export type GraphArch = (typeof GRAPH_ARCHES)[number];

const ARCH_ALIASES: Record<string, GraphArch> = { x86_64: 'amd64', aarch64: 'arm64' };

/** One release in the graph. */
export interface GraphNode {
  version: string;
  /** The release image, by digest. */
  payload: string;
  metadata: Record<string, string>;
}

/** A conditional update risk, as the update service publishes it. */
export interface GraphRisk {
  url: string;
  name: string;
  message: string;
  /** `{type: 'Always'}` or `{type: 'PromQL', promql: {promql}}`, kept as sent. */
  matchingRules: Record<string, unknown>[];
}

/** Upgrades that are recommended only when none of `risks` applies to the cluster. */
export interface ConditionalEdge {
  edges: { from: string; to: string }[];
  risks: GraphRisk[];
}

/** One channel's graph for one architecture. */
export interface UpdateGraph {
  version?: number;
  nodes: GraphNode[];
  /** `[fromIndex, toIndex]` into `nodes`. */
  edges: [number, number][];
  conditionalEdges: ConditionalEdge[];
}

/** Options of {@link fetchGraph}. */
export interface FetchGraphOptions {
  channel: string;
  /** amd64 (default), arm64, ppc64le, s390x or multi; x86_64 and aarch64 are accepted as aliases. */
  arch?: string;
  /** The graph endpoint; default `UPDATE_URL_OVERRIDE`, else {@link OCP_UPDATE_URL}. */
  graphUrl?: string;
  tls?: TlsOptions;
  /** Retries on network errors and 5xx; default 4. */
  retries?: number;
  timeoutMs?: number;
}

/** The architecture name the update service expects, or a usage error naming the known ones. */
export function graphArch(arch: string | undefined): GraphArch {
  const a = arch ?? 'amd64';
  if ((GRAPH_ARCHES as readonly string[]).includes(a)) return a as GraphArch;
  const alias = ARCH_ALIASES[a];
  if (alias) return alias;
  throw usageError(MirrorError.GRAPH_ARCH_UNKNOWN, `unknown release architecture "${a}"`, {
    hint: `use one of ${GRAPH_ARCHES.join(', ')}`,
  });
}

/** The endpoint to ask: the explicit URL, else `UPDATE_URL_OVERRIDE`, else api.openshift.com. */
export function graphEndpoint(graphUrl?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (graphUrl) return graphUrl;
  const override = env.UPDATE_URL_OVERRIDE;
  return override && override.length > 0 ? override : OCP_UPDATE_URL;
}

/** The full request URL, keeping any query the endpoint already carries. */
function graphRequestUrl(endpoint: string, channel: string, arch: GraphArch): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    // new URL fails only on a string that is not a URL: said so.
    throw usageError(MirrorError.GRAPH_URL_INVALID, `the update graph URL is not a URL: ${endpoint}`, {
      hint: 'set --graph-url or UPDATE_URL_OVERRIDE to an http(s) URL such as ' + OCP_UPDATE_URL,
    });
  }
  u.searchParams.set('arch', arch);
  u.searchParams.set('channel', channel);
  return u.href;
}

/**
 * Fetch and validate the update graph of one channel. An empty graph means the service does not
 * know the channel for that architecture (it answers 200 with no nodes): GRAPH_CHANNEL_EMPTY.
 */
export async function fetchGraph(opts: FetchGraphOptions): Promise<UpdateGraph> {
  if (!opts.channel) {
    throw usageError(
      MirrorError.GRAPH_CHANNEL_MISSING,
      'a release channel is required to ask the update graph',
      {
        hint: 'name a channel such as stable-4.18',
      },
    );
  }
  const arch = graphArch(opts.arch);
  const endpoint = graphEndpoint(opts.graphUrl);
  const url = graphRequestUrl(endpoint, opts.channel, arch);
  const body = await getJson(url, {
    ...opts.tls,
    accept: 'application/json',
    retries: opts.retries,
    timeoutMs: opts.timeoutMs,
    errorPrefix: 'GRAPH',
    unreachableHint:
      'check the network or proxy, or point --graph-url / UPDATE_URL_OVERRIDE at a reachable update service',
  });
  const graph = parseGraph(body, url);
  if (graph.nodes.length === 0) {
    throw usageError(
      MirrorError.GRAPH_CHANNEL_EMPTY,
      `channel "${opts.channel}" has no releases for ${arch}`,
      {
        where: url,
        hint: 'check the channel name (e.g. stable-4.18, fast-4.18, eus-4.18) and the architecture',
      },
    );
  }
  return graph;
}

function invalid(where: string, what: string): AirgapError {
  return new AirgapError(MirrorError.GRAPH_INVALID, `the update graph is not valid: ${what}`, {
    where,
    hint: 'check that the graph URL points at an OpenShift update service (Cincinnati)',
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validate a decoded graph response; GRAPH_INVALID names the first field that is wrong. */
export function parseGraph(body: unknown, where = 'update graph'): UpdateGraph {
  if (!isObject(body)) throw invalid(where, 'the answer is not a JSON object');
  const { nodes, edges, conditionalEdges, version } = body;
  if (!Array.isArray(nodes)) throw invalid(where, '"nodes" is missing or not an array');
  if (!Array.isArray(edges)) throw invalid(where, '"edges" is missing or not an array');
  const parsedNodes = nodes.map((n: unknown, i): GraphNode => {
    if (!isObject(n)) throw invalid(where, `nodes[${i}] is not an object`);
    if (typeof n.version !== 'string' || !parseSemver(n.version)) {
      throw invalid(where, `nodes[${i}].version ${JSON.stringify(n.version)} is not a semantic version`);
    }
    if (typeof n.payload !== 'string' || n.payload.length === 0) {
      throw invalid(where, `nodes[${i}].payload (${n.version}) is missing`);
    }
    const metadata: Record<string, string> = {};
    if (n.metadata !== undefined && n.metadata !== null) {
      if (!isObject(n.metadata)) throw invalid(where, `nodes[${i}].metadata is not an object`);
      for (const [k, v] of Object.entries(n.metadata)) {
        if (typeof v !== 'string') throw invalid(where, `nodes[${i}].metadata["${k}"] is not a string`);
        metadata[k] = v;
      }
    }
    return { version: n.version, payload: n.payload, metadata };
  });
  const parsedEdges = edges.map((e: unknown, i): [number, number] => {
    const ok =
      Array.isArray(e) &&
      e.length === 2 &&
      e.every((x) => Number.isInteger(x) && (x as number) >= 0 && (x as number) < parsedNodes.length);
    if (!ok) throw invalid(where, `edges[${i}] ${JSON.stringify(e)} is not a pair of node indices`);
    return [e[0] as number, e[1] as number];
  });
  if (conditionalEdges !== undefined && conditionalEdges !== null && !Array.isArray(conditionalEdges)) {
    throw invalid(where, '"conditionalEdges" is not an array');
  }
  const parsedConditional = ((conditionalEdges as unknown[] | undefined | null) ?? []).map(
    (c: unknown, i): ConditionalEdge => {
      const at = `conditionalEdges[${i}]`;
      if (!isObject(c) || !Array.isArray(c.edges) || !Array.isArray(c.risks)) {
        throw invalid(where, `${at} needs "edges" and "risks" arrays`);
      }
      const ce = c.edges.map((e: unknown, j) => {
        if (!isObject(e) || typeof e.from !== 'string' || typeof e.to !== 'string') {
          throw invalid(where, `${at}.edges[${j}] needs "from" and "to" versions`);
        }
        return { from: e.from, to: e.to };
      });
      const risks = c.risks.map((r: unknown, j): GraphRisk => {
        if (!isObject(r) || typeof r.name !== 'string')
          throw invalid(where, `${at}.risks[${j}].name is missing`);
        const rules = r.matchingRules ?? [];
        if (!Array.isArray(rules) || !rules.every(isObject)) {
          throw invalid(where, `${at}.risks[${j}].matchingRules is not an array of objects`);
        }
        return {
          name: r.name,
          url: typeof r.url === 'string' ? r.url : '',
          message: typeof r.message === 'string' ? r.message : '',
          matchingRules: rules,
        };
      });
      return { edges: ce, risks };
    },
  );
  return {
    ...(typeof version === 'number' ? { version } : {}),
    nodes: parsedNodes,
    edges: parsedEdges,
    conditionalEdges: parsedConditional,
  };
}
