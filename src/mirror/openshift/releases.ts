/**
 * Which OpenShift releases a set of channels selects, with oc-mirror v2's rules
 * (internal/pkg/release/cincinnati.go GetReleaseReferenceImages, getChannelDownloads,
 * getCrossChannelDownloads; core-cincinnati.go GetUpdates, CalculateUpgrades, calculate;
 * find.go FindRelease). Pure: the graphs come in, releases, risks and reasons come out.
 */
import { AirgapError, usageError } from '../../util/errors.js';
import { compareSemver, parseSemver, semverHint, type SemVer } from '../isc/semver.js';
import type { ReleaseChannel } from '../isc/types.js';
import type { GraphRisk, UpdateGraph } from './graph.js';
import { MirrorError } from '../errors.js';

/** One release to mirror. */
export interface SelectedRelease {
  version: string;
  payload: string;
  /** The channel graphs that selected it. */
  channels: string[];
}

/** An upgrade between two selected releases that the update service recommends only conditionally. */
export interface ReleaseRisk {
  from: string;
  to: string;
  /** Channel graphs that carry this conditional edge. */
  channels: string[];
  /** True when the edge is a hop of a computed upgrade path (shortestPath or across channels). */
  onPath: boolean;
  risks: Pick<GraphRisk, 'name' | 'url' | 'message'>[];
}

/** The outcome of {@link selectReleases}. */
export interface ReleaseSelection {
  /** Deduplicated by payload, in ascending version order. */
  releases: SelectedRelease[];
  risks: ReleaseRisk[];
  /** One line per decision, for the report and --verbose. */
  why: string[];
}

interface Node {
  version: string;
  semver: SemVer;
  payload: string;
  index: number;
}

/** A channel graph with its versions parsed and sorted. */
class ChannelGraph {
  readonly nodes: Node[];
  readonly sorted: Node[];
  constructor(
    readonly name: string,
    readonly graph: UpdateGraph,
  ) {
    this.nodes = graph.nodes.map((n, index) => {
      const semver = parseSemver(n.version);
      if (!semver)
        throw new AirgapError(MirrorError.GRAPH_INVALID, `channel ${name}: "${n.version}" is not a version`);
      return { version: n.version, semver, payload: n.payload, index };
    });
    this.sorted = [...this.nodes].sort((a, b) => compareSemver(a.semver, b.semver));
    if (this.sorted.length === 0) {
      throw usageError(MirrorError.GRAPH_CHANNEL_EMPTY, `channel "${name}" has no releases`, {
        hint: 'check the channel name (e.g. stable-4.18) and the architecture',
      });
    }
  }
  get first(): Node {
    return this.sorted[0];
  }
  get last(): Node {
    return this.sorted[this.sorted.length - 1];
  }
  span(): string {
    return `${this.first.version} … ${this.last.version} (${this.sorted.length} releases)`;
  }
  find(v: SemVer): Node | undefined {
    return this.nodes.find((n) => compareSemver(n.semver, v) === 0);
  }
  /** The node, or a usage error naming the channel and what it holds. */
  need(v: SemVer, role: string): Node {
    const n = this.find(v);
    if (!n) {
      throw usageError(
        MirrorError.RELEASE_NOT_IN_CHANNEL,
        `${role} ${v.raw} is not in channel "${this.name}"`,
        {
          hint: `the channel holds ${this.span()}`,
        },
      );
    }
    return n;
  }
  /**
   * BFS over `edges`, each node's successors in descending version order (as oc-mirror). With
   * `conditional`, the conditional edges count as well (updates recommended only when their risks
   * do not apply).
   */
  shortestPath(from: Node, to: Node, conditional = false): Node[] {
    const next = new Map<number, number[]>();
    const edges: [number, number][] = [...this.graph.edges];
    if (conditional) {
      const at = new Map(this.nodes.map((n) => [n.version, n.index]));
      for (const ce of this.graph.conditionalEdges)
        for (const e of ce.edges) {
          const a = at.get(e.from);
          const b = at.get(e.to);
          if (a !== undefined && b !== undefined) edges.push([a, b]);
        }
    }
    for (const [a, b] of edges) next.set(a, [...(next.get(a) ?? []), b]);
    for (const list of next.values())
      list.sort((x, y) => compareSemver(this.nodes[y].semver, this.nodes[x].semver));
    const prev = new Map<number, number>([[from.index, -1]]);
    const queue = [from.index];
    while (queue.length > 0) {
      const cur = queue.shift() as number;
      if (cur === to.index) break;
      for (const n of next.get(cur) ?? []) {
        if (!prev.has(n)) {
          prev.set(n, cur);
          queue.push(n);
        }
      }
    }
    if (!prev.has(to.index)) return [];
    const path: Node[] = [];
    for (let i = to.index; i !== -1; i = prev.get(i) as number) path.unshift(this.nodes[i]);
    return path;
  }
}

