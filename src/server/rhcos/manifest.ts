/**
 * The boot images manifest, `<dir>/images/airgap-images.json`: what `airgap images fetch` put in
 * the images directory, so that a server and the AgentServiceConfig osImages can be written from it
 * without the stream metadata at hand.
 *
 * ```json
 * { "kind": "AirgapBootImages", "version": 1,
 *   "stream": "rhcos-4.21", "openshiftVersion": "4.21",
 *   "source": "mirror.example.com:8443/ocp/openshift/release-images@sha256:…",
 *   "images": [ { "architecture": "x86_64", "artifact": "iso", "release": "9.8.20260403-0",
 *                 "file": "rhcos-9.8.20260403-0-live-iso.x86_64.iso", "sha256": "61528a93…",
 *                 "size": 1234567890, "location": "https://rhcos.mirror.openshift.com/…",
 *                 "stream": "rhcos-4.21", "openshiftVersion": "4.21" } ] }
 * ```
 *
 * `stream`, `openshiftVersion` and `source` at the top are those of the latest fetch; each image
 * also carries its own `stream` and `openshiftVersion`, since fetches of other architectures or
 * streams into the same directory are merged: a new image replaces the entry with the same file
 * name or the same (stream, architecture, artifact), every other entry stays.
 *
 * `openshiftVersion` (x.y) comes from the release payload's version when the stream was read from
 * a release image, else from a stream named `rhcos-x.y`; otherwise (an FCOS stream, a stream named
 * otherwise) it is absent, and whoever writes osImages must be told the version.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AirgapError, usageError } from '../../util/errors.js';
import { statIfExists, writeFileAtomic } from '../../util/fs.js';
import type { BootArtifactKind } from './stream.js';
import { ServerError } from '../errors.js';

const IMAGES_SUBDIR = 'images';
const BOOT_IMAGES_MANIFEST = 'airgap-images.json';
export const BOOT_IMAGES_KIND = 'AirgapBootImages';

/** One file in the images directory. */
export interface BootImageEntry {
  /** The stream's name: x86_64, aarch64, ppc64le, s390x. */
  architecture: string;
  artifact: BootArtifactKind;
  /** The RHCOS build (`artifacts.metal.release`), the osImages `version`. */
  release: string;
  /** The file name in the images directory (the basename of `location`). */
  file: string;
  /** Lowercase hex, verified when the file was fetched. */
  sha256: string;
  size: number;
  /** Where it was fetched from (the stream's location). */
  location: string;
  /** The stream it belongs to (`rhcos-4.21`). */
  stream: string;
  openshiftVersion?: string;
}

export interface BootImagesManifest {
  kind: typeof BOOT_IMAGES_KIND;
  version: 1;
  /** The stream of the latest fetch. */
  stream: string;
  /** x.y of the latest fetch, when known. */
  openshiftVersion?: string;
  /** What the latest fetch read the stream from: a file, a URL, or a release image by digest. */
  source?: string;
  images: BootImageEntry[];
}

/** `<dir>/images`. */
export function imagesDirOf(dir: string): string {
  return join(dir, IMAGES_SUBDIR);
}

/** `<dir>/images/airgap-images.json`. */
export function bootImagesManifestPath(dir: string): string {
  return join(imagesDirOf(dir), BOOT_IMAGES_MANIFEST);
}

const ARTIFACT_ORDER: Record<string, number> = { iso: 0, rootfs: 1, kernel: 2, initramfs: 3 };

