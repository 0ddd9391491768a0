/**
 * Check release channel names against the update graph, for `airgap mirror init`: a channel the
 * service does not know (it answers an empty graph) is an error that names the channels it does
 * know for that minor, read from its releases' `io.openshift.upgrades.graph.release.channels`.
 * An update service out of reach (a bastion with no internet) is not an error: the names were
 * already checked by their form, and a note says the graph could not confirm them.
 */
import { AirgapError, usageError } from '../../util/errors.js';
import { suggest } from '../../config/suggest.js';
import { MirrorError } from '../errors.js';
import { fetchGraph, graphEndpoint, type UpdateGraph } from './graph.js';
import type { TlsOptions } from '../../net/http.js';

/** The metadata key under which each release lists the channels that carry it. */
export const CHANNELS_METADATA = 'io.openshift.upgrades.graph.release.channels';

/** Options of {@link checkChannelsInGraph}. */
export interface CheckChannelsOptions {
  graphUrl?: string;
  tls?: TlsOptions;
  /** How long to wait for the service; short, as a missing network should not hold up `init`. */
  timeoutMs?: number;
}

const MINOR = /-(\d+)\.(\d+)$/;

/** Every channel that the graph's releases say carries them, in order. */
function channelsOf(graph: UpdateGraph): string[] {
  const names = new Set<string>();
  for (const node of graph.nodes) {
    for (const c of (node.metadata[CHANNELS_METADATA] ?? '').split(',')) if (c.trim()) names.add(c.trim());
  }
  return [...names].sort();
}

/**
 * Ask the graph for each channel on each architecture; returns notes to print (the service could
 * not be asked). Throws GRAPH_CHANNEL_UNKNOWN (usage) for a channel with no release.
 */
export async function checkChannelsInGraph(
  channels: readonly string[],
  arches: readonly string[],
  opts: CheckChannelsOptions = {},
): Promise<string[]> {
  const endpoint = graphEndpoint(opts.graphUrl);
  const ask = (channel: string, arch: string) =>
    fetchGraph({
      channel,
      arch,
      graphUrl: endpoint,
      tls: opts.tls,
      retries: 0,
      timeoutMs: opts.timeoutMs ?? 5000,
    });
  for (const arch of arches) {
    for (const channel of channels) {
      try {
        await ask(channel, arch);
      } catch (e) {
        if (e instanceof AirgapError && e.code === MirrorError.GRAPH_CHANNEL_EMPTY) {
          throw await unknownChannel(channel, arch, ask);
        }
        if (e instanceof AirgapError && e.code === MirrorError.GRAPH_URL_INVALID) throw e;
        const why = e instanceof AirgapError ? e.message : String(e);
        return [
          `could not ask the update graph (${why}); the channel names are checked by their form only (--offline skips this)`,
        ];
      }
    }
  }
  return [];
}

/** The error for a channel the graph does not know, with the channels it knows for that minor. */
export async function unknownChannel(
  channel: string,
  arch: string,
  ask: (channel: string, arch: string) => Promise<UpdateGraph>,
): Promise<AirgapError> {
  const m = MINOR.exec(channel);
  let known: string[] = [];
  if (m) {
    const minor = `${m[1]}.${m[2]}`;
    for (const probe of [`stable-${minor}`, `candidate-${minor}`]) {
      if (probe === channel) continue;
      try {
        known = channelsOf(await ask(probe, arch)).filter((c) => c.endsWith(`-${minor}`));
      } catch {
        // Only to suggest channels in the hint of the error being made: a probe that fails suggests none.
        continue;
      }
      if (known.length > 0) break;
    }
  }
  const close = suggest(channel, known);
  const hint =
    close.length > 0
      ? `did you mean ${close.join(' or ')}? The graph has ${known.join(', ')}`
      : known.length > 0
        ? `the graph has ${known.join(', ')} for this minor`
        : 'this minor has no releases for this architecture in the update graph: check the version and --arch';
  return usageError(
    MirrorError.GRAPH_CHANNEL_UNKNOWN,
    `--channel ${channel}: the update graph has no release on this channel for ${arch}`,
    { hint },
  );
}
