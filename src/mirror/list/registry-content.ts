/**
 * A catalog image read straight from its registry, as it streams: nothing is stored on disk. The
 * catalog readers (openshift/catalog-image.ts) see it as an {@link ImageContent}, as they see an
 * OCI layout; they verify every manifest, config and layer against its digest. A blob whose
 * connection breaks is resumed with a Range request where it stopped (copy/reader.ts).
 */
import type { ProgressSink } from '../../util/progress.js';
import { ResumableReader } from '../copy/reader.js';
import { parseManifest, type ManifestData } from '../manifest.js';
import type { ImageContent } from '../openshift/catalog-config.js';
import type { RegistryClient } from '../registry/client.js';

/** The largest blob read whole (an image config is a few KiB). */
const MAX_SMALL_BLOB = 4 * 1024 * 1024;

export class RegistryContent implements ImageContent {
  constructor(
    private readonly client: RegistryClient,
    private readonly repo: string,
    private readonly progress: ProgressSink,
  ) {}

  async getManifest(digest: string): Promise<ManifestData> {
    const m = await this.client.getManifest(this.repo, digest);
    // The image whose layers are read: its layers are what there is to download.
    try {
      const parsed = parseManifest(m.bytes, m.mediaType, `manifest ${digest}`);
      if (parsed.kind === 'image') {
        const bytes = parsed.layers.reduce((n, l) => n + l.size, 0);
        this.progress({ type: 'bytes-planned', bytes });
        this.progress({ type: 'total-known' });
      }
    } catch {
      // the catalog reader parses it again and says what is wrong
    }
    return m;
  }

  async readBytes(digest: string, size?: number): Promise<Buffer> {
    if (size === undefined || size > MAX_SMALL_BLOB) return this.client.getBlobBytes(this.repo, digest, size);
    const parts: Buffer[] = [];
    for await (const c of this.read(digest, 0, `blob ${digest}`, size)) parts.push(c);
    return Buffer.concat(parts);
  }

  async openBlob(
    digest: string,
    offset = 0,
    what = `blob ${digest}`,
    size?: number,
  ): Promise<AsyncIterable<Buffer>> {
    const progress = this.progress;
    const body =
      size === undefined
        ? (await this.client.openBlob(this.repo, digest, offset)).body
        : this.read(digest, offset, what, size);
    return (async function* () {
      for await (const c of body) {
        progress({ type: 'bytes', bytes: c.length });
        yield c;
      }
    })();
  }

  /** A blob of known size from `offset`, re-opened where it stopped when the connection breaks. */
  private async *read(digest: string, offset: number, what: string, size: number): AsyncGenerator<Buffer> {
    const reader = new ResumableReader(
      (from) => this.client.openBlob(this.repo, digest, from),
      size,
      `${this.client.registry}/${this.repo}: ${what}`,
    );
    reader.seek(offset);
    try {
      yield* reader.read(size - offset);
    } finally {
      reader.close();
    }
  }
}
