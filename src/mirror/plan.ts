import { RE2JS } from 're2js';
import { usageError } from '../util/errors.js';
import { digestHex, isDigest, parseDigest, type Digest } from './digest.js';
import { compileGoRegexp } from './isc/regexp.js';
import {
  formatReference,
  isValidRepository,
  isValidTag,
  parseReference,
  type ImageReference,
} from './reference.js';
import { MirrorError } from './errors.js';
import type { DependencyAddition } from './openshift/catalog-dependencies.js';
import { IscErrorCode } from './isc/index.js';

/** An image the run will copy, digest-pinned once resolved. */
export interface PlannedImage {
  /** The reference as the ImageSetConfiguration names it. */
  origin: string;
  source: ImageReference;
  /** Repository path below the destination prefix (oc-mirror v2 naming). */
  destRepo: string;
  /** Tag written at the destination (`sha256-<hex>` for digest-only sources, as oc-mirror v2 does). */
  destTag: string;
  /** Where in the config this came from, for messages. */
  where?: string;
}

export interface BlockedImage {
  origin: string;
  pattern: string;
}

export interface AdditionalImageSpec {
  name: string;
  targetRepo?: string;
  targetTag?: string;
  where?: string;
}

/** oc-mirror v2: a digest-only image is tagged `sha256-<hex>` (truncated to 127 characters). */
export function digestTag(digest: string): string {
  return `${digest.slice(0, digest.indexOf(':'))}-${digestHex(digest)}`.slice(0, 127);
}

const PLATFORM = /^[a-z0-9]+\/[a-z0-9_]+(\/[a-z0-9]+)?$/;

/** The `platforms` of an ImageSetConfiguration section as plan entries carry them (none: every child). */
export function platformStrings(
  filters: readonly { os: string; architecture: string }[],
): string[] | undefined {
  return filters.length > 0 ? filters.map((f) => `${f.os}/${f.architecture}`) : undefined;
}

/** Join a destination prefix and a repository path. */
export function joinRepo(prefix: string, repo: string): string {
  return prefix ? `${prefix.replace(/\/+$/, '')}/${repo}` : repo;
}

/**
 * A repository path of at most `max` components, for registries that limit nesting (Quay allows
 * an organization and one name): the first `max - 1` components are kept and the rest joined with
 * `-`, as oc-mirror's --max-nested-paths does (`a/b/c/d`, 2 → `a/b-c-d`). No limit: unchanged.
 */
export function flattenRepo(path: string, max: number | undefined): string {
  const parts = path.split('/');
  if (!max || parts.length <= max) return path;
  return [...parts.slice(0, max - 1), parts.slice(max - 1).join('-')].join('/');
}

/**
 * Turn `mirror.additionalImages` into planned images with oc-mirror v2's destination naming: the
 * source path kept under the destination (`<dest>/<prefix>/<source path>:<tag>`), `targetRepo` and
 * `targetTag` overriding it, and images matching a `blockedImages` pattern left out.
 */
/**
 * `blockedImages` as one matcher: the first pattern any of the given references matches, or
 * undefined. Go (RE2) syntax, checked as the ImageSetConfiguration validator checks it (an invalid
 * pattern is ISC_INVALID), then matched by RE2 itself (re2js): exactly as oc-mirror matches, and
 * in linear time whatever the pattern (a JavaScript RegExp could backtrack for hours).
 */
export function blockedMatcher(blocked: { name: string }[]): (...refs: string[]) => string | undefined {
  const patterns = blocked.map((b) => {
    const compiled = compileGoRegexp(b.name);
    if (!compiled.ok) {
      throw usageError(
        IscErrorCode.Invalid,
        `blocked image "${b.name}" is not a valid regular expression: ${compiled.error}`,
      );
    }
    return { pattern: b.name, re: RE2JS.compile(b.name) };
  });
  return (...refs) => patterns.find((p) => refs.some((r) => p.re.matcher(r).find()))?.pattern;
}

