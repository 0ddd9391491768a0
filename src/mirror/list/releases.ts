/**
 * `airgap mirror list releases`: what the OpenShift update graph (Cincinnati) offers, asked the way
 * oc-mirror asks it (graph.ts), to choose the channels and versions of an ImageSetConfiguration:
 * - the channels of a version: every channel that the releases of `stable-<x.y>` (else
 *   `candidate-<x.y>`) name in `io.openshift.upgrades.graph.release.channels`, each asked for
 *   its own releases of that minor and its latest (for `x.y.z`: the channels carrying that release);
 * - the releases of a channel, ascending, the latest marked, with their payloads and errata;
 * - the architectures the update service knows (no network).
 */
import type { TlsOptions } from '../../net/http.js';
import { AirgapError, CommonError, hasCode, usageError } from '../../util/errors.js';
import { Limiter } from '../../util/limit.js';
import { MirrorError } from '../errors.js';
import { compareSemver, parseSemver, type SemVer } from '../isc/semver.js';
import { CHANNELS_METADATA, unknownChannel } from '../openshift/graph-channels.js';
import {
  GRAPH_ARCHES,
  fetchGraph,
  graphArch,
  graphEndpoint,
  type GraphArch,
  type GraphNode,
  type UpdateGraph,
} from '../openshift/graph.js';
import { marked, table } from './table.js';

/** Options of {@link listReleases}: one of `version`, `channel` or `arches`. */
export interface ListReleasesOptions {
  /** `x.y` (the channels of that minor) or `x.y.z` (the channels carrying that release). */
  version?: string;
  /** A channel: its releases. */
  channel?: string;
  /** The payload architecture asked for (amd64 default; x86_64 and aarch64 understood). */
  arch?: string;
  /** List the architectures the update service knows. */
  arches?: boolean;
  /** The graph endpoint; default `UPDATE_URL_OVERRIDE`, else api.openshift.com. */
  graphUrl?: string;
  tls?: TlsOptions;
}

/** One channel of a version. */
export interface ChannelSummary {
  name: string;
  /** Releases of the channel's own minor in it. */
  releases: number;
  /** Its newest release of that minor. */
  latest?: string;
}

/** The channels of a version. */
export interface ChannelsListing {
  kind: 'channels';
  /** As asked: `4.18` or `4.18.3`. */
  version: string;
  arch: GraphArch;
  /** The update service asked. */
  graph: string;
  channels: ChannelSummary[];
}

/** One release of a channel. */
export interface ReleaseEntry {
  version: string;
  /** The release image, by digest. */
  payload: string;
  /** The errata page, when the graph names one. */
  errata?: string;
  latest: boolean;
}

/** The releases of a channel, ascending. */
export interface ReleasesListing {
  kind: 'releases';
  channel: string;
  arch: GraphArch;
  graph: string;
  latest: string;
  releases: ReleaseEntry[];
}

/** The architectures the update service knows. */
export interface ArchitecturesListing {
  kind: 'architectures';
  architectures: { name: GraphArch; aliases: string[]; description: string }[];
}

export type ReleaseListing = ChannelsListing | ReleasesListing | ArchitecturesListing;

const ARCH_INFO: Record<GraphArch, { aliases: string[]; description: string }> = {
  amd64: { aliases: ['x86_64'], description: '64-bit x86' },
  arm64: { aliases: ['aarch64'], description: '64-bit ARM' },
  ppc64le: { aliases: [], description: 'IBM Power, little endian' },
  s390x: { aliases: [], description: 'IBM Z and LinuxONE' },
  multi: {
    aliases: [],
    description: 'multi-architecture payloads (one manifest list for every architecture)',
  },
};

const MINOR = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const CHANNEL_MINOR = /-(\d+)\.(\d+)$/;
/** Requests to the update service at once, for the channels of a version. */
const PARALLEL = 4;

const bySemver = (a: string, b: string): number => {
  const x = parseSemver(a);
  const y = parseSemver(b);
  return x && y ? compareSemver(x, y) : a < b ? -1 : a > b ? 1 : 0;
};

/** `--version`: `x.y`, or a release `x.y.z[-pre]`. */
function parseVersion(raw: string): { major: number; minor: number; release?: SemVer } {
  const v = raw.trim();
  const short = MINOR.exec(v);
  if (short) return { major: Number(short[1]), minor: Number(short[2]) };
  const release = parseSemver(v);
  if (release) return { major: release.major, minor: release.minor, release };
  throw usageError(CommonError.FLAG_INVALID, `--version "${raw}" is not an OpenShift version`, {
    where: '--version',
    hint: /^[vV]\d/.test(v)
      ? `drop the "v": ${v.slice(1)}`
      : 'write the OpenShift minor (4.18) or a release (4.18.3, 4.19.0-rc.2)',
  });
}

