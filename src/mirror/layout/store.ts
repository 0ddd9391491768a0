import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open as openFile, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AirgapError } from '../../util/errors.js';
import { isNotFound, statIfExists, sweepStaleTemps, writeFileAtomic } from '../../util/fs.js';
import { withPath } from '../../util/fs-errors.js';
import { DigestVerifier, digestParts, parseDigest, sha256Digest, type Digest } from '../digest.js';
import type { Descriptor, ManifestData } from '../manifest.js';
import { MediaType } from '../media-types.js';
import { MirrorError } from '../errors.js';

/** The annotation OCI layouts use to name an entry of index.json. */
export const REF_NAME = 'org.opencontainers.image.ref.name';
/** Where the image came from, recorded so an archive explains itself. */
const SOURCE_ANNOTATION = 'io.airgap.image.source';

export interface LayoutEntry {
  /** Destination path relative to the registry prefix: `repo/path:tag` or `repo/path@sha256:…`. */
  refName: string;
  descriptor: Descriptor;
  source?: string;
}

interface IndexDoc {
  schemaVersion: 2;
  mediaType: string;
  manifests: Descriptor[];
}

/** The hex of a sha256 digest, checked: the file name of its blob. Other algorithms are refused. */
function sha256Hex(digest: string): string {
  const { algorithm, hex } = digestParts(digest, 'blob digest');
  if (algorithm !== 'sha256')
    throw new AirgapError(
      MirrorError.MIRROR_DIGEST_UNSUPPORTED,
      `digest algorithm of ${digest} is not supported`,
      {
        hint: 'only sha256 content can be stored in a layout',
      },
    );
  return hex;
}

/**
 * A crash-safe OCI image layout on disk (`oci-layout`, `index.json`, `blobs/sha256/<hex>`).
 * Blobs are written to a partial file, verified, then renamed into place: a blob present under its
 * digest is complete and is never rewritten. Interrupted downloads resume from the partial file.
 * index.json is rewritten atomically; entries are named by `org.opencontainers.image.ref.name`.
 */
export class OciLayout {
  private indexChain: Promise<unknown> = Promise.resolve();
  /**
   * index.json as this layout last read or changed it, with each ref name's position and the
   * file's identity when it matched (a file changed by anyone else is read again).
   */
  private cached?: { doc: IndexDoc; at: Map<string, number>; stamp?: string };
  /** Changes made / changes on disk: index.json is written by one writer at a time, carrying every change made so far. */
  private changes = 0;
  private written = 0;
  private writer?: Promise<void>;

  private constructor(readonly dir: string) {}