export function planAdditionalImages(
  specs: AdditionalImageSpec[],
  blocked: { name: string }[],
): { images: PlannedImage[]; blocked: BlockedImage[] } {
  const blockedBy = blockedMatcher(blocked);
  const images: PlannedImage[] = [];
  const skipped: BlockedImage[] = [];
  const seen = new Map<string, string>();
  for (const spec of specs) {
    const name = spec.name.replace(/^docker:\/\//, '');
    const source = parseReference(name);
    const full = formatReference(source);
    const hit = blockedBy(name, full);
    if (hit !== undefined) {
      skipped.push({ origin: spec.name, pattern: hit });
      continue;
    }
    if (spec.targetTag !== undefined && !isValidTag(spec.targetTag)) {
      throw usageError(
        IscErrorCode.Invalid,
        `targetTag "${spec.targetTag}" of ${spec.name} is not a valid tag`,
        {
          where: spec.where,
          hint: 'tags are up to 128 letters, digits, _, . and -, not starting with . or -',
        },
      );
    }
    const destRepo = spec.targetRepo ?? source.repository;
    const destTag =
      spec.targetTag ?? (source.digest && !source.tag ? digestTag(source.digest) : (source.tag ?? 'latest'));
    const key = `${destRepo}:${destTag}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      if (earlier === full) continue; // the same image listed twice
      throw usageError(
        IscErrorCode.Conflict,
        `${spec.name} and ${earlier} would both be mirrored to ${key}`,
        {
          where: spec.where,
          hint: 'give one of them a targetRepo (or targetTag) so each source has its own destination',
        },
      );
    }
    seen.set(key, full);
    images.push({
      origin: spec.name,
      source,
      destRepo,
      destTag,
      ...(spec.where ? { where: spec.where } : {}),
    });
  }
  return { images, blocked: skipped };
}

/**
 * What an entry of a plan is. It decides the destination naming (oc-mirror v2's) and the cluster
 * resource it lands in: release payloads and components in `idms-release-0`, bundles and related
 * images in `idms-operator-0`, additional images in `idms-generic-0`; catalogs get a CatalogSource
 * and a ClusterCatalog, the graph image an UpdateService.
 */
export type PlanKind =
  | 'release'
  | 'release-component'
  | 'catalog'
  | 'bundle'
  | 'related'
  | 'additional'
  | 'helm'
  | 'graph'
  | 'signature';

/** A Helm chart of the plan: fetched into the workspace and rendered for its images, or why not. */
export interface PlanChart {
  name: string;
  version?: string;
  /** The chart repository it came from (absent for a local chart). */
  repository?: string;
  /** Where the chart is in the workspace (archives carry `helm/charts/`). */
  file?: string;
  /** The images its rendered manifests name, each with how it was found. */
  images?: PlanChartImage[];
  /**
   * Why it could not be fetched or rendered (the run fails; the other charts go on): a template
   * error names `<chart>/templates/<file>:<line>`.
   */
  error?: string;
}

/** An image of a Helm chart, and how the chart names it. */
export interface PlanChartImage {
  /** As the chart names it (the plan entry's origin). */
  image: string;
  /**
   * How it was found: `image` (a container's image), `args` (its args or command), `env` (an env
   * value), `imagePaths` (the ImageSetConfiguration's), `hook` (a Helm hook names it), `test` (a
   * test pod names it).
   */
  sources: ('image' | 'args' | 'env' | 'imagePaths' | 'hook' | 'test')[];
  /** The first place: `<chart>/templates/x.yaml: Deployment/name .spec.template.spec.containers[0].args[2]`. */
  where: string;
  /** Present when only hooks and/or test pods name it: which (`helm install` without them, or no `helm test`, never pulls it). */
  onlyIn?: ('hook' | 'test')[];
}

/** One image of a plan: pinned to a digest, with where it goes and why it is there. */
export interface PlanEntry {
  kind: PlanKind;
  /** The reference as the cluster (or the ImageSetConfiguration) knows it: the IDMS/ITMS source. */
  origin: string;
  /**
   * Where the bytes come from: a registry reference, or `build:` for an image airgap built in the
   * workspace (a filtered catalog, the graph-data image).
   */
  source: string;
  /**
   * The pinned digest of the top manifest; empty when the tag could not be resolved while planning
   * (then `unresolved` says why, and the run reports that image as failed, without stopping the others).
   */
  digest: Digest | '';
  unresolved?: { code: string; message: string; hint?: string };
  /**
   * An image the run must not copy (--secure-policy refused it): it is reported failed with this
   * reason, without reading the source.
   */
  refused?: { code: string; message: string; hint?: string };
  /** Repository path below the destination prefix. */
  destRepo: string;
  destTag: string;
  /** The origin names a tag (an ITMS entry) / a digest (an IDMS entry). */
  byTag: boolean;
  byDigest: boolean;
  /** What brought it in: `release 4.18.1`, `catalog …: bundle foo.v1.2.0`, `additionalImages[3]`. */
  context: string;
  /**
   * For a `signature` entry: the digest of the image it signs. A Sigstore signature in cosign's
   * tag scheme is its own small image, tagged `sha256-<hex>.sig` in the signed image's repository;
   * OCI 1.1 referrers kept under the referrers tag schema are an index tagged `sha256-<hex>`. Each
   * travels as a plan entry of its own (copied by the same engine, carried in archives).
   */
  signs?: Digest;
  /**
   * Whether a Sigstore signature of this image was found at the source (`sha256-<hex>.sig`, or
   * among its referrers);
   * undefined when signatures were not looked up (--remove-signatures, or an image airgap built).
   */
  signed?: boolean;
  /**
   * The children of a multi-arch index to copy, `os/architecture[/variant]`: the
   * ImageSetConfiguration's `platforms` for the section it came from. The index itself is copied
   * unchanged (its digest holds), so a registry must accept an index whose other children are
   * absent. Absent: every child (or the run's --arch).
   */
  platforms?: string[];
}

/** A release chosen from the update graph (or named by `platform.release`), with why. */
export interface PlanRelease {
  version: string;
  arch: string;
  /** The payload reference, pinned. */
  payload: string;
  digest: string;
  /** The destination tag of the payload (`4.18.1-x86_64`), the prefix of every component's tag. */
  tag: string;
  channels: string[];
  components: number;
}

/** A catalog of the plan: what was kept and how it is published. */
export interface PlanCatalog {
  catalog: string;
  /** Digest of the original catalog image. */
  digest: string;
  /** Digest pushed (the filtered rebuild, or the original when the whole catalog is mirrored). */
  targetDigest: string;
  rebuilt: boolean;
  destRepo: string;
  destTag: string;
  /** A CatalogSource template file (targetCatalogSourceTemplate). */
  catalogSourceTemplate?: string;
  packages: {
    name: string;
    defaultChannel?: string;
    channels: string[];
    bundles: { name: string; version: string; why: string[] }[];
  }[];
  /** Bundles kept because a kept bundle requires them (olm.package.required, olm.gvk.required), and by whom. */
  added?: DependencyAddition[];
  warnings: string[];
}

/**
 * A digest-pinned plan: every source → destination pair and the decisions behind it. Written by
 * `airgap mirror plan`, carried inside archives, and replayed by disk → registry runs, which
 * therefore need nothing from the source side.
 */
export interface MirrorPlan {
  apiVersion: 'airgap.io/v1alpha1';
  kind: 'MirrorPlan';
  createdAt: string;
  /** The ImageSetConfiguration the plan was made from, and the digest of its meaning. */
  config: { path: string; sha256: string };
  releases: PlanRelease[];
  /** Conditional update edges between chosen releases (the update service's known risks). */
  releaseRisks: {
    from: string;
    to: string;
    channels: string[];
    risks: { name: string; message?: string; url?: string }[];
  }[];
  /** One line per release decision. */
  releaseWhy: string[];
  catalogs: PlanCatalog[];
  /** The Helm charts of `mirror.helm` (absent when there are none). */
  charts?: PlanChart[];
  blocked: BlockedImage[];
  warnings: string[];
  images: PlanEntry[];
  /** Where `build:` sources live (an OCI layout in the workspace). */
  buildLayout?: string;
  /** The content's trust chain, as found and checked while planning (src/mirror/signatures/plan.ts). */
  signatures?: PlanSignatures;
}

/** What a plan knows of signatures: carried with it, so disk → mirror needs nothing from the source. */
export interface PlanSignatures {
  /** --remove-signatures: no Sigstore signature is looked up or copied. */
  removed: boolean;
  /** Images with and without a Sigstore signature at the source. */
  sigstore: { signed: number; unsigned: number };
  /** Each release's GPG signatures from the signature store: only those that verified are kept. */
  releases: PlanReleaseSignatures[];
  /** --secure-policy: the policy every image was checked against, and how many it refused. */
  policy?: { path: string; rejected: number };
}

export interface PlanReleaseSignatures {
  version: string;
  arch: string;
  digest: string;
  /** Base64 of each signature that verified against the keyring and names this digest. */
  signatures: string[];
  /** Fingerprints of the keys that made them. */
  verifiedBy: string[];
  /** One line per signature that did not verify, or why none was found. */
  problems: string[];
}

export const PLAN_API_VERSION = 'airgap.io/v1alpha1';
export const BUILD_SOURCE = 'build:';

/** A reference a plan carries, as containers/image parses it; PLAN_INVALID naming the field otherwise. */
function canonicalInPlan(v: unknown, at: string): void {
  try {
    if (typeof v !== 'string') throw new Error('it is not a string');
    parseReference(v);
  } catch (e) {
    const shown = JSON.stringify(typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}…` : v);
    throw usageError(
      MirrorError.PLAN_INVALID,
      `${at} ${shown} is not an image reference: ${(e as Error).message}`,
      {
        hint: 'give the plan.json that `airgap mirror plan` wrote, unchanged',
      },
    );
  }
}

