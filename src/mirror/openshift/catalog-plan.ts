/**
 * `mirror.operators` → plan entries. Per catalog, as oc-mirror v2 does it
 * (internal/pkg/operator/filtered_collector.go), without a container runtime:
 * 1. pin the catalog tag to a digest and copy the image into the workspace's build layout;
 * 2. read its file-based catalog from the layers (the configs label, default /configs);
 * 3. filter it with oc-mirror's rules and validate the result like opm would;
 * 4. rebuild the image with the filtered catalog (unless the whole catalog is mirrored as is);
 * 5. plan every kept bundle image and its relatedImages, tags pinned to digests.
 * Destination naming: the catalog at `targetCatalog` (else its own path) `:targetTag` (else its own
 * tag); bundles and related images keep their path; digest-only references get `sha256-<hex>` tags.
 */
import { basename } from 'node:path';
import { AirgapError, isAirgapError, usageError } from '../../util/errors.js';
import { Limiter } from '../../util/limit.js';
import type { ProgressSink } from '../../util/progress.js';
import type { CopyPair, CopySummary } from '../copy/engine.js';
import { LayoutEndpoint, type Endpoint } from '../copy/endpoints.js';
import type { Operator } from '../isc/types.js';
import { OciLayout } from '../layout/store.js';
import { BUILD_SOURCE, digestTag, platformStrings, type PlanCatalog, type PlanEntry } from '../plan.js';
import { formatReference, parseReference, type ImageReference } from '../reference.js';
import type { RegistryClient } from '../registry/client.js';
import { filterCatalog, type FilterResult } from './catalog-filter.js';
import { readCatalogImage } from './catalog-image.js';
import { rebuildCatalogImage } from './catalog-rebuild.js';
import type { FbcModel } from './fbc.js';
import { MirrorError } from '../errors.js';
import type { Digest } from '../digest.js';

export interface CatalogPlanContext {
  client(registry: string): RegistryClient;
  /** A copy endpoint for a source registry. */
  endpoint(registry: string): Endpoint;
  /** The workspace layout where catalogs are read and rebuilt. */
  build: OciLayout;
  /** Run the copy engine (into the build layout). */
  copy(pairs: CopyPair[]): Promise<CopySummary>;
  /** Source reads at once (--parallel); default 8. */
  parallel?: number;
  /** Follow operator dependencies (default true; --no-dependencies turns it off). */
  dependencies?: boolean;
  progress: ProgressSink;
}

export interface CatalogPlan {
  catalogs: PlanCatalog[];
  entries: PlanEntry[];
}

const q = JSON.stringify;

function catalogNameOf(op: Operator, ref: ImageReference | undefined): string {
  return ref ? formatReference(ref) : op.catalog;
}

/** Pin a reference to the digest its tag points at now. */
async function pinDigest(client: RegistryClient, ref: ImageReference): Promise<Digest> {
  if (ref.digest) return ref.digest;
  const m = await client.getManifest(ref.repository, ref.tag ?? 'latest');
  return m.digest;
}

/**
 * A plan entry for an image named by a catalog or the configuration, its tag pinned. An image that
 * cannot be resolved (missing, denied, unreachable) becomes an entry with `unresolved` set: the run
 * reports it as a failed image and copies the others, as it would for a failure while copying.
 */
export async function pinnedEntry(
  client: RegistryClient,
  r: ImageReference,
  e: Omit<PlanEntry, 'source' | 'digest' | 'byTag' | 'byDigest'>,
): Promise<PlanEntry> {
  const base = {
    ...e,
    byTag: r.tag !== undefined && r.digest === undefined,
    byDigest: r.digest !== undefined,
  };
  try {
    const d = await pinDigest(client, r);
    return { ...base, source: `${r.registry}/${r.repository}@${d}`, digest: d };
  } catch (err) {
    if (!isAirgapError(err) || err.exitCode === 2) throw err;
    return {
      ...base,
      source: formatReference(r),
      digest: '',
      unresolved: { code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) },
    };
  }
}

/** Where a catalog comes from: its source endpoint and repository, and the digest it is pinned to. */
interface CatalogSource {
  source: Endpoint;
  repo: string;
  digest: Digest;
  /** The registry reference (undefined for a catalog kept as an OCI layout on disk). */
  ref?: ImageReference;
}

