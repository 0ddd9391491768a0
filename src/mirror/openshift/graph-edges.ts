/**
 * The update edge between two releases decided from graph data, as the OpenShift Update Service
 * (Cincinnati) decides it, for a site that has the graph-data image in its mirror but no update
 * service running. The files are those of the cincinnati-graph-data repository (schema 1.x):
 *
 * - `channels/<channel>.yaml`: `name` and `versions`. A version with SemVer build metadata
 *   (`4.2.14+amd64`) applies to that architecture only.
 * - `blocked-edges/*.yaml`: `to` (a version, `+arch` optional) and `from` (a regular expression,
 *   not anchored unless it says `^…$`, matched against the source version with its architecture
 *   suffix: `4.17.3+amd64`). Without `matchingRules` the edge is dropped; with them (and `url`,
 *   `name`, `message`, schema 1.1) it becomes a conditional update carrying that risk.
 *
 * The edges themselves come from the releases (graph-builder): A → B when B's release-metadata
 * lists A in `previous` (or A's lists B in `next`), plus the `io.openshift.upgrades.graph.*.add`
 * metadata, minus `*.remove` (`*` removes every edge into the release). The order is Cincinnati's
 * (edge-add-remove plugin): edges added, conditional risks attached to the edges that exist, then
 * edges removed; so an edge that both a risk and a removal match stays conditional, as the update
 * service publishes it. Both releases must be in the channel's versions (channel-filter plugin).
 */
import { isYamlLimitError, parseYaml, type YamlBudget } from '../../config/yaml-load.js';
import { AirgapError, messageOf } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import type { GraphRisk } from './graph.js';

/** The release-metadata keys Cincinnati reads to add and remove edges. */
export const GRAPH_METADATA = {
  previousAdd: 'io.openshift.upgrades.graph.previous.add',
  previousRemove: 'io.openshift.upgrades.graph.previous.remove',
  nextAdd: 'io.openshift.upgrades.graph.next.add',
  nextRemove: 'io.openshift.upgrades.graph.next.remove',
} as const;

/** `channels/<name>.yaml`. */
export interface GraphChannel {
  name: string;
  /** As written: `4.17.3`, or `4.2.14+amd64` for one architecture. */
  versions: string[];
}

/** One `blocked-edges/*.yaml` file. */
export interface BlockedEdge {
  /** The file, for messages (`blocked-edges/4.13.4-MultiNetworkAttachmentsWhereaboutsVersion.yaml`). */
  file: string;
  /** The target version, `+arch` optional. */
  to: string;
  /** The source regular expression, as written. */
  from: string;
  /** With matchingRules: the risk that makes the edge conditional; without, the edge is blocked. */
  risk?: GraphRisk;
}

/** The release-metadata fields the graph is built from (`release-manifests/release-metadata`). */
export interface EdgeReleaseMetadata {
  version: string;
  previous?: string[];
  next?: string[];
  metadata?: Record<string, string>;
}

/** What to decide: the update `from` → `target.version` for one architecture in `channel`. */
export interface EdgeQuestion {
  from: string;
  /** The target's release metadata (its `previous` and `…previous.add/.remove` keys). */
  target: EdgeReleaseMetadata;
  /** The running release's metadata, when it was read (its `next` and `…next.add/.remove`). */
  source?: EdgeReleaseMetadata;
  /** The update-service architecture (amd64, arm64, ppc64le, s390x, multi). */
  arch: string;
}

