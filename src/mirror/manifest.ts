import { AirgapError } from '../util/errors.js';
import { MediaType, isIndexType, isImageManifestType, isSchema1 } from './media-types.js';
import { MirrorError } from './errors.js';
import { parseDigest, type Digest } from './digest.js';

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: Digest;
  size: number;
  platform?: Platform;
  annotations?: Record<string, string>;
  urls?: string[];
}

/** A manifest as fetched: the exact bytes (never re-serialised) plus what we read from them. */
export interface ManifestData {
  bytes: Buffer;
  digest: Digest;
  mediaType: string;
}

export type ParsedManifest =
  | { kind: 'index'; mediaType: string; manifests: Descriptor[] }
  | { kind: 'image'; mediaType: string; config: Descriptor; layers: Descriptor[]; subject?: Descriptor };

function invalid(what: string, why: string): never {
  throw new AirgapError(MirrorError.MIRROR_MANIFEST_INVALID, `${what}: ${why}`, {
    hint: 'the source holds a manifest this tool cannot copy; check it with `skopeo inspect --raw`',
  });
}

function descriptor(v: unknown, what: string): Descriptor {
  const d = v as Partial<Descriptor> | null;
  if (!d || typeof d.digest !== 'string' || typeof d.size !== 'number' || typeof d.mediaType !== 'string') {
    invalid(what, 'a descriptor lacks mediaType, digest or size');
  }
  // Checked here, where every descriptor enters: its digest may become a file name or a URL.
  parseDigest(d.digest, what);
  if (!Number.isSafeInteger(d.size) || d.size < 0) invalid(what, `the size ${d.size} is not a byte count`);
  return d as Descriptor;
}

/**
 * Read a manifest's structure. The media type comes from the registry's Content-Type when the
 * document does not carry one (OCI allows omitting it); schema 1 is refused with a clear error.
 */
export function parseManifest(bytes: Buffer, contentType: string | undefined, what: string): ParsedManifest {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    // JSON.parse fails only on text that is not JSON: said so.
    invalid(what, 'it is not JSON');
  }
  const declared = typeof doc.mediaType === 'string' ? doc.mediaType : undefined;
  let mediaType = declared ?? contentType?.split(';')[0]?.trim();
  if (doc.schemaVersion === 1 || isSchema1(mediaType)) {
    throw new AirgapError(MirrorError.MIRROR_SCHEMA1, `${what} is a Docker schema 1 manifest`, {
      hint: 'schema 1 is deprecated and cannot be mirrored with its digest intact; rebuild or re-push the image with a current client',
    });
  }
  if (!mediaType || (!isIndexType(mediaType) && !isImageManifestType(mediaType))) {
    // OCI documents may omit mediaType: infer from the shape.
    if (Array.isArray(doc.manifests)) mediaType = MediaType.OciIndex;
    else if (doc.config && Array.isArray(doc.layers)) mediaType = MediaType.OciManifest;
    else invalid(what, `unsupported media type ${mediaType ?? '(none)'}`);
  }
  if (isIndexType(mediaType)) {
    if (!Array.isArray(doc.manifests)) invalid(what, 'an index without manifests');
    return {
      kind: 'index',
      mediaType,
      manifests: (doc.manifests as unknown[]).map((m, i) => descriptor(m, `${what} manifests[${i}]`)),
    };
  }
  if (!Array.isArray(doc.layers)) invalid(what, 'an image manifest without layers');
  return {
    kind: 'image',
    mediaType,
    config: descriptor(doc.config, `${what} config`),
    layers: (doc.layers as unknown[]).map((l, i) => descriptor(l, `${what} layers[${i}]`)),
    ...(doc.subject ? { subject: descriptor(doc.subject, `${what} subject`) } : {}),
  };
}

/** Blobs an image manifest needs at the destination (config first, then layers; foreign layers skipped). */
export function blobsOf(m: ParsedManifest & { kind: 'image' }): Descriptor[] {
  const out: Descriptor[] = [m.config];
  for (const l of m.layers) {
    if (l.urls && l.urls.length > 0) continue; // non-distributable layer: the registry does not hold it
    out.push(l);
  }
  return out;
}

/** `linux/amd64`, `linux/arm64/v8`. */
export function platformString(p: Platform | undefined): string {
  if (!p) return 'unknown';
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}

/**
 * Does a child of an index match a platform filter? Each filter is an architecture (`--arch
 * amd64`) or `os/architecture[/variant]` (an ImageSetConfiguration's `platforms`); no filter keeps
 * every child, and children without a platform (attestations) are always kept.
 */
export function matchesPlatform(d: Descriptor, filters: readonly string[] | undefined): boolean {
  if (!filters || filters.length === 0 || !d.platform) return true;
  const p = d.platform;
  return filters.some((f) => {
    const [a, b, c] = f.split('/');
    if (b === undefined) return p.architecture === a;
    return p.os === a && p.architecture === b && (c === undefined || p.variant === c);
  });
}
