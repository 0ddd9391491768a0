import type { ImageReference } from '../reference.js';
import { annotations, type ImageCategory, type MirroredImage, type OutputOptions } from './types.js';

/** One `source → mirrors` entry of an IDMS or ITMS. Field order is oc-mirror's (alphabetical). */
export interface ImageMirrors {
  mirrors: string[];
  source: string;
}

/** The three IDMS/ITMS categories oc-mirror v2 writes, in the order airgap writes them. */
export type MirrorSetCategory = 'release' | 'operator' | 'generic';
const CATEGORIES: MirrorSetCategory[] = ['release', 'operator', 'generic'];

/** An ImageDigestMirrorSet or ImageTagMirrorSet as oc-mirror v2 writes it. */
export interface MirrorSetObject {
  apiVersion: 'config.openshift.io/v1';
  kind: 'ImageDigestMirrorSet' | 'ImageTagMirrorSet';
  metadata: { annotations: Record<string, string>; name: string };
  spec: { imageDigestMirrors: ImageMirrors[] } | { imageTagMirrors: ImageMirrors[] };
}

/** `registry/path` with every path component but the last (just the registry if there is one component). */
function namespaceScope(r: ImageReference): string {
  const parts = r.repository.split('/');
  return parts.length > 1 ? `${r.registry}/${parts.slice(0, -1).join('/')}` : r.registry;
}

function repositoryScope(r: ImageReference): string {
  return `${r.registry}/${r.repository}`;
}

/**
 * The (source, mirror) pair for one image. Namespace-scoped when the destination path ends with the
 * whole source path (oc-mirror v2's `attemptNamespaceScope`), else repository-scoped. The suffix is
 * compared by path component: `openshift/release` does not end with the source path `ease`
 * (oc-mirror compares plain strings, which would map all of the source registry wrongly).
 */
export function mirrorScope(
  source: ImageReference,
  destination: ImageReference,
  forceRepositoryScope = false,
): { source: string; mirror: string } {
  const s = source.repository;
  const d = destination.repository;
  if (!forceRepositoryScope && (d === s || d.endsWith(`/${s}`))) {
    return { source: namespaceScope(source), mirror: namespaceScope(destination) };
  }
  return { source: repositoryScope(source), mirror: repositoryScope(destination) };
}

/** The IDMS/ITMS category of an image; catalogs and the graph image get none (they are never mirror-set entries). */
function mirrorSetCategory(c: ImageCategory): MirrorSetCategory | undefined {
  return c === 'catalog' || c === 'graph' ? undefined : c;
}

/**
 * Whether an image belongs in the IDMS: referenced by digest, or the release payload even by tag
 * (CLID-205: the installer needs the payload mirror in the IDMS).
 */
export function inDigestSet(i: MirroredImage): boolean {
  return mirrorSetCategory(i.category) !== undefined && (i.byDigest || i.category === 'release');
}

/** Whether an image belongs in the ITMS: referenced by tag. */
export function inTagSet(i: MirroredImage): boolean {
  return mirrorSetCategory(i.category) !== undefined && i.byTag;
}

/**
 * Group mirror entries by category and source, mirrors in first-seen order without duplicates,
 * sources sorted (oc-mirror iterates a Go map; sorting makes the file the same on every run).
 */
function groupMirrors(
  images: readonly MirroredImage[],
  include: (i: MirroredImage) => boolean,
  forceRepositoryScope = false,
): Map<MirrorSetCategory, ImageMirrors[]> {
  const byCategory = new Map<MirrorSetCategory, Map<string, string[]>>();
  for (const img of images) {
    const category = mirrorSetCategory(img.category);
    if (category === undefined || !include(img)) continue;
    const { source, mirror } = mirrorScope(img.source, img.destination, forceRepositoryScope);
    let sources = byCategory.get(category);
    if (!sources) byCategory.set(category, (sources = new Map()));
    const mirrors = sources.get(source) ?? [];
    if (!mirrors.includes(mirror)) mirrors.push(mirror);
    sources.set(source, mirrors);
  }
  const out = new Map<MirrorSetCategory, ImageMirrors[]>();
  for (const category of CATEGORIES) {
    const sources = byCategory.get(category);
    if (!sources) continue;
    out.set(
      category,
      [...sources.keys()].sort().map((source) => ({ mirrors: sources.get(source)!, source })),
    );
  }
  return out;
}

function mirrorSets(
  kind: 'ImageDigestMirrorSet' | 'ImageTagMirrorSet',
  groups: Map<MirrorSetCategory, ImageMirrors[]>,
  opts: OutputOptions,
): MirrorSetObject[] {
  const prefix = kind === 'ImageDigestMirrorSet' ? 'idms' : 'itms';
  return [...groups].map(([category, entries]) => ({
    apiVersion: 'config.openshift.io/v1',
    kind,
    metadata: { annotations: annotations(opts), name: `${prefix}-${category}-0` },
    spec: kind === 'ImageDigestMirrorSet' ? { imageDigestMirrors: entries } : { imageTagMirrors: entries },
  }));
}

/** The ImageDigestMirrorSets of `idms-oc-mirror.yaml`: `idms-release-0`, `idms-operator-0`, `idms-generic-0`. */
export function buildIdms(images: readonly MirroredImage[], opts: OutputOptions = {}): MirrorSetObject[] {
  return mirrorSets(
    'ImageDigestMirrorSet',
    groupMirrors(images, inDigestSet, opts.forceRepositoryScope),
    opts,
  );
}

/** The ImageTagMirrorSets of `itms-oc-mirror.yaml`: `itms-<category>-0` for tag-referenced images. */
export function buildItms(images: readonly MirroredImage[], opts: OutputOptions = {}): MirrorSetObject[] {
  return mirrorSets('ImageTagMirrorSet', groupMirrors(images, inTagSet, opts.forceRepositoryScope), opts);
}
