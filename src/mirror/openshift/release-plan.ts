/**
 * `mirror.platform` → plan entries: which releases (update graph + oc-mirror v2's selection rules,
 * or an explicit `release`), then each payload read in memory for its components and boot images,
 * named the way oc-mirror v2 names them (internal/pkg/release/local_stored_collector.go):
 * - the payload:    `openshift/release-images:<releaseTag>`
 * - a component:    `openshift/release:<releaseTag>-<image-references tag name>`
 * - the KubeVirt container disk: a component named `kube-virt-container`.
 * `releaseTag` is `<version>-<arch>` (`4.18.1-x86_64`, `-multi`), the tag of the signed payload
 * reference oc-mirror mirrors; a payload named by digest only is tagged with its hex digest.
 */
import { AirgapError, usageError } from '../../util/errors.js';
import { Limiter } from '../../util/limit.js';
import type { ProgressSink } from '../../util/progress.js';
import type { Platform, ReleaseChannel } from '../isc/types.js';
import type { PlanEntry, PlanRelease } from '../plan.js';
import { digestHex } from '../digest.js';
import { formatReference, parseReference } from '../reference.js';
import type { RegistryClient } from '../registry/client.js';
import type { TlsOptions } from '../../net/http.js';
import { fetchGraph, graphArch, type UpdateGraph } from './graph.js';
import { componentsOf, readReleasePayload, type BootImages } from './payload.js';
import { resolveReleases, type ReleaseRisk } from './releases.js';
import { MirrorError } from '../errors.js';

/** The OKD update service, used for `type: okd` channels unless a graph URL is given. */
const OKD_UPDATE_URL = 'https://origin-release.ci.openshift.org/graph';

const RELEASE_IMAGES_REPO = 'openshift/release-images';
const RELEASE_COMPONENTS_REPO = 'openshift/release';
const KUBEVIRT_COMPONENT = 'kube-virt-container';

/** Payload tag architecture names (`oc adm release new` / the signed references). */
const PAYLOAD_ARCH: Record<string, string> = {
  amd64: 'x86_64',
  arm64: 'aarch64',
  ppc64le: 'ppc64le',
  s390x: 's390x',
  multi: 'multi',
};

export interface ReleasePlanContext {
  /** A registry client for a source registry. */
  client(registry: string): RegistryClient;
  /** `--graph-url`; else UPDATE_URL_OVERRIDE, else the public service (OKD's for okd channels). */
  graphUrl?: string;
  graphTls?: TlsOptions;
  /** Payloads read at once (--parallel); default 8. */
  parallel?: number;
  progress: ProgressSink;
  /** The version the cluster runs (--from-version): its recommended update path is kept too. */
  fromVersion?: string;
}

export interface ReleasePlan {
  releases: PlanRelease[];
  entries: PlanEntry[];
  risks: ReleaseRisk[];
  why: string[];
  /** The raw graphs, by `<arch>/<channel>`, for the workspace (what the choice was made from). */
  graphs: Record<string, UpdateGraph>;
}

/** The architectures the channels are resolved for: `multi` when platforms are filtered, else `architectures` or amd64. */
function releaseArches(p: Platform): string[] {
  if (p.platforms.length > 0) return ['multi'];
  return p.architectures.length > 0 ? [...p.architectures] : ['amd64'];
}

function graphUrlFor(ch: ReleaseChannel, ctx: ReleasePlanContext): string | undefined {
  if (ctx.graphUrl) return ctx.graphUrl;
  if (process.env.UPDATE_URL_OVERRIDE) return undefined; // graphEndpoint reads it
  return ch.type === 'okd' ? OKD_UPDATE_URL : undefined;
}

/** The architecture of a payload tag: `x86_64` for amd64, `multi` for a multi-arch payload. */
function payloadArchName(arch: string): string {
  return PAYLOAD_ARCH[arch] ?? arch;
}

/**
 * The KubeVirt container disk of a release: `architectures.<arch>.images.kubevirt.digest-ref` of the
 * CoreOS stream in the coreos-bootimages ConfigMap. RHCOS publishes it for x86_64 (and s390x);
 * oc-mirror reads x86_64, and so do we unless the release is for s390x only.
 */
function kubevirtImage(boot: BootImages | undefined, arch: string): string | undefined {
  const streamArch = arch === 's390x' ? 's390x' : 'x86_64';
  const a = boot?.streamJson.architectures?.[streamArch] as
    { images?: { kubevirt?: { 'digest-ref'?: string } } } | undefined;
  const ref = a?.images?.kubevirt?.['digest-ref'];
  return typeof ref === 'string' && ref !== '' ? ref : undefined;
}

/** A release to plan: its payload reference, and what the graph said about it (if it came from one). */
interface WantedRelease {
  payload: string;
  version?: string;
  arch: string;
  channels: string[];
  /** The tag of an explicit `release` (kept as the destination tag). */
  tag?: string;
}

/**
 * The releases `mirror.platform` asks for: an explicit `release`, then, per architecture, what the
 * channels select from the update graph. The graphs, risks and reasons are recorded in `out`.
 */