export interface EdgeDecision {
  kind: 'recommended' | 'conditional' | 'none';
  /** The risks of a conditional edge, in file order, each once. */
  risks: GraphRisk[];
  /** Why there is no edge (kind `none`). */
  reason?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** GRAPH_IMAGE_INVALID: a graph-data file of `image` cannot be used. */
export function invalidGraphFile(image: string, file: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError(
    MirrorError.GRAPH_IMAGE_INVALID,
    `the graph image ${image} has invalid graph data: ${file}: ${why}`,
    {
      where: image,
      cause,
      hint: 'mirror the graph data again (airgap mirror with platform.graph: true), or give --graph-url to check the update against an update service',
    },
  );
}

/**
 * What a graph-data file holds, under the bounded loader's limits; with `budget`, the file is one
 * of the graph image's, whose bytes the budget counted as they were read.
 */
function loadGraphFile(text: string, image: string, file: string, budget?: YamlBudget): unknown {
  try {
    return parseYaml(text, {
      source: `${file} in the graph image ${image}`,
      ...(budget ? { budget, held: true } : {}),
    });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw invalidGraphFile(image, file, `not YAML: ${messageOf(e).split('\n')[0]}`, e);
  }
}

/** A version as YAML may give it: a string, or a number for a careless `4.10`. */
function versionText(v: unknown): string | undefined {
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : undefined;
}

/** Parse `channels/<name>.yaml`; GRAPH_IMAGE_INVALID names the image and the file. */
export function parseChannelFile(
  text: string,
  image: string,
  file: string,
  budget?: YamlBudget,
): GraphChannel {
  const doc = loadGraphFile(text, image, file, budget);
  if (!isObject(doc)) throw invalidGraphFile(image, file, 'not a mapping with name and versions');
  if (typeof doc.name !== 'string' || !doc.name) throw invalidGraphFile(image, file, 'no name');
  const raw = doc.versions ?? [];
  if (!Array.isArray(raw)) throw invalidGraphFile(image, file, 'versions is not a list');
  const versions = raw.map((v, i) => {
    const s = versionText(v);
    if (!s) throw invalidGraphFile(image, file, `versions[${i}] ${JSON.stringify(v)} is not a version`);
    return s;
  });
  return { name: doc.name, versions };
}

/** Parse one `blocked-edges/*.yaml`; GRAPH_IMAGE_INVALID names the image and the file. */
export function parseBlockedEdgeFile(
  text: string,
  image: string,
  file: string,
  budget?: YamlBudget,
): BlockedEdge {
  const doc = loadGraphFile(text, image, file, budget);
  if (!isObject(doc)) throw invalidGraphFile(image, file, 'not a mapping with to and from');
  const to = versionText(doc.to);
  if (!to) throw invalidGraphFile(image, file, '"to" is missing or not a version');
  if (typeof doc.from !== 'string' || !doc.from)
    throw invalidGraphFile(image, file, '"from" is missing or not a string');
  fromRegex(doc.from, image, file);
  const edge: BlockedEdge = { file, to, from: doc.from };
  if (doc.matchingRules === undefined || doc.matchingRules === null) return edge;
  const rules = doc.matchingRules;
  if (!Array.isArray(rules) || !rules.every(isObject))
    throw invalidGraphFile(image, file, 'matchingRules is not a list of conditions');
  const base = file.slice(file.lastIndexOf('/') + 1).replace(/\.ya?ml$/, '');
  edge.risk = {
    // Schema 1.1 requires name, url and message with matchingRules; a file short of one is still
    // a risk (never a plain edge), named after the file.
    name: typeof doc.name === 'string' && doc.name ? doc.name : base,
    url: typeof doc.url === 'string' ? doc.url : '',
    message: typeof doc.message === 'string' ? doc.message.trim() : '',
    matchingRules: rules,
  };
  return edge;
}

/** The `from` expression compiled as Cincinnati uses it: unanchored, case-sensitive. */
function fromRegex(source: string, image: string, file: string): RegExp {
  try {
    return new RegExp(source);
  } catch (e) {
    throw invalidGraphFile(image, file, `"from" is not a regular expression: ${messageOf(e)}`, e);
  }
}

/** `4.2.14+amd64` → [`4.2.14`, `amd64`]. */
function splitBuild(v: string): [string, string | undefined] {
  const i = v.indexOf('+');
  return i < 0 ? [v, undefined] : [v.slice(0, i), v.slice(i + 1)];
}

/** Whether a graph-data release name (`4.17.3`, `4.17.3+amd64`) names `version` on `arch`. */
export function namesRelease(name: string, version: string, arch: string): boolean {
  const [core, build] = splitBuild(name);
  const [want] = splitBuild(version);
  return core === want && (build === undefined || build === arch);
}

/** The versions of a comma-separated metadata value (`4.17.1, 4.17.2`). */
function listOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const sameVersion = (a: string, b: string): boolean => splitBuild(a)[0] === splitBuild(b)[0];

/**
 * Decide the update `q.from` → `q.target.version` in `channel` from graph data; see the file
 * comment. Pure: the files were parsed already.
 */
export function decideEdge(
  channel: GraphChannel,
  blockedEdges: readonly BlockedEdge[],
  q: EdgeQuestion,
): EdgeDecision {
  const from = q.from;
  const to = q.target.version;
  const none = (reason: string): EdgeDecision => ({ kind: 'none', risks: [], reason });
  for (const v of [from, to]) {
    if (!channel.versions.some((n) => namesRelease(n, v, q.arch)))
      return none(`${v} is not in channel ${channel.name}`);
  }
  const targetMeta = q.target.metadata ?? {};
  const sourceMeta = q.source?.metadata ?? {};
  const listed =
    (q.target.previous ?? []).some((p) => sameVersion(p, from)) ||
    (q.source?.next ?? []).some((n) => sameVersion(n, to)) ||
    listOf(targetMeta[GRAPH_METADATA.previousAdd]).some((p) => sameVersion(p, from)) ||
    listOf(sourceMeta[GRAPH_METADATA.nextAdd]).some((n) => sameVersion(n, to));
  if (!listed) return none(`release ${to} does not list ${from} among the releases it updates from`);

  const fromName = `${splitBuild(from)[0]}+${q.arch}`;
  const matching = blockedEdges.filter(
    (b) => namesRelease(b.to, to, q.arch) && new RegExp(b.from).test(fromName),
  );
  const risks: GraphRisk[] = [];
  for (const b of matching) {
    if (b.risk && !risks.some((r) => r.name === b.risk!.name && r.url === b.risk!.url)) risks.push(b.risk);
  }
  if (risks.length > 0) return { kind: 'conditional', risks };

  const removed = targetMeta[GRAPH_METADATA.previousRemove]?.trim();
  if (removed === '*')
    return none(`release ${to} removes every update into it (${GRAPH_METADATA.previousRemove}: *)`);
  if (listOf(removed).some((p) => sameVersion(p, from)))
    return none(`release ${to} removes the update from ${from} (${GRAPH_METADATA.previousRemove})`);
  if (listOf(sourceMeta[GRAPH_METADATA.nextRemove]).some((n) => sameVersion(n, to)))
    return none(`release ${from} removes the update to ${to} (${GRAPH_METADATA.nextRemove})`);
  const blocked = matching.find((b) => !b.risk);
  if (blocked) return none(`blocked by ${blocked.file} (from: ${blocked.from})`);
  return { kind: 'recommended', risks: [] };
}
