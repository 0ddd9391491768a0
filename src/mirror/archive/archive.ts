import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { create as tarCreate, Parser, type ReadEntry } from 'tar';
import { AirgapError, messageOf, unreadableReason, usageError } from '../../util/errors.js';
import { isNotFound, tempPathFor, writeFileAtomic } from '../../util/fs.js';
import { withPath } from '../../util/fs-errors.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import { digestHex, type Digest } from '../digest.js';
import { blobsOf, parseManifest } from '../manifest.js';
import { OciLayout } from '../layout/store.js';
import { MirrorError } from '../errors.js';
import { ArchiveContents, type ContentProblem } from './contents.js';
import { tarUntilEnd } from '../tar-read.js';
import { isDigest } from '../digest.js';
import { isValidRepository } from '../reference.js';
import { parseLocation } from '../location.js';
import { inventoryStamp, type Inventory, type InventoryStamp } from '../inventory/format.js';

/** The parts manifest written beside the tar parts: what each part holds and its checksum. */
export interface ArchiveManifest {
  kind: 'AirgapArchive';
  version: 1;
  createdAt: string;
  /** The airgap release that wrote it (absent in archives of releases before it was recorded). */
  createdBy?: string;
  parts: { file: string; size: number; sha256: string; blobs: string[] }[];
  images: { refName: string; digest: string; source?: string }[];
  /** Blobs the images need that an earlier archive already carried (must be at the destination). */
  previouslyArchived: string[];
  /** The plan packed in part 1 (`airgap-plan.json`): its digest and the digest of its configuration. */
  plan?: { sha256: string; config: string };
  /** A delta cut against an inventory of the far side (`--inventory`): which one. */
  inventory?: InventoryStamp;
  /**
   * Of the blobs left out because the inventory lists them: a repository of the inventory's
   * registry that holds each (the far side mounts it from there into another repository).
   */
  homes?: Record<string, string>;
}

/** The plan file an archive carries in its first part (beside index.json), covered by the part checksum. */
export const ARCHIVE_PLAN = 'airgap-plan.json';

const ARCHIVE_MANIFEST = 'airgap-archive.json';
const PART_RE = /^mirror_\d{6}\.tar$/;

function partName(n: number): string {
  return `mirror_${String(n).padStart(6, '0')}.tar`;
}

/** Every blob digest (manifests included) reachable from the layout's index. */
async function reachableBlobs(
  layout: OciLayout,
): Promise<{ manifests: Map<string, number>; blobs: Map<string, number> }> {
  const manifests = new Map<string, number>();
  const blobs = new Map<string, number>();
  const walk = async (digest: string, size: number, mediaType?: string): Promise<void> => {
    if (manifests.has(digest)) return;
    manifests.set(digest, size);
    const m = await layout.getManifest(digest, mediaType);
    const parsed = parseManifest(m.bytes, m.mediaType, `manifest ${digest}`);
    if (parsed.kind === 'index') {
      for (const c of parsed.manifests) {
        if (await layout.hasBlob(c.digest)) await walk(c.digest, c.size, c.mediaType);
      }
    } else {
      for (const b of blobsOf(parsed)) blobs.set(b.digest, b.size);
    }
  };
  for (const e of await layout.entries())
    await walk(e.descriptor.digest, e.descriptor.size, e.descriptor.mediaType);
  return { manifests, blobs };
}

export interface PackOptions {
  /** Largest part in bytes; parts split at blob boundaries (a larger blob gets a part of its own). */
  maxPartBytes: number;
  /** Blobs carried by earlier archives: not packed again. */
  history?: Set<string>;
  /** An inventory of the far side: the blobs it lists (by digest, at the same size) are not packed. */
  inventory?: Inventory;
  progress?: ProgressSink;
  /** The plan to carry (written as {@link ARCHIVE_PLAN} into part 1). */
  plan?: { text: string; config: string };
  /** The airgap version writing it, recorded as `createdBy: airgap <version>`. */
  version?: string;
  /** Files under the layout's `helm/` (charts and repository indexes) carried in part 1. */
  files?: string[];
}

/** A file an archive may carry beside the layout: a chart or repository index under `helm/`. */
const CARRIED_FILE = /^helm\/(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/)*[A-Za-z0-9_][A-Za-z0-9._+-]*$/;

