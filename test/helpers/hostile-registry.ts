/**
 * A lying registry for tests of hostile input: a tiny HTTPS server (the test PKI's server
 * certificate) that speaks just enough of the OCI distribution API to serve what a real registry
 * would refuse to store: manifests whose digest header does not match, blobs under digests that look
 * like path traversal, bodies that never end, requests that are never answered.
 *
 * Read-only and without auth: `GET /v2/` answers 200; GET and HEAD of registered manifests and blobs
 * answer them; `GET /v2/<repo>/tags/list` lists the registered tags (references without ':'); every
 * other method answers 405. Path segments after `/v2/` are decoded one by one with
 * decodeURIComponent, so `sha256:..%2F..%2Fx` and a raw `sha256:../../x` both reach the blob
 * registered as 'sha256:../../x'. Header values are sent as given: one node refuses to send (a CR or
 * LF in a media type) ends the connection instead.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testCertificates } from './tls.js';

export interface HostileManifest {
  bytes: Buffer | string;
  mediaType: string;
  /** Docker-Content-Digest header to send; default none */
  digestHeader?: string;
}

export interface HostileBody {
  /** Fixed bytes. */
  bytes?: Buffer | string;
  /** Or: send this many bytes of filler ('x') with chunked encoding (no Content-Length). */
  chunkedBytes?: number;
  /** Or: never end (write 64 KiB chunks with chunked encoding until the client goes away). */
  endless?: boolean;
  /** Or: accept the request and never answer (no headers). */
  stall?: boolean;
  /**
   * Or: answer at once with the full Content-Length, send the first `fast` bytes (default 0), then
   * one byte every `intervalMs` (a drip-feeding source; a huge interval stalls after `fast`).
   */
  trickle?: { bytes: Buffer | string; fast?: number; intervalMs: number };
}

export interface HostileRegistry {
  /** host:port, e.g. 127.0.0.1:43210 */
  host: string;
  /** https://host:port */
  url: string;
  /** PEM file of the CA that signed the server cert (for --ca-file). */
  caFile: string;
  /**
   * Serve a manifest at /v2/<repo>/manifests/<ref> (ref is a tag or any digest-looking string,
   * matched verbatim). The body form's media type defaults to the OCI image manifest's.
   */
  manifest(repo: string, ref: string, m: HostileManifest | (HostileBody & { mediaType?: string })): void;
  /** Serve a blob at /v2/<repo>/blobs/<digest>, the digest matched verbatim (any string, even 'sha256:../../x' url-decoded). */
  blob(repo: string, digest: string, body: Buffer | string | HostileBody): void;
  /**
   * Serve a well-formed one-layer OCI image at `repo:tag` (config, layer, manifest), its layer sent
   * as `layerBody` when given (a stall, a trickle): the lie is in how it is served, not in what.
   * Returns the three digests.
   */
  image(
    repo: string,
    tag: string,
    layer: Buffer,
    layerBody?: HostileBody,
  ): { manifest: string; config: string; layer: string };
  /** Every request seen: method and raw path (with query). */
  requests: { method: string; path: string }[];
  stop(): Promise<void>;
}

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** The OCI image manifest (JSON text) of an image of `config` and one uncompressed `layer`. */
export function oneLayerManifest(config: Buffer, layer: Buffer): string {
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: {
      mediaType: 'application/vnd.oci.image.config.v1+json',
      digest: sha256(config),
      size: config.length,
    },
    layers: [
      { mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha256(layer), size: layer.length },
    ],
  });
}
const FILLER = Buffer.alloc(64 * 1024, 'x');

type Body =
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'chunked'; length: number }
  | { kind: 'endless' }
  | { kind: 'stall' }
  | { kind: 'trickle'; bytes: Buffer; fast: number; intervalMs: number };

interface Entry {
  body: Body;
  contentType: string;
  digestHeader?: string;
}

type Kind = 'manifests' | 'blobs';