function parseBound(v: string, channel: string, field: string): SemVer {
  const s = parseSemver(v);
  if (!s) {
    throw usageError(
      MirrorError.RELEASE_VERSION_INVALID,
      `channel "${channel}": ${field} "${v}" is not a version`,
      {
        hint: semverHint(v),
      },
    );
  }
  return s;
}

/** The major.minor a channel name ends with (`stable-4.14` → 4.14), as oc-mirror reads it. */
function channelMinor(name: string): { prefix: string; major: number; minor: number } | undefined {
  const m = /^(.*)-(\d+)\.(\d+)$/.exec(name);
  return m ? { prefix: m[1], major: Number(m[2]), minor: Number(m[3]) } : undefined;
}

class Selection {
  private readonly byPayload = new Map<string, SelectedRelease & { semver: SemVer }>();
  private readonly pathHops = new Set<string>();
  private readonly picked = new Map<string, Node[]>();
  readonly why: string[] = [];
  constructor(private readonly graphs: Record<string, UpdateGraph>) {}
  private cache = new Map<string, ChannelGraph>();

  graph(name: string): ChannelGraph {
    let g = this.cache.get(name);
    if (!g) {
      const raw = this.graphs[name];
      if (!raw) {
        throw new AirgapError(
          MirrorError.RELEASE_GRAPH_MISSING,
          `the update graph of channel "${name}" was not fetched`,
          {
            details: { channel: name },
          },
        );
      }
      g = new ChannelGraph(name, raw);
      this.cache.set(name, g);
    }
    return g;
  }

  add(g: ChannelGraph, nodes: Node[], path = false): void {
    for (const n of nodes) {
      const had = this.byPayload.get(n.payload);
      if (had) {
        if (!had.channels.includes(g.name)) had.channels.push(g.name);
      } else {
        this.byPayload.set(n.payload, {
          version: n.version,
          payload: n.payload,
          channels: [g.name],
          semver: n.semver,
        });
      }
    }
    this.picked.set(g.name, [...(this.picked.get(g.name) ?? []), ...nodes]);
    if (path)
      for (let i = 1; i < nodes.length; i++) this.pathHops.add(`${nodes[i - 1].version}>${nodes[i].version}`);
  }

  /** Shortest path in one channel, plus both ends even without a path (oc-mirror gatherUpdates). */
  addPath(g: ChannelGraph, from: Node, to: Node): void {
    const path = g.shortestPath(from, to);
    if (path.length === 0) {
      this.why.push(
        `${g.name}: no upgrade path from ${from.version} to ${to.version}; only the two ends are kept`,
      );
      this.add(g, from === to ? [from] : [from, to]);
    } else {
      this.why.push(`${g.name}: upgrade path ${path.map((n) => n.version).join(' → ')}`);
      this.add(g, path, true);
    }
  }