function invalid(path: string, why: string): AirgapError {
  return new AirgapError(
    ServerError.IMAGES_MANIFEST_INVALID,
    `${path} is not a boot images manifest: ${why}`,
    {
      hint: 'run `airgap images fetch` again into this directory; it rewrites the manifest',
    },
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isArtifact(v: unknown): v is BootArtifactKind {
  return typeof v === 'string' && Object.hasOwn(ARTIFACT_ORDER, v);
}

/** A field's value for a message: `missing`, or its JSON. */
function shown(v: unknown): string {
  return v === undefined ? 'missing' : JSON.stringify(v);
}

/** `o[key]` when it is a string; else IMAGES_MANIFEST_INVALID naming the field (`at` + key). */
function stringField(o: Record<string, unknown>, key: string, at: string, path: string): string {
  const v = o[key];
  if (typeof v === 'string') return v;
  throw invalid(path, `${at}${key} is ${shown(v)}, not a string`);
}

/** `o[key]` when it is a string or absent. */
function optionalString(
  o: Record<string, unknown>,
  key: string,
  at: string,
  path: string,
): string | undefined {
  return o[key] === undefined ? undefined : stringField(o, key, at, path);
}

/** One entry of `images`; a manifest written before per-image streams gets the top-level one. */
function parseEntry(i: unknown, n: number, stream: string, path: string): BootImageEntry {
  const at = `images[${n}].`;
  if (!isRecord(i)) throw invalid(path, `images[${n}] is not an object`);
  const field = (key: string) => stringField(i, key, at, path);
  const architecture = field('architecture');
  const release = field('release');
  const file = field('file');
  const sha256 = field('sha256');
  const location = field('location');
  if (!isArtifact(i.artifact))
    throw invalid(
      path,
      `${at}artifact is ${shown(i.artifact)}, not one of ${Object.keys(ARTIFACT_ORDER).join(', ')}`,
    );
  if (typeof i.size !== 'number' || !Number.isSafeInteger(i.size) || i.size < 0)
    throw invalid(path, `${at}size is ${shown(i.size)}, not a size in bytes`);
  if (file === '' || file.includes('/') || file.startsWith('.'))
    throw invalid(path, `${at}file ${JSON.stringify(file)} is not a file name in the images directory`);
  const openshiftVersion = optionalString(i, 'openshiftVersion', at, path);
  return {
    architecture,
    artifact: i.artifact,
    release,
    file,
    sha256,
    size: i.size,
    location,
    stream: typeof i.stream === 'string' ? i.stream : stream,
    ...(openshiftVersion !== undefined ? { openshiftVersion } : {}),
  };
}

/** Check a parsed manifest; throws IMAGES_MANIFEST_INVALID naming `path` and the field. */
function parseBootImagesManifest(doc: unknown, path: string): BootImagesManifest {
  if (!isRecord(doc) || doc.kind !== BOOT_IMAGES_KIND) throw invalid(path, `kind is not ${BOOT_IMAGES_KIND}`);
  if (doc.version !== 1) throw invalid(path, `version ${String(doc.version)} is not 1`);
  if (typeof doc.stream !== 'string') throw invalid(path, 'it has no stream');
  if (!Array.isArray(doc.images)) throw invalid(path, 'it has no images list');
  const stream = doc.stream;
  const openshiftVersion = optionalString(doc, 'openshiftVersion', '', path);
  const source = optionalString(doc, 'source', '', path);
  return {
    kind: BOOT_IMAGES_KIND,
    version: 1,
    stream,
    ...(openshiftVersion !== undefined ? { openshiftVersion } : {}),
    ...(source !== undefined ? { source } : {}),
    images: doc.images.map((i: unknown, n) => parseEntry(i, n, stream, path)),
  };
}

/**
 * Read `<dir>/images/airgap-images.json` (`dir` is what `airgap images fetch --dir` was given).
 * IMAGES_MANIFEST_MISSING (exit 2, with the fetch command as the hint) when there is none,
 * IMAGES_MANIFEST_INVALID when it cannot be read as one. With `checkFiles`, every listed file must
 * be in the images directory with its recorded size (IMAGES_FILE_MISSING otherwise); contents are
 * not hashed again.
 */
export async function readBootImagesManifest(
  dir: string,
  opts: { checkFiles?: boolean } = {},
): Promise<BootImagesManifest> {
  const path = bootImagesManifestPath(dir);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw usageError(
        ServerError.IMAGES_MANIFEST_MISSING,
        `no boot images have been fetched into ${dir} (${path} does not exist)`,
        {
          hint: `fetch them first: airgap images fetch --release <release image> --dir ${dir}`,
        },
      );
    throw usageError(ServerError.IMAGES_MANIFEST_UNREADABLE, `cannot read ${path}: ${(e as Error).message}`, {
      hint: 'check the path and its permissions',
    });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw invalid(path, `not JSON (${(e as Error).message})`);
  }
  const m = parseBootImagesManifest(doc, path);
  if (opts.checkFiles) {
    const problems: string[] = [];
    for (const i of m.images) {
      const s = await statIfExists(join(imagesDirOf(dir), i.file)); // unreadable is thrown, with its path
      if (!s?.isFile()) problems.push(`${i.file} is missing`);
      else if (s.size !== i.size) problems.push(`${i.file} is ${s.size} bytes, the manifest says ${i.size}`);
    }
    if (problems.length > 0)
      throw new AirgapError(
        ServerError.IMAGES_FILE_MISSING,
        `${imagesDirOf(dir)} does not hold what ${path} lists: ${problems.join('; ')}`,
        {
          hint: `run airgap images fetch again with the same source and --dir ${dir}; it fetches what is missing`,
        },
      );
  }
  return m;
}

/**
 * Merge the images of one fetch into an existing manifest: each new image replaces the entry with
 * the same file or the same (stream, architecture, artifact); the rest stay. Sorted by architecture,
 * artifact (iso, rootfs, kernel, initramfs), stream.
 */
export function mergeBootImagesManifest(
  existing: BootImagesManifest | undefined,
  fetched: { stream: string; openshiftVersion?: string; source?: string; images: BootImageEntry[] },
): BootImagesManifest {
  // The version of this fetch; else the one already recorded for the same stream.
  const openshiftVersion =
    fetched.openshiftVersion ??
    (existing?.stream === fetched.stream ? existing.openshiftVersion : undefined) ??
    existing?.images.find((i) => i.stream === fetched.stream && i.openshiftVersion)?.openshiftVersion;
  const fresh = fetched.images.map((i) =>
    i.openshiftVersion || !openshiftVersion ? i : { ...i, openshiftVersion },
  );
  const key = (i: BootImageEntry) => `${i.stream}\0${i.architecture}\0${i.artifact}`;
  const newFiles = new Set(fresh.map((i) => i.file));
  const newKeys = new Set(fresh.map(key));
  const kept = (existing?.images ?? []).filter((i) => !newFiles.has(i.file) && !newKeys.has(key(i)));
  const images = [...kept, ...fresh].sort(
    (a, b) =>
      a.architecture.localeCompare(b.architecture) ||
      ARTIFACT_ORDER[a.artifact]! - ARTIFACT_ORDER[b.artifact]! ||
      a.stream.localeCompare(b.stream),
  );
  return {
    kind: BOOT_IMAGES_KIND,
    version: 1,
    stream: fetched.stream,
    ...(openshiftVersion ? { openshiftVersion } : {}),
    ...(fetched.source ? { source: fetched.source } : {}),
    images,
  };
}

/** Write the manifest atomically (temp file, fsync, rename). */
export async function writeBootImagesManifest(dir: string, m: BootImagesManifest): Promise<string> {
  const path = bootImagesManifestPath(dir);
  await writeFileAtomic(path, `${JSON.stringify(m, null, 2)}\n`);
  return path;
}
