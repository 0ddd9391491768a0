/**
 * A client for one registry (host[:port]) speaking the OCI distribution API: ping, manifests by
 * exact bytes, blobs streamed and verified, chunked and monolithic uploads, cross-repository
 * mounts, tag listing. Like go-containerregistry's remote/transport, the layers underneath are one
 * concern a file: transport.ts (dispatcher, first contact, redirects, retries honouring
 * Retry-After), auth.ts (Basic and Bearer, token cache per scope set, identity tokens) and
 * errors.ts (RegistryError: the status and distribution error codes a registry answered).
 */
import { AirgapError } from '../../util/errors.js';
import type { AgentOptions } from '../../net/http.js';
import type { CredentialOptions } from '../auth/credentials.js';
import { DigestVerifier, isDigest, parseDigest, sha256Digest, type Digest } from '../digest.js';
import { isValidRepository, isValidTag } from '../reference.js';
import { readBounded } from '../../net/body.js';
import { MANIFEST_ACCEPT } from '../media-types.js';
import type { ManifestData } from '../manifest.js';
import { RegistryAuth } from './auth.js';
import { isRegistryNotFound, RegistryError } from './errors.js';
import { listPages } from './listing.js';
import { ContentMemo } from './memo.js';
import type { ReadRedirector } from './redirect.js';
import {
  RegistryTransport,
  header,
  type Action,
  type RegistryRequest,
  type Response,
  type RetryOptions,
} from './transport.js';
import { MirrorError } from '../errors.js';

export type { RegistryRequest, Response, RetryOptions } from './transport.js';

export interface RegistryClientOptions extends AgentOptions {
  credentials?: CredentialOptions;
  retry?: RetryOptions;
  /** Blobs up to this size are uploaded with one PUT; larger ones in PATCH chunks of `chunkSize`. */
  monolithicMax?: number;
  chunkSize?: number;
  userAgent?: string;
  /** Told when the registry stalls (transport.ts, stalls.ts): a warning line for the user. */
  onNotice?: (message: string) => void;
  /**
   * Where reads of this registry's images really go (registries.conf mirrors and locations,
   * pool.ts); writes are never redirected.
   */
  redirect?: ReadRedirector;
}

/** The largest manifest read: containers/image's limit (maxManifestBodySize, 4 MiB). */
const MAX_MANIFEST = 4 * 1024 * 1024;
/**
 * A manifest reference as it may appear in a URL: a digest or a tag, checked (a reference read
 * from a plan or a manifest never adds path segments or a query).
 */
/**
 * `/v2/<repo>`: only a repository the reference grammar allows becomes part of a URL (no dot
 * segment, no percent sign, no empty component), whatever list or listing it came from.
 */
function v2(repo: string): string {
  if (isValidRepository(repo)) return `/v2/${repo}`;
  const shown = JSON.stringify(repo.length > 160 ? `${repo.slice(0, 160)}…` : repo);
  throw new AirgapError(MirrorError.REF_INVALID, `${shown} is not a repository path`, {
    hint: 'a repository is lowercase letters, digits and separators (. _ __ -) in components joined by /; nothing was sent for it',
  });
}

function manifestRef(ref: string): string {
  if (isDigest(ref) || isValidTag(ref)) return ref;
  throw new AirgapError(MirrorError.REF_INVALID, `${JSON.stringify(ref)} is neither a tag nor a digest`, {
    hint: 'a tag is up to 128 letters, digits, _ . - ; a digest is sha256: and 64 lowercase hex digits',
  });
}

/** A client for one registry; its failures are RegistryErrors (errors.ts). */
export class RegistryClient {
  readonly registry: string;
  readonly base: string;
  readonly monolithicMax: number;
  readonly chunkSize: number;
  private readonly transport: RegistryTransport;
  private readonly auth: RegistryAuth;
  private readonly manifests = new ContentMemo();
  private readonly blobs = new ContentMemo();
  private readonly redirect?: ReadRedirector;

  constructor(registry: string, opts: RegistryClientOptions = {}) {
    this.registry = registry;
    this.base = `https://${registry === 'docker.io' ? 'registry-1.docker.io' : registry}`;
    this.transport = new RegistryTransport(registry, this.base, opts);
    this.auth = new RegistryAuth(registry, this.transport, opts.credentials);
    this.monolithicMax = opts.monolithicMax ?? 8 * 1024 * 1024;
    this.chunkSize = opts.chunkSize ?? 16 * 1024 * 1024;
    this.redirect = opts.redirect;
  }