function toBody(b: HostileBody, what: string): Body {
  const set = [
    b.bytes !== undefined,
    b.chunkedBytes !== undefined,
    !!b.endless,
    !!b.stall,
    b.trickle !== undefined,
  ].filter(Boolean);
  if (set.length !== 1)
    throw new Error(
      `hostile registry: ${what}: give exactly one of bytes, chunkedBytes, endless, stall, trickle`,
    );
  if (b.trickle)
    return {
      kind: 'trickle',
      bytes: Buffer.from(b.trickle.bytes),
      fast: b.trickle.fast ?? 0,
      intervalMs: b.trickle.intervalMs,
    };
  if (b.bytes !== undefined) return { kind: 'bytes', bytes: Buffer.from(b.bytes) };
  if (b.chunkedBytes !== undefined) {
    if (!Number.isSafeInteger(b.chunkedBytes) || b.chunkedBytes < 0)
      throw new Error(`hostile registry: ${what}: chunkedBytes must be a non-negative integer`);
    return { kind: 'chunked', length: b.chunkedBytes };
  }
  return b.endless ? { kind: 'endless' } : { kind: 'stall' };
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ errors: [{ code, message }] });
}

/** A segment decoded, or as sent when it is not valid percent-encoding. */
function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A digest has an algorithm and a ':'; a tag cannot contain one. */
function isDigest(ref: string): boolean {
  return ref.includes(':');
}

