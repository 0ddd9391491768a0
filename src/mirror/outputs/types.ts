import type { ImageReference } from '../reference.js';

/** What an image is to OpenShift, which decides the cluster resource it lands in (oc-mirror v2's image types). */
export type ImageCategory = 'release' | 'operator' | 'generic' | 'catalog' | 'graph';

/** A `targetCatalogSourceTemplate`, already read from its file by the caller. */
export interface CatalogSourceTemplate {
  /** The parsed YAML document. */
  object: unknown;
  /** Where it came from (file, ISC field), for messages. */
  where?: string;
}

/** One image that was mirrored: where it came from and where it now is. */
export interface MirroredImage {
  /** The original reference (as the release, catalog or ImageSetConfiguration names it). */
  source: ImageReference;
  /** The mirrored reference, with the destination's registry, prefix, repository and tag or digest. */
  destination: ImageReference;
  category: ImageCategory;
  /** The source is referenced by digest (a digest mirror, IDMS). */
  byDigest: boolean;
  /** The source is referenced by tag (a tag mirror, ITMS). */
  byTag: boolean;
  /** For a catalog: the CatalogSource template to start from (sourceType grpc only). */
  catalogSourceTemplate?: CatalogSourceTemplate;
}

/** Options shared by the generators. */
export interface OutputOptions {
  /** Time written to the `createdAt` annotation (default: now). */
  now?: Date;
  /** The `createdBy` annotation (default `airgap`). */
  createdBy?: string;
  /** The airgap version, written as `oc-mirror_version: airgap <version>` (default `unknown`). */
  version?: string;
  /** Repository-scoped IDMS/ITMS sources only (oc-mirror's `--max-nested-paths`). */
  forceRepositoryScope?: boolean;
  /**
   * The mirrored release payload repository for UpdateService `spec.releases`, e.g.
   * `mirror.example.com/ocp/openshift/release-images`. Default: the repository of the first release
   * image whose destination is `…/release-images` (oc-mirror v2's payload naming).
   */
  releaseRepository?: string;
}

/** The keys oc-mirror v2 puts on every object it writes, in the order it writes them. */
export interface OcMirrorAnnotations {
  createdAt: string;
  createdBy: string;
  'oc-mirror_version': string;
  [key: string]: string;
}

/**
 * RFC 3339 in UTC to the second (`2026-11-22T12:00:00Z`, Go's `time.RFC3339`): oc-mirror v2's
 * `createdAt` format since OCPBUGS-100196 (before, RFC 850), as other cluster resources write it.
 */
function formatRfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The annotations of every generated object: oc-mirror v2's keys (so tooling that reads them keeps
 * working) with airgap's own values (`createdBy: airgap`, `oc-mirror_version: airgap <version>`), so
 * nobody mistakes these files for oc-mirror's output.
 */
export function annotations(opts: OutputOptions): OcMirrorAnnotations {
  return {
    createdAt: formatRfc3339(opts.now ?? new Date()),
    createdBy: opts.createdBy ?? 'airgap',
    'oc-mirror_version': `airgap ${opts.version ?? 'unknown'}`,
  };
}