/** Open a catalog layout on disk (`oci:<dir>`), or pin a registry catalog's tag to a digest. */
async function catalogSource(op: Operator, where: string, ctx: CatalogPlanContext): Promise<CatalogSource> {
  if (!op.catalog.startsWith('oci:')) {
    const ref = parseReference(op.catalog.replace(/^docker:\/\//, ''));
    const digest = await pinDigest(ctx.client(ref.registry), ref);
    return { source: ctx.endpoint(ref.registry), repo: ref.repository, digest, ref };
  }
  // A catalog kept as an OCI layout on disk: its one image (oc-mirror refuses layouts holding several).
  const dir = op.catalog.replace(/^oci:(\/\/)?/, '');
  const layout = await OciLayout.open(dir);
  const entries = await layout.entries();
  if (entries.length !== 1) {
    throw usageError(
      MirrorError.CATALOG_LAYOUT,
      `${op.catalog} holds ${entries.length} images; a catalog layout must hold one`,
      {
        where,
        hint: 'copy the catalog image alone into its own OCI layout',
      },
    );
  }
  return { source: new LayoutEndpoint(layout), repo: basename(dir), digest: entries[0]!.descriptor.digest };
}

/** Copy the catalog image into the build layout (as `catalogs/<repo>`); CATALOG_UNREACHABLE when that fails. */
async function copyToBuild(
  op: Operator,
  src: CatalogSource,
  where: string,
  ctx: CatalogPlanContext,
): Promise<string> {
  const buildRepo = `catalogs/${src.repo}`;
  const copied = await ctx.copy([
    {
      source: { endpoint: src.source, repo: src.repo, ref: src.digest },
      dest: { endpoint: new LayoutEndpoint(ctx.build), repo: buildRepo, ref: src.digest },
      digest: src.digest,
    },
  ]);
  const failed = copied.images.find((i) => i.status === 'failed');
  if (failed) {
    throw new AirgapError(
      MirrorError.CATALOG_UNREACHABLE,
      `cannot fetch the catalog ${op.catalog}: ${failed.error?.message}`,
      {
        where,
        hint: failed.error?.hint ?? 'check the catalog reference and your credentials for its registry',
      },
    );
  }
  return buildRepo;
}

/** Filter a catalog; an error is re-pointed at the package in the configuration it names. */
function filterFor(
  model: FbcModel,
  op: Operator,
  index: number,
  ref: ImageReference | undefined,
  dependencies: boolean | undefined,
): FilterResult {
  try {
    return filterCatalog(model, op, { dependencies });
  } catch (e) {
    // Point at the package in the configuration (the error names it), not only at the catalog.
    if (!isAirgapError(e)) throw e;
    const j = op.packages.findIndex((p) => e.message.includes(q(p.name)) || e.where?.includes(q(p.name)));
    throw new AirgapError(e.code, `${e.message} (catalog ${catalogNameOf(op, ref)})`, {
      where: j >= 0 ? `mirror.operators[${index}].packages[${j}].name` : `mirror.operators[${index}].catalog`,
      exitCode: e.exitCode,
      ...(e.hint ? { hint: e.hint } : {}),
      ...(e.details ? { details: e.details } : {}),
    });
  }
}

/** Plan entries for the kept bundle images and their related images, each once; tags pinned (8 at a time). */
async function planBundleImages(
  filtered: FilterResult,
  catalogName: string,
  where: string,
  ctx: CatalogPlanContext,
): Promise<PlanEntry[]> {
  const images = new Map<string, { kind: 'bundle' | 'related'; context: string }>();
  for (const k of filtered.kept) {
    const ctxName = `catalog ${catalogName}: ${k.bundle.package} ${k.bundle.name}`;
    if (k.bundle.image) images.set(k.bundle.image, { kind: 'bundle', context: ctxName });
    for (const ri of k.bundle.relatedImages) {
      if (!images.has(ri.image)) images.set(ri.image, { kind: 'related', context: ctxName });
    }
  }
  const limit = new Limiter(ctx.parallel ?? 8);
  return Promise.all(
    [...images].map(([image, info]) =>
      limit.run(async (): Promise<PlanEntry> => {
        if (image.startsWith('oci:')) {
          throw usageError(
            MirrorError.CATALOG_RELATED_OCI,
            `${info.context} names ${image}; related images on disk are not supported`,
            {
              where,
            },
          );
        }
        let r: ImageReference;
        try {
          r = parseReference(image);
        } catch (e) {
          throw new AirgapError(
            MirrorError.CATALOG_INVALID,
            `${info.context}: ${q(image)} is not an image reference`,
            {
              where,
              cause: e,
            },
          );
        }
        return pinnedEntry(ctx.client(r.registry), r, {
          kind: info.kind,
          origin: image,
          destRepo: r.repository,
          destTag: r.tag ?? digestTag(r.digest!),
          context: info.context,
        });
      }),
    ),
  );
}

/** The packages kept, for the plan: channels, default channel, and each bundle with why it is kept. */
function keptPackages(filtered: FilterResult): PlanCatalog['packages'] {
  return [...filtered.model.packages.values()].map((p) => ({
    name: p.name,
    ...(p.defaultChannel ? { defaultChannel: p.defaultChannel } : {}),
    channels: [...p.channels.keys()],
    bundles: filtered.kept
      .filter((k) => k.bundle.package === p.name)
      .map((k) => ({
        name: k.bundle.name,
        version: k.bundle.version,
        why: k.why.map((w) => `${w.channel}: ${w.reason}${w.detail ? ` (${w.detail})` : ''}`),
      })),
  }));
}

/** One `mirror.operators[]` catalog, steps 1–5 of the module comment. */
async function planCatalog(op: Operator, index: number, ctx: CatalogPlanContext): Promise<CatalogPlan> {
  const where = `mirror.operators[${index}].catalog`;
  const src = await catalogSource(op, where, ctx);
  const { digest, ref, repo } = src;
  ctx.progress({ type: 'phase', name: 'catalog', detail: `${op.catalog} (${digest.slice(0, 19)})` });
  const buildRepo = await copyToBuild(op, src, where, ctx);

  const { model } = await readCatalogImage(ctx.build, digest);
  const filtered = filterFor(model, op, index, ref, ctx.dependencies);
  let targetDigest = digest;
  if (!filtered.unmodified) {
    const rebuilt = await rebuildCatalogImage(ctx.build, digest, filtered.model);
    targetDigest = rebuilt.digest;
  }
  const destRepo = op.targetCatalog ?? repo;
  const destTag = op.targetTag ?? ref?.tag ?? (ref ? digestTag(digest) : 'latest');
  const catalogName = catalogNameOf(op, ref);
  const entries: PlanEntry[] = [
    {
      kind: 'catalog',
      origin: catalogName,
      source:
        filtered.unmodified && ref
          ? `${ref.registry}/${ref.repository}@${digest}`
          : `${BUILD_SOURCE}${buildRepo}`,
      digest: targetDigest,
      destRepo,
      destTag,
      byTag: ref?.tag !== undefined,
      byDigest: ref?.digest !== undefined,
      context: `catalog ${catalogName}`,
    },
  ];
  entries.push(...(await planBundleImages(filtered, catalogName, where, ctx)));
  return {
    catalogs: [
      {
        catalog: catalogName,
        digest,
        targetDigest,
        rebuilt: !filtered.unmodified,
        destRepo,
        destTag,
        ...(op.targetCatalogSourceTemplate ? { catalogSourceTemplate: op.targetCatalogSourceTemplate } : {}),
        packages: keptPackages(filtered),
        ...(filtered.added.length > 0 ? { added: filtered.added } : {}),
        warnings: filtered.warnings,
      },
    ],
    entries,
  };
}

/** Plan every `mirror.operators[]` catalog in order. A catalog that cannot be planned stops the plan. */
export async function planCatalogs(ops: Operator[], ctx: CatalogPlanContext): Promise<CatalogPlan> {
  const out: CatalogPlan = { catalogs: [], entries: [] };
  for (const [i, op] of ops.entries()) {
    const p = await planCatalog(op, i, ctx);
    out.catalogs.push(...p.catalogs);
    const platforms = platformStrings(op.platforms);
    out.entries.push(...p.entries.map((e) => (platforms ? { ...e, platforms } : e)));
  }
  return out;
}