/** Resolves true on 'drain', false when the response closes first. */
function drained(res: http.ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Start the registry on 127.0.0.1 (a free port). */
export async function startHostileRegistry(): Promise<HostileRegistry> {
  const { ca, server: cert } = testCertificates();
  const dir = await mkdtemp(join(tmpdir(), 'airgap-hostile-registry-'));
  const caFile = join(dir, 'ca.crt');
  await writeFile(caFile, ca.certPem, { mode: 0o644 });

  const entries = new Map<string, Entry>();
  /** Tags by repository, in registration order. */
  const tags = new Map<string, string[]>();
  const requests: { method: string; path: string }[] = [];
  const key = (kind: Kind, repo: string, ref: string) => `${kind}\0${repo}\0${ref}`;

  const send = (res: http.ServerResponse, method: string, status: number, body: string, extra = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'docker-distribution-api-version': 'registry/2.0',
      ...extra,
    });
    res.end(method === 'HEAD' ? undefined : body);
  };

  /** Write `length` bytes of filler (Infinity: until the client goes away); false if it went away. */
  const fill = async (res: http.ServerResponse, length: number): Promise<boolean> => {
    let left = length;
    while (left > 0) {
      if (res.destroyed || res.writableEnded || res.socket?.destroyed !== false) return false;
      const chunk = left >= FILLER.length ? FILLER : FILLER.subarray(0, left);
      left -= chunk.length;
      if (!res.write(chunk)) {
        if (!(await drained(res))) return false;
      } else {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return true;
  };

  const serve = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    method: string,
    kind: Kind,
    entry: Entry,
  ): Promise<void> => {
    const { body } = entry;
    if (body.kind === 'stall') return; // never answer; stop() destroys the socket
    if (body.kind === 'trickle') {
      res.writeHead(200, {
        'docker-distribution-api-version': 'registry/2.0',
        'content-type': entry.contentType || 'application/octet-stream',
        'content-length': body.bytes.length,
      });
      if (method === 'HEAD') return void res.end();
      res.write(body.bytes.subarray(0, body.fast));
      for (let i = body.fast; i < body.bytes.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, body.intervalMs).unref());
        if (res.destroyed || res.socket?.destroyed !== false) return;
        res.write(body.bytes.subarray(i, i + 1));
      }
      res.end();
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      'docker-distribution-api-version': 'registry/2.0',
    };
    if (entry.contentType !== '') headers['content-type'] = entry.contentType;
    if (entry.digestHeader !== undefined) headers['docker-content-digest'] = entry.digestHeader;

    if (body.kind === 'bytes') {
      let data = body.bytes;
      let status = 200;
      const total = data.length;
      if (kind === 'blobs') {
        headers['accept-ranges'] = 'bytes';
        const range = /^bytes=(\d+)-(\d*)$/.exec((req.headers.range ?? '').trim());
        if (range) {
          const start = Number(range[1]);
          const end = Math.min(range[2] ? Number(range[2]) : total - 1, total - 1);
          if (start >= total || end < start) {
            send(res, method, 416, errorBody('RANGE_INVALID', 'range not satisfiable'), {
              'content-range': `bytes */${total}`,
            });
            return;
          }
          status = 206;
          data = data.subarray(start, end + 1);
          headers['content-range'] = `bytes ${start}-${end}/${total}`;
        }
      }
      headers['content-length'] = data.length;
      res.writeHead(status, headers);
      res.end(method === 'HEAD' ? undefined : data);
      return;
    }

    headers['transfer-encoding'] = 'chunked';
    res.writeHead(200, headers);
    if (method === 'HEAD') {
      res.end();
      return;
    }
    const complete = await fill(res, body.kind === 'chunked' ? body.length : Infinity);
    if (complete) res.end();
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    requests.push({ method, path });
    req.resume();
    if (method !== 'GET' && method !== 'HEAD') {
      send(res, method, 405, errorBody('UNSUPPORTED', 'read-only'), { allow: 'GET, HEAD' });
      return;
    }
    const rawPath = path.split('?', 1)[0]!;
    if (rawPath === '/v2' || rawPath === '/v2/') {
      send(res, method, 200, '{}');
      return;
    }
    if (!rawPath.startsWith('/v2/')) {
      send(res, method, 404, errorBody('NAME_UNKNOWN', `no such route: ${rawPath}`));
      return;
    }
    const segments = rawPath.slice('/v2/'.length).split('/').map(decodeSegment);

    // The repository may contain slashes, and so may a hostile reference: try every split at a
    // "manifests" or "blobs" segment, and answer the first one registered.
    let first: { kind: Kind; repo: string; ref: string } | undefined;
    for (let i = 1; i < segments.length - 1; i++) {
      const kind = segments[i];
      if (kind !== 'manifests' && kind !== 'blobs') continue;
      const repo = segments.slice(0, i).join('/');
      const ref = segments.slice(i + 1).join('/');
      first ??= { kind, repo, ref };
      const entry = entries.get(key(kind, repo, ref));
      if (entry) {
        await serve(req, res, method, kind, entry);
        return;
      }
    }
    const n = segments.length;
    if (n >= 3 && segments[n - 2] === 'tags' && segments[n - 1] === 'list') {
      const repo = segments.slice(0, n - 2).join('/');
      const list = tags.get(repo);
      if (list?.length) send(res, method, 200, JSON.stringify({ name: repo, tags: list }));
      else
        send(res, method, 404, errorBody('NAME_UNKNOWN', `repository name not known to registry: ${repo}`));
      return;
    }
    if (first?.kind === 'manifests')
      send(res, method, 404, errorBody('MANIFEST_UNKNOWN', `manifest unknown: ${first.repo}:${first.ref}`));
    else if (first?.kind === 'blobs')
      send(res, method, 404, errorBody('BLOB_UNKNOWN', `blob unknown to registry: ${first.ref}`));
    else send(res, method, 404, errorBody('NAME_UNKNOWN', `no such route: ${rawPath}`));
  };

  const server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  server.on('connection', track);
  server.on('secureConnection', track);
  server.on('clientError', (_err, s: net.Socket) => s.destroy());

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const host = `127.0.0.1:${port}`;

  let stopped: Promise<void> | undefined;
  const reg: HostileRegistry = {
    host,
    url: `https://${host}`,
    caFile,
    requests,
    manifest(repo, ref, m) {
      const entry: Entry = { body: toBody(m, `manifest ${ref}`), contentType: m.mediaType ?? OCI_MANIFEST };
      if ('digestHeader' in m && m.digestHeader !== undefined) entry.digestHeader = m.digestHeader;
      entries.set(key('manifests', repo, ref), entry);
      if (!isDigest(ref)) {
        const list = tags.get(repo) ?? [];
        if (!list.includes(ref)) list.push(ref);
        tags.set(repo, list);
      }
    },
    image(repo, tag, layer, layerBody) {
      const config = Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          rootfs: { type: 'layers', diff_ids: [] },
          repo,
        }),
      );
      const manifest = oneLayerManifest(config, layer);
      reg.blob(repo, sha256(config), config);
      reg.blob(repo, sha256(layer), layerBody ?? layer);
      reg.manifest(repo, tag, { mediaType: OCI_MANIFEST, bytes: manifest });
      return { manifest: sha256(manifest), config: sha256(config), layer: sha256(layer) };
    },
    blob(repo, digest, body) {
      const b: Body =
        typeof body === 'string' || Buffer.isBuffer(body)
          ? { kind: 'bytes', bytes: Buffer.from(body) }
          : toBody(body, `blob ${digest}`);
      entries.set(key('blobs', repo, digest), { body: b, contentType: 'application/octet-stream' });
    },
    stop: () => {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
        await closed;
        await rm(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
  return reg;
}
