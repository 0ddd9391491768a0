/**
 * `airgap images fetch`: the RHCOS boot images a disconnected site needs, verified, into
 * `<dir>/images/`. The stream metadata comes from a file, a URL, or a release payload's
 * coreos-bootimages ConfigMap read through the registry client (so a release already mirrored to
 * the bastion registry says exactly which RHCOS build goes with it). For each architecture the live
 * ISO and the live rootfs (and with `pxe` the kernel and initramfs) are downloaded with
 * downloadVerified (sha256 while streaming, Range resume, retries, rename only when verified) under
 * the file names the metadata gives, and `<dir>/images/airgap-images.json` records what is there.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  AirgapError,
  isAirgapError,
  messageOf,
  unreadableReason,
  usageError,
  CommonError,
} from '../../util/errors.js';
import { lockDirectory } from '../../util/lock.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import { readReleasePayload } from '../../mirror/index.js';
import { parseReference } from '../../mirror/index.js';
import { RegistryClient, type RegistryClientOptions } from '../../mirror/index.js';
import type { CoreosStream } from '../../mirror/index.js';
import { downloadVerified } from '../../net/download.js';
import { getJson, type TlsOptions } from '../../net/http.js';
import {
  bootImagesManifestPath,
  imagesDirOf,
  mergeBootImagesManifest,
  readBootImagesManifest,
  writeBootImagesManifest,
  type BootImageEntry,
  type BootImagesManifest,
} from './manifest.js';
import {
  COREOS_ARCHES,
  OCI_ARCH,
  fromBootImages,
  normalizeArch,
  openshiftMinor,
  openshiftVersionOfStream,
  parseStreamDocument,
  selectBootArtifacts,
  selectStream,
  streamDocumentOf,
  type BootArtifact,
  type BootArtifactKind,
  type CoreosArch,
  type StreamDocument,
} from './stream.js';
import { ServerError } from '../errors.js';

/** Where the stream metadata comes from. */
export type BootImagesSource =
  | { file: string }
  | { url: string }
  /** A release payload image (`host/ocp/openshift/release-images:4.18.3-x86_64`, or by digest). */
  | { release: string; client?: RegistryClientOptions };

export interface FetchBootImagesOptions {
  source: BootImagesSource;
  /** `<dir>`: must exist; the files go to `<dir>/images/` (created). */
  dir: string;
  /** x86_64, aarch64, ppc64le, s390x (amd64, arm64 understood), or `all`; default x86_64. */
  arches?: string[];
  /** Also the PXE kernel and initramfs. */
  pxe?: boolean;
  /** A stream by name (`rhel-10`, `rhcos-4.22`) from a ConfigMap that ships several; default its default. */
  osStream?: string;
  /** TLS for the stream URL and the file downloads (and the registry, unless `source.client` says otherwise). */
  tls?: TlsOptions;
  /** Retries of a request that fails without progress (network, 408, 429, 5xx); default 5. */
  retries?: number;
  /** First backoff in ms (tests shorten it). */
  baseDelayMs?: number;
  /** Time limit for response headers and any pause in a body, in ms; default 60 s. */
  timeoutMs?: number;
  progress?: ProgressSink;
}

/** One file of the result. */
export interface FetchedBootImage {
  artifact: BootArtifactKind;
  arch: CoreosArch;
  release: string;
  file: string;
  path: string;
  sha256: string;
  size: number;
  /** false: it was already there and verified. */
  downloaded: boolean;
  location: string;
  /** Where the download started: the size of a partial file from an earlier run, else 0. */
  resumedFrom: number;
}

export interface FetchBootImagesResult {
  stream: string;
  openshiftVersion?: string;
  /** The file, the URL, or the release image by digest the stream was read from. */
  source: string;
  /** The release payload's version, when the source was a release. */
  releaseVersion?: string;
  imagesDir: string;
  manifestPath: string;
  manifest: BootImagesManifest;
  files: FetchedBootImage[];
}

/** A stream document and what its source says about the OpenShift version. */
export interface LoadedStream {
  doc: StreamDocument;
  /** x.y from a release payload. */
  openshiftVersion?: string;
  releaseVersion?: string;
}

const URL_HINT =
  'check the URL, the network and the proxy (HTTPS_PROXY, NO_PROXY); on a bastion without internet, copy the stream file across and use --stream-file';

/**
 * Read the stream metadata from its source. Files: STREAM_UNREADABLE (exit 2) naming the file;
 * STREAM_INVALID (exit 2). URLs: STREAM_URL_UNREACHABLE, _STATUS, _TLS, _INVALID (exit 1).
 * Releases: the registry client's errors, PAYLOAD_* and RELEASE_NO_BOOT_IMAGES.
 */