/** Read a plan written by `airgap mirror plan` (or carried by an archive); PLAN_INVALID names what is wrong. */
export function parsePlan(text: string, where: string): MirrorPlan {
  let p: MirrorPlan;
  try {
    p = JSON.parse(text) as MirrorPlan;
  } catch (e) {
    throw usageError(MirrorError.PLAN_INVALID, `${where} is not JSON: ${(e as Error).message}`, {
      hint: 'give the plan.json that `airgap mirror plan` wrote',
    });
  }
  if (p?.kind !== 'MirrorPlan' || p.apiVersion !== PLAN_API_VERSION || !Array.isArray(p.images)) {
    throw usageError(MirrorError.PLAN_INVALID, `${where} is not an airgap MirrorPlan (${PLAN_API_VERSION})`, {
      hint: 'give the plan.json that `airgap mirror plan` wrote',
    });
  }
  p.images.forEach((e, i) => {
    if (
      !e ||
      typeof e.source !== 'string' ||
      typeof e.digest !== 'string' ||
      typeof e.destRepo !== 'string' ||
      typeof e.destTag !== 'string'
    )
      throw usageError(
        MirrorError.PLAN_INVALID,
        `${where}: images[${i}] lacks source, digest, destRepo or destTag`,
      );
    // A plan may have come with an archive: what becomes a path, a URL or a name is checked.
    const at = `${where} images[${i}]`;
    if (e.digest !== '') parseDigest(e.digest, `${at}.digest`);
    if (e.signs !== undefined) parseDigest(e.signs, `${at}.signs`);
    if (
      e.platforms !== undefined &&
      (!Array.isArray(e.platforms) || !e.platforms.every((x) => typeof x === 'string' && PLATFORM.test(x)))
    )
      throw usageError(MirrorError.PLAN_INVALID, `${at}.platforms is not a list of os/architecture`);
    // Origins and sources become IDMS/ITMS sources, registries.conf entries and requests: canonical first.
    canonicalInPlan(e.origin, `${at}.origin`);
    if (e.source.startsWith(BUILD_SOURCE)) {
      if (!isValidRepository(e.source.slice(BUILD_SOURCE.length)))
        throw usageError(
          MirrorError.PLAN_INVALID,
          `${at}.source ${JSON.stringify(e.source)} is not build:<repository>`,
        );
    } else canonicalInPlan(e.source, `${at}.source`);
    if (!isValidRepository(e.destRepo))
      throw usageError(
        MirrorError.PLAN_INVALID,
        `${at}.destRepo ${JSON.stringify(e.destRepo)} is not a repository path`,
        {
          hint: 'a repository path is lowercase components (a-z, 0-9, . _ -) separated by /',
        },
      );
    if (!isValidTag(e.destTag) && !isDigest(e.destTag))
      throw usageError(
        MirrorError.PLAN_INVALID,
        `${at}.destTag ${JSON.stringify(e.destTag)} is neither a tag nor a digest`,
        {
          hint: 'a tag is up to 128 letters, digits, _ . - (not starting with . or -)',
        },
      );
  });
  return p;
}
