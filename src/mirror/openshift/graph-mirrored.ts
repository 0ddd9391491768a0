/**
 * The graph data a mirror holds: the graph-data image `airgap mirror` (or oc-mirror) pushed for
 * `platform.graph: true` (`<destination>/openshift/graph-image:latest`, graph-image.ts), read back
 * over the registry client. Its layers are streamed from the last one down (the graph data is the
 * layer added on the ubi base) through a bounded gunzip and a tar parser (tar-read.ts), in memory;
 * of the tree under `var/lib/cincinnati-graph-data/` only the schema `version`, `channels/<channel>.yaml` and
 * `blocked-edges/*.yaml` are kept (the names of the other channels are noted, for messages). A layer
 * read to its end is digest-verified. What this gives is decided on by graph-edges.ts.
 */
import { Parser, type ReadEntry } from 'tar';
import { YamlBudget } from '../../config/yaml-load.js';
import { AirgapError, messageOf } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import { registryLayer } from '../layer-stream.js';
import { openTar } from '../tar-read.js';
import { parseManifest, type Descriptor } from '../manifest.js';
import type { RegistryClient } from '../registry/client.js';
import { isRegistryNotFound } from '../registry/errors.js';
import { GRAPH_IMAGE_REPO } from './graph-image.js';
import { GRAPH_DATA_DIR } from './graph-layer.js';
import {
  invalidGraphFile,
  parseBlockedEdgeFile,
  parseChannelFile,
  type BlockedEdge,
  type GraphChannel,
} from './graph-edges.js';

/** The graph-data schema majors this reader understands (cincinnati-graph-data `version`: 1.x). */
const SCHEMA_MAJOR = 1;
/** No graph-data file is anywhere near this (a channel file of every 4.y.z is ~10 KiB). */
const MAX_FILE = 4 * 1024 * 1024;
/**
 * What the kept files of one graph image may come to, read and loaded (the real graph data's
 * channel file and its ~300 blocked edges are well under 1 MiB and 100,000 nodes).
 */
const MAX_GRAPH_YAML = { bytes: 32 * 1024 * 1024, nodes: 2_000_000 };
const PREFIX = `${GRAPH_DATA_DIR}/`;

/** The graph data of one channel, as a mirror's graph image holds it. */
export interface MirroredGraph {
  /** `host/openshift/graph-image:latest`, as asked for. */
  image: string;
  /** The manifest digest the reference resolved to. */
  digest: string;
  /** The schema version of the graph data (`1.1.0`), when the image carries one. */
  schema?: string;
  /** Every channel the data has (from the `channels/` file names). */
  channels: string[];
  /** `channels/<channel>.yaml`, when the data has that channel. */
  channel?: GraphChannel;
  blockedEdges: BlockedEdge[];
}

/** Options of {@link readMirroredGraph}. */
export interface ReadMirroredGraphOptions {
  /** The channel whose file is read (`stable-4.17`). */
  channel: string;
  /** The platform architecture to take from an index (OCI name); default amd64, else the first. */
  arch?: string;
}

/** `repo` and `ref` of the graph image below a mirror path prefix (`ocp/` → `ocp/openshift/graph-image`). */
export function graphImageRepo(prefix: string): string {
  const p = prefix.replace(/^\/+|\/+$/g, '');
  return p ? `${p}/${GRAPH_IMAGE_REPO}` : GRAPH_IMAGE_REPO;
}

const GRAPH_HINT =
  'mirror the graph data again (airgap mirror with platform.graph: true), or give --graph-url to check the update against an update service';

function corrupt(image: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError(
    MirrorError.GRAPH_IMAGE_INVALID,
    `the graph image ${image} is not readable: ${why}`,
    {
      where: image,
      cause,
      hint: GRAPH_HINT,
    },
  );
}

/** The graph-data files of interest in one layer, by path below the graph-data directory. */
interface LayerFiles {
  files: Map<string, Buffer>;
  /** Whether the layer had anything under the graph-data directory. */
  any: boolean;
  channels: Set<string>;
}

/** Which graph-data files to keep: `version`, the channel's file, every blocked edge. */
function wanted(rel: string, channel: string): boolean {
  return (
    rel === 'version' ||
    rel === `channels/${channel}.yaml` ||
    rel === `channels/${channel}.yml` ||
    /^blocked-edges\/[^/]+\.ya?ml$/.test(rel)
  );
}