/** The endpoint as shown: without credentials. */
function shownEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    // Not a URL, so no credentials in it to hide: shown as given.
    return endpoint;
  }
}

/** A graph error that names no fix gets one: where the graph URL comes from. */
function withGraphHint(e: unknown): unknown {
  if (!(e instanceof AirgapError) || e.hint || !e.code.startsWith('GRAPH_')) return e;
  return new AirgapError(e.code, e.message, {
    exitCode: e.exitCode,
    ...(e.where ? { where: e.where } : {}),
    ...(e.details ? { details: e.details } : {}),
    cause: e,
    hint: 'check --graph-url (or UPDATE_URL_OVERRIDE): it must be an OpenShift update service graph endpoint, such as https://api.openshift.com/api/upgrades_info/v1/graph',
  });
}

/** One channel's graph, each asked once; GRAPH_CHANNEL_EMPTY is `undefined`. */
type Ask = (channel: string) => Promise<UpdateGraph | undefined>;

function asker(opts: ListReleasesOptions, arch: GraphArch, endpoint: string): Ask {
  const asked = new Map<string, Promise<UpdateGraph | undefined>>();
  return (channel) => {
    let p = asked.get(channel);
    if (!p) {
      p = fetchGraph({
        channel,
        arch,
        graphUrl: endpoint,
        tls: opts.tls,
        retries: 2,
        timeoutMs: 30_000,
      }).then(
        (g) => g,
        (e: unknown) => {
          if (hasCode(e, MirrorError.GRAPH_CHANNEL_EMPTY)) return undefined;
          throw withGraphHint(e);
        },
      );
      asked.set(channel, p);
    }
    return p;
  };
}

function channelsOfNodes(nodes: readonly GraphNode[]): Set<string> {
  const names = new Set<string>();
  for (const n of nodes)
    for (const c of (n.metadata[CHANNELS_METADATA] ?? '').split(',')) if (c.trim()) names.add(c.trim());
  return names;
}

const minorOf = (version: string): string | undefined => {
  const v = parseSemver(version);
  return v ? `${v.major}.${v.minor}` : undefined;
};

/** The channels of a minor (or carrying one release), each with its releases of its own minor. */
async function listChannels(raw: string, arch: GraphArch, graph: string, ask: Ask): Promise<ChannelsListing> {
  const v = parseVersion(raw);
  const minor = `${v.major}.${v.minor}`;
  const probes = [`stable-${minor}`, `candidate-${minor}`];
  let nodes: GraphNode[] = [];
  let known: string[] = [];
  for (const probe of probes) {
    const g = await ask(probe);
    if (!g) continue;
    known = [...known, ...g.nodes.filter((n) => minorOf(n.version) === minor).map((n) => n.version)];
    nodes = g.nodes.filter((n) => (v.release ? n.version === v.release.raw : minorOf(n.version) === minor));
    if (nodes.length > 0) break;
  }
  if (nodes.length === 0) {
    const newest = [...new Set(known)].sort(bySemver).at(-1);
    throw usageError(
      MirrorError.RELEASE_VERSION_UNKNOWN,
      v.release
        ? `the update graph has no release ${v.release.raw} in ${probes.join(' or ')} for ${arch}`
        : `the update graph has no OpenShift ${minor} release for ${arch} (asked ${probes.join(' and ')})`,
      {
        where: graph,
        hint: newest
          ? `the newest ${minor} release it has is ${newest}; airgap mirror list releases --channel candidate-${minor} lists them all`
          : 'check the version and --arch (airgap mirror list releases --arches lists the architectures)',
      },
    );
  }
  let names = [...channelsOfNodes(nodes)];
  if (!v.release) names = names.filter((c) => c.endsWith(`-${minor}`));
  const limit = new Limiter(PARALLEL);
  const channels = await Promise.all(
    names.map((name) =>
      limit.run(async (): Promise<ChannelSummary> => {
        const own = CHANNEL_MINOR.exec(name);
        const ownMinor = own ? `${own[1]}.${own[2]}` : undefined;
        const g = await ask(name);
        const versions = (g?.nodes ?? [])
          .map((n) => n.version)
          .filter((x) => ownMinor === undefined || minorOf(x) === ownMinor)
          .sort(bySemver);
        return { name, releases: versions.length, ...(versions.length ? { latest: versions.at(-1) } : {}) };
      }),
    ),
  );
  const key = (c: ChannelSummary) => {
    const m = CHANNEL_MINOR.exec(c.name);
    return m ? [Number(m[1]), Number(m[2])] : [Infinity, Infinity];
  };
  channels.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  });
  return { kind: 'channels', version: raw.trim(), arch, graph, channels };
}

