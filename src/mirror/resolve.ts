/**
 * ImageSetConfiguration → MirrorPlan: every image the configuration asks for, pinned to a digest,
 * with its destination (oc-mirror v2's naming) and the reasons it is there. Releases come from the
 * update graph and the payloads, operators from the filtered (and rebuilt) catalogs, the graph-data
 * image is built here, additional images are pinned. blockedImages apply to all of them.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { CredentialOptions } from './auth/credentials.js';
import { AirgapError, isAirgapError, usageError } from '../util/errors.js';
import { Limiter } from '../util/limit.js';
import type { ProgressSink } from '../util/progress.js';
import type { CopyPair, CopySummary } from './copy/engine.js';
import { LayoutEndpoint, type Endpoint } from './copy/endpoints.js';
import { IscErrorCode, positionOf } from './isc/index.js';
import type { ImageSetConfig } from './isc/types.js';
import { OciLayout } from './layout/store.js';
import { pinnedEntry, planCatalogs } from './openshift/catalog-plan.js';
import { downloadGraphData, graphDataUrl } from './openshift/graph-data.js';
import { buildGraphImage, GRAPH_BASE_IMAGE, GRAPH_IMAGE_REPO } from './openshift/graph-image.js';
import { graphEndpoint } from './openshift/graph.js';
import { planReleases } from './openshift/release-plan.js';
import {
  BUILD_SOURCE,
  blockedMatcher,
  PLAN_API_VERSION,
  planAdditionalImages,
  platformStrings,
  type BlockedImage,
  type MirrorPlan,
  type PlanEntry,
  type PlannedImage,
} from './plan.js';
import { formatReference, parseReference } from './reference.js';
import type { RegistryClient } from './registry/client.js';
import type { TlsOptions } from '../net/http.js';
import { MirrorError } from './errors.js';
import type { SignatureOptions } from './signatures/plan.js';

export interface ResolveOptions {
  configPath: string;
  config: ImageSetConfig;
  workspace: string;
  client(registry: string): RegistryClient;
  endpoint(registry: string): Endpoint;
  /** Run the copy engine (used to bring catalogs and the graph base image into the build layout). */
  copy(pairs: CopyPair[]): Promise<CopySummary>;
  graphUrl?: string;
  /** TLS for the update service (the same CA flags as registries). */
  graphTls?: TlsOptions;
  /** The auth files (--authfile): chart repositories' credentials, by host. */
  credentials?: CredentialOptions;
  /** Base image of the graph-data image (default {@link GRAPH_BASE_IMAGE}). */
  graphBaseImage?: string;
  /** The version a (hosted) cluster runs: the update path the graph recommends from it is kept too. */
  fromVersion?: string;
  /** Sigstore and release signatures, and --secure-policy (src/mirror/signatures/plan.ts). */
  signatures?: SignatureOptions;
  /** Source reads at once (--parallel, the copy's own bound); default 8. */
  parallel?: number;
  /** Follow operator dependencies in catalogs (default true; --no-dependencies). */
  dependencies?: boolean;
  progress: ProgressSink;
}

