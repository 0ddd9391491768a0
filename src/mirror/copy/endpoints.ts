import { AirgapError } from '../../util/errors.js';
import type { Descriptor, ManifestData } from '../manifest.js';
import { OciLayout } from '../layout/store.js';
import { RegistryClient } from '../registry/client.js';
import { RegistryError } from '../registry/errors.js';
import { uploadBlob } from './blob-upload.js';
import type { Journal } from './journal.js';
import { ResumableReader, type BlobOpener } from './reader.js';
import { MirrorError } from '../errors.js';

/**
 * One side of a copy: a registry (through RegistryClient) or an OCI layout on disk. The engine
 * speaks only this interface, so registry → registry, registry → disk and disk → registry are one
 * code path. `top` marks the manifest a person names (tagged in a registry, an index.json entry in
 * a layout); children of an index are stored by digest only.
 */
export type Received = 'present' | 'written';

export interface Endpoint {
  /** Blobs are shared (mountable, deduplicated) among repositories of the same id. */
  readonly id: string;
  display(repo: string, ref: string): string;
  getManifest(repo: string, ref: string, top: boolean): Promise<ManifestData>;
  headManifest(repo: string, ref: string, top: boolean): Promise<string | undefined>;
  putManifest(repo: string, ref: string, m: ManifestData, top: boolean, source?: string): Promise<void>;
  opener(repo: string, digest: string): BlobOpener;
  /**
   * Make a blob present in `repo`, reading from `reader` only if it is not there already (the
   * check is part of the write: no separate existence request). 'present' means nothing was sent.
   */
  receive(
    repo: string,
    d: Descriptor,
    reader: ResumableReader,
    onBytes: (n: number) => void,
  ): Promise<Received>;
  /** Link a blob already in `fromRepo` of the same endpoint into `repo`. False when it cannot. */
  mount(repo: string, digest: string, fromRepo: string): Promise<boolean>;
  /** Whether `repo` holds the blob (for plans: what a run would not have to send). */
  hasBlob(repo: string, digest: string): Promise<boolean>;
  /**
   * Every tag of `repo` (empty when the repository does not exist), or undefined when the endpoint
   * cannot say; for plans, so that one listing answers for every tag it does not hold.
   */
  tags(repo: string): Promise<Set<string> | undefined>;
  close(): Promise<void>;
}

function refJoin(repo: string, ref: string): string {
  return ref.startsWith('sha256:') ? `${repo}@${ref}` : `${repo}:${ref}`;
}

export class RegistryEndpoint implements Endpoint {
  readonly id: string;

  constructor(
    readonly client: RegistryClient,
    private readonly journal?: Journal,
  ) {
    this.id = `registry:${client.registry}`;
  }

  display(repo: string, ref: string): string {
    return `${this.client.registry}/${refJoin(repo, ref)}`;
  }

  getManifest(repo: string, ref: string): Promise<ManifestData> {
    return this.client.getManifest(repo, ref);
  }

  async headManifest(repo: string, ref: string): Promise<string | undefined> {
    return (await this.client.headManifest(repo, ref))?.digest;
  }

  putManifest(repo: string, ref: string, m: ManifestData): Promise<void> {
    return this.client.putManifest(repo, ref, m);
  }

  opener(repo: string, digest: string): BlobOpener {
    return (offset) => this.client.openBlob(repo, digest, offset);
  }

  hasBlob(repo: string, digest: string): Promise<boolean> {
    return this.client.hasBlob(repo, digest);
  }

  async tags(repo: string): Promise<Set<string> | undefined> {
    try {
      return new Set(await this.client.listTags(repo));
    } catch (e) {
      // A repository nobody pushed to yet.
      if (e instanceof RegistryError && e.hasRegistryCode('NAME_UNKNOWN')) return new Set();
      return undefined; // cannot list (denied, not supported): every tag is asked for itself
    }
  }

  async mount(repo: string, digest: string, fromRepo: string): Promise<boolean> {
    const r = await this.client.startUpload(repo, digest, fromRepo);
    if (r.mounted) return true;
    await this.client.cancelUpload(repo, r.location);
    return false;
  }

  /** Push the blob unless `repo` holds it: one PUT when small, resumable chunks when large (blob-upload.ts). */
  receive(
    repo: string,
    d: Descriptor,
    reader: ResumableReader,
    onBytes: (n: number) => void,
  ): Promise<Received> {
    return uploadBlob({ client: this.client, journal: this.journal, repo, d, reader, onBytes });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * An OCI layout as an endpoint. Repositories share one blob store; top-level manifests are
 * index.json entries named `repo:tag` or `repo@digest` (the destination path below the prefix).
 */
export class LayoutEndpoint implements Endpoint {
  readonly id: string;

  constructor(readonly layout: OciLayout) {
    this.id = `layout:${layout.dir}`;
  }

  display(repo: string, ref: string): string {
    return `oci:${this.layout.dir}:${refJoin(repo, ref)}`;
  }

  async getManifest(repo: string, ref: string, top: boolean): Promise<ManifestData> {
    if (top && !ref.startsWith('sha256:')) {
      const d = await this.layout.resolve(refJoin(repo, ref));
      if (!d) {
        throw new AirgapError(
          MirrorError.LAYOUT_REF_MISSING,
          `${this.display(repo, ref)} is not in the layout`,
          {
            hint: 'list what the archive holds with `airgap mirror verify`',
          },
        );
      }
      return this.layout.getManifest(d.digest, d.mediaType);
    }
    return this.layout.getManifest(ref);
  }

  async headManifest(repo: string, ref: string, top: boolean): Promise<string | undefined> {
    if (top) {
      const d = await this.layout.resolve(refJoin(repo, ref));
      if (d && (await this.layout.hasBlob(d.digest, d.size))) return d.digest;
      return undefined;
    }
    return (await this.layout.hasBlob(ref)) ? ref : undefined;
  }

  async putManifest(
    repo: string,
    ref: string,
    m: ManifestData,
    top: boolean,
    source?: string,
  ): Promise<void> {
    if (top) await this.layout.setEntry(refJoin(repo, ref), m, source);
    else await this.layout.putBytes(m.bytes);
  }

  opener(_repo: string, digest: string): BlobOpener {
    return async (offset) => ({ body: await this.layout.openBlob(digest, offset), start: offset });
  }

  async receive(
    _repo: string,
    d: Descriptor,
    reader: ResumableReader,
    onBytes: (n: number) => void,
  ): Promise<Received> {
    if (await this.layout.hasBlob(d.digest, d.size)) return 'present';
    const partial = await this.layout.partialSize(d.digest);
    const from = partial > 0 && partial < d.size ? partial : 0;
    reader.seek(from);
    await this.layout.writeBlob(d, from, reader.read(d.size - from), onBytes);
    return 'written';
  }

  async mount(): Promise<boolean> {
    return true; // one blob store for every repository
  }

  hasBlob(_repo: string, digest: string): Promise<boolean> {
    return this.layout.hasBlob(digest);
  }

  async tags(): Promise<undefined> {
    return undefined; // index.json answers each name at once (resolve)
  }

  async close(): Promise<void> {}
}
