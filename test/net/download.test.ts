import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCertificates } from '../../lab/pki.js';
import { downloadVerified, partialPathFor } from '../../src/net/download.js';
import { sha256Hex, startFileServer, type FileServer } from '../helpers/boot-files.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { tempDir } from '../helpers/fixtures.js';
import { rejection } from '../helpers/realdata.js';

const SIZE = 1024 * 1024 + 123;
const data = randomBytes(SIZE);
const sha = sha256Hex(data);
const PATH = '/art/rhcos-live-iso.x86_64.iso';
const fast = { retries: 3, baseDelayMs: 5 };

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

describe('downloadVerified', () => {
  let server: FileServer;
  let dir: string;
  let n = 0;
  /** A fresh destination in its own directory. */
  const dest = async () => {
    const d = join(dir, `t${++n}`);
    await mkdir(d);
    return join(d, 'rhcos-live-iso.x86_64.iso');
  };

  beforeAll(async () => {
    server = await startFileServer(new Map([[PATH, data]]));
    dir = await tempDir('airgap-download-');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('streams to the destination, verified, with progress; a verified file is not fetched again', async () => {
    const to = await dest();
    let bytes = 0;
    let planned = 0;
    const before = server.gets(PATH).length;
    const r = await downloadVerified(`${server.base}${PATH}`, to, {
      sha256: `sha256:${sha}`,
      onBytes: (b) => (bytes += b),
      onPlanned: (b) => (planned += b),
    });
    expect(r).toMatchObject({ size: SIZE, sha256: sha, downloaded: true, received: SIZE, resumedFrom: 0 });
    expect((await readFile(to)).equals(data)).toBe(true);
    expect(bytes).toBe(SIZE);
    expect(planned).toBe(SIZE);
    expect(await readdir(join(to, '..'))).toEqual(['rhcos-live-iso.x86_64.iso']);
    expect(server.gets(PATH).length).toBe(before + 1);

    const again = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha });
    expect(again).toMatchObject({ downloaded: false, received: 0, size: SIZE });
    expect(server.gets(PATH).length).toBe(before + 1); // no GET at all
  });

  it('resumes with Range after the connection drops halfway; about one file crosses, not two', async () => {
    const to = await dest();
    const start = server.log.length;
    server.fault(PATH, { dropAfter: Math.floor(SIZE / 2) });
    let bytes = 0;
    const r = await downloadVerified(`${server.base}${PATH}`, to, {
      sha256: sha,
      ...fast,
      onBytes: (b) => (bytes += b),
    });
    const reqs = server.log.slice(start);
    expect(reqs.length).toBe(2);
    expect(reqs[0]!.range).toBeUndefined();
    const resumeAt = Number(/^bytes=(\d+)-$/.exec(reqs[1]!.range ?? '')?.[1]);
    expect(resumeAt).toBeGreaterThan(0);
    expect(resumeAt).toBeLessThanOrEqual(Math.floor(SIZE / 2));
    expect(reqs[1]!.status).toBe(206);
    const sent = reqs.reduce((s, q) => s + q.sent, 0);
    expect(sent).toBeLessThan(SIZE * 1.1);
    expect(bytes).toBeLessThan(SIZE * 1.1);
    expect(r.resumes).toBe(1);
    expect((await readFile(to)).equals(data)).toBe(true);
    expect(await exists(partialPathFor(to))).toBe(false);
  });

  it('resumes through the fault proxy after a reset mid-body', async () => {
    const proxy = await startFaultProxy({
      target: server.base,
      rules: [{ match: { method: 'GET' }, fault: 'reset', afterBytes: 300_000 }],
    });
    try {
      const to = await dest();
      const start = server.log.length;
      const r = await downloadVerified(`${proxy.url}${PATH}`, to, { sha256: sha, ...fast });
      expect(r.resumes).toBe(1);
      expect(proxy.stats().byFault.reset).toBe(1);
      const ranges = server.log.slice(start).map((q) => q.range);
      expect(ranges[0]).toBeUndefined();
      expect(ranges[1]).toMatch(/^bytes=\d+-$/);
      expect((await readFile(to)).equals(data)).toBe(true);
    } finally {
      await proxy.stop();
    }
  });

  it('continues a partial file left by an earlier run, hashing what it holds', async () => {
    const to = await dest();
    await writeFile(partialPathFor(to), data.subarray(0, 400_000));
    const start = server.log.length;
    const r = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(server.log.slice(start).map((q) => q.range)).toEqual(['bytes=400000-']);
    expect(r).toMatchObject({ resumedFrom: 400_000, received: SIZE - 400_000, downloaded: true });
    expect((await readFile(to)).equals(data)).toBe(true);
  });

  it('a stale partial file (other bytes) fails the check, and is fetched once more from byte 0', async () => {
    const to = await dest();
    await writeFile(partialPathFor(to), randomBytes(200_000));
    const start = server.log.length;
    const r = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(server.log.slice(start).map((q) => q.range)).toEqual(['bytes=200000-', undefined]);
    expect(r.downloaded).toBe(true);
    expect((await readFile(to)).equals(data)).toBe(true);
  });

  it('a server that ignores Range is read again from byte 0', async () => {
    const to = await dest();
    await writeFile(partialPathFor(to), data.subarray(0, 100_000));
    server.fault(PATH, { ignoreRange: true });
    const start = server.log.length;
    const r = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(server.log.slice(start).map((q) => [q.range, q.status])).toEqual([['bytes=100000-', 200]]);
    expect(r.received).toBe(SIZE);
    expect((await readFile(to)).equals(data)).toBe(true);
  });

  it('a complete partial file is verified and renamed (the server answers 416 to its Range)', async () => {
    const to = await dest();
    await writeFile(partialPathFor(to), data);
    const start = server.log.length;
    const r = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(server.log.slice(start).map((q) => [q.range, q.status, q.sent])).toEqual([
      [`bytes=${SIZE}-`, 416, 0],
    ]);
    expect(r).toMatchObject({ received: 0, downloaded: true, resumedFrom: SIZE });
    expect((await readFile(to)).equals(data)).toBe(true);
  });

  it('a corrupted file is rejected: nothing under the final name, no partial file kept', async () => {
    const to = await dest();
    const bad = Buffer.from(data);
    bad[SIZE >> 1]! ^= 0xff;
    server.fault(PATH, { body: bad });
    const url = `${server.base}${PATH}`;
    const e = await rejection(downloadVerified(url, to, { sha256: sha, ...fast }));
    expect(e.code).toBe('DOWNLOAD_DIGEST_MISMATCH');
    expect(e.exitCode).toBe(1);
    expect(e.message).toContain(url);
    expect(e.message).toContain(sha);
    expect(e.message).toContain(sha256Hex(bad));
    expect(await exists(to)).toBe(false);
    expect(await exists(partialPathFor(to))).toBe(false);
    expect(await readdir(join(to, '..'))).toEqual([]);
  });

  it('a file under the final name that does not verify is removed and fetched again', async () => {
    const to = await dest();
    await writeFile(to, 'not the iso');
    const r = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(r).toMatchObject({ downloaded: true, replaced: true });
    expect((await readFile(to)).equals(data)).toBe(true);

    // And when the fetch then fails, the wrong file is not left there either.
    const to2 = await dest();
    await writeFile(to2, 'not the iso');
    server.fault(PATH, { status: 404 });
    const e = await rejection(downloadVerified(`${server.base}${PATH}`, to2, { sha256: sha, ...fast }));
    expect(e.code).toBe('DOWNLOAD_STATUS');
    expect(e.message).toContain('HTTP 404');
    expect(await exists(to2)).toBe(false);
  });

  it('retries 5xx with backoff; gives up on a server that cannot be reached, naming it', async () => {
    const to = await dest();
    server.fault(PATH, { status: 503, times: 2 });
    const start = server.log.length;
    await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, ...fast });
    expect(server.log.slice(start).map((q) => q.status)).toEqual([503, 503, 200]);

    const dead = http.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const url = `http://127.0.0.1:${port}/x.iso`;
    const e = await rejection(
      downloadVerified(url, await dest(), { sha256: sha, retries: 1, baseDelayMs: 5 }),
    );
    expect(e.code).toBe('DOWNLOAD_UNREACHABLE');
    expect(e.message).toContain(url);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.hint).toContain('HTTPS_PROXY');

    const custom = await rejection(
      downloadVerified(url, await dest(), { sha256: sha, retries: 0, errorPrefix: 'IMAGES_DOWNLOAD' }),
    );
    expect(custom.code).toBe('IMAGES_DOWNLOAD_UNREACHABLE');
  });

  it('follows redirects, with Range on every hop', async () => {
    const redirect = http.createServer((req, res) => {
      res.writeHead(302, { location: `${server.base}${PATH}` }).end();
      void req;
    });
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
    try {
      const to = await dest();
      await writeFile(partialPathFor(to), data.subarray(0, 1000));
      const start = server.log.length;
      const url = `http://127.0.0.1:${(redirect.address() as AddressInfo).port}/redirected.iso`;
      const r = await downloadVerified(url, to, { sha256: sha, ...fast });
      expect(r.url).toBe(url);
      expect(server.log.slice(start).map((q) => q.range)).toEqual(['bytes=1000-']);
      expect((await readFile(to)).equals(data)).toBe(true);
    } finally {
      await new Promise<void>((r) => redirect.close(() => r()));
    }
  });

  it('a size the metadata gives must match', async () => {
    const to = await dest();
    const e = await rejection(
      downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, size: SIZE - 1, ...fast }),
    );
    expect(e.code).toBe('DOWNLOAD_SIZE_MISMATCH');
    expect(await readdir(join(to, '..'))).toEqual([]);
    const ok = await downloadVerified(`${server.base}${PATH}`, to, { sha256: sha, size: SIZE, ...fast });
    expect(ok.size).toBe(SIZE);
  });

  it('refuses what is not an http(s) URL or a sha256 (exit 2)', async () => {
    const to = await dest();
    expect((await rejection(downloadVerified('ftp://x/y', to, { sha256: sha }))).exitCode).toBe(2);
    expect((await rejection(downloadVerified('nope', to, { sha256: sha }))).code).toBe(
      'DOWNLOAD_URL_INVALID',
    );
    expect((await rejection(downloadVerified(`${server.base}${PATH}`, to, { sha256: 'abc' }))).code).toBe(
      'DOWNLOAD_SHA256_INVALID',
    );
  });

  it('over HTTPS: trusts the CA file; without it DOWNLOAD_TLS with the hint; verification can be turned off', async () => {
    const { ca, server: cert } = testCertificates();
    const tls = await startFileServer(new Map([[PATH, data]]), { tls: cert });
    try {
      const caFile = join(dir, 'ca.crt');
      await writeFile(caFile, ca.certPem);
      const url = `${tls.base}${PATH}`;
      const r = await downloadVerified(url, await dest(), {
        sha256: sha,
        tls: { caFiles: [caFile], certDirs: [] },
      });
      expect(r.downloaded).toBe(true);
      const e = await rejection(
        downloadVerified(url, await dest(), { sha256: sha, tls: { certDirs: [] }, retries: 0 }),
      );
      expect(e.code).toBe('DOWNLOAD_TLS');
      expect(e.hint).toContain('--ca-file');
      const insecure = await downloadVerified(url, await dest(), {
        sha256: sha,
        tls: { certDirs: [], insecureSkipVerify: true },
      });
      expect(insecure.size).toBe(SIZE);
    } finally {
      await tls.close();
    }
  });
});
