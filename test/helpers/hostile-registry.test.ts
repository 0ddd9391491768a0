import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileRegistry, type HostileRegistry } from './hostile-registry.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const LYING_DIGEST = `sha256:${'0'.repeat(64)}`;

let reg: HostileRegistry;
let agent: Agent;

beforeAll(async () => {
  reg = await startHostileRegistry();
  agent = new Agent({ connect: { ca: await readFile(reg.caFile, 'utf8') } });
  reg.manifest('lib/app', 'v1', {
    bytes: '{"schemaVersion":2}',
    mediaType: OCI_MANIFEST,
    digestHeader: LYING_DIGEST,
  });
  reg.manifest('lib/app', LYING_DIGEST, { bytes: '{}', mediaType: OCI_MANIFEST });
  reg.manifest('lib/app', 'v2', { chunkedBytes: 10 });
  reg.blob('lib/app', 'sha256:../../x', 'traversal');
  reg.blob('lib/app', 'sha256:range', '0123456789');
  reg.blob('lib/app', 'sha256:chunked', { chunkedBytes: 200_000 });
  reg.blob('lib/app', 'sha256:endless', { endless: true });
});

afterAll(async () => {
  await agent?.close();
  await reg?.stop();
});

const get = (path: string, opts: { method?: 'GET' | 'HEAD'; headers?: Record<string, string> } = {}) =>
  request(reg.url + path, { dispatcher: agent, method: opts.method ?? 'GET', headers: opts.headers });

describe('hostile registry', () => {
  it('answers /v2/ and serves a manifest with the headers it was given', async () => {
    const base = await get('/v2/');
    expect(base.statusCode).toBe(200);
    expect(await base.body.json()).toEqual({});

    const res = await get('/v2/lib/app/manifests/v1');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(OCI_MANIFEST);
    expect(res.headers['content-length']).toBe('19');
    expect(res.headers['docker-content-digest']).toBe(LYING_DIGEST);
    expect(await res.body.text()).toBe('{"schemaVersion":2}');

    const head = await get('/v2/lib/app/manifests/v1', { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('19');
    expect(await head.body.text()).toBe('');

    const byDigest = await get(`/v2/lib/app/manifests/${LYING_DIGEST}`);
    expect(byDigest.headers['docker-content-digest']).toBeUndefined();
    expect(await byDigest.body.text()).toBe('{}');
  });

  it('serves a blob under a traversal-looking digest, encoded or raw', async () => {
    const encoded = await get(`/v2/lib/app/blobs/${encodeURIComponent('sha256:../../x')}`);
    expect(encoded.statusCode).toBe(200);
    expect(encoded.headers['content-type']).toBe('application/octet-stream');
    expect(await encoded.body.text()).toBe('traversal');

    // undici's Dispatcher API sends the path as given, with no URL normalisation.
    const raw = await agent.request({
      origin: reg.url,
      path: '/v2/lib/app/blobs/sha256:../../x',
      method: 'GET',
    });
    expect(raw.statusCode).toBe(200);
    expect(await raw.body.text()).toBe('traversal');
    expect(reg.requests).toContainEqual({ method: 'GET', path: '/v2/lib/app/blobs/sha256:../../x' });
  });

  it('honours Range on a fixed blob', async () => {
    const res = await get('/v2/lib/app/blobs/sha256:range', { headers: { range: 'bytes=4-' } });
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe('bytes 4-9/10');
    expect(res.headers['content-length']).toBe('6');
    expect(await res.body.text()).toBe('456789');
  });

  it('sends chunkedBytes without a Content-Length', async () => {
    const res = await get('/v2/lib/app/blobs/sha256:chunked');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(body.length).toBe(200_000);
    expect(body.every((b) => b === 0x78)).toBe(true);

    const manifest = await get('/v2/lib/app/manifests/v2');
    expect(manifest.headers['content-type']).toBe(OCI_MANIFEST);
    expect(manifest.headers['content-length']).toBeUndefined();
    expect(await manifest.body.text()).toBe('xxxxxxxxxx');
  });

  it('sends an endless body until the client goes away', async () => {
    const abort = new AbortController();
    const res = await request(`${reg.url}/v2/lib/app/blobs/sha256:endless`, {
      dispatcher: agent,
      signal: abort.signal,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    let read = 0;
    await expect(
      (async () => {
        for await (const chunk of res.body) {
          read += (chunk as Buffer).length;
          if (read > 2 * 1024 * 1024) abort.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(read).toBeGreaterThan(2 * 1024 * 1024);
    // The registry still answers after the endless stream was cut.
    expect((await get('/v2/')).statusCode).toBe(200);
  });

  it('lists tags, not digests', async () => {
    const res = await get('/v2/lib/app/tags/list');
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ name: 'lib/app', tags: ['v1', 'v2'] });

    const none = await get('/v2/other/tags/list');
    expect(none.statusCode).toBe(404);
    expect(await none.body.json()).toMatchObject({ errors: [{ code: 'NAME_UNKNOWN' }] });
  });

  it('answers unknown manifests and blobs with distribution errors, and writes with 405', async () => {
    const manifest = await get('/v2/lib/app/manifests/nope');
    expect(manifest.statusCode).toBe(404);
    expect(await manifest.body.json()).toMatchObject({ errors: [{ code: 'MANIFEST_UNKNOWN' }] });

    const blob = await get('/v2/lib/app/blobs/sha256:nope');
    expect(blob.statusCode).toBe(404);
    expect(await blob.body.json()).toMatchObject({ errors: [{ code: 'BLOB_UNKNOWN' }] });

    const put = await request(`${reg.url}/v2/lib/app/manifests/v1`, {
      dispatcher: agent,
      method: 'PUT',
      body: '{}',
    });
    expect(put.statusCode).toBe(405);
    expect(await put.body.json()).toEqual({ errors: [{ code: 'UNSUPPORTED', message: 'read-only' }] });
  });

  it('stalls without headers, and stop() still returns promptly', async () => {
    const stalling = await startHostileRegistry();
    const stallAgent = new Agent({ connect: { ca: await readFile(stalling.caFile, 'utf8') } });
    try {
      stalling.blob('r', 'sha256:stall', { stall: true });
      const pending = request(`${stalling.url}/v2/r/blobs/sha256:stall`, { dispatcher: stallAgent });
      pending.catch(() => undefined);
      const first = await Promise.race([
        pending.then(() => 'answered'),
        new Promise((resolve) => setTimeout(() => resolve('silent'), 300)),
      ]);
      expect(first).toBe('silent');
      expect(stalling.requests).toEqual([{ method: 'GET', path: '/v2/r/blobs/sha256:stall' }]);

      const t0 = Date.now();
      await stalling.stop();
      expect(Date.now() - t0).toBeLessThan(1000);
      await expect(pending).rejects.toThrow();
    } finally {
      await stallAgent.close();
      await stalling.stop();
    }
  });
});