async function loadStream(
  source: BootImagesSource,
  opts: {
    tls?: TlsOptions;
    retries?: number;
    baseDelayMs?: number;
    timeoutMs?: number;
    arch?: CoreosArch;
  } = {},
): Promise<LoadedStream> {
  if ('file' in source) {
    let text: string;
    try {
      text = await readFile(source.file, 'utf8');
    } catch (e) {
      throw usageError(
        ServerError.STREAM_UNREADABLE,
        `cannot read the stream file ${source.file}: ${unreadableReason(e)}`,
        {
          hint: 'give the JSON of `openshift-install coreos print-stream-json` (or the coreos-bootimages ConfigMap) with --stream-file',
        },
      );
    }
    return { doc: parseStreamDocument(text, source.file, 2) };
  }
  if ('url' in source) {
    const body = await getJson(source.url, {
      ...opts.tls,
      errorPrefix: 'STREAM_URL',
      unreachableHint: URL_HINT,
      ...(opts.retries !== undefined ? { retries: opts.retries } : {}),
      ...(opts.baseDelayMs !== undefined ? { baseDelayMs: opts.baseDelayMs } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return { doc: streamDocumentOf(body, source.url, 1) };
  }
  const ref = parseReference(source.release);
  const image = `${ref.registry}/${ref.repository}${ref.digest ? `@${ref.digest}` : `:${ref.tag ?? 'latest'}`}`;
  const client = new RegistryClient(ref.registry, source.client ?? { ...opts.tls });
  try {
    const payload = await readReleasePayload(client, ref.repository, ref.digest ?? ref.tag ?? 'latest', {
      arch: OCI_ARCH[opts.arch ?? 'x86_64'],
    });
    if (ref.digest && payload.digest !== ref.digest)
      throw new AirgapError(CommonError.RELEASE_DIGEST_MISMATCH, `${image} resolved to ${payload.digest}`, {
        hint: 'the registry serves different content for this digest; check the registry',
      });
    const pinned = `${ref.registry}/${ref.repository}@${payload.digest}`;
    if (!payload.bootImages)
      throw usageError(
        ServerError.RELEASE_NO_BOOT_IMAGES,
        `release ${payload.metadata.version} (${image}) has no coreos-bootimages ConfigMap`,
        {
          hint: 'releases before 4.8 do not carry one: give the stream with --stream-file (openshift-install coreos print-stream-json)',
        },
      );
    const minor = openshiftMinor(payload.metadata.version);
    return {
      doc: fromBootImages(payload.bootImages, pinned),
      releaseVersion: payload.metadata.version,
      ...(minor ? { openshiftVersion: minor } : {}),
    };
  } finally {
    await client.close();
  }
}

/** The architectures asked for, normalised, without duplicates; `all` stays as the marker. */
function parseArches(arches: readonly string[] | undefined): CoreosArch[] | 'all' {
  const list = (arches ?? [])
    .flatMap((a) => a.split(','))
    .map((a) => a.trim())
    .filter(Boolean);
  if (list.length === 0) return ['x86_64'];
  if (list.some((a) => a.toLowerCase() === 'all')) return 'all';
  return [...new Set(list.map(normalizeArch))];
}

/** `<dir>` must exist and be a directory (exit 2 otherwise); `<dir>/images` is created. */
async function checkDir(dir: string): Promise<void> {
  const s = await stat(dir).catch((e: NodeJS.ErrnoException) => e);
  if (s instanceof Error) {
    if (s.code === 'ENOENT')
      throw usageError(ServerError.IMAGES_DIR_MISSING, `the directory ${dir} does not exist`, {
        hint: `create it first (mkdir -p ${dir}); airgap creates only ${join(dir, 'images')} inside it`,
      });
    throw usageError(ServerError.IMAGES_DIR_INVALID, `cannot use the directory ${dir}: ${s.message}`);
  }
  if (!s.isDirectory())
    throw usageError(ServerError.IMAGES_DIR_INVALID, `${dir} is not a directory`, {
      hint: 'give --dir a directory; the files go to <dir>/images',
    });
}

/** Errors about the server itself (not one file): no use trying the next file there. */
function stopsTheRest(e: unknown): boolean {
  return isAirgapError(e) && /_(TLS|UNREACHABLE|WRITE_FAILED)$/.test(e.code);
}

/** What the stream says to fetch: the stream chosen, its artifacts for the architectures asked, the OpenShift version. */
interface FetchPlan {
  loaded: LoadedStream;
  stream: CoreosStream;
  artifacts: BootArtifact[];
  openshiftVersion: string | undefined;
}

/** Read the stream from its source and pick the artifacts of the architectures asked. */
async function planFetch(
  o: FetchBootImagesOptions,
  asked: CoreosArch[] | 'all',
  progress: ProgressSink,
): Promise<FetchPlan> {
  progress({ type: 'phase', name: 'stream', detail: describeSource(o.source) });
  const loaded = await loadStream(o.source, {
    tls: o.tls,
    retries: o.retries,
    baseDelayMs: o.baseDelayMs,
    timeoutMs: o.timeoutMs,
    arch: asked === 'all' ? 'x86_64' : asked[0],
  });
  const stream = selectStream(loaded.doc, o.osStream);
  const arches =
    asked === 'all'
      ? (Object.keys(stream.architectures).filter((a) =>
          (COREOS_ARCHES as readonly string[]).includes(a),
        ) as CoreosArch[])
      : asked;
  const artifacts = selectBootArtifacts(stream, { arches, pxe: o.pxe, source: loaded.doc.source });
  const openshiftVersion = loaded.openshiftVersion ?? openshiftVersionOfStream(stream.stream);
  return { loaded, stream, artifacts, openshiftVersion };
}

/** Create `<dir>/images` and lock it for this run; the function returned unlocks it. */
async function openImagesDir(imagesDir: string): Promise<() => Promise<void>> {
  try {
    await mkdir(imagesDir, { recursive: true });
  } catch (e) {
    throw usageError(ServerError.IMAGES_DIR_INVALID, `cannot create ${imagesDir}: ${messageOf(e)}`, {
      hint: 'check the permissions of the directory, and that images is not a file',
    });
  }
  return lockDirectory(imagesDir).catch((e: unknown) => {
    if (isAirgapError(e)) throw e;
    throw usageError(ServerError.IMAGES_DIR_INVALID, `cannot write in ${imagesDir}: ${messageOf(e)}`, {
      hint: 'check the permissions of the directory',
    });
  });
}

/** The manifest of an earlier run, if any; one that cannot be read is a warning (it is written anew). */
async function readExistingManifest(
  dir: string,
  progress: ProgressSink,
): Promise<BootImagesManifest | undefined> {
  try {
    return await readBootImagesManifest(dir);
  } catch (e) {
    if (!(isAirgapError(e) && e.code === ServerError.IMAGES_MANIFEST_MISSING))
      progress({ type: 'warning', message: `${messageOf(e)}; it is written anew` });
    return undefined;
  }
}

/** What a download left on disk. */
interface Downloaded {
  size: number;
  downloaded: boolean;
  resumedFrom: number;
}

/** A file that could not be fetched, and why. */
interface FailedDownload {
  artifact: BootArtifact;
  error: unknown;
}

/**
 * Download each file (one per name), verified. A file that fails does not stop the others, unless
 * its error is about the server or the disk: then the rest fail with it, untried.
 */
async function downloadAll(
  files: Iterable<BootArtifact>,
  imagesDir: string,
  o: FetchBootImagesOptions,
  progress: ProgressSink,
): Promise<{ done: Map<string, Downloaded>; failed: FailedDownload[] }> {
  const done = new Map<string, Downloaded>();
  const failed: FailedDownload[] = [];
  let stopped: unknown;
  for (const a of files) {
    if (stopped !== undefined) {
      failed.push({ artifact: a, error: stopped });
      continue;
    }
    progress({ type: 'phase', name: 'fetch', detail: `${a.file} (${a.architecture} ${a.artifact})` });
    try {
      const r = await downloadVerified(a.location, join(imagesDir, a.file), {
        sha256: a.sha256,
        ...(a.size !== undefined ? { size: a.size } : {}),
        tls: o.tls,
        retries: o.retries,
        ...(o.baseDelayMs !== undefined ? { baseDelayMs: o.baseDelayMs } : {}),
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        errorPrefix: 'IMAGES_DOWNLOAD',
        onBytes: (bytes) => progress({ type: 'bytes', bytes }),
        onPlanned: (bytes) => progress({ type: 'bytes-planned', bytes }),
      });
      if (r.replaced)
        progress({
          type: 'warning',
          message: `${a.file} was in ${imagesDir} but did not match its sha256; it was fetched again`,
        });
      done.set(a.file, { size: r.size, downloaded: r.downloaded, resumedFrom: r.resumedFrom });
      progress({ type: 'item-done', ok: true, name: a.file });
    } catch (e) {
      failed.push({ artifact: a, error: e });
      progress({ type: 'item-done', ok: false, name: a.file, message: messageOf(e) });
      if (stopsTheRest(e)) stopped = e;
    }
  }
  return { done, failed };
}

/** Merge what is now there into the manifest and write it; undefined when nothing is there. */
async function recordFetched(
  dir: string,
  plan: FetchPlan,
  existing: BootImagesManifest | undefined,
  done: Map<string, Downloaded>,
): Promise<BootImagesManifest | undefined> {
  const { stream, openshiftVersion } = plan;
  const entries: BootImageEntry[] = plan.artifacts
    .filter((a) => done.has(a.file))
    .map((a) => ({
      architecture: a.architecture,
      artifact: a.artifact,
      release: a.release,
      file: a.file,
      sha256: a.sha256,
      size: done.get(a.file)!.size,
      location: a.location,
      stream: stream.stream,
      ...(openshiftVersion ? { openshiftVersion } : {}),
    }));
  if (entries.length === 0) return undefined;
  const manifest = mergeBootImagesManifest(existing, {
    stream: stream.stream,
    ...(openshiftVersion ? { openshiftVersion } : {}),
    source: plan.loaded.doc.source,
    images: entries,
  });
  await writeBootImagesManifest(dir, manifest);
  return manifest;
}

/** The error of the files that failed: that file's own when only one did, else IMAGES_FETCH_FAILED naming each. */
function throwIfFailed(failed: FailedDownload[], total: number, imagesDir: string): void {
  if (failed.length === 1 && failed[0]!.error instanceof AirgapError) throw failed[0]!.error;
  if (failed.length > 0) {
    const lines = failed.map((f) => `${f.artifact.file}: ${messageOf(f.error)}`);
    throw new AirgapError(
      ServerError.IMAGES_FETCH_FAILED,
      `${failed.length} of ${total} boot images could not be fetched:\n  ${lines.join('\n  ')}`,
      {
        where: imagesDir,
        hint: 'run the same command again: verified files are kept, broken downloads continue where they stopped',
        details: { failed: failed.map((f) => ({ file: f.artifact.file, error: messageOf(f.error) })) },
      },
    );
  }
}

/** One result entry per artifact (two may share one file). */
function fetchedFiles(
  artifacts: BootArtifact[],
  done: Map<string, Downloaded>,
  imagesDir: string,
): FetchedBootImage[] {
  return artifacts.map((a) => {
    const d = done.get(a.file)!;
    return {
      artifact: a.artifact,
      arch: a.architecture,
      release: a.release,
      file: a.file,
      path: join(imagesDir, a.file),
      sha256: a.sha256,
      size: d.size,
      downloaded: d.downloaded,
      location: a.location,
      resumedFrom: d.resumedFrom,
    };
  });
}

/**
 * Fetch the boot images: read the stream, pick its artifacts, download what is not already there
 * and verified, and merge the manifest. A file that fails is reported after the others were tried
 * (an error about the server or the disk stops the rest); the manifest then lists what is there,
 * and the error is that file's (or IMAGES_FETCH_FAILED naming each).
 */
export async function fetchBootImages(o: FetchBootImagesOptions): Promise<FetchBootImagesResult> {
  const progress = o.progress ?? noProgress;
  const asked = parseArches(o.arches);
  const dir = resolve(o.dir);
  await checkDir(dir);
  const plan = await planFetch(o, asked, progress);

  const imagesDir = imagesDirOf(dir);
  const unlock = await openImagesDir(imagesDir);
  try {
    const existing = await readExistingManifest(dir, progress);
    // One download per file name (two artifacts may share one file).
    const unique = new Map<string, BootArtifact>();
    for (const a of plan.artifacts) if (!unique.has(a.file)) unique.set(a.file, a);
    progress({ type: 'items-total', total: plan.artifacts.length });

    const { done, failed } = await downloadAll(unique.values(), imagesDir, o, progress);
    const manifest = await recordFetched(dir, plan, existing, done);
    throwIfFailed(failed, unique.size, imagesDir);
    return {
      stream: plan.stream.stream,
      ...(plan.openshiftVersion ? { openshiftVersion: plan.openshiftVersion } : {}),
      source: plan.loaded.doc.source,
      ...(plan.loaded.releaseVersion ? { releaseVersion: plan.loaded.releaseVersion } : {}),
      imagesDir,
      manifestPath: bootImagesManifestPath(dir),
      manifest: manifest!,
      files: fetchedFiles(plan.artifacts, done, imagesDir),
    };
  } finally {
    await unlock();
  }
}

function describeSource(s: BootImagesSource): string {
  if ('file' in s) return s.file;
  if ('url' in s) return s.url;
  return s.release;
}