  /**
   * A read of `repo`, where the redirect sends it: each try in order until one serves it (the
   * last one's failure is the read's). Without a redirect, or a table for the image, it is read
   * here.
   */
  private async read<T>(
    repo: string,
    byDigest: boolean,
    here: (c: RegistryClient, repo: string) => Promise<T>,
  ): Promise<T> {
    const route = this.redirect?.route(this.registry, repo, byDigest);
    if (!route) return here(this, repo);
    if ('blocked' in route) {
      throw new AirgapError(
        MirrorError.REGISTRY_BLOCKED,
        `${this.registry}/${repo} is blocked by ${route.blocked}`,
        {
          hint: 'remove blocked = true from that [[registry]] table, or leave the image out of the ImageSetConfiguration',
        },
      );
    }
    const tries = route.tries;
    for (let i = 0; i < tries.length - 1; i++) {
      const t = tries[i]!;
      if (this.redirect!.skip(t)) continue;
      try {
        const out = await here(t.client, t.repo);
        this.redirect!.served(t);
        return out;
      } catch (e) {
        this.redirect!.failed(t, e);
      }
    }
    const last = tries[tries.length - 1]!;
    const out = await here(last.client, last.repo);
    this.redirect!.served(last);
    return out;
  }

  /**
   * Release the connections. The run is over when this is called, so anything still open (a read
   * abandoned after a fault) is cut rather than waited for.
   */
  async close(): Promise<void> {
    await this.transport.close();
  }

  /** One request with auth, redirects and retries. Non-`ok` statuses become RegistryErrors. */
  send(req: RegistryRequest): Promise<Response> {
    return this.transport.send(req, this.auth);
  }

  // ---------------------------------------------------------------- API

  /**
   * GET /v2/ — checks reachability, TLS and credentials in one call (with a token registry, the
   * token for `action` on `repo` is asked for, so refused credentials show here too).
   */
  async ping(repo = 'library/airgap-ping', action: Action = 'pull'): Promise<void> {
    const res = await this.send({
      method: 'GET',
      path: '/v2/',
      repo,
      action,
      ok: [200],
      what: `${this.registry}/v2/`,
    });
    await res.body.dump();
  }

  /** Fetch a manifest's exact bytes, verified against the digest asked for (or the one the registry states). */
  async getManifest(repo: string, ref: string, action: Action = 'pull'): Promise<ManifestData> {
    if (action !== 'pull') return this.manifestHere(repo, ref, action);
    return this.read(repo, isDigest(ref), (c, r) => c.manifestHere(r, ref, action));
  }

