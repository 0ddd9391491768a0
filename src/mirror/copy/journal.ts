import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isNotFound } from '../../util/fs.js';
import { isDigest } from '../digest.js';

/**
 * Whether an upload session's location belongs to the registry of its key (`host/repo@digest`):
 * a path on that registry, or a URL on its host. A journal can travel with an archive, and a
 * session elsewhere would send the blob (and credentials) to a host nobody named.
 */
function sameRegistry(key: string, location: string): boolean {
  if (location.startsWith('/') && !location.startsWith('//')) return true;
  try {
    return new URL(location).host === key.slice(0, key.indexOf('/'));
  } catch {
    // Not a URL: no host of this registry, so not a session of it.
    return false;
  }
}

interface Line {
  /** An upload session in progress for `key` (`host/repo@digest`); absent location = finished or abandoned. */
  upload?: string;
  location?: string;
  /** An image finished: destination reference and manifest digest. */
  image?: string;
  digest?: string;
}

/**
 * What a run has done, as JSON lines appended to `<workspace>/journal.jsonl`. Appends are single
 * `write` calls, so a kill -9 leaves at most one torn last line, which is ignored on reading.
 * The destination stays the truth (blobs and manifests are checked there); the journal lets a run
 * resume large uploads mid-blob and says which images an earlier run completed.
 */
export class Journal {
  private readonly uploads = new Map<string, string>();
  readonly images = new Map<string, string>();
  /** The file ends in a torn line: end it before appending, or the next record would join it and be lost. */
  private torn = false;

  constructor(readonly path: string) {
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if (!isNotFound(e)) throw e; // unreadable is not "no journal": said with its path
      mkdirSync(dirname(path), { recursive: true });
    }
    this.torn = text !== '' && !text.endsWith('\n');
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let l: Line;
      try {
        l = JSON.parse(raw) as Line;
      } catch {
        continue; // torn last line from a crash
      }
      if (l.upload) {
        if (l.location && sameRegistry(l.upload, l.location)) this.uploads.set(l.upload, l.location);
        else this.uploads.delete(l.upload);
      }
      // A journal may have come with an archive: a line naming no real digest is dropped.
      if (l.image && isDigest(l.digest)) this.images.set(l.image, l.digest);
    }
    const lines = text.split('\n').length;
    if (lines > 2 * (this.uploads.size + this.images.size) + 100) this.compact();
  }

  /** Rewrite the file with only what is still true (each run appends; a long-lived workspace would grow). */
  private compact(): void {
    const out = [
      ...[...this.images].map(([image, digest]) => JSON.stringify({ image, digest })),
      ...[...this.uploads].map(([upload, location]) => JSON.stringify({ upload, location })),
    ];
    const tmp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(tmp, out.length ? `${out.join('\n')}\n` : '');
    renameSync(tmp, this.path);
    this.torn = false;
  }

  private append(l: Line): void {
    appendFileSync(this.path, `${this.torn ? '\n' : ''}${JSON.stringify(l)}\n`);
    this.torn = false;
  }

  uploadFor(key: string): string | undefined {
    return this.uploads.get(key);
  }

  recordUpload(key: string, location: string | undefined): void {
    if (location) this.uploads.set(key, location);
    else if (!this.uploads.delete(key)) return;
    this.append({ upload: key, ...(location ? { location } : {}) });
  }

  recordImage(ref: string, digest: string): void {
    this.images.set(ref, digest);
    this.append({ image: ref, digest });
  }
}