/** Hashing pass-through so a part's checksum is computed while it is written. */
function hasher(): { stream: Transform; digest: () => string; size: () => number } {
  const h = createHash('sha256');
  let n = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      n += chunk.length;
      cb(null, chunk);
    },
  });
  return { stream, digest: () => h.digest('hex'), size: () => n };
}

/**
 * Pack an OCI layout into `mirror_000001.tar`, … in `outDir` (plain tar, split at blob boundaries),
 * with `airgap-archive.json` listing each part's blobs and sha256. Manifests, `index.json` and
 * `oci-layout` always go in; layers and configs already in `history` do not. Earlier parts in
 * `outDir` are replaced only once the new set is complete.
 */
export async function packArchive(
  layout: OciLayout,
  outDir: string,
  opts: PackOptions,
): Promise<ArchiveManifest> {
  const progress = opts.progress ?? noProgress;
  const { manifests, blobs } = await reachableBlobs(layout);
  const history = opts.history ?? new Set<string>();
  const include: { digest: string; size: number }[] = [];
  const previouslyArchived: string[] = [];
  const homes: Record<string, string> = {};
  // Manifests always travel: a few KiB each, they carry the tags, and they let the far side check
  // every image whole before it pushes any (preflight.ts).
  for (const [digest, size] of manifests) include.push({ digest, size });
  for (const [digest, size] of blobs) {
    if (manifests.has(digest)) continue;
    const listed = opts.inventory?.holdsBlob(digest, size) ? opts.inventory.blob(digest) : undefined;
    if (listed) homes[digest] = listed.repository;
    if (history.has(digest) || listed) previouslyArchived.push(digest);
    else include.push({ digest, size });
  }
  // Group into parts: first-fit in order, never splitting a blob.
  const groups: { digest: string; size: number }[][] = [[]];
  let current = 0;
  for (const b of include) {
    if (current + b.size > opts.maxPartBytes && groups[groups.length - 1]!.length > 0) {
      groups.push([]);
      current = 0;
    }
    groups[groups.length - 1]!.push(b);
    current += b.size;
    if (b.size > opts.maxPartBytes) {
      progress({
        type: 'warning',
        message: `blob ${b.digest} (${b.size} bytes) is larger than the archive size; it gets a part of its own`,
      });
    }
  }
  const total = include.reduce((a, b) => a + b.size, 0);
  progress({
    type: 'phase',
    name: 'archive',
    detail: `${include.length} blobs in ${groups.length} part(s)`,
    moves: true,
  });
  progress({ type: 'bytes-planned', bytes: total });
  if (opts.plan) await writeFileAtomic(join(layout.dir, ARCHIVE_PLAN), opts.plan.text);
  const written: ArchiveManifest['parts'] = [];
  const tmpFiles: { tmp: string; final: string }[] = [];
  try {
    for (let i = 0; i < groups.length; i++) {
      const files = groups[i]!.map((b) => `blobs/sha256/${digestHex(b.digest)}`);
      if (i === 0)
        files.unshift(
          'oci-layout',
          'index.json',
          ...(opts.plan ? [ARCHIVE_PLAN] : []),
          ...(opts.files ?? []).filter((f) => CARRIED_FILE.test(f)),
        );
      const name = partName(i + 1);
      const final = join(outDir, name);
      const tmp = tempPathFor(final);
      tmpFiles.push({ tmp, final });
      const h = hasher();
      const pack = tarCreate({ cwd: layout.dir, portable: true, noDirRecurse: true }, files);
      let last = 0;
      h.stream.on('data', () => {
        const n = h.size();
        progress({ type: 'bytes', bytes: n - last });
        last = n;
      });
      await pipeline(pack, h.stream, createWriteStream(tmp));
      written.push({
        file: name,
        size: h.size(),
        sha256: `sha256:${h.digest()}`,
        blobs: groups[i]!.map((b) => b.digest),
      });
    }
    for (const { tmp, final } of tmpFiles) await rename(tmp, final);
  } catch (e) {
    for (const { tmp } of tmpFiles) await rm(tmp, { force: true });
    throw withPath(e, tmpFiles.at(-1)?.final ?? outDir);
  }
  const keep = new Set(written.map((p) => p.file));
  for (const f of await readdir(outDir)) {
    if (PART_RE.test(f) && !keep.has(f)) await rm(join(outDir, f), { force: true });
  }
  const manifest: ArchiveManifest = {
    kind: 'AirgapArchive',
    version: 1,
    createdAt: new Date().toISOString(),
    ...(opts.version ? { createdBy: `airgap ${opts.version}` } : {}),
    parts: written,
    images: (await layout.entries()).map((e) => ({
      refName: e.refName,
      digest: e.descriptor.digest,
      ...(e.source ? { source: e.source } : {}),
    })),
    previouslyArchived,
    ...(opts.inventory ? { inventory: inventoryStamp(opts.inventory), homes } : {}),
    ...(opts.plan
      ? {
          plan: {
            sha256: `sha256:${createHash('sha256').update(opts.plan.text).digest('hex')}`,
            config: opts.plan.config,
          },
        }
      : {}),
  };
  await writeFileAtomic(join(outDir, ARCHIVE_MANIFEST), JSON.stringify(manifest, null, 2));
  return manifest;
}