  private async manifestHere(repo: string, ref: string, action: Action): Promise<ManifestData> {
    // Reads (not presence checks, which ask for push too) by digest may come from the memo.
    const memo = action === 'pull' ? this.manifests : undefined;
    const known = isDigest(ref) ? memo?.get(repo, ref) : undefined;
    if (known) return { bytes: known.bytes, digest: ref as Digest, mediaType: known.mediaType };
    const what = `manifest ${this.registry}/${repo}${ref.includes(':') ? '@' : ':'}${ref}`;
    const res = await this.send({
      method: 'GET',
      path: `${v2(repo)}/manifests/${manifestRef(ref)}`,
      repo,
      action,
      headers: { accept: MANIFEST_ACCEPT },
      ok: [200],
      what,
    });
    const tooLarge = (size: string) =>
      new AirgapError(
        MirrorError.MIRROR_MANIFEST_TOO_LARGE,
        `${what} is ${size}, over the ${MAX_MANIFEST / 1024 / 1024} MiB a manifest may have`,
        { hint: 'containers/image refuses such manifests too; the source is not serving a real manifest' },
      );
    const length = Number(header(res, 'content-length') ?? 0);
    if (length > MAX_MANIFEST) {
      res.body.destroy();
      throw tooLarge(`${length} bytes`);
    }
    // Bounded by what arrives, not by what the header says (a chunked body has none).
    const bytes = await readBounded(res.body, MAX_MANIFEST);
    if (!bytes) throw tooLarge('larger than that');
    const digest = sha256Digest(bytes);
    const expected = ref.startsWith('sha256:') ? ref : header(res, 'docker-content-digest');
    if (expected && expected.startsWith('sha256:') && expected !== digest) {
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_MISMATCH,
        `${what}: content hashes to ${digest}, expected ${expected}`,
        {
          hint: 'the registry or a proxy altered the manifest; nothing was stored',
        },
      );
    }
    const mediaType = (header(res, 'content-type') ?? '').split(';')[0]!.trim();
    memo?.put(repo, digest, bytes, mediaType);
    return { bytes, digest, mediaType };
  }

  /**
   * The digest a manifest reference points at, or undefined when absent. A GET, not a HEAD: undici
   * closes the connection after every HEAD, and a new TLS handshake costs more than a manifest.
   */
  async headManifest(
    repo: string,
    ref: string,
  ): Promise<{ digest: string; mediaType: string; size: number } | undefined> {
    try {
      const m = await this.getManifest(repo, ref, 'pull,push');
      return { digest: m.digest, mediaType: m.mediaType, size: m.bytes.length };
    } catch (e) {
      if (isRegistryNotFound(e)) return undefined;
      throw e;
    }
  }

  /** PUT a manifest byte for byte; the registry's digest must equal ours. */
  async putManifest(repo: string, ref: string, m: ManifestData): Promise<void> {
    const what = `manifest ${this.registry}/${repo}${ref.includes(':') ? '@' : ':'}${ref}`;
    const res = await this.send({
      method: 'PUT',
      path: `${v2(repo)}/manifests/${manifestRef(ref)}`,
      repo,
      action: 'pull,push',
      headers: { 'content-type': m.mediaType },
      body: m.bytes,
      ok: [200, 201, 202],
      what,
    });
    await res.body.dump();
    const stated = header(res, 'docker-content-digest');
    if (stated && stated !== m.digest) {
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_MISMATCH,
        `${what}: the registry stored ${stated}, expected ${m.digest}`,
        {
          hint: 'the destination rewrote the manifest; mirror to a registry that stores manifests as pushed',
        },
      );
    }
  }

  /**
   * DELETE a manifest by digest (its tags go with it). Returns false when it was not there; a
   * registry that refuses deletes answers 405 UNSUPPORTED (a RegistryError saying so).
   */
  async deleteManifest(repo: string, digest: string): Promise<boolean> {
    const res = await this.send({
      method: 'DELETE',
      path: `${v2(repo)}/manifests/${parseDigest(digest, 'manifest digest')}`,
      repo,
      action: 'pull,push',
      ok: [200, 202, 404],
      what: `manifest ${this.registry}/${repo}@${digest}`,
    });
    await res.body.dump();
    return res.statusCode !== 404;
  }

  /**
   * Whether a blob is in a repository. A one-byte ranged GET rather than a HEAD, so the connection
   * stays open (see headManifest); a redirect to blob storage also means it exists.
   */
  async hasBlob(repo: string, digest: string, action: Action = 'pull'): Promise<boolean> {
    if (action !== 'pull') return this.hasBlobHere(repo, digest, action);
    return this.read(repo, true, (c, r) => c.hasBlobHere(r, digest, action));
  }

  private async hasBlobHere(repo: string, digest: string, action: Action): Promise<boolean> {
    const res = await this.send({
      method: 'GET',
      path: `${v2(repo)}/blobs/${parseDigest(digest, 'blob digest')}`,
      repo,
      action,
      headers: { range: 'bytes=0-0' },
      ok: [200, 206, 307, 302, 404],
      noRedirect: true,
      what: `blob ${this.registry}/${repo}@${digest}`,
    });
    if (res.statusCode === 200)
      res.body.destroy(); // a registry that ignores Range: do not download it all
    else await res.body.dump();
    return res.statusCode !== 404;
  }

  /**
   * Open a blob for reading from `offset`. Returns the body and the offset the server actually
   * starts at (a server that ignores Range starts at 0; the reader skips what it already has).
   */
  async openBlob(
    repo: string,
    digest: string,
    offset = 0,
  ): Promise<{ body: AsyncIterable<Buffer>; start: number; size?: number }> {
    // Small blobs read whole earlier in the run (getBlobBytes) are kept here, under the name asked for.
    if (this.blobs.get(repo, digest)) return this.openBlobHere(repo, digest, offset);
    return this.read(repo, true, (c, r) => c.openBlobHere(r, digest, offset));
  }

  private async openBlobHere(
    repo: string,
    digest: string,
    offset: number,
  ): Promise<{ body: AsyncIterable<Buffer>; start: number; size?: number }> {
    const known = this.blobs.get(repo, digest);
    if (known) {
      const start = Math.min(offset, known.bytes.length);
      const rest = known.bytes.subarray(start);
      return {
        body: (async function* () {
          yield rest;
        })(),
        start,
        size: known.bytes.length,
      };
    }
    const res = await this.send({
      method: 'GET',
      path: `${v2(repo)}/blobs/${parseDigest(digest, 'blob digest')}`,
      repo,
      headers: offset > 0 ? { range: `bytes=${offset}-` } : {},
      ok: [200, 206],
      what: `blob ${this.registry}/${repo}@${digest}`,
    });
    let start = 0;
    if (res.statusCode === 206) {
      const m = /bytes (\d+)-/.exec(header(res, 'content-range') ?? '');
      if (!m) {
        await res.body.dump();
        throw new RegistryError(
          MirrorError.REGISTRY_ERROR,
          `${this.registry} answered a range request for ${digest} without Content-Range`,
          { registry: this.registry, status: res.statusCode },
        );
      }
      start = Number(m[1]);
    }
    const len = header(res, 'content-length');
    return {
      body: res.body as AsyncIterable<Buffer>,
      start,
      size: len === undefined ? undefined : start + Number(len),
    };
  }

  /**
   * Start an upload session, trying a cross-repository mount first when `mountFrom` is given.
   * Returns 'mounted' or the session Location.
   */
  async startUpload(
    repo: string,
    digest: string,
    mountFrom?: string,
  ): Promise<{ mounted: true } | { mounted: false; location: string }> {
    const q = mountFrom ? `?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(mountFrom)}` : '';
    const res = await this.send({
      method: 'POST',
      path: `${v2(repo)}/blobs/uploads/${q}`,
      repo,
      action: 'pull,push',
      mountFrom,
      headers: { 'content-length': '0' },
      body: '',
      ok: [201, 202],
      what: `upload of ${digest} to ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode === 201 && mountFrom) return { mounted: true };
    const loc = header(res, 'location');
    if (!loc)
      throw new RegistryError(
        MirrorError.REGISTRY_ERROR,
        `${this.registry} started an upload without a Location header`,
        {
          registry: this.registry,
          status: res.statusCode,
        },
      );
    return { mounted: false, location: new URL(loc, this.base + '/').toString() };
  }

  /**
   * Where an interrupted upload session stands: bytes committed and the Location to continue with
   * (distribution signs the offset into it), or undefined when the session is gone.
   */
  async uploadStatus(
    repo: string,
    location: string,
  ): Promise<{ committed: number; location: string } | undefined> {
    const res = await this.send({
      method: 'GET',
      path: location,
      repo,
      action: 'pull,push',
      ok: [204, 404, 400],
      what: `upload status in ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode !== 204) return undefined;
    const m = /^(?:bytes=)?0-(\d+)$/.exec(header(res, 'range') ?? '');
    const loc = header(res, 'location');
    // distribution answers "0-0" both for an empty upload and for one byte; take it as empty (a
    // wrong guess costs a 416 and a fresh session, never wrong bytes).
    return {
      committed: m && m[1] !== '0' ? Number(m[1]) + 1 : 0,
      location: loc ? new URL(loc, this.base + '/').toString() : location,
    };
  }

  /** PATCH one chunk; returns the next Location. The body is streamed; the caller retries. */
  async patchChunk(
    repo: string,
    location: string,
    offset: number,
    length: number,
    body: AsyncIterable<Buffer>,
  ): Promise<string> {
    const res = await this.send({
      method: 'PATCH',
      path: location,
      repo,
      action: 'pull,push',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(length),
        'content-range': `${offset}-${offset + length - 1}`,
      },
      body,
      ok: [202, 204, 416],
      what: `chunk ${offset}-${offset + length - 1} of an upload to ${this.registry}/${repo}`,
    });
    await res.body.dump();
    if (res.statusCode === 416) {
      throw new AirgapError(
        MirrorError.MIRROR_UPLOAD_RESTART,
        `${this.registry} refused chunk ${offset}- of an upload to ${repo} (416)`,
      );
    }
    const loc = header(res, 'location');
    return loc ? new URL(loc, this.base + '/').toString() : location;
  }

  /**
   * Finish an upload with PUT ?digest=, optionally carrying the whole blob (monolithic). A streamed
   * body is sent once (the caller retries with a new session); the registry verifies the digest.
   */
  async finishUpload(
    repo: string,
    location: string,
    digest: string,
    body?: AsyncIterable<Buffer>,
    length = 0,
  ): Promise<void> {
    const u = new URL(location);
    u.searchParams.set('digest', digest);
    const res = await this.send({
      method: 'PUT',
      path: u.toString(),
      repo,
      action: 'pull,push',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(body ? length : 0),
      },
      body: body ?? '',
      ok: [201, 204],
      what: `blob ${digest} in ${this.registry}/${repo}`,
    });
    await res.body.dump();
  }

  /** Cancel an upload session (best effort). */
  async cancelUpload(repo: string, location: string): Promise<void> {
    try {
      const res = await this.send({
        method: 'DELETE',
        path: location,
        repo,
        action: 'pull,push',
        ok: [204, 404, 400, 405],
        what: 'upload cancel',
        authRetry: false,
      });
      await res.body.dump();
    } catch {
      /* best effort */
    }
  }

  /** All tags of a repository, following Link pagination. */
  async listTags(repo: string, pageSize = 1000): Promise<string[]> {
    return (await this.listTagPages(repo, pageSize, Infinity)).tags;
  }

  /**
   * The tags of a repository, at most `maxPages` pages of them; `complete` says whether the
   * listing reached its end (a repository such as quay's ocp-v4.0-art-dev has far more tags than
   * a caller may want to page through).
   */
  async listTagPages(
    repo: string,
    pageSize: number,
    maxPages: number,
  ): Promise<{ tags: string[]; complete: boolean }> {
    return this.read(repo, false, (c, r) => c.tagPagesHere(r, pageSize, maxPages));
  }

  private async tagPagesHere(
    repo: string,
    pageSize: number,
    maxPages: number,
  ): Promise<{ tags: string[]; complete: boolean }> {
    const r = await listPages((req) => this.send(req), {
      registry: this.registry,
      base: this.base,
      path: `${v2(repo)}/tags/list?n=${pageSize}`,
      field: 'tags',
      what: `the tag list of ${this.registry}/${repo}`,
      auth: { repo },
      maxPages,
    });
    return { tags: r.names, complete: r.complete };
  }

  /**
   * Every repository the registry lists (`/v2/_catalog`, scope `registry:catalog:*`); `credentialRepo`
   * picks the credentials (an auth.json entry may be for a namespace). Registries that do not serve
   * the catalog to these credentials answer with an error.
   */
  async listRepositories(credentialRepo: string, pageSize = 1000): Promise<string[]> {
    const r = await listPages((req) => this.send(req), {
      registry: this.registry,
      base: this.base,
      path: `/v2/_catalog?n=${pageSize}`,
      field: 'repositories',
      what: `the repository catalog of ${this.registry}`,
      auth: { repo: credentialRepo, scope: 'registry:catalog:*' },
      maxPages: Infinity,
    });
    return r.names;
  }

  /** Read a whole blob into memory, verified (configs, small files). */
  async getBlobBytes(repo: string, digest: string, size?: number): Promise<Buffer> {
    const v = new DigestVerifier(digest, size);
    const { body } = await this.openBlob(repo, digest);
    const parts: Buffer[] = [];
    for await (const c of body) {
      v.update(c);
      // Never more than the size asked for (or the manifest limit): a blob that does not end is cut off.
      if (v.bytes > (size ?? MAX_MANIFEST)) {
        (body as { destroy?: () => void }).destroy?.();
        break;
      }
      parts.push(c);
    }
    v.verify(`blob ${this.registry}/${repo}@${digest}`);
    const bytes = Buffer.concat(parts);
    this.blobs.put(repo, digest, bytes);
    return bytes;
  }
}
