import { AirgapError, isAirgapError } from '../../util/errors.js';
import { DigestVerifier } from '../digest.js';
import type { Descriptor, ManifestData } from '../manifest.js';
import { OciLayout } from '../layout/store.js';
import { RegistryClient } from '../registry/client.js';
import type { Journal } from './journal.js';
import { ResumableReader, type BlobOpener } from './reader.js';

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

  async mount(repo: string, digest: string, fromRepo: string): Promise<boolean> {
    const r = await this.client.startUpload(repo, digest, fromRepo);
    if (r.mounted) return true;
    await this.client.cancelUpload(repo, r.location);
    return false;
  }

  /**
   * Start an upload session with a mount from the repository itself: the registry answers 201 when
   * the blob is already in `repo` and opens a session otherwise, so the existence check and the
   * session cost one request. A registry that refuses the mount gets a plain POST.
   */
  private async startOrFind(repo: string, digest: string) {
    try {
      return await this.client.startUpload(repo, digest, repo);
    } catch (e) {
      if (isAirgapError(e) && ['REGISTRY_NOT_FOUND', 'REGISTRY_ERROR'].includes(e.code)) {
        return this.client.startUpload(repo, digest);
      }
      throw e;
    }
  }

  async receive(
    repo: string,
    d: Descriptor,
    reader: ResumableReader,
    onBytes: (n: number) => void,
  ): Promise<Received> {
    const c = this.client;
    const what = `blob ${d.digest} → ${c.registry}/${repo}`;
    if (d.size <= c.monolithicMax) {
      // Small: one streamed PUT per session (POST + PUT), nothing held in memory. The registry
      // verifies the digest before it stores anything; we hash too, to say clearly what went wrong.
      let counted = 0;
      for (let attempt = 1; ; attempt++) {
        const session = await this.startOrFind(repo, d.digest);
        if (session.mounted) return 'present';
        const v = new DigestVerifier(d.digest, d.size);
        reader.restart(0);
        const body = (async function* () {
          for await (const chunk of reader.read(d.size)) {
            v.update(chunk);
            if (v.bytes > counted) {
              onBytes(v.bytes - counted);
              counted = v.bytes;
            }
            yield chunk;
          }
        })();
        try {
          await c.finishUpload(repo, session.location, d.digest, body, d.size);
          return 'written';
        } catch (e) {
          if (v.bytes === d.size) v.verify(what); // corrupt source content: say so (the engine refetches)
          if (attempt >= 4 || (isAirgapError(e) && !['REGISTRY_NETWORK', 'REGISTRY_ERROR'].includes(e.code)))
            throw e;
          await c.cancelUpload(repo, session.location);
        }
      }
    }
    // Large: PATCH in chunks; an interrupted chunk resumes where the registry says it stands, and an
    // interrupted run resumes from the session recorded in the journal.
    const key = `${c.registry}/${repo}@${d.digest}`;
    let location: string | undefined;
    let offset = 0;
    const recorded = this.journal?.uploadFor(key);
    if (recorded) {
      const status = await c.uploadStatus(repo, recorded).catch(() => undefined);
      if (status && status.committed <= d.size) {
        location = status.location;
        offset = status.committed;
      } else {
        this.journal?.recordUpload(key, undefined);
      }
    }
    if (!location) {
      const started = await this.startOrFind(repo, d.digest);
      if (started.mounted) return 'present';
      location = started.location;
      this.journal?.recordUpload(key, location);
    }
    let session: string = location;
    // Bytes before `offset` were verified by the run that sent them and are verified again by the
    // registry when the upload is committed with ?digest=; we hash what we send.
    const v = offset === 0 ? new DigestVerifier(d.digest, d.size) : undefined;
    let hashedTo = offset;
    let failures = 0;
    while (offset < d.size) {
      const len = Math.min(c.chunkSize, d.size - offset);
      reader.seek(offset);
      const start = offset;
      const body = (async function* () {
        let pos = start;
        for await (const chunk of reader.read(len)) {
          const end = pos + chunk.length;
          if (end > hashedTo) {
            const fresh = chunk.subarray(Math.max(0, hashedTo - pos));
            v?.update(fresh);
            onBytes(fresh.length);
            hashedTo = end;
          }
          pos = end;
          yield chunk;
        }
      })();
      try {
        session = await c.patchChunk(repo, session, offset, len, body);
        offset += len;
        failures = 0;
        this.journal?.recordUpload(key, session);
      } catch (e) {
        if (isAirgapError(e) && e.code === 'MIRROR_UPLOAD_RESTART') {
          await c.cancelUpload(repo, session);
          this.journal?.recordUpload(key, undefined);
          throw e;
        }
        if (isAirgapError(e) && !['REGISTRY_NETWORK', 'REGISTRY_ERROR'].includes(e.code)) throw e;
        if (++failures > 6) throw e;
        const status = await c.uploadStatus(repo, session).catch(() => undefined);
        if (!status) {
          // The session is gone: start over (the verifier restarts with it).
          this.journal?.recordUpload(key, undefined);
          throw new AirgapError('MIRROR_UPLOAD_RESTART', `${what}: the upload session was lost`, {
            cause: e,
          });
        }
        offset = status.committed;
        session = status.location;
        reader.restart(offset);
      }
    }
    try {
      v?.verify(what);
    } catch (e) {
      // Corrupt content never gets committed: drop the session so the registry discards the bytes.
      await c.cancelUpload(repo, session);
      this.journal?.recordUpload(key, undefined);
      throw e;
    }
    try {
      await c.finishUpload(repo, session, d.digest);
    } finally {
      // Committed or refused (e.g. DIGEST_INVALID), the session is finished: never resume it.
      this.journal?.recordUpload(key, undefined);
    }
    return 'written';
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
        throw new AirgapError('LAYOUT_REF_MISSING', `${this.display(repo, ref)} is not in the layout`, {
          hint: 'list what the archive holds with `airgap mirror verify`',
        });
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
    return async (offset) => ({ body: this.layout.openBlob(digest, offset), start: offset });
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

  async close(): Promise<void> {}
}
