import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseYaml } from '../../config/yaml-load.js';
import { AirgapError } from '../../util/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { toYaml, toYamlDocuments } from '../../util/yaml.js';
import { formatReference } from '../reference.js';
import { buildCatalogSource, buildClusterCatalog } from './catalogs.js';
import { buildIdms, buildItms } from './mirror-sets.js';
import { buildRegistriesConf, registriesConfToml } from './registries-conf.js';
import type { MirroredImage, OutputOptions } from './types.js';
import { buildUpdateService } from './update-service.js';
import { MirrorError } from '../errors.js';

export * from './types.js';
export * from './mirror-sets.js';
export * from './catalogs.js';
export * from './update-service.js';
export * from './registries-conf.js';
export * from './image-policy.js';

/** File names with fixed names that airgap owns in a cluster-resources directory. */
const FIXED_OUTPUT_FILES = [
  'idms-oc-mirror.yaml',
  'itms-oc-mirror.yaml',
  'updateService.yaml',
  'registries.conf',
  'mapping.txt',
  'signature-configmap.yaml',
  'signature-configmap.json',
  'clusterimagepolicy-example.yaml',
] as const;

/** `source=destination`, one line per mirrored image, as `dry-run/mapping.txt` is written. */
function mappingText(images: readonly MirroredImage[]): string {
  const lines = images.map((i) => `${formatReference(i.source)}=${formatReference(i.destination)}`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * Every output file for a set of mirrored images, by file name (in writing order). Pure: no I/O.
 * IDMS/ITMS files only when they have entries, as oc-mirror v2 does; one CatalogSource and one
 * ClusterCatalog per mirrored catalog; the UpdateService when a graph image was mirrored.
 */
export function renderClusterResources(
  images: readonly MirroredImage[],
  opts: OutputOptions = {},
): Map<string, string> {
  const files = new Map<string, string>();
  const idms = buildIdms(images, opts);
  if (idms.length > 0) files.set('idms-oc-mirror.yaml', toYamlDocuments(idms));
  const itms = buildItms(images, opts);
  if (itms.length > 0) files.set('itms-oc-mirror.yaml', toYamlDocuments(itms));
  const catalogs = new Map<string, MirroredImage>();
  for (const img of images) {
    if (img.category === 'catalog') catalogs.set(formatReference(img.destination), img);
  }
  for (const [ref, img] of catalogs) {
    const cs = buildCatalogSource(img.destination, opts, img.catalogSourceTemplate);
    const cc = buildClusterCatalog(img.destination, opts);
    for (const [file, obj] of [
      [`${cs.metadata.name}.yaml`, cs],
      [`${cc.metadata.name}.yaml`, cc],
    ] as const) {
      if (files.has(file)) {
        throw new AirgapError(
          MirrorError.CLUSTER_RESOURCE_CONFLICT,
          `two catalogs would both be written to ${file}`,
          {
            where: ref,
            hint: 'give one of the catalogs a different targetRepo or targetTag',
          },
        );
      }
      files.set(file, toYaml(obj));
    }
  }
  const osus = buildUpdateService(images, opts);
  if (osus) files.set('updateService.yaml', toYaml(osus));
  const conf = buildRegistriesConf(images, opts);
  if (conf.registry.length > 0) files.set('registries.conf', registriesConfToml(conf));
  if (images.length > 0) files.set('mapping.txt', mappingText(images));
  return files;
}

/** Whether a `cs-*.yaml`/`cc-*.yaml` file in `dir` was written by us (its createdBy annotation says so). */
async function ownedCatalogFile(path: string, createdBy: string): Promise<boolean> {
  try {
    const doc = parseYaml(await readFile(path, 'utf8'), { source: path, exitCode: 2 }) as {
      metadata?: { annotations?: Record<string, unknown> };
    };
    return doc?.metadata?.annotations?.createdBy === createdBy;
  } catch {
    return false; // unreadable or not YAML: not ours to delete
  }
}

/**
 * Write the cluster resources for `images` into `dir` (oc-mirror v2's `cluster-resources`): each file
 * atomically, then remove the files an earlier run left that this run did not write. Only files
 * airgap owns are removed: the fixed names ({@link FIXED_OUTPUT_FILES}) and `cs-*.yaml`/`cc-*.yaml`
 * whose `createdBy` annotation is ours. Returns the paths written, in writing order.
 */
export async function writeClusterResources(
  dir: string,
  images: readonly MirroredImage[],
  opts: OutputOptions = {},
  extra: ReadonlyMap<string, string> = new Map(),
): Promise<string[]> {
  const files = new Map([...renderClusterResources(images, opts), ...extra]);
  const written: string[] = [];
  for (const [name, text] of files) {
    const path = join(dir, name);
    await writeFileAtomic(path, text);
    written.push(path);
  }
  let existing: string[];
  try {
    existing = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return written;
    throw e;
  }
  const createdBy = opts.createdBy ?? 'airgap';
  for (const name of existing) {
    if (files.has(name)) continue;
    const fixed = (FIXED_OUTPUT_FILES as readonly string[]).includes(name);
    const catalog = /^c[cs]-.+\.yaml$/.test(name) && (await ownedCatalogFile(join(dir, name), createdBy));
    if (fixed || catalog) await rm(join(dir, name), { force: true });
  }
  return written;
}