async function wantedReleases(
  platform: Platform,
  ctx: ReleasePlanContext,
  out: ReleasePlan,
): Promise<WantedRelease[]> {
  const wanted: WantedRelease[] = [];
  if (platform.release) {
    const ref = parseReference(platform.release.replace(/^docker:\/\//, ''));
    const arch = releaseArches(platform)[0]!;
    wanted.push({
      payload: formatReference(ref),
      arch,
      channels: [],
      ...(ref.tag ? { tag: ref.tag } : {}),
    });
    out.why.push(`${platform.release}: named by mirror.platform.release`);
  }
  if (platform.channels.length > 0) {
    for (const arch of releaseArches(platform)) {
      ctx.progress({
        type: 'phase',
        name: 'graph',
        detail: `${platform.channels.map((c) => c.name).join(', ')} (${arch})`,
      });
      const { selection, graphs } = await resolveReleases(
        platform.channels,
        (channel) => {
          const ch = platform.channels.find((c) => c.name === channel) ?? platform.channels[0]!;
          return fetchGraph({
            channel,
            arch: graphArch(arch),
            graphUrl: graphUrlFor(ch, ctx),
            tls: ctx.graphTls,
          });
        },
        { fromVersion: ctx.fromVersion },
      );
      for (const [name, g] of Object.entries(graphs)) out.graphs[`${arch}/${name}`] = g;
      out.risks.push(...selection.risks);
      out.why.push(...selection.why.map((w) => (releaseArches(platform).length > 1 ? `${arch}: ${w}` : w)));
      for (const r of selection.releases)
        wanted.push({ payload: r.payload, version: r.version, arch, channels: r.channels });
    }
  }
  return wanted;
}

/** How many release payloads are read at once by default (each is a manifest, a config and a small layer). */
const PAYLOAD_READS = 8;

/** One release's payload, read (the network part of planning it). */
async function readRelease(w: WantedRelease, ctx: ReleasePlanContext) {
  const ref = parseReference(w.payload);
  const client = ctx.client(ref.registry);
  ctx.progress({
    type: 'phase',
    name: 'release',
    detail: w.version ? `${w.version} (${w.arch})` : w.payload,
  });
  const payload = await readReleasePayload(client, ref.repository, ref.digest ?? ref.tag ?? 'latest', {
    arch: w.arch === 'multi' ? 'amd64' : w.arch,
  });
  if (ref.digest && payload.digest !== ref.digest) {
    throw new AirgapError(MirrorError.MIRROR_DIGEST_MISMATCH, `${w.payload} resolved to ${payload.digest}`, {
      hint: 'the registry serves different content for this digest; check the source registry',
    });
  }
  return { ref, payload };
}

/**
 * One release, its payload read: the payload entry, one entry per component (and the KubeVirt
 * container disk when asked for) handed to `add`.
 */
function planRelease(
  w: WantedRelease,
  { ref, payload }: Awaited<ReturnType<typeof readRelease>>,
  platform: Platform,
  out: ReleasePlan,
  add: (e: PlanEntry) => void,
): void {
  const version = w.version ?? payload.metadata.version;
  // oc-mirror tags a payload by the tag of its signed reference (`4.18.1-x86_64`); an explicit
  // release keeps its own tag, and one named by digest only is tagged with the hex digest.
  const tag =
    w.tag ?? (w.version || !ref.digest ? `${version}-${payloadArchName(w.arch)}` : digestHex(payload.digest));
  const context = `release ${version} (${payloadArchName(w.arch)})`;
  const components = componentsOf(payload.imageReferences);
  out.releases.push({
    version,
    arch: w.arch,
    payload: `${ref.registry}/${ref.repository}@${payload.digest}`,
    digest: payload.digest,
    tag,
    channels: w.channels,
    components: components.length,
  });
  add({
    kind: 'release',
    origin: w.payload,
    source: `${ref.registry}/${ref.repository}@${payload.digest}`,
    digest: payload.digest,
    destRepo: RELEASE_IMAGES_REPO,
    destTag: tag,
    byTag: ref.tag !== undefined && ref.digest === undefined,
    byDigest: ref.digest !== undefined,
    context,
  });
  const parts = [...components];
  if (platform.kubeVirtContainer) {
    const kv = kubevirtImage(payload.bootImages, w.arch);
    if (!kv) {
      throw usageError(
        MirrorError.RELEASE_NO_KUBEVIRT,
        `release ${version} has no KubeVirt container disk in its coreos-bootimages stream`,
        {
          where: 'mirror.platform.kubeVirtContainer',
          hint: 'RHCOS publishes the KubeVirt container disk from 4.15 on; remove kubeVirtContainer or pick a newer release',
        },
      );
    }
    parts.push({ name: KUBEVIRT_COMPONENT, image: kv });
  }
  for (const c of parts) {
    const cref = parseReference(c.image);
    add({
      kind: 'release-component',
      origin: c.image,
      source: formatReference(cref),
      digest: cref.digest!,
      destRepo: RELEASE_COMPONENTS_REPO,
      destTag: `${tag}-${c.name}`,
      byTag: false,
      byDigest: true,
      context: `${context}: ${c.name}`,
    });
  }
}

/**
 * Resolve `mirror.platform` into releases and plan entries. Graph and payload problems are errors
 * (a release that cannot be resolved cannot be mirrored: oc-mirror treats release failures as fatal).
 * A destination (`repo:tag`) is planned once, for the first release that names it.
 */
export async function planReleases(platform: Platform, ctx: ReleasePlanContext): Promise<ReleasePlan> {
  const out: ReleasePlan = { releases: [], entries: [], risks: [], why: [], graphs: {} };
  const wanted = await wantedReleases(platform, ctx, out);
  const seenDest = new Set<string>();
  const add = (e: PlanEntry): void => {
    const key = `${e.destRepo}:${e.destTag}`;
    if (seenDest.has(key)) return;
    seenDest.add(key);
    out.entries.push(e);
  };
  // Payloads are read in parallel (a channel with full: true names a hundred), then planned in
  // the order the graph gave, so the plan is the same however the reads finish.
  const limit = new Limiter(ctx.parallel ?? PAYLOAD_READS);
  const read = await Promise.all(wanted.map((w) => limit.run(() => readRelease(w, ctx))));
  wanted.forEach((w, i) => planRelease(w, read[i]!, platform, out, add));
  return out;
}