  result(): ReleaseSelection {
    const releases = [...this.byPayload.values()]
      .sort((a, b) => compareSemver(a.semver, b.semver))
      .map(({ version, payload, channels }) => ({ version, payload, channels }));
    const risks = new Map<string, ReleaseRisk & { f: SemVer; t: SemVer }>();
    for (const [name, nodes] of this.picked) {
      const g = this.graph(name);
      const chosen = new Set(nodes.map((n) => n.version));
      for (const ce of g.graph.conditionalEdges) {
        for (const e of ce.edges) {
          if (!chosen.has(e.from) || !chosen.has(e.to)) continue;
          const key = `${e.from}>${e.to}`;
          const f = parseSemver(e.from);
          const t = parseSemver(e.to);
          if (!f || !t) continue;
          const r = risks.get(key) ?? {
            from: e.from,
            to: e.to,
            channels: [],
            onPath: this.pathHops.has(key),
            risks: [],
            f,
            t,
          };
          if (!r.channels.includes(name)) r.channels.push(name);
          for (const k of ce.risks) {
            if (!r.risks.some((x) => x.name === k.name))
              r.risks.push({ name: k.name, url: k.url, message: k.message });
          }
          risks.set(key, r);
        }
      }
    }
    const riskList = [...risks.values()]
      .sort((a, b) => compareSemver(a.f, b.f) || compareSemver(a.t, b.t))
      .map(({ f: _f, t: _t, ...r }) => r);
    const onPath = riskList.filter((r) => r.onPath);
    if (riskList.length > 0) {
      this.why.push(
        `${riskList.length} upgrade(s) between selected releases carry conditional risks` +
          (onPath.length > 0
            ? `, ${onPath.length} on a chosen path: ${onPath.map((r) => `${r.from} → ${r.to}`).join(', ')}`
            : ''),
      );
    }
    return { releases, risks: riskList, why: this.why };
  }
}

/** One channel's bounds with oc-mirror's defaults; returns the completed [min, max]. */
function selectChannel(sel: Selection, ch: ReleaseChannel): [SemVer, SemVer] {
  const g = sel.graph(ch.name);
  let min = ch.minVersion !== undefined ? parseBound(ch.minVersion, ch.name, 'minVersion') : undefined;
  let max = ch.maxVersion !== undefined ? parseBound(ch.maxVersion, ch.name, 'maxVersion') : undefined;
  let how: string;
  if (min && max) how = `range ${min.raw} … ${max.raw}`;
  else {
    if (!max) {
      max = g.last.semver;
      if (!min && !ch.full) min = max;
    }
    if (!min) min = g.first.semver;
    how =
      compareSemver(min, max) === 0 && !ch.minVersion && !ch.full
        ? `heads only: ${max.raw} (the highest release in the channel)`
        : `${ch.full ? 'full ' : ''}range ${min.raw} … ${max.raw} (defaults: min = first, max = last release of the channel)`;
  }
  if (ch.shortestPath) {
    sel.why.push(`${ch.name}: ${how}, shortest path`);
    sel.addPath(g, g.need(min, 'minVersion'), g.need(max, 'maxVersion'));
    return [min, max];
  }
  const lo = min;
  const hi = max;
  const inRange = g.sorted.filter(
    (n) => compareSemver(n.semver, lo) >= 0 && compareSemver(n.semver, hi) <= 0,
  );
  if (inRange.length === 0) {
    throw usageError(
      MirrorError.RELEASE_RANGE_EMPTY,
      `channel "${ch.name}" has no release in ${lo.raw} … ${hi.raw}`,
      {
        hint: `the channel holds ${g.span()}`,
        details: { channel: ch.name, minVersion: lo.raw, maxVersion: hi.raw },
      },
    );
  }
  sel.why.push(`${ch.name}: ${how}: ${inRange.length} release(s)`);
  sel.add(g, inRange);
  return [min, max];
}

