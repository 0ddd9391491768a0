/**
 * What reading and rebuilding an operator catalog image share: the labels that say where the
 * file-based catalog lives (`operators.operatorframework.io.index.configs.v1`, `/configs` by
 * default), the image config (read and digest-checked from the layout), paths inside the image as
 * layer tars spell them, how an image is named in messages, and the CATALOG_IMAGE_INVALID error.
 */
import path from 'node:path';
import { AirgapError } from '../../util/errors.js';
import { sha256Digest } from '../digest.js';
import type { OciLayout } from '../layout/store.js';
import type { Descriptor, ManifestData } from '../manifest.js';
import { MirrorError } from '../errors.js';

/**
 * Where a catalog image's manifests and blobs are read from: an OCI layout (OciLayout has these
 * methods), or a registry read as it streams (src/mirror/list/registry-content.ts), so a catalog
 * can be listed without storing it. Every read is verified against its digest by the caller.
 */
export interface ImageContent {
  getManifest(digest: string, mediaType?: string): Promise<ManifestData>;
  /** A small blob (a config) whole; `size` from its descriptor. */
  readBytes(digest: string, size?: number): Promise<Buffer>;
  /** A blob's bytes from `offset`; `size` from its descriptor (a registry read resumes with it). */
  openBlob(digest: string, offset?: number, what?: string, size?: number): Promise<AsyncIterable<Buffer>>;
}

/** The label naming the FBC root of a catalog image. */
export const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
/** The label of SQLite catalogs (before 4.11), named in the error when no FBC is found. */
export const DATABASE_LABEL = 'operators.operatorframework.io.index.database.v1';
const DEFAULT_CONFIGS_DIR = '/configs';

/** The parts of an image config the catalog modules read or write; everything else passes through. */
export interface ImageConfigDoc {
  created?: string;
  config?: {
    Labels?: Record<string, string> | null;
    Cmd?: string[] | null;
    Entrypoint?: string[] | null;
    WorkingDir?: string;
    [k: string]: unknown;
  } | null;
  rootfs?: { type?: string; diff_ids?: string[] };
  history?: Record<string, unknown>[];
  [k: string]: unknown;
}

/** `/configs/` → `configs`; `/` → `` (the image root). */
export function dirKey(dir: string): string {
  return path.posix.normalize(`/${dir}`).replace(/^\/+|\/+$/g, '');
}

/** Compare paths segment by segment, as a sorted directory walk visits them. */
export function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

export function imageError(message: string, where: string, cause?: unknown): AirgapError {
  return new AirgapError(MirrorError.CATALOG_IMAGE_INVALID, message, {
    where,
    cause,
    hint: 'the layout holds a damaged catalog image; copy it again',
  });
}

/** Re-raise an error with the image appended to where it happened. */
export function inImage(e: unknown, image: string): unknown {
  if (!(e instanceof AirgapError)) return e;
  return new AirgapError(e.code, e.message, {
    where: e.where ? `${e.where} in ${image}` : image,
    ...(e.hint ? { hint: e.hint } : {}),
    exitCode: e.exitCode,
    cause: e.cause,
    ...(e.details ? { details: e.details } : {}),
  });
}

/** How an image is named in messages: its layout entry, else `oci:<dir>@<digest>`. */
export async function imageName(layout: OciLayout, digest: string): Promise<string> {
  const entry = (await layout.entries()).find((e) => e.descriptor.digest === digest);
  return entry ? entry.refName : `oci:${layout.dir}@${digest}`;
}

export async function readConfig(
  layout: ImageContent,
  d: Descriptor,
  image: string,
): Promise<ImageConfigDoc> {
  const bytes = await layout.readBytes(d.digest, d.size);
  if (sha256Digest(bytes) !== d.digest)
    throw imageError(`the config ${d.digest} of ${image} does not match its digest`, image);
  try {
    return JSON.parse(bytes.toString('utf8')) as ImageConfigDoc;
  } catch (e) {
    throw imageError(`the config ${d.digest} of ${image} is not JSON`, image, e);
  }
}

/** The FBC root the configs label names (default `/configs`), normalised to `/<dir>`. */
export function configsDirOf(config: ImageConfigDoc, image: string): string {
  const raw = config.config?.Labels?.[CONFIGS_LABEL];
  const dir = typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : DEFAULT_CONFIGS_DIR;
  const key = dirKey(dir);
  if (key === '' || key.split('/').includes('..'))
    throw new AirgapError(
      MirrorError.CATALOG_UNSUPPORTED,
      `${image} names ${JSON.stringify(dir)} as its FBC root`,
      {
        where: `${image} label ${CONFIGS_LABEL}`,
        hint: 'a catalog keeps its file-based catalog in a directory of its own, usually /configs',
      },
    );
  return `/${key}`;
}

/** Is an index child an attestation or other non-image (buildx marks them unknown/unknown)? */
export function isAttestation(d: Descriptor): boolean {
  return (
    d.annotations?.['vnd.docker.reference.type'] === 'attestation-manifest' || d.platform?.os === 'unknown'
  );
}
