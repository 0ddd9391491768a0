/**
 * What a run that ends in a registry leaves for the cluster: each image that arrived, as the
 * output generators see it (where it came from, where it is now, what it is to OpenShift), written
 * as IDMS/ITMS, CatalogSource/ClusterCatalog, UpdateService and registries.conf to
 * `<workspace>/cluster-resources/`. Failed images are left out: the cluster must not be pointed
 * at a mirror that does not hold them.
 */
import { readFile } from 'node:fs/promises';
import { parseYaml } from '../config/yaml-load.js';
import { usageError } from '../util/errors.js';
import type { CopySummary } from './copy/engine.js';
import type { MirroredImage } from './outputs/types.js';
import type { MirrorPlan, PlanCatalog, PlanEntry } from './plan.js';
import { parseReference } from './reference.js';
import { MirrorError } from './errors.js';

/**
 * Write the cluster resources of a finished copy into `dir` (a workspace's `cluster-resources/`); returns the
 * files written. `destRepo` is an entry's repository at `registry` (the prefix included).
 */
export async function writeRunClusterResources(
  dir: string,
  plan: MirrorPlan,
  summary: CopySummary,
  registry: string,
  destRepo: (e: PlanEntry) => string,
  opts: { forceRepositoryScope?: boolean; version?: string } = {},
): Promise<string[]> {
  const mirrored = await mirroredImages(plan, summary, registry, destRepo);
  const { writeClusterResources } = await import('./outputs/index.js');
  const { trustFiles } = await import('./signatures/cluster-resources.js');
  return writeClusterResources(dir, mirrored, opts, trustFiles(plan, summary, registry, destRepo));
}

/** The images of the plan that arrived, in plan order. */
async function mirroredImages(
  plan: MirrorPlan,
  summary: CopySummary,
  registry: string,
  destRepo: (e: PlanEntry) => string,
): Promise<MirroredImage[]> {
  const templates = new Map<string, PlanCatalog>();
  for (const c of plan.catalogs) templates.set(`${c.destRepo}:${c.destTag}`, c);
  const mirrored: MirroredImage[] = [];
  for (const [n, r] of summary.images.entries()) {
    const e = plan.images[n]!;
    // A signature is found next to its image by the node (use-sigstore-attachments), not through a mirror set.
    if (r.status === 'failed' || !r.digest || e.kind === 'signature') continue;
    const template = templates.get(`${e.destRepo}:${e.destTag}`)?.catalogSourceTemplate;
    mirrored.push({
      source:
        e.kind === 'graph' ? parseReference(`${registry}/${destRepo(e)}:latest`) : parseReference(e.origin),
      destination: {
        registry,
        repository: destRepo(e),
        tag: e.destTag,
        // Catalogs are published by tag (CatalogSource/ClusterCatalog follow the tag's updates).
        ...(e.kind === 'catalog' ? {} : { digest: r.digest }),
      },
      category: categoryOf(e.kind),
      byDigest: e.byDigest,
      byTag: e.byTag,
      ...(e.kind === 'catalog' && template ? { catalogSourceTemplate: await catalogTemplate(template) } : {}),
    });
  }
  return mirrored;
}

/** The cluster resource category of a plan entry. */
function categoryOf(kind: PlanEntry['kind']): MirroredImage['category'] {
  switch (kind) {
    case 'release':
    case 'release-component':
      return 'release';
    case 'bundle':
    case 'related':
      return 'operator';
    case 'catalog':
      return 'catalog';
    case 'graph':
      return 'graph';
    default:
      return 'generic';
  }
}

/** A catalog's targetCatalogSourceTemplate, read and parsed. */
async function catalogTemplate(path: string): Promise<MirroredImage['catalogSourceTemplate']> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(
      MirrorError.CATALOG_TEMPLATE_UNREADABLE,
      `cannot read targetCatalogSourceTemplate ${path}: ${(e as Error).message}`,
      {
        hint: 'give the path of a CatalogSource YAML file (sourceType: grpc)',
      },
    );
  }
  return { object: parseYaml(text, { source: path, exitCode: 2 }), where: path };
}