/** The digest of what a configuration means (its parsed content, keys sorted): equal configs, equal digests. */
export function configDigest(cfg: ImageSetConfig): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  const { kind, apiVersion, mirror } = cfg;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canonical({ kind, apiVersion, mirror })))
    .digest('hex')}`;
}

/** Put the file position of an ISC field path (`mirror.operators[0].catalog`) into an error's `where`. */
function located(cfg: ImageSetConfig, e: unknown): unknown {
  if (!isAirgapError(e) || !e.where || !/^mirror\./.test(e.where)) return e;
  const field = e.where.split(' ')[0]!;
  const pos = positionOf(cfg, field);
  if (!pos) return e;
  return new AirgapError(e.code, e.message, {
    where: `${pos.where} ${field}`,
    exitCode: e.exitCode,
    ...(e.hint ? { hint: e.hint } : {}),
    ...(e.details ? { details: e.details } : {}),
    cause: e.cause,
  });
}

async function section<T>(cfg: ImageSetConfig, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw located(cfg, e);
  }
}

/** Pin an image named in the configuration: its plan entry (its tag pinned to a digest). */
type Pin = (
  img: PlannedImage,
  kind: 'additional' | 'helm',
  context: string,
  platforms?: string[],
) => Promise<PlanEntry>;

/** Resolve the whole configuration into a plan. Nothing is pushed anywhere. */
export async function resolvePlan(o: ResolveOptions): Promise<MirrorPlan> {
  const cfg = o.config;
  const build = await OciLayout.open(join(o.workspace, 'build'));
  const plan = emptyPlan(o, build);
  const entries: PlanEntry[] = [];
  const platform = cfg.mirror.platform;
  refuseFromVersionWithoutChannel(o);

  if (platform && (platform.channels.length > 0 || platform.release)) {
    entries.push(...(await planReleaseEntries(o, platform, plan)));
  }
  if (platform?.graph) {
    entries.push(await section(cfg, () => planGraphImage(o, build)));
  }
  if (cfg.mirror.operators.length > 0) {
    entries.push(...(await planCatalogEntries(o, build, plan)));
  }
  const pin = pinner(o);
  entries.push(...(await planAdditionalEntries(o, pin)));
  const helm = cfg.mirror.helm;
  if (helm && (helm.repositories.length > 0 || helm.local.length > 0)) {
    entries.push(...(await planHelmEntries(o, helm, pin, plan)));
  }

  const { kept, blocked } = applyBlocked(entries, cfg.mirror.blockedImages);
  // Chart images were blocked before they were pinned (planHelmEntries); the rest now.
  plan.blocked = [...plan.blocked, ...blocked];
  plan.images = dedupe(kept);
  // Loaded here, not at start-up: OpenPGP.js alone costs every command ~50 ms to import.
  const { addSignatures } = await import('./signatures/plan.js');
  await addSignatures(
    plan,
    { ...o.signatures, checksFile: join(o.workspace, 'signature-checks.json') },
    o.client,
    o.progress,
  );
  return plan;
}

/** The plan before anything is resolved: the configuration's path and digest, and the build layout. */
function emptyPlan(o: ResolveOptions, build: OciLayout): MirrorPlan {
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'MirrorPlan',
    createdAt: new Date().toISOString(),
    config: { path: o.configPath, sha256: configDigest(o.config) },
    releases: [],
    releaseRisks: [],
    releaseWhy: [],
    catalogs: [],
    blocked: [],
    warnings: [],
    images: [],
    buildLayout: build.dir,
  };
}

/** --from-version needs a release channel to find the update path in. */
function refuseFromVersionWithoutChannel(o: ResolveOptions): void {
  const platform = o.config.mirror.platform;
  if (o.fromVersion && !(platform && platform.channels.length > 0)) {
    throw usageError(
      MirrorError.GRAPH_CHANNEL_MISSING,
      '--from-version keeps the update path from that version, and the configuration names no release channel',
      {
        hint: 'add mirror.platform.channels (e.g. stable-4.18) to the ImageSetConfiguration, or drop --from-version',
      },
    );
  }
}

/** The releases' entries; their list, update risks (each also a warning) and reasons go into the plan. */
async function planReleaseEntries(
  o: ResolveOptions,
  platform: NonNullable<ImageSetConfig['mirror']['platform']>,
  plan: MirrorPlan,
): Promise<PlanEntry[]> {
  const r = await section(o.config, () =>
    planReleases(platform, {
      client: o.client,
      graphUrl: o.graphUrl,
      graphTls: o.graphTls,
      parallel: o.parallel,
      progress: o.progress,
      fromVersion: o.fromVersion,
    }),
  );
  plan.releases = r.releases;
  plan.releaseRisks = r.risks.map((k) => ({
    from: k.from,
    to: k.to,
    channels: k.channels,
    risks: k.risks,
  }));
  plan.releaseWhy = r.why;
  const platforms = platformStrings(platform.platforms);
  const entries = r.entries.map((e) => (platforms ? { ...e, platforms } : e));
  for (const k of r.risks) {
    plan.warnings.push(
      `update ${k.from} → ${k.to} is conditional: ${k.risks.map((x) => x.name).join(', ')} (${k.channels.join(', ')})`,
    );
  }
  return entries;
}

/** The operator catalogs' entries; the catalogs and their warnings go into the plan. */
async function planCatalogEntries(
  o: ResolveOptions,
  build: OciLayout,
  plan: MirrorPlan,
): Promise<PlanEntry[]> {
  const c = await section(o.config, () =>
    planCatalogs(o.config.mirror.operators, {
      client: o.client,
      endpoint: o.endpoint,
      build,
      copy: o.copy,
      parallel: o.parallel,
      dependencies: o.dependencies,
      progress: o.progress,
    }),
  );
  plan.catalogs = c.catalogs;
  for (const cat of c.catalogs) plan.warnings.push(...cat.warnings.map((w) => `${cat.catalog}: ${w}`));
  return c.entries;
}

/** Pins images named in the configuration, --parallel at a time (additional images and charts' images share the bound). */
function pinner(o: ResolveOptions): Pin {
  const limit = new Limiter(o.parallel ?? 8);
  return (img, kind, context, platforms) =>
    limit.run(() =>
      pinnedEntry(o.client(img.source.registry), img.source, {
        kind,
        origin: formatReference(img.source),
        destRepo: img.destRepo,
        destTag: img.destTag,
        context,
        ...(platforms ? { platforms } : {}),
      }),
    );
}

/** The additional images' entries, each pinned. */
async function planAdditionalEntries(o: ResolveOptions, pin: Pin): Promise<PlanEntry[]> {
  const cfg = o.config;
  const additional = planAdditionalImages(
    cfg.mirror.additionalImages.map((a, i) => ({
      name: a.name,
      targetRepo: a.targetRepo,
      targetTag: a.targetTag,
      where: positionOf(cfg, `mirror.additionalImages[${i}].name`)?.where,
    })),
    [],
  );
  return Promise.all(
    additional.images.map((img, i) =>
      pin(
        img,
        'additional',
        `additionalImages[${i}]`,
        platformStrings(cfg.mirror.additionalImages[i]!.platforms),
      ),
    ),
  );
}

/** The Helm charts' images' entries; the charts and their warnings go into the plan. */
async function planHelmEntries(
  o: ResolveOptions,
  helm: NonNullable<ImageSetConfig['mirror']['helm']>,
  pin: Pin,
  plan: MirrorPlan,
): Promise<PlanEntry[]> {
  const { planHelm } = await import('./helm/plan.js'); // the template engine loads only for charts
  const h = await planHelm(helm, {
    workspace: o.workspace,
    tls: o.graphTls,
    credentials: o.credentials,
    pin: (img, context, platforms) => pin(img, 'helm', context, platforms),
    blockedImages: o.config.mirror.blockedImages,
  });
  plan.charts = h.charts;
  plan.blocked.push(...h.blocked);
  plan.warnings.push(...h.warnings);
  return h.entries;
}

/** Drop entries whose origin or source matches a blockedImages pattern (Go regexp, unanchored). */
function applyBlocked(
  entries: PlanEntry[],
  patterns: { name: string }[],
): { kept: PlanEntry[]; blocked: BlockedImage[] } {
  const blockedBy = blockedMatcher(patterns);
  const kept: PlanEntry[] = [];
  const blocked: BlockedImage[] = [];
  for (const e of entries) {
    if (e.source.startsWith(BUILD_SOURCE)) {
      kept.push(e);
      continue;
    }
    const hit = blockedBy(e.origin, e.source);
    if (hit !== undefined) blocked.push({ origin: e.origin, pattern: hit });
    else kept.push(e);
  }
  return { kept, blocked };
}

/** One entry per destination; two different images for one destination is a conflict the user must resolve. */
function dedupe(entries: PlanEntry[]): PlanEntry[] {
  const seen = new Map<string, PlanEntry>();
  const out: PlanEntry[] = [];
  for (const e of entries) {
    const key = `${e.destRepo}:${e.destTag}`;
    const before = seen.get(key);
    if (!before) {
      seen.set(key, e);
      out.push(e);
    } else if (before.digest !== e.digest) {
      throw usageError(
        IscErrorCode.Conflict,
        `${e.origin} (${e.context}) and ${before.origin} (${before.context}) would both be mirrored to ${key}`,
        {
          hint: 'give one of them a targetRepo/targetTag (or targetCatalog/targetTag) so each has its own destination',
        },
      );
    }
  }
  return out;
}

/** The graph-data image: the base image pinned and copied into the build layout, plus one layer of graph data. */
async function planGraphImage(o: ResolveOptions, build: OciLayout): Promise<PlanEntry> {
  const baseName = o.graphBaseImage ?? GRAPH_BASE_IMAGE;
  const base = parseReference(baseName);
  const baseDigest =
    base.digest ?? (await o.client(base.registry).getManifest(base.repository, base.tag ?? 'latest')).digest;
  o.progress({ type: 'phase', name: 'graph-image', detail: `base ${baseName}` });
  const copied = await o.copy([
    {
      source: { endpoint: o.endpoint(base.registry), repo: base.repository, ref: baseDigest },
      dest: { endpoint: new LayoutEndpoint(build), repo: 'graph-base', ref: baseDigest },
      digest: baseDigest,
    },
  ]);
  const failed = copied.images.find((i) => i.status === 'failed');
  if (failed) {
    throw new AirgapError(
      MirrorError.GRAPH_BASE_UNREACHABLE,
      `cannot fetch the graph image base ${baseName}: ${failed.error?.message}`,
      {
        where: 'mirror.platform.graph',
        hint: 'the graph-data image is built on ubi9; give --graph-base-image an image you can reach',
      },
    );
  }
  const url = graphDataUrl(graphEndpoint(o.graphUrl));
  const tarball = join(o.workspace, 'graph-data.tar.gz');
  await downloadGraphData(url, tarball, o.graphTls ?? {});
  const built = await buildGraphImage(build, baseDigest, tarball);
  return {
    kind: 'graph',
    origin: `${GRAPH_IMAGE_REPO}:latest`,
    source: `${BUILD_SOURCE}graph`,
    digest: built.digest,
    destRepo: GRAPH_IMAGE_REPO,
    destTag: 'latest',
    byTag: true,
    byDigest: false,
    context: 'platform.graph',
  };
}
