import { usageError } from '../util/errors.js';
import { digestHex } from './digest.js';
import { compileGoRegexp } from './isc/regexp.js';
import { formatReference, isValidTag, parseReference, type ImageReference } from './reference.js';

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

/** Join a destination prefix and a repository path. */
export function joinRepo(prefix: string, repo: string): string {
  return prefix ? `${prefix.replace(/\/+$/, '')}/${repo}` : repo;
}

/**
 * Turn `mirror.additionalImages` into planned images with oc-mirror v2's destination naming: the
 * source path kept under the destination (`<dest>/<prefix>/<source path>:<tag>`), `targetRepo` and
 * `targetTag` overriding it, and images matching a `blockedImages` pattern left out.
 */
export function planAdditionalImages(
  specs: AdditionalImageSpec[],
  blocked: { name: string }[],
): { images: PlannedImage[]; blocked: BlockedImage[] } {
  // Go (RE2) syntax, as the ImageSetConfiguration validator checked it: `(?i)`, `\z`, `\Q…\E` are not JS.
  const patterns = blocked.map((b) => {
    const compiled = compileGoRegexp(b.name);
    if (!compiled.ok) {
      throw usageError(
        'ISC_INVALID',
        `blocked image "${b.name}" is not a valid regular expression: ${compiled.error}`,
      );
    }
    return { pattern: b.name, re: compiled.regexp };
  });
  const images: PlannedImage[] = [];
  const skipped: BlockedImage[] = [];
  const seen = new Map<string, string>();
  for (const spec of specs) {
    const name = spec.name.replace(/^docker:\/\//, '');
    const source = parseReference(name);
    const full = formatReference(source);
    const hit = patterns.find((p) => p.re.test(name) || p.re.test(full));
    if (hit) {
      skipped.push({ origin: spec.name, pattern: hit.pattern });
      continue;
    }
    if (spec.targetTag !== undefined && !isValidTag(spec.targetTag)) {
      throw usageError('ISC_INVALID', `targetTag "${spec.targetTag}" of ${spec.name} is not a valid tag`, {
        where: spec.where,
        hint: 'tags are up to 128 letters, digits, _, . and -, not starting with . or -',
      });
    }
    const destRepo = spec.targetRepo ?? source.repository;
    const destTag =
      spec.targetTag ?? (source.digest && !source.tag ? digestTag(source.digest) : (source.tag ?? 'latest'));
    const key = `${destRepo}:${destTag}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      if (earlier === full) continue; // the same image listed twice
      throw usageError('ISC_CONFLICT', `${spec.name} and ${earlier} would both be mirrored to ${key}`, {
        where: spec.where,
        hint: 'give one of them a targetRepo (or targetTag) so each source has its own destination',
      });
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