export async function readArchiveManifest(dir: string): Promise<ArchiveManifest> {
  const path = join(dir, ARCHIVE_MANIFEST);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e; // a permission or I/O error, said with its path (util/fs-errors.ts)
    throw usageError(
      MirrorError.ARCHIVE_MISSING,
      `${dir} holds no airgap archive (${ARCHIVE_MANIFEST} not found)`,
      {
        hint: 'point --from at the directory that `airgap mirror … file://<dir>` wrote',
        cause: e,
      },
    );
  }
  try {
    const m = JSON.parse(text) as ArchiveManifest;
    if (m.kind !== 'AirgapArchive' || !Array.isArray(m.parts)) throw new Error('not an archive manifest');
    checkDeltaFields(m);
    return m;
  } catch (e) {
    throw usageError(
      MirrorError.ARCHIVE_INVALID,
      `${path} is not a valid archive manifest: ${(e as Error).message}`,
    );
  }
}

/**
 * The fields of a delta archive name repositories the far side mounts from and the inventory it
 * was cut against: held to what airgap writes before anything acts on them.
 */
function checkDeltaFields(m: ArchiveManifest): void {
  if (
    m.previouslyArchived !== undefined &&
    (!Array.isArray(m.previouslyArchived) || !m.previouslyArchived.every(isDigest))
  )
    throw new Error('previouslyArchived is not a list of digests');
  if (m.homes !== undefined) {
    if (typeof m.homes !== 'object' || m.homes === null || Array.isArray(m.homes))
      throw new Error('homes is not an object');
    for (const [d, repo] of Object.entries(m.homes))
      if (!isDigest(d) || typeof repo !== 'string' || !isValidRepository(repo))
        throw new Error(
          `homes: ${JSON.stringify(d)} → ${JSON.stringify(repo)} is not a digest and a repository`,
        );
  }
  const inv = m.inventory;
  if (inv === undefined) return;
  if (
    typeof inv !== 'object' ||
    inv === null ||
    !isDigest(inv.sha256) ||
    typeof inv.destination !== 'string' ||
    typeof inv.takenAt !== 'string' ||
    typeof inv.complete !== 'boolean'
  )
    throw new Error('inventory is not {sha256, destination, takenAt, complete}');
  let kind: string;
  try {
    kind = parseLocation(inv.destination, 'destination').kind;
  } catch (e) {
    throw new Error(`inventory.destination: ${messageOf(e)}`, { cause: e });
  }
  if (kind !== 'registry') throw new Error('inventory.destination is not docker://host[:port][/prefix]');
}

export interface VerifyReport {
  ok: boolean;
  parts: { file: string; ok: boolean; problem?: string }[];
  /** Every problem, in words: broken parts, stray parts, then blobs the images need and lack. */
  problems: string[];
  /** Blobs an image needs that no part carries at its size (their images would fail to push). */
  missing: ContentProblem[];
  images: number;
  blobs: number;
  /**
   * A delta: the blobs it leaves out because the far side holds them (earlier archives, or the
   * inventory it was cut against, named here).
   */
  delta?: { previouslyArchived: number; inventory?: InventoryStamp };
}