/** Upgrades from the lowest minimum to the highest maximum across OCP channels (oc-mirror CalculateUpgrades). */
function crossChannel(sel: Selection, bounds: { ch: ReleaseChannel; min: SemVer; max: SemVer }[]): void {
  const ocp = bounds.filter((b) => b.ch.type === 'ocp');
  if (ocp.length === 0) return;
  const first = ocp.reduce((a, b) => (compareSemver(b.min, a.min) < 0 ? b : a));
  const last = ocp.reduce((a, b) => (compareSemver(b.max, a.max) > 0 ? b : a));
  const start = first.min;
  const req = last.max;
  sel.why.push(
    `across channels: upgrades from ${start.raw} (${first.ch.name}) to ${req.raw} (${last.ch.name})`,
  );
  if (first.ch.name === last.ch.name) {
    const g = sel.graph(first.ch.name);
    sel.addPath(g, g.need(start, 'minVersion'), g.need(req, 'maxVersion'));
    return;
  }
  const src = channelMinor(first.ch.name);
  const dst = channelMinor(last.ch.name);
  if (!src || !dst) {
    throw usageError(
      MirrorError.RELEASE_CHANNEL_NAME,
      `cannot read a minor version from "${src ? last.ch.name : first.ch.name}"`,
      {
        hint: 'OCP channels are named <prefix>-<major>.<minor>, e.g. stable-4.18',
      },
    );
  }
  const target = sel.graph(last.ch.name);
  const blocked = (g: ChannelGraph, v: SemVer, ver: SemVer) => {
    sel.why.push(`across channels: ${v.raw} is not in ${g.name} (blocked edge); keeping ${ver.raw} only`);
    sel.add(target, [target.need(ver, 'maxVersion')]);
  };
  if (src.major === dst.major && src.minor === dst.minor) {
    if (!target.find(start)) return blocked(target, start, req);
    sel.addPath(target, target.need(start, 'minVersion'), target.need(req, 'maxVersion'));
    return;
  }
  if (src.major !== dst.major || src.minor > dst.minor) {
    // oc-mirror only walks minor versions upwards within one major (and would loop otherwise).
    sel.why.push(`across channels: no path walked from ${first.ch.name} to ${last.ch.name}`);
    return;
  }
  const source = sel.graph(first.ch.name);
  sel.addPath(source, source.need(start, 'minVersion'), source.last);
  let from = source.last.semver;
  for (let minor = src.minor + 1; minor <= dst.minor; minor++) {
    const isTarget = minor === dst.minor;
    const g = isTarget ? target : sel.graph(`${src.prefix}-${src.major}.${minor}`);
    const to = isTarget ? req : g.last.semver;
    if (!g.find(from)) return blocked(g, from, to);
    sel.addPath(g, g.need(from, 'start'), g.need(to, 'maxVersion'));
    from = to;
  }
}

/**
 * Select releases from channel graphs (one architecture) the way oc-mirror v2 does:
 * - no bounds and not `full`: the channel head only (min = max = highest release);
 * - no maxVersion: max = highest release; no minVersion: min = lowest release (so `full` alone
 *   is the whole channel); both set: everything between them;
 * - without `shortestPath`: every release with min ≤ version ≤ max; with it: the BFS shortest
 *   upgrade path over `edges` from min to max (successors tried in descending version order), plus
 *   both ends;
 * - more than one channel: also the upgrade path from the lowest min to the highest max across OCP
 *   channels, walking minor versions (`stable-4.14` → `stable-4.15` …) and stopping at a blocked
 *   edge. The graphs of those intermediate channels must be in `graphs` (else RELEASE_GRAPH_MISSING,
 *   whose details.channel names the one to fetch: see {@link resolveReleases}).
 * Releases are deduplicated by payload. Conditional edges between selected releases are reported.
 */
export function selectReleases(
  graphs: Record<string, UpdateGraph>,
  channels: ReleaseChannel[],
  opts: SelectOptions = {},
): ReleaseSelection {
  const sel = new Selection(graphs);
  const bounds = channels.map((ch) => {
    const [min, max] = selectChannel(sel, ch);
    return { ch, min, max };
  });
  if (channels.length > 1) crossChannel(sel, bounds);
  if (opts.fromVersion) fromRunningVersion(sel, bounds, opts.fromVersion);
  return sel.result();
}

