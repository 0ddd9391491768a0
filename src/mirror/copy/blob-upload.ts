/**
 * Pushing one blob into a registry repository, the two ways the distribution API allows. A small
 * blob goes in one streamed PUT per session (POST + PUT), nothing held in memory. A large one goes
 * in PATCHed chunks: an interrupted chunk resumes where the registry says the upload stands, and an
 * interrupted run resumes from the session recorded in the journal. Either way the session is
 * opened with a mount from the repository itself, so "already there" costs no extra request, and
 * the bytes sent are hashed, so corrupt source content is named as such and never committed.
 */
import { AirgapError, hasCode, isAirgapError, messageOf } from '../../util/errors.js';
import { DigestVerifier } from '../digest.js';
import type { Descriptor } from '../manifest.js';
import type { RegistryClient } from '../registry/client.js';
import type { Received } from './endpoints.js';
import type { Journal } from './journal.js';
import type { ResumableReader } from './reader.js';
import { MirrorError } from '../errors.js';

/** One blob to push: where, what, where its bytes come from, and whom to tell about progress. */
export interface BlobUpload {
  client: RegistryClient;
  /** Records large uploads in progress, so that a later run resumes them. */
  journal?: Journal;
  repo: string;
  d: Descriptor;
  reader: ResumableReader;
  onBytes: (n: number) => void;
}

/** Errors after which the same request may succeed when sent again. */
const RETRYABLE: readonly string[] = [MirrorError.REGISTRY_NETWORK, MirrorError.REGISTRY_ERROR];
/** Whole-blob attempts before giving up. */
const WHOLE_ATTEMPTS = 4;
/** Failed chunks in a row before giving up. */
const CHUNK_FAILURES = 6;

/** Make the blob present in the repository; 'present' when it already was (nothing sent). */
export function uploadBlob(up: BlobUpload): Promise<Received> {
  return up.d.size <= up.client.monolithicMax ? uploadWhole(up) : new ChunkedUpload(up).run();
}

/**
 * Start an upload session with a mount from the repository itself: the registry answers 201 when
 * the blob is already in `repo` and opens a session otherwise, so the existence check and the
 * session cost one request. A registry that refuses the mount gets a plain POST.
 */
async function startOrFind(c: RegistryClient, repo: string, digest: string) {
  try {
    return await c.startUpload(repo, digest, repo);
  } catch (e) {
    if (hasCode(e, MirrorError.REGISTRY_NOT_FOUND, MirrorError.REGISTRY_ERROR)) {
      return c.startUpload(repo, digest);
    }
    throw e;
  }
}

function blobName(up: BlobUpload): string {
  return `blob ${up.d.digest} → ${up.client.registry}/${up.repo}`;
}

/**
 * Small: one streamed PUT per session. The registry verifies the digest before it stores anything;
 * we hash too, to say clearly what went wrong. A failed PUT is retried in a new session.
 */
async function uploadWhole(up: BlobUpload): Promise<Received> {
  const { client: c, repo, d, reader, onBytes } = up;
  let counted = 0;
  for (let attempt = 1; ; attempt++) {
    const session = await startOrFind(c, repo, d.digest);
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
      if (v.bytes === d.size) v.verify(blobName(up)); // corrupt source content: say so (the engine refetches)
      if (attempt >= WHOLE_ATTEMPTS || (isAirgapError(e) && !RETRYABLE.includes(e.code))) throw e;
      await c.cancelUpload(repo, session.location);
    }
  }
}

/**
 * Large: PATCH in chunks of the client's chunk size. The session (and how far it got) is recorded
 * in the journal under `host/repo@digest` after every chunk, and forgotten once it is committed,
 * refused or lost.
 */
class ChunkedUpload {
  private readonly key: string;
  private readonly what: string;
  /** The session's current location (registries may move it with every chunk). */
  private session = '';
  /** Bytes the registry holds. */
  private offset = 0;
  /** Hashes what this run sends; absent when resuming mid-blob (the registry checks the digest on commit). */
  private verifier?: DigestVerifier;
  /** Bytes hashed and counted so far: a resent chunk is neither hashed nor counted twice. */
  private hashedTo = 0;
  /** Chunks failed in a row. */
  private failures = 0;

  constructor(private readonly up: BlobUpload) {
    this.key = `${up.client.registry}/${up.repo}@${up.d.digest}`;
    this.what = blobName(up);
  }