/** Stream a part: check its size and sha256, and tell `contents` what its tar holds. */
async function checkPart(
  dir: string,
  p: ArchiveManifest['parts'][number],
  contents: ArchiveContents,
  progress: ProgressSink,
): Promise<string | undefined> {
  const path = join(dir, p.file);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (e) {
    return isNotFound(e) ? `${p.file} is missing` : `${p.file} cannot be read: ${unreadableReason(e)}`;
  }
  if (size !== p.size) return `${p.file} is ${size} bytes, the manifest says ${p.size}`;
  const h = hasher();
  let last = 0;
  h.stream.on('data', () => {
    progress({ type: 'bytes', bytes: h.size() - last });
    last = h.size();
  });
  // One read: the checksum (of the whole part) and the tar listing (up to the tar's end: what
  // follows it is hashed, not parsed); a damaged tar still gets its checksum verdict.
  const parser = new Parser({ onReadEntry: contents.entry(p.file) });
  let unreadable: string | undefined;
  await pipeline(
    createReadStream(path, { highWaterMark: 1024 * 1024 }),
    h.stream,
    tarUntilEnd(),
    parser,
  ).catch((e) => {
    unreadable = `${p.file} is not a readable tar file: ${(e as Error).message}`;
  });
  const got = `sha256:${h.digest()}`;
  if (got !== p.sha256) return `${p.file} hashes to ${got}, the manifest says ${p.sha256}`;
  return unreadable;
}

/**
 * Check an archive before carrying it across the air gap (and again before unpacking): every part
 * present with its size and checksum, no stray or missing parts, and every blob the images of its
 * index.json need carried by a part at its size (contents.ts).
 */
export async function verifyArchive(dir: string, progress: ProgressSink = noProgress): Promise<VerifyReport> {
  const m = await readArchiveManifest(dir);
  progress({ type: 'bytes-planned', bytes: m.parts.reduce((a, p) => a + p.size, 0) });
  const parts: VerifyReport['parts'] = [];
  const problems: string[] = [];
  const contents = new ArchiveContents();
  for (const p of m.parts) {
    const problem = await checkPart(dir, p, contents, progress);
    parts.push({ file: p.file, ok: !problem, ...(problem ? { problem } : {}) });
    if (problem) problems.push(problem);
  }
  const listed = new Set(m.parts.map((p) => p.file));
  for (const f of await readdir(dir)) {
    if (PART_RE.test(f) && !listed.has(f))
      problems.push(`${f} is not listed in ${ARCHIVE_MANIFEST} (left from another run?)`);
  }
  // What the images lack is only worth saying about parts that are intact.
  const missing = problems.length === 0 ? contents.problems(new Set(m.previouslyArchived ?? [])) : [];
  for (const x of missing) problems.push(`${x.image}: ${x.problem}`);
  return {
    ok: problems.length === 0,
    parts,
    problems,
    missing,
    images: m.images.length,
    blobs: m.parts.reduce((a, p) => a + p.blobs.length, 0),
    ...(m.inventory || (m.previouslyArchived ?? []).length > 0
      ? {
          delta: {
            previouslyArchived: (m.previouslyArchived ?? []).length,
            ...(m.inventory ? { inventory: m.inventory } : {}),
          },
        }
      : {}),
  };
}

/** The largest index.json or plan an archive may carry (a plan of 100,000 images is about 60 MiB). */
const MAX_ARCHIVE_DOCUMENT = 128 * 1024 * 1024;

/**
 * Unpack a verified archive into an OCI layout: each blob streamed out of its tar part, verified
 * against its digest and renamed into place (blobs already present are skipped).
 */
