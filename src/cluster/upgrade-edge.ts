/**
 * The update-edge check of `airgap cluster upgrade`: is `from → to` an update OpenShift recommends
 * in the cluster's channel, and what said so. In order:
 *
 * 1. `--graph-url`: the OpenShift Update Service it names (the channel's graph, fetched);
 * 2. the graph-data image in the mirror, which `airgap mirror` pushes beside the release images for
 *    `platform.graph: true` (`<mirror>/<prefix>/openshift/graph-image:latest` for releases in
 *    `<mirror>/<prefix>/openshift/release-images`): the channel file and blocked edges it holds,
 *    with the target payload's release metadata, decided as the update service would
 *    (mirror/openshift/graph-edges.ts). A disconnected site has this long before it runs an
 *    update service;
 * 3. UPDATE_URL_OVERRIDE: an update service;
 * 4. nothing: the update is unchecked (and needs --force).
 *
 * The graph image is read with the site's pull secret and CA files, as the release was.
 */
import {
  decideEdge,
  fetchGraph,
  graphEndpoint,
  graphImageRepo,
  MirrorError,
  parseReference,
  readMirroredGraph,
  readReleasePayload,
  RegistryClient,
  type MirroredGraph,
} from '../mirror/index.js';
import { hasCode } from '../util/errors.js';
import { mapToMirror, mirrorClient, type MirrorAccess, type ReleaseResolution } from './release.js';
import type { ImageContentSource } from './site/types.js';

/** How the update was judged. */
export interface UpdateEdge {
  /** recommended; conditional (with risks); none (not recommended); unchecked (nothing to check against). */
  kind: 'recommended' | 'conditional' | 'none' | 'unchecked';
  /** `name: message (url)` of each risk of a conditional update. */
  risks: string[];
  /** What judged it: `update-service <url>` or `graph data in <image>`; absent when unchecked. */
  source?: string;
  /** Why there is no edge, or why it could not be checked, when that is known. */
  reason?: string;
}

export interface UpdateEdgeOptions extends MirrorAccess {
  /** The version the cluster runs. */
  from: string;
  /** The target, resolved in the mirror. */
  to: ReleaseResolution;
  channel: string;
  /** OCI / update-service architecture (amd64, arm64, …). */
  arch: string;
  /** `--graph-url`: an update service, asked before anything else. */
  graphUrl?: string;
  /** The site's release image (upstream or mirror reference): where else the mirror's graph image may be. */
  siteRelease: string;
  imageContentSources: ImageContentSource[];
  /** A note for the person (a graph image that could not be read, so the next source was asked). */
  warn(message: string): void;
}

const RELEASE_IMAGES = 'openshift/release-images';

/**
 * The graph image beside a release image in the mirror: `<reg>/<prefix>/openshift/release-images…`
 * → `<reg>/<prefix>/openshift/graph-image:latest`; undefined for a release stored elsewhere.
 */
function graphImageBeside(releaseImage: string): { registry: string; repo: string } | undefined {
  const ref = parseReference(releaseImage);
  const repo = ref.repository;
  if (repo !== RELEASE_IMAGES && !repo.endsWith(`/${RELEASE_IMAGES}`)) return undefined;
  return { registry: ref.registry, repo: graphImageRepo(repo.slice(0, -RELEASE_IMAGES.length)) };
}

/** The risks of a conditional edge, one line each. */
function riskLines(risks: { name: string; message: string; url: string }[]): string[] {
  return risks.map((r) => `${r.name}: ${r.message}${r.url ? ` (${r.url})` : ''}`);
}

/** The edge as the update service at `endpoint` publishes it. */
async function fromUpdateService(o: UpdateEdgeOptions, endpoint: string): Promise<UpdateEdge> {
  const source = `update-service ${endpoint}`;
  const graph = await fetchGraph({ channel: o.channel, arch: o.arch, graphUrl: endpoint, retries: 1 });
  const to = o.to.version;
  // An edge listed both plainly and with risks is conditional, as the cluster-version operator takes it.
  const conditional = graph.conditionalEdges.find((c) =>
    c.edges.some((e) => e.from === o.from && e.to === to),
  );
  if (conditional) return { kind: 'conditional', risks: riskLines(conditional.risks), source };
  const at = (v: string) => graph.nodes.findIndex((n) => n.version === v);
  const [a, b] = [at(o.from), at(to)];
  if (a >= 0 && b >= 0 && graph.edges.some(([x, y]) => x === a && y === b))
    return { kind: 'recommended', risks: [], source };
  return { kind: 'none', risks: [], source };
}

/** The mirror's graph data for the channel, from the first graph image there is; undefined when none. */
async function mirroredGraph(
  o: UpdateEdgeOptions,
  client: (registry: string) => RegistryClient,
): Promise<MirroredGraph | undefined> {
  const places = [o.to.image, mapToMirror(o.siteRelease, o.imageContentSources).image]
    .map(graphImageBeside)
    .filter((p): p is { registry: string; repo: string } => !!p)
    .filter((p, i, all) => all.findIndex((q) => q.registry === p.registry && q.repo === p.repo) === i);
  for (const p of places) {
    try {
      const graph = await readMirroredGraph(client(p.registry), p.repo, 'latest', {
        channel: o.channel,
        arch: o.arch,
      });
      if (graph) return graph;
    } catch (e) {
      // Registries that hide what a pull secret may not read answer 401/403 for a missing repository.
      if (!hasCode(e, MirrorError.REGISTRY_UNAUTHORIZED, MirrorError.REGISTRY_DENIED)) throw e;
      o.warn(
        `cannot read the graph image ${p.registry}/${p.repo}:latest (${e.message}); not checking against it`,
      );
    }
  }
  return undefined;
}

/** The edge as the graph data in the mirror decides it, with the target payload's release metadata. */
async function fromGraphData(
  o: UpdateEdgeOptions,
  graph: MirroredGraph,
  client: (registry: string) => RegistryClient,
): Promise<UpdateEdge> {
  const image = `${graph.image}@${graph.digest}`;
  const source = `graph data in ${image}`;
  if (!graph.channel) {
    const has = graph.channels.length ? `it has ${graph.channels.join(', ')}` : 'it has no channel at all';
    return {
      kind: 'unchecked',
      risks: [],
      source,
      reason: `the graph data in ${image} has no channel ${o.channel} (${has})`,
    };
  }
  const target = parseReference(o.to.image);
  const payload = await readReleasePayload(client(target.registry), target.repository, o.to.digest, {
    arch: o.arch,
  });
  const d = decideEdge(graph.channel, graph.blockedEdges, {
    from: o.from,
    target: payload.metadata,
    arch: o.arch,
  });
  return { kind: d.kind, risks: riskLines(d.risks), source, ...(d.reason ? { reason: d.reason } : {}) };
}

/** Judge `from → to` from the first source there is; see the file comment. */
export async function judgeUpdateEdge(o: UpdateEdgeOptions): Promise<UpdateEdge> {
  if (o.graphUrl) return fromUpdateService(o, graphEndpoint(o.graphUrl));
  const clients = new Map<string, RegistryClient>();
  const client = (registry: string) => {
    let c = clients.get(registry);
    if (!c) clients.set(registry, (c = mirrorClient(registry, o)));
    return c;
  };
  try {
    const graph = await mirroredGraph(o, client);
    if (graph) return await fromGraphData(o, graph, client);
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  const override = process.env.UPDATE_URL_OVERRIDE;
  if (override) return fromUpdateService(o, override);
  return { kind: 'unchecked', risks: [] };
}