/** Options of {@link selectReleases}. */
export interface SelectOptions {
  /**
   * The version a cluster runs now (a hosted cluster's): the releases on the update path the
   * graph recommends from it to the highest selected release are kept too.
   */
  fromVersion?: string;
}

/**
 * The update path from the version a cluster runs to the highest release selected, in the channel
 * of that release: the recommended edges only, else (said so) through conditional updates, whose
 * risks the plan shows. A version the channel does not hold has no path: said with what to add.
 */
function fromRunningVersion(
  sel: Selection,
  bounds: { ch: ReleaseChannel; max: SemVer }[],
  running: string,
): void {
  const from = parseSemver(running);
  if (!from) {
    throw usageError(MirrorError.RELEASE_VERSION_INVALID, `--from-version "${running}" is not a version`, {
      hint: 'give the version the cluster runs, x.y.z (e.g. 4.18.1)',
    });
  }
  const top = bounds.reduce((a, b) => (compareSemver(b.max, a.max) > 0 ? b : a));
  const g = sel.graph(top.ch.name);
  const to = g.need(top.max, 'maxVersion');
  if (compareSemver(from, to.semver) >= 0) {
    sel.why.push(`the cluster runs ${from.raw}: nothing selected is newer, no update path added`);
    return;
  }
  const start = g.find(from);
  if (!start) {
    throw usageError(
      MirrorError.RELEASE_NOT_IN_CHANNEL,
      `--from-version ${from.raw} is not in channel "${g.name}", so it has no update path to ${to.version}`,
      {
        hint: `add the channel of ${from.major}.${from.minor} (e.g. stable-${from.major}.${from.minor}) to reach ${g.name} through it, or check the version the cluster runs; ${g.name} holds ${g.span()}`,
      },
    );
  }
  const recommended = g.shortestPath(start, to);
  if (recommended.length > 0) {
    sel.why.push(
      `the cluster runs ${from.raw}: recommended update path ${recommended.map((n) => n.version).join(' → ')} (${g.name})`,
    );
    sel.add(g, recommended, true);
    return;
  }
  const conditional = g.shortestPath(start, to, true);
  if (conditional.length === 0) {
    throw usageError(
      MirrorError.RELEASE_NO_PATH,
      `channel "${g.name}" has no update path from ${from.raw} to ${to.version}`,
      { hint: `choose a maxVersion the cluster can reach from ${from.raw}, or update it in steps` },
    );
  }
  sel.why.push(
    `the cluster runs ${from.raw}: no recommended update path to ${to.version}; the only one goes through conditional updates: ${conditional.map((n) => n.version).join(' → ')} (${g.name}); check their risks before updating`,
  );
  sel.add(g, conditional, true);
}

/**
 * {@link selectReleases}, fetching every graph it needs (the configured channels first, then any
 * intermediate channel of a cross-channel upgrade path).
 */
export async function resolveReleases(
  channels: ReleaseChannel[],
  fetch: (channel: string) => Promise<UpdateGraph>,
  opts: SelectOptions = {},
): Promise<{ selection: ReleaseSelection; graphs: Record<string, UpdateGraph> }> {
  const graphs: Record<string, UpdateGraph> = {};
  for (const ch of channels) graphs[ch.name] ??= await fetch(ch.name);
  for (;;) {
    try {
      return { selection: selectReleases(graphs, channels, opts), graphs };
    } catch (e) {
      const missing =
        e instanceof AirgapError && e.code === MirrorError.RELEASE_GRAPH_MISSING
          ? e.details?.channel
          : undefined;
      if (typeof missing !== 'string' || graphs[missing]) throw e;
      graphs[missing] = await fetch(missing);
    }
  }
}
