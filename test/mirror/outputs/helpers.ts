import { parseDigest } from '../../../src/mirror/digest.js';
import type { MirroredImage } from '../../../src/mirror/outputs/index.js';
import type { ImageReference } from '../../../src/mirror/reference.js';

/** An image reference from its parts. */
export function ref(registry: string, repository: string, tag?: string, digest?: string): ImageReference {
  // Test literals: parsed, so a typo fails here rather than passing as a string.
  return {
    registry,
    repository,
    ...(tag ? { tag } : {}),
    ...(digest ? { digest: parseDigest(digest, 'test ref') } : {}),
  };
}

/** A mirrored image; digest and tag references follow from the source. */
export function img(
  category: MirroredImage['category'],
  source: ImageReference,
  destination: ImageReference,
): MirroredImage {
  return { source, destination, category, byDigest: Boolean(source.digest), byTag: Boolean(source.tag) };
}
