/**
 * What an archive's parts really hold, read in the same pass that checksums them: every member's
 * size, the layout's index.json, and the references of every manifest. From these,
 * {@link ArchiveContents.problems} walks each image from index.json and names every blob it needs
 * that no part carries (or carries at another size), so `airgap mirror verify` fails for an archive
 * whose parts are intact but whose images are not, and the disconnected side knows which image
 * will fail before it pushes anything. Only references and sizes are kept, never content.
 */
import { messageOf } from '../../util/errors.js';
import { isDigest } from '../digest.js';
import { blobsOf, parseManifest, type Descriptor, type ParsedManifest } from '../manifest.js';
import { isIndexType, isImageManifestType } from '../media-types.js';
import type { ReadEntry } from 'tar';

/** The largest blob read as a possible manifest (containers/image's manifest limit). */
const MAX_MANIFEST = 4 * 1024 * 1024;
/** The largest index.json read (a layout of 100,000 images is far below). */
const MAX_INDEX = 128 * 1024 * 1024;
const REF_NAME = 'org.opencontainers.image.ref.name';

/** A referenced blob the archive does not carry as the manifest says. */
export interface ContentProblem {
  /** The image (index.json ref name) that needs it. */
  image: string;
  digest: string;
  problem: string;
}

/** Read a tar member whole, up to `limit` bytes; undefined when larger. */
function collect(entry: ReadEntry, limit: number, done: (bytes: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let read = 0;
  entry.on('data', (c: Buffer) => {
    read += c.length;
    if (read <= limit) chunks.push(c);
  });
  entry.on('end', () => done(read <= limit ? Buffer.concat(chunks) : undefined));
}

export class ArchiveContents {
  /** Every blob member: digest → size and the part holding it. */
  private readonly members = new Map<string, { size: number; part: string }>();
  /** Manifests found among the members (parsed), or why a manifest-looking member is not one. */
  private readonly manifests = new Map<string, ParsedManifest | string>();
  private index?: Buffer | string;

  /** The tar entry handler for one part (tar's `onReadEntry`). */
  entry(part: string): (entry: ReadEntry) => void {
    return (entry) => {
      const path = entry.path;
      if (path === 'index.json') {
        collect(entry, MAX_INDEX, (b) => (this.index = b ?? `${part}: its index.json is too large`));
        return;
      }
      const m = /^blobs\/sha256\/([a-f0-9]{64})$/.exec(path);
      if (!m) {
        entry.resume();
        return;
      }
      const digest = `sha256:${m[1]}`;
      this.members.set(digest, { size: entry.size, part });
      if (entry.size > MAX_MANIFEST) {
        entry.resume();
        return;
      }
      collect(entry, MAX_MANIFEST, (bytes) => {
        if (bytes) this.noteManifest(digest, bytes);
      });
    };
  }

  /** Keep the references of a member that is a manifest (configs and other JSON are dropped). */
  private noteManifest(digest: string, bytes: Buffer): void {
    if (bytes[0] !== 0x7b /* { */) return;
    let doc: { schemaVersion?: unknown; manifests?: unknown; layers?: unknown };
    try {
      doc = JSON.parse(bytes.toString('utf8')) as typeof doc;
    } catch {
      // Not JSON, so not a manifest (a layer that starts with "{"): only manifests are kept here.
      return;
    }
    if (doc?.schemaVersion !== 2 || !(Array.isArray(doc.manifests) || Array.isArray(doc.layers))) return;
    try {
      this.manifests.set(digest, parseManifest(bytes, undefined, `manifest ${digest}`));
    } catch (e) {
      this.manifests.set(digest, messageOf(e));
    }
  }

  /**
   * Every blob the images of index.json need that the parts do not carry at its size, except
   * those `previouslyArchived` (an earlier archive carried them; they must be at the destination).
   * An index child that is absent is a platform left out (--arch), as when the archive was packed.
   */
  problems(previouslyArchived: ReadonlySet<string>): ContentProblem[] {
    const out: ContentProblem[] = [];
    if (typeof this.index === 'string') return [{ image: 'index.json', digest: '', problem: this.index }];
    if (!this.index) return [{ image: 'index.json', digest: '', problem: 'no part carries index.json' }];
    let entries: Descriptor[];
    try {
      const doc = JSON.parse(this.index.toString('utf8')) as { manifests?: unknown };
      if (!Array.isArray(doc.manifests)) throw new Error('it has no manifests list');
      entries = doc.manifests as Descriptor[];
    } catch (e) {
      return [
        { image: 'index.json', digest: '', problem: `index.json is not an OCI index: ${messageOf(e)}` },
      ];
    }
    const seen = new Set<string>();
    const walk = (d: Descriptor, image: string, role: string): void => {
      if (seen.has(d.digest)) return;
      seen.add(d.digest);
      const member = this.members.get(d.digest);
      const problem = (text: string) =>
        out.push({ image, digest: d.digest, problem: `${role} ${d.digest} ${text}` });
      if (!member) {
        if (!previouslyArchived.has(d.digest)) problem('is in no part of the archive');
        return;
      }
      if (member.size !== d.size) {
        problem(`is ${member.size} bytes in ${member.part}, its descriptor says ${d.size}`);
        return;
      }
      const parsed = this.manifests.get(d.digest);
      const isManifest = isIndexType(d.mediaType ?? '') || isImageManifestType(d.mediaType ?? '');
      if (parsed === undefined) {
        if (isManifest) problem('is not a manifest');
        return;
      }
      if (typeof parsed === 'string') {
        problem(`is not a valid manifest: ${parsed}`);
        return;
      }
      if (parsed.kind === 'index') {
        for (const c of parsed.manifests) if (this.members.has(c.digest)) walk(c, image, 'manifest');
      } else {
        for (const b of blobsOf(parsed)) walk(b, image, b === parsed.config ? 'config' : 'layer');
      }
    };
    entries.forEach((d, i) => {
      const image = d?.annotations?.[REF_NAME] ?? `index.json manifests[${i}]`;
      if (!d || !isDigest(d.digest) || typeof d.size !== 'number') {
        out.push({ image, digest: '', problem: `index.json manifests[${i}] is not a valid descriptor` });
        return;
      }
      walk(d, image, 'manifest');
    });
    return out;
  }
}