/** The releases of one channel, ascending; an unknown channel names the ones the graph has. */
async function listChannelReleases(
  channel: string,
  arch: GraphArch,
  graph: string,
  ask: Ask,
): Promise<ReleasesListing> {
  const g = await ask(channel);
  if (!g) {
    if (!CHANNEL_MINOR.test(channel)) {
      throw usageError(
        MirrorError.GRAPH_CHANNEL_UNKNOWN,
        `--channel ${channel}: the update graph has no release on this channel for ${arch}`,
        {
          where: graph,
          hint: 'channels are named <kind>-<x.y>: stable-4.18, fast-4.18, eus-4.18 or candidate-4.18',
        },
      );
    }
    throw await unknownChannel(channel, arch, async (c) => {
      const found = await ask(c);
      if (!found) throw new AirgapError(MirrorError.GRAPH_CHANNEL_EMPTY, `channel "${c}" is empty`);
      return found;
    });
  }
  const sorted = [...g.nodes].sort((a, b) => bySemver(a.version, b.version));
  const latest = sorted.at(-1)!.version;
  return {
    kind: 'releases',
    channel,
    arch,
    graph,
    latest,
    releases: sorted.map((n) => ({
      version: n.version,
      payload: n.payload,
      ...(n.metadata.url ? { errata: n.metadata.url } : {}),
      latest: n.version === latest,
    })),
  };
}

function architectures(): ArchitecturesListing {
  return {
    kind: 'architectures',
    architectures: GRAPH_ARCHES.map((name) => ({ name, ...ARCH_INFO[name] })),
  };
}

/**
 * What the update graph offers: the channels of `version`, the releases of `channel`, or (with
 * `arches`) the architectures it knows. FLAG_MISSING / FLAG_CONFLICT when not exactly one is asked;
 * RELEASE_VERSION_UNKNOWN, GRAPH_CHANNEL_UNKNOWN (usage) when the graph has no such thing;
 * GRAPH_UNREACHABLE and the other GRAPH_* errors when the service cannot be asked.
 */
export async function listReleases(opts: ListReleasesOptions): Promise<ReleaseListing> {
  const asked = (['version', 'channel', 'arches'] as const).filter((k) =>
    k === 'arches' ? opts.arches === true : opts[k] !== undefined,
  );
  if (asked.length === 0) {
    throw usageError(CommonError.FLAG_MISSING, 'say what to list', {
      hint: 'give --version 4.18 (its channels), --channel stable-4.18 (its releases) or --arches (the architectures)',
    });
  }
  if (asked.length > 1) {
    throw usageError(
      CommonError.FLAG_CONFLICT,
      `${asked.map((k) => `--${k}`).join(' and ')} list different things`,
      {
        where: asked.map((k) => `--${k}`).join(', '),
        hint: 'give one of --version (the channels of a version), --channel (the releases of a channel) or --arches',
      },
    );
  }
  if (opts.arches) return architectures();
  const arch = graphArch(opts.arch);
  const endpoint = graphEndpoint(opts.graphUrl);
  const ask = asker(opts, arch, endpoint);
  const graph = shownEndpoint(endpoint);
  if (opts.channel !== undefined) return listChannelReleases(opts.channel.trim(), arch, graph, ask);
  return listChannels(opts.version!, arch, graph, ask);
}

/** A listing as aligned text, for a person. */
export function renderReleaseListing(l: ReleaseListing): string {
  switch (l.kind) {
    case 'architectures':
      return `${table(
        ['ARCH', 'ALSO', 'WHAT'],
        l.architectures.map((a) => [a.name, a.aliases.join(', '), a.description]),
      )}\n`;
    case 'channels': {
      const what = MINOR.test(l.version) ? `OpenShift ${l.version}` : `release ${l.version}`;
      const rows = l.channels.map((c) => [c.name, String(c.releases), c.latest ?? '']);
      return [
        `Channels of ${what} (${l.arch}) in ${l.graph}:`,
        '',
        table(['CHANNEL', 'RELEASES', 'LATEST'], rows),
        '',
        'The releases of one: airgap mirror list releases --channel <channel>',
        '',
      ].join('\n');
    }
    case 'releases': {
      const errata = l.releases.some((r) => r.errata);
      const rows = l.releases.map((r) => [
        marked(r.version, [r.latest && 'latest']),
        ...(errata ? [r.errata ?? ''] : []),
      ]);
      return [
        `${l.channel} (${l.arch}): ${l.releases.length} release${l.releases.length === 1 ? '' : 's'}, latest ${l.latest}`,
        '',
        table(['VERSION', ...(errata ? ['ERRATA'] : [])], rows),
        '',
      ].join('\n');
    }
  }
}