  static async open(dir: string, create = true): Promise<OciLayout> {
    const layout = new OciLayout(dir);
    const exists = (await statIfExists(join(dir, 'oci-layout'))) !== undefined;
    if (!exists) {
      if (!create) {
        throw new AirgapError(
          MirrorError.LAYOUT_MISSING,
          `${dir} is not an OCI image layout (no oci-layout file)`,
          {
            exitCode: 2,
            hint: 'point at a directory written by airgap or `skopeo copy … oci:<dir>`',
          },
        );
      }
      await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true });
      await writeFileAtomic(
        join(dir, 'index.json'),
        JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: [] }),
      );
      await writeFileAtomic(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    } else if (create) {
      // Temp files of writers killed mid-write (kill -9) are swept; a live writer's are left.
      await sweepStaleTemps(dir);
      await sweepStaleTemps(join(dir, 'blobs', 'sha256'));
    }
    return layout;
  }

  blobPath(digest: string): string {
    return join(this.dir, 'blobs', 'sha256', sha256Hex(digest));
  }

  private partialPath(digest: string): string {
    return join(this.dir, '.airgap-partial', sha256Hex(digest));
  }

  /**
   * True when the blob is present and complete (its size matches when known). A blob that cannot
   * be looked at (a permission, an I/O error) is an error, not an absent blob.
   */
  async hasBlob(digest: string, size?: number): Promise<boolean> {
    const s = await statIfExists(this.blobPath(digest));
    return s !== undefined && (size === undefined || s.size === size);
  }

  /** Bytes of a partial download left by an interrupted run (0 when none). */
  async partialSize(digest: string): Promise<number> {
    return (await statIfExists(this.partialPath(digest)))?.size ?? 0;
  }

  /**
   * Write a blob from a stream of its bytes starting at `offset` (the partial file's size; 0 for a
   * fresh write). The partial prefix is re-hashed so the final digest covers every byte.
   */
  async writeBlob(
    d: Descriptor,
    offset: number,
    data: AsyncIterable<Buffer>,
    onBytes?: (n: number) => void,
  ): Promise<void> {
    if (await this.hasBlob(d.digest, d.size)) return;
    const partial = this.partialPath(d.digest);
    await mkdir(join(this.dir, '.airgap-partial'), { recursive: true });
    const v = new DigestVerifier(d.digest, d.size);
    if (offset > 0) {
      for await (const c of createReadStream(partial, { end: offset - 1 })) v.update(c as Buffer);
      if (v.bytes !== offset) offset = 0;
    }
    const out = createWriteStream(partial, offset > 0 ? { flags: 'r+', start: offset } : { flags: 'w' });
    try {
      // pipeline, not write/drain by hand: a write that fails (a full disk) ends the copy with its
      // error instead of leaving an 'error' event nobody listens to.
      await pipeline(async function* () {
        for await (const chunk of data) {
          v.update(chunk);
          onBytes?.(chunk.length);
          yield chunk;
        }
      }, out);
    } catch (e) {
      throw withPath(e, partial);
    }
    try {
      v.verify(`blob ${d.digest}`);
    } catch (e) {
      await rm(partial, { force: true });
      throw e;
    }
    await mkdir(join(this.dir, 'blobs', 'sha256'), { recursive: true });
    await rename(partial, this.blobPath(d.digest));
  }

  /** Store bytes already in memory (manifests, configs) under their digest. */
  async putBytes(bytes: Buffer): Promise<Digest> {
    const digest = sha256Digest(bytes);
    if (!(await this.hasBlob(digest, bytes.length))) await writeFileAtomic(this.blobPath(digest), bytes);
    return digest;
  }

  async readBytes(digest: string): Promise<Buffer> {
    try {
      return await readFile(this.blobPath(digest));
    } catch (e) {
      if (!isNotFound(e)) throw e; // unreadable, not missing: said with its path
      throw new AirgapError(
        MirrorError.LAYOUT_BLOB_MISSING,
        `blob ${digest} is missing from the layout at ${this.dir}`,
        {
          hint: 'the archive or layout is incomplete; run `airgap mirror verify` on it',
        },
      );
    }
  }

  /**
   * The bytes of a blob from `offset`. The file is opened before this returns, so a blob that is
   * not there is LAYOUT_BLOB_MISSING at once (never a read error a caller would retry).
   */
  async openBlob(digest: string, offset = 0, what = `blob ${digest}`): Promise<AsyncIterable<Buffer>> {
    let fh: FileHandle;
    try {
      fh = await openFile(this.blobPath(digest), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      throw new AirgapError(
        MirrorError.LAYOUT_BLOB_MISSING,
        `${what} is missing from the layout at ${this.dir}`,
        {
          hint: 'the archive or layout is incomplete; run `airgap mirror verify` on it',
        },
      );
    }
    return fh.createReadStream({ start: offset, highWaterMark: 1024 * 1024 });
  }

  async readIndex(): Promise<IndexDoc> {
    let idx: IndexDoc;
    try {
      idx = JSON.parse(await readFile(join(this.dir, 'index.json'), 'utf8')) as IndexDoc;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        return { schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: [] };
      throw new AirgapError(
        MirrorError.LAYOUT_INDEX_INVALID,
        `${join(this.dir, 'index.json')} is not valid JSON`,
        {
          cause: e,
        },
      );
    }
    // An index.json may have come with an archive: each entry is checked like a manifest's.
    const where = join(this.dir, 'index.json');
    if (!idx || !Array.isArray(idx.manifests))
      throw new AirgapError(MirrorError.LAYOUT_INDEX_INVALID, `${where} has no manifests list`);
    idx.manifests.forEach((d, i) => parseDigest(d?.digest, `${where} manifests[${i}]`));
    return idx;
  }

  async entries(): Promise<LayoutEntry[]> {
    const idx = await this.readIndex();
    return idx.manifests.map((d) => ({
      refName: d.annotations?.[REF_NAME] ?? d.digest,
      descriptor: d,
      source: d.annotations?.[SOURCE_ANNOTATION],
    }));
  }

  /** Find a top-level manifest by ref name (index.json is read once, not once per name). */
  async resolve(refName: string): Promise<Descriptor | undefined> {
    const c = await this.currentIndex();
    const i = c.at.get(refName);
    return i === undefined ? undefined : c.doc.manifests[i];
  }

  async getManifest(digest: string, mediaType?: string): Promise<ManifestData> {
    const checked = parseDigest(digest, `manifest in ${this.dir}`);
    const bytes = await this.readBytes(digest);
    const v = new DigestVerifier(digest, bytes.length);
    v.update(bytes);
    v.verify(`manifest ${digest} in ${this.dir}`);
    let mt = mediaType;
    if (!mt) {
      try {
        mt = (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType;
      } catch {
        /* parseManifest reports it */
      }
    }
    return { bytes, digest: checked, mediaType: mt ?? MediaType.OciManifest };
  }

  /** Add or replace a named top-level entry in index.json (atomic on disk when this resolves). */
  setEntry(refName: string, m: ManifestData, source?: string): Promise<void> {
    return this.setEntries([{ refName, m, source }]);
  }

  /**
   * Add or replace named top-level entries; resolves once index.json on disk holds them. Changes
   * are made in memory, one at a time, and written together: while one write is under way, every
   * change made meanwhile waits for the next, which carries them all. A layout of 15,000 images
   * copied eight at a time rewrote its whole index.json once per image before (quadratic: hours
   * for a channel with full: true); now it is written as often as the disk allows.
   */
  async setEntries(list: { refName: string; m: ManifestData; source?: string }[]): Promise<void> {
    for (const { m } of list) await this.putBytes(m.bytes);
    const run = async () => {
      const c = await this.currentIndex();
      for (const { refName, m, source } of list) {
        const desc: Descriptor = {
          mediaType: m.mediaType,
          digest: m.digest,
          size: m.bytes.length,
          annotations: { [REF_NAME]: refName, ...(source ? { [SOURCE_ANNOTATION]: source } : {}) },
        };
        const i = c.at.get(refName);
        if (i !== undefined) c.doc.manifests[i] = desc;
        else c.at.set(refName, c.doc.manifests.push(desc) - 1);
      }
      this.changes++;
    };
    const next = this.indexChain.then(run, run);
    // The chain only orders the changes: a failed one is the caller's (`await next`), and the next change still runs.
    this.indexChain = next.catch(() => undefined);
    await next;
    await this.persistIndex();
  }

  private indexPath(): string {
    return join(this.dir, 'index.json');
  }

  /** The file's identity: a write by anyone else changes it. */
  private async indexStamp(): Promise<string | undefined> {
    try {
      const st = await stat(this.indexPath(), { bigint: true });
      return `${st.ino}:${st.size}:${st.mtimeNs}`;
    } catch (e) {
      if (isNotFound(e)) return undefined; // no index.json yet
      throw e;
    }
  }

  /**
   * The index to change: the one in memory while changes of ours are unwritten (the file is ours
   * then), else the one in memory if the file is still the one we read or wrote, else the file.
   * A load never replaces an index that changed while it read (a lookup running beside a change
   * would otherwise drop the change): what is in memory then wins.
   */
  private async currentIndex(): Promise<{ doc: IndexDoc; at: Map<string, number> }> {
    const dirty = () => this.changes > this.written || this.writer !== undefined;
    const before = this.cached;
    if (before && (dirty() || before.stamp === (await this.indexStamp()))) return before;
    const fresh = await this.loadIndex();
    if (this.cached !== before || dirty()) return this.cached ?? fresh;
    this.cached = fresh;
    return fresh;
  }

  /** index.json from disk, with each ref name's position (a name listed twice keeps its last entry). */
  private async loadIndex(): Promise<{ doc: IndexDoc; at: Map<string, number>; stamp?: string }> {
    const stamp = await this.indexStamp();
    const doc = await this.readIndex();
    const at = new Map<string, number>();
    const kept: Descriptor[] = [];
    for (const d of doc.manifests) {
      const name = d.annotations?.[REF_NAME];
      const i = name === undefined ? undefined : at.get(name);
      if (i !== undefined) kept[i] = d;
      else {
        if (name !== undefined) at.set(name, kept.length);
        kept.push(d);
      }
    }
    doc.manifests = kept;
    return { doc, at, stamp };
  }

  /** Resolve once index.json on disk holds every change made before this call. */
  private async persistIndex(): Promise<void> {
    const want = this.changes;
    while (this.written < want) {
      if (!this.writer) {
        const upTo = this.changes;
        const text = JSON.stringify(this.cached!.doc, null, 2);
        this.writer = (async () => {
          try {
            await writeFileAtomic(this.indexPath(), text);
            this.written = upTo;
            this.cached!.stamp = await this.indexStamp();
          } finally {
            this.writer = undefined;
          }
        })();
      }
      await this.writer;
    }
  }
}