export async function unpackArchive(
  dir: string,
  layout: OciLayout,
  progress: ProgressSink = noProgress,
  version?: string,
  /** Where the carried `helm/` files go (the workspace); default beside the layout's files. */
  filesDir?: string,
): Promise<ArchiveManifest> {
  const written = (await readArchiveManifest(dir)).createdBy;
  if (version && written !== `airgap ${version}`) {
    progress({
      type: 'warning',
      message:
        `the archive was written by ${written ?? 'an older airgap (its version is not recorded)'}; this is airgap ${version}: ` +
        'it is read as it is, but carry the same airgap to both sides so plans and cluster resources agree',
    });
  }
  const report = await verifyArchive(dir, progress);
  const broken = report.problems.slice(0, report.problems.length - report.missing.length);
  if (broken.length > 0) {
    throw new AirgapError(
      MirrorError.ARCHIVE_CORRUPT,
      `the archive in ${dir} is damaged:\n  ${broken.join('\n  ')}`,
      {
        hint: 'copy the listed parts again from the connected side, then rerun',
      },
    );
  }
  // Intact parts whose images lack a blob: those images fail when copied (at once, naming the
  // blob); the others go on.
  for (const x of report.missing)
    progress({
      type: 'warning',
      message: `the archive lacks what ${x.image} needs: ${x.problem}; it will fail`,
    });
  const m = await readArchiveManifest(dir);
  for (const p of m.parts) {
    const sizes = new Map<string, number>();
    const tasks: Promise<void>[] = [];
    let failure: unknown;
    const parser = new Parser({
      noResume: true,
      onReadEntry: (entry: ReadEntry) => {
        const path = entry.path;
        const task = (async () => {
          const carried = CARRIED_FILE.test(path);
          if (path === 'index.json' || path === 'oci-layout' || path === ARCHIVE_PLAN || carried) {
            // Held in memory before it is written: bounded by what is read, not by what the header says.
            const chunks: Buffer[] = [];
            let read = 0;
            for await (const c of entry) {
              read += (c as Buffer).length;
              if (read > MAX_ARCHIVE_DOCUMENT)
                throw new AirgapError(
                  MirrorError.ARCHIVE_CORRUPT,
                  `${join(dir, p.file)}: its ${path} is over ${MAX_ARCHIVE_DOCUMENT / 1024 / 1024} MiB, far more than any plan or index airgap writes`,
                  {
                    hint: 'the archive was not written by airgap or was altered; make it again on the connected side',
                  },
                );
              chunks.push(c as Buffer);
            }
            await writeFileAtomic(
              join(carried ? (filesDir ?? layout.dir) : layout.dir, path),
              Buffer.concat(chunks),
            );
            return;
          }
          const mm = /^blobs\/sha256\/([a-f0-9]{64})$/.exec(path);
          if (!mm) {
            entry.resume();
            return;
          }
          const digest = `sha256:${mm[1]}` as Digest; // matched sha256 and 64 hex above
          sizes.set(digest, entry.size);
          if (await layout.hasBlob(digest, entry.size)) {
            entry.resume();
            return;
          }
          await layout.writeBlob(
            { digest, size: entry.size, mediaType: 'application/octet-stream' },
            0,
            entry as AsyncIterable<Buffer>,
          );
        })().catch((e) => {
          failure ??= e;
          entry.resume();
        });
        tasks.push(task);
      },
    });
    await pipeline(
      createReadStream(join(dir, p.file), { highWaterMark: 1024 * 1024 }),
      tarUntilEnd(),
      parser,
    );
    await Promise.all(tasks);
    if (failure) throw failure;
  }
  return m;
}

/** Blob digests carried by every archive written so far from this workspace. */
/**
 * The blobs earlier archives of a workspace carried, each with when it was first carried (a line
 * `sha256:<hex> <RFC 3339 time>`; lines without a time, from older releases, have none).
 */
export async function readHistory(path: string): Promise<Map<string, Date | undefined>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (isNotFound(e)) return new Map(); // no archive written from this workspace yet
    throw e;
  }
  const out = new Map<string, Date | undefined>();
  for (const line of text.split('\n')) {
    const [digest, at] = line.trim().split(/\s+/);
    if (!digest?.startsWith('sha256:')) continue;
    const when = at ? new Date(at) : undefined;
    out.set(digest, when && !Number.isNaN(when.getTime()) ? when : undefined);
  }
  return out;
}

/** Record blobs an archive carried; a blob keeps the time it was first carried. */
export async function writeHistory(
  path: string,
  history: Map<string, Date | undefined>,
  added: Iterable<string>,
  now = new Date(),
): Promise<void> {
  const all = new Map(history);
  for (const d of added) if (!all.has(d)) all.set(d, now);
  const lines = [...all.keys()].sort().map((d) => {
    const at = all.get(d);
    return at ? `${d} ${at.toISOString()}` : d;
  });
  await writeFileAtomic(path, `${lines.join('\n')}\n`);
}