/** Stream one layer, keeping the graph-data files {@link wanted}; the layer is digest-verified. */
async function scanLayer(
  client: RegistryClient,
  repo: string,
  layer: Descriptor,
  channel: string,
  image: string,
  budget: YamlBudget,
): Promise<LayerFiles> {
  const what = `layer ${layer.digest}`;
  const out: LayerFiles = { files: new Map(), any: false, channels: new Set() };
  let parseError: unknown;
  const parser = new Parser({ strict: true });
  parser.on('error', (e: unknown) => (parseError ??= e));
  parser.on('entry', (entry: ReadEntry) => {
    const path = entry.path.replace(/^(\.\/|\/)+/, '');
    if (!path.startsWith(PREFIX) && `${path}/` !== PREFIX) return void entry.resume();
    out.any = true;
    const rel = path.slice(PREFIX.length).replace(/\/+$/, '');
    const file = entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile';
    const ch = /^channels\/([^/]+)\.ya?ml$/.exec(rel);
    if (ch && file) out.channels.add(ch[1]!);
    if (!file || !wanted(rel, channel)) return void entry.resume();
    if (entry.size > MAX_FILE) {
      parseError ??= corrupt(image, `${rel} in ${what} is ${entry.size} bytes, too large for graph data`);
      return void entry.resume();
    }
    try {
      budget.hold(entry.size, rel); // the files kept are held until the layer ends
    } catch (e) {
      parseError ??= e;
      return void entry.resume();
    }
    const parts: Buffer[] = [];
    entry.on('data', (c: Buffer) => parts.push(c));
    entry.on('end', () => out.files.set(rel, Buffer.concat(parts)));
  });
  const blob = await registryLayer(client, repo, layer);
  const opened = await openTar(blob.bytes, {
    kind: 'layer',
    what: `${what} of ${image}`,
    zstd: () => corrupt(image, `${what} is zstd-compressed`),
  });
  try {
    for await (const chunk of opened.tar) {
      parser.write(chunk);
      if (parseError !== undefined) break;
    }
    if (parseError === undefined) {
      await new Promise<void>((resolve) => parser.end(resolve));
      await opened.rest(); // past the tar's end: read for the digest, not inflated nor parsed
    }
  } catch (e) {
    if (e instanceof AirgapError && e.code !== MirrorError.GRAPH_IMAGE_INVALID) throw e;
    throw corrupt(
      image,
      `${what} could not be read as a ${opened.gzip ? 'gzip ' : ''}tar: ${messageOf(e)}`,
      e,
    );
  } finally {
    opened.destroy();
  }
  if (parseError instanceof AirgapError) throw parseError;
  if (parseError) throw corrupt(image, `${what} is not a valid tar: ${messageOf(parseError)}`, parseError);
  blob.verify(`${image} ${what}`);
  return out;
}

/**
 * Read the graph data for `opts.channel` from the graph image `repo:ref` of `client`'s registry.
 * Returns undefined when the registry has no such image (404). A graph image that is not one (no
 * graph-data tree, an unreadable layer, a file that does not parse, a schema major other than 1)
 * is GRAPH_IMAGE_INVALID, naming the image; registry failures are the client's errors.
 */
export async function readMirroredGraph(
  client: RegistryClient,
  repo: string,
  ref: string,
  opts: ReadMirroredGraphOptions,
): Promise<MirroredGraph | undefined> {
  const image = `${client.registry}/${repo}${ref.startsWith('sha256:') ? '@' : ':'}${ref}`;
  let top;
  try {
    top = await client.getManifest(repo, ref);
  } catch (e) {
    if (isRegistryNotFound(e)) return undefined;
    throw e;
  }
  let manifest = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  if (manifest.kind === 'index') {
    const arch = opts.arch ?? 'amd64';
    const child =
      manifest.manifests.find(
        (d) => d.platform?.architecture === arch && (d.platform.os ?? 'linux') === 'linux',
      ) ?? manifest.manifests[0];
    if (!child) throw corrupt(image, 'it is an empty index');
    const m = await client.getManifest(repo, child.digest);
    manifest = parseManifest(m.bytes, m.mediaType, `manifest ${image} (${child.digest})`);
    if (manifest.kind !== 'image') throw corrupt(image, 'it is an index of indexes');
  }
  let found: LayerFiles | undefined;
  const budget = new YamlBudget(`the graph image ${image}`, MAX_GRAPH_YAML, 1, GRAPH_HINT);
  for (const layer of [...manifest.layers].reverse()) {
    if (layer.urls?.length) continue;
    const files = await scanLayer(client, repo, layer, opts.channel, image, budget);
    if (files.any) {
      found = files;
      break;
    }
  }
  if (!found) throw corrupt(image, `no layer holds /${GRAPH_DATA_DIR}/ (it is not a graph-data image)`);
  const schemaBytes = found.files.get('version');
  const schema = schemaBytes?.toString('utf8').trim();
  if (schema !== undefined) {
    const major = /^(\d+)\.\d+\.\d+/.exec(schema)?.[1];
    if (major === undefined)
      throw invalidGraphFile(image, 'version', `${JSON.stringify(schema)} is not a schema version`);
    if (Number(major) !== SCHEMA_MAJOR)
      throw invalidGraphFile(image, 'version', `schema ${schema} is not one this airgap reads (1.x)`);
  }
  const channelFile = [`channels/${opts.channel}.yaml`, `channels/${opts.channel}.yml`].find((f) =>
    found.files.has(f),
  );
  const channel = channelFile
    ? parseChannelFile(found.files.get(channelFile)!.toString('utf8'), image, channelFile, budget)
    : undefined;
  if (channel && channel.name !== opts.channel)
    throw invalidGraphFile(image, channelFile!, `it names channel ${channel.name}, not ${opts.channel}`);
  const blockedEdges = [...found.files.keys()]
    .filter((f) => f.startsWith('blocked-edges/'))
    .sort()
    .map((f) => parseBlockedEdgeFile(found.files.get(f)!.toString('utf8'), image, f, budget));
  return {
    image,
    digest: top.digest,
    ...(schema !== undefined ? { schema } : {}),
    channels: [...found.channels].sort(),
    ...(channel ? { channel } : {}),
    blockedEdges,
  };
}