  async run(): Promise<Received> {
    if (!(await this.open())) return 'present';
    // Bytes before `offset` were verified by the run that sent them and are verified again by the
    // registry when the upload is committed with ?digest=; we hash what we send.
    this.verifier = this.offset === 0 ? new DigestVerifier(this.up.d.digest, this.up.d.size) : undefined;
    this.hashedTo = this.offset;
    while (this.offset < this.up.d.size) {
      try {
        await this.sendChunk();
      } catch (e) {
        await this.recover(e);
      }
    }
    await this.commit();
    return 'written';
  }

  private record(location: string | undefined): void {
    this.up.journal?.recordUpload(this.key, location);
  }

  /** Resume the session an earlier run recorded, or start one; false when the blob is already there. */
  private async open(): Promise<boolean> {
    const { client: c, repo, d } = this.up;
    const recorded = this.up.journal?.uploadFor(this.key);
    if (recorded) {
      // The recorded session is a shortcut only: when where it stands cannot be read (gone, refused,
      // a fault), a new session starts, and a registry that keeps failing fails that request, said.
      const status = await c.uploadStatus(repo, recorded).catch(() => undefined);
      if (status && status.committed <= d.size) {
        this.session = status.location;
        this.offset = status.committed;
      } else {
        this.record(undefined);
      }
    }
    if (!this.session) {
      const started = await startOrFind(c, repo, d.digest);
      if (started.mounted) return false;
      this.session = started.location;
      this.record(this.session);
    }
    return true;
  }

  /** Send the chunk at `offset`, hashing and counting only bytes not sent before. */
  private async sendChunk(): Promise<void> {
    const { client: c, repo, d, reader } = this.up;
    const len = Math.min(c.chunkSize, d.size - this.offset);
    reader.seek(this.offset);
    const body = this.hashing(this.offset, len);
    this.session = await c.patchChunk(repo, this.session, this.offset, len, body);
    this.offset += len;
    this.failures = 0;
    this.record(this.session);
  }

  /** The chunk's bytes from the reader, hashed and counted where they are new. */
  private async *hashing(start: number, len: number): AsyncGenerator<Buffer> {
    let pos = start;
    for await (const chunk of this.up.reader.read(len)) {
      const end = pos + chunk.length;
      if (end > this.hashedTo) {
        const fresh = chunk.subarray(Math.max(0, this.hashedTo - pos));
        this.verifier?.update(fresh);
        this.up.onBytes(fresh.length);
        this.hashedTo = end;
      }
      pos = end;
      yield chunk;
    }
  }

  /**
   * After a failed chunk: ask the registry where the upload stands and go on from there, or throw
   * (not retryable, too many failures, or the session is gone: MIRROR_UPLOAD_RESTART starts over).
   */
  private async recover(e: unknown): Promise<void> {
    const { client: c, repo, reader } = this.up;
    if (isAirgapError(e) && e.code === MirrorError.MIRROR_UPLOAD_RESTART) {
      await c.cancelUpload(repo, this.session);
      this.record(undefined);
      throw e;
    }
    if (isAirgapError(e) && !RETRYABLE.includes(e.code)) throw e;
    if (++this.failures > CHUNK_FAILURES) throw e;
    let unasked: unknown;
    const status = await c.uploadStatus(repo, this.session).catch((e2: unknown) => {
      unasked = e2;
      return undefined;
    });
    if (!status) {
      // The session is gone, or where it stands cannot be read: start over (the verifier restarts
      // with it); the restart's own requests say it if the registry keeps failing.
      this.record(undefined);
      throw new AirgapError(
        MirrorError.MIRROR_UPLOAD_RESTART,
        unasked === undefined
          ? `${this.what}: the upload session was lost`
          : `${this.what}: where the upload stands could not be read (${messageOf(unasked)})`,
        { cause: unasked ?? e },
      );
    }
    this.offset = status.committed;
    this.session = status.location;
    reader.restart(this.offset);
  }

  /** Check what was sent, then commit; the session is finished either way and never resumed. */
  private async commit(): Promise<void> {
    const { client: c, repo, d } = this.up;
    try {
      this.verifier?.verify(this.what);
    } catch (e) {
      // Corrupt content never gets committed: drop the session so the registry discards the bytes.
      await c.cancelUpload(repo, this.session);
      this.record(undefined);
      throw e;
    }
    try {
      await c.finishUpload(repo, this.session, d.digest);
    } finally {
      // Committed or refused (e.g. DIGEST_INVALID), the session is finished: never resume it.
      this.record(undefined);
    }
  }
}
