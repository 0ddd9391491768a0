/**
 * The boot-image server with real clients: curl (Debian) and undici against the server listening
 * on 127.0.0.1 and [::1]. Whole files and ranges are compared byte for byte (multipart answers
 * parsed), HEAD sizes, conditional requests, traversal attempts, directory listings (opt-in: 404
 * by default), a slow-header client, TLS with a certificate from src/certs/mint.ts, and a graceful
 * stop with a download in flight. Clients that stop reading: slow-clients.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { Agent, Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA, issueServerCert } from '../../src/certs/mint.js';
import { loadServerTls, serveImages, type RunningImageServer } from '../../src/server/listen.js';
import { formatAccessLog, parseRange, type AccessLogEntry } from '../../src/server/static.js';
import { isAirgapError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/fixtures.js';
import { ServerError } from '../../src/server/errors.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const ISO = 'rhcos-4.18.1-x86_64-live.x86_64.iso';
const ROOTFS = 'rhcos-4.18.1-x86_64-live-rootfs.x86_64.img';
const SECRET = 'top secret, outside the served directory';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One curl request (`-g`: IPv6 literals in URLs); headers lower-cased, the last response's only. */
async function curl(dir: string, args: string[]): Promise<Answer> {
  const id = randomBytes(6).toString('hex');
  const headerFile = join(dir, `h-${id}`);
  const bodyFile = join(dir, `b-${id}`);
  const r = await execa('curl', ['-sS', '-g', '-D', headerFile, '-o', bodyFile, ...args], { reject: false });
  if (r.exitCode !== 0) throw new Error(`curl ${args.join(' ')} failed (${r.exitCode}): ${r.stderr}`);
  const head = (await readFile(headerFile, 'utf8')).split('\r\n\r\n').filter((b) => b.startsWith('HTTP/'));
  const lines = head.at(-1)!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  const body = await readFile(bodyFile).catch(() => Buffer.alloc(0));
  return { status: Number(lines[0]!.split(' ')[1]), headers, body };
}

/** One undici request against a raw path (no URL normalisation: `..` and `%2e` go out as written). */
async function raw(origin: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const client = new Client(origin);
  try {
    const r = await client.request({ path, method: method as 'GET', headers });
    const body = Buffer.from(await r.body.arrayBuffer());
    return { status: r.statusCode, headers: r.headers as Record<string, string>, body };
  } finally {
    await client.close();
  }
}

/** The parts of a multipart/byteranges body. */
function parseMultipart(body: Buffer, contentType: string): { range: string; type: string; data: Buffer }[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const delim = Buffer.from(`--${boundary}`);
  const parts: { range: string; type: string; data: Buffer }[] = [];
  let i = body.indexOf(delim);
  while (i >= 0) {
    let at = i + delim.length;
    if (body.subarray(at, at + 2).toString() === '--') break;
    at += 2; // CRLF
    const headerEnd = body.indexOf('\r\n\r\n', at);
    const headers = Object.fromEntries(
      body
        .subarray(at, headerEnd)
        .toString()
        .split('\r\n')
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const dataStart = headerEnd + 4;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), dataStart);
    parts.push({
      range: headers['content-range']!,
      type: headers['content-type']!,
      data: body.subarray(dataStart, next),
    });
    i = next + 2;
  }
  return parts;
}

/** Resolves when the socket closes, with what it received. */
function closedAfter(sock: Socket): Promise<{ ms: number; received: string }> {
  const started = Date.now();
  let received = '';
  sock.on('data', (d) => (received += d.toString()));
  return new Promise((resolve) => sock.on('close', () => resolve({ ms: Date.now() - started, received })));
}

describe('serve-images: files under the directory, to curl and undici over 127.0.0.1 and [::1]', () => {
  let dir: string;
  let root: string;
  let server: RunningImageServer;
  let v4: string;
  let v6: string;
  const files = new Map<string, Buffer>();
  const log: AccessLogEntry[] = [];
  const lines: string[] = [];

  beforeAll(async () => {
    dir = await tempDir('airgap-serve-');
    root = join(dir, 'root');
    await mkdir(join(root, 'images', 'sub'), { recursive: true });
    await mkdir(join(dir, 'outside'), { recursive: true });
    await writeFile(join(dir, 'outside', 'secret.txt'), SECRET);
    // Sizes that are not multiples of the test chunk (64 KiB), so reads end mid-buffer.
    files.set(`images/${ISO}`, randomBytes(3 * MiB + 123));
    files.set(`images/${ROOTFS}`, randomBytes(MiB + 7));
    files.set('images/rhcos-4.18.1-x86_64-live-kernel-x86_64', randomBytes(200 * KiB));
    files.set('images/sha256sum.txt', Buffer.from(`${'a'.repeat(64)}  ${ISO}\n`));
    files.set('images/stream.json', Buffer.from('{"stream":"rhcos-4.18"}\n'));
    files.set('images/empty.img', Buffer.alloc(0));
    files.set('images/sub/nested.txt', Buffer.from('nested\n'));
    files.set('images/a <b>&"c\'.txt', Buffer.from('odd name\n'));
    files.set('images/100% done.txt', Buffer.from('percent\n'));
    for (const [p, b] of files) await writeFile(join(root, p), b);
    await writeFile(join(root, 'images', '.rhcos.iso.partial'), 'half written');
    await symlink(join(dir, 'outside', 'secret.txt'), join(root, 'images', 'escape.txt'));
    await symlink(join(dir, 'outside'), join(root, 'images', 'outdir'));
    await symlink('../etc/passwd', join(root, 'images', 'relative-escape'));
    await symlink(ISO, join(root, 'images', 'latest.iso'));
    await execa('mkfifo', [join(root, 'images', 'pipe.img')]);
    server = await serveImages({
      dir: root,
      port: 0,
      addresses: ['127.0.0.1', '::1'],
      onRequestLog: (e) => log.push(e),
      accessLog: (l) => lines.push(l),
      limits: { headersTimeoutMs: 1000, requestTimeoutMs: 2000, checkIntervalMs: 200 },
      // Small chunks, so that every file but the smallest spans several reads and buffers.
      chunkBytes: 64 * KiB,
      directoryListing: true,
    });
    v4 = `http://127.0.0.1:${server.port}`;
    v6 = `http://[::1]:${server.port}`;
  }, 60_000);

  afterAll(async () => {
    await server?.close(1000);
  });

  it('listens on both addresses with one port and gives their URLs', () => {
    expect(server.bindings.map((b) => [b.address, b.family])).toEqual([
      ['127.0.0.1', 'IPv4'],
      ['::1', 'IPv6'],
    ]);
    expect(server.urls).toEqual([`${v4}/`, `${v6}/`]);
  });

  it('serves whole files byte for byte with their content types', async () => {
    const types: Record<string, string> = {
      [`images/${ISO}`]: 'application/x-iso9660-image',
      [`images/${ROOTFS}`]: 'application/octet-stream',
      'images/sha256sum.txt': 'text/plain; charset=utf-8',
      'images/stream.json': 'application/json',
      'images/empty.img': 'application/octet-stream',
    };
    for (const base of [v4, v6]) {
      for (const [p, bytes] of files) {
        const url = `${base}/${p.split('/').map(encodeURIComponent).join('/')}`;
        const c = await curl(dir, [url]);
        expect(c.status, url).toBe(200);
        expect(sha(c.body), url).toBe(sha(bytes));
        expect(c.headers['content-length']).toBe(String(bytes.length));
        expect(c.headers['accept-ranges']).toBe('bytes');
        if (types[p]) expect(c.headers['content-type']).toBe(types[p]);
        const u = await request(url);
        expect(u.statusCode).toBe(200);
        expect(sha(Buffer.from(await u.body.arrayBuffer())), url).toBe(sha(bytes));
      }
    }
    // A symlink that stays inside is served like its target.
    const link = await curl(dir, [`${v4}/images/latest.iso`]);
    expect(sha(link.body)).toBe(sha(files.get(`images/${ISO}`)!));
  });

  it('answers HEAD with the size and no body', async () => {
    for (const base of [v4, v6]) {
      const c = await curl(dir, ['-I', `${base}/images/${ISO}`]);
      expect(c.status).toBe(200);
      expect(Number(c.headers['content-length'])).toBe(3 * MiB + 123);
      expect(c.headers['content-type']).toBe('application/x-iso9660-image');
      expect(c.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
      const u = await request(`${base}/images/${ROOTFS}`, { method: 'HEAD' });
      expect(u.statusCode).toBe(200);
      expect(Number(u.headers['content-length'])).toBe(MiB + 7);
      expect((await u.body.arrayBuffer()).byteLength).toBe(0);
    }
  });

  it('serves single ranges byte for byte (206 with Content-Range)', async () => {
    const iso = files.get(`images/${ISO}`)!;
    const size = iso.length;
    const cases: [string, number, number][] = [
      ['0-99', 0, 99],
      ['65530-131080', 65530, 131080], // across chunk boundaries
      [`${size - 10}-`, size - 10, size - 1],
      ['-500', size - 500, size - 1],
      [`3000000-${size + 1000}`, 3000000, size - 1], // clipped to the file
      [`${size - 1}-${size - 1}`, size - 1, size - 1],
    ];
    for (const base of [v4, v6]) {
      for (const [spec, start, end] of cases) {
        const c = await curl(dir, ['-r', spec, `${base}/images/${ISO}`]);
        expect(c.status, spec).toBe(206);
        expect(c.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
        expect(Number(c.headers['content-length'])).toBe(end - start + 1);
        expect(c.body.equals(iso.subarray(start, end + 1)), spec).toBe(true);
        const u = await request(`${base}/images/${ISO}`, { headers: { range: `bytes=${spec}` } });
        expect(u.statusCode).toBe(206);
        expect(Buffer.from(await u.body.arrayBuffer()).equals(iso.subarray(start, end + 1)), spec).toBe(true);
      }
    }
  });

  it('serves several ranges as multipart/byteranges, each part byte for byte', async () => {
    const rootfs = files.get(`images/${ROOTFS}`)!;
    const size = rootfs.length;
    for (const base of [v4, v6]) {
      const c = await curl(dir, ['-r', '0-9,100000-200000,-64', `${base}/images/${ROOTFS}`]);
      expect(c.status).toBe(206);
      expect(c.headers['content-type']).toMatch(/^multipart\/byteranges; boundary=/);
      expect(Number(c.headers['content-length'])).toBe(c.body.length);
      const parts = parseMultipart(c.body, c.headers['content-type']!);
      const want: [number, number][] = [
        [0, 9],
        [100000, 200000],
        [size - 64, size - 1],
      ];
      expect(parts.map((p) => p.range)).toEqual(want.map(([s, e]) => `bytes ${s}-${e}/${size}`));
      parts.forEach((p, i) => {
        expect(p.type).toBe('application/octet-stream');
        expect(p.data.equals(rootfs.subarray(want[i]![0], want[i]![1] + 1))).toBe(true);
      });
      const u = await request(`${base}/images/${ROOTFS}`, { headers: { range: 'bytes=5-6, 1048570-' } });
      const body = Buffer.from(await u.body.arrayBuffer());
      const uparts = parseMultipart(body, String(u.headers['content-type']));
      expect(uparts.map((p) => p.range)).toEqual([`bytes 5-6/${size}`, `bytes 1048570-${size - 1}/${size}`]);
      expect(uparts[1]!.data.equals(rootfs.subarray(1048570))).toBe(true);
    }
  });

  it('answers 416 with Content-Range: bytes */size for ranges past the end; ignores bad ones', async () => {
    const size = files.get(`images/${ISO}`)!.length;
    const c = await curl(dir, ['-r', `${size}-${size + 10}`, `${v4}/images/${ISO}`]);
    expect(c.status).toBe(416);
    expect(c.headers['content-range']).toBe(`bytes */${size}`);
    const e = await raw(v6, '/images/empty.img', { range: 'bytes=0-0' });
    expect(e.status).toBe(416);
    expect(e.headers['content-range']).toBe('bytes */0');
    // Malformed or not bytes: the whole file, as RFC 9110 says.
    for (const range of ['bytes=5-1', 'items=0-1', 'bytes=abc', 'bytes=0-1,2-3,0-']) {
      const r = await raw(v4, '/images/stream.json', { range });
      expect(r.status, range).toBe(200);
      expect(r.body.equals(files.get('images/stream.json')!)).toBe(true);
    }
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-1,5-', 100)).toEqual({
      kind: 'ranges',
      ranges: [
        { start: 0, end: 1 },
        { start: 5, end: 99 },
      ],
    });
    expect(parseRange(`bytes=${Array.from({ length: 65 }, (_, i) => `${i}-${i}`).join(',')}`, 100)).toEqual({
      kind: 'none',
    });
  });

  it('answers conditional requests: 304, 412, and If-Range with an ETag or a date', async () => {
    const url = `${v4}/images/${ISO}`;
    const iso = files.get(`images/${ISO}`)!;
    const first = await curl(dir, ['-I', url]);
    const etag = first.headers.etag!;
    const lastModified = first.headers['last-modified']!;
    expect(new Date(lastModified).getTime()).not.toBeNaN();

    expect((await curl(dir, ['-H', `If-None-Match: ${etag}`, url])).status).toBe(304);
    expect((await curl(dir, ['-H', `If-None-Match: "other", W/${etag}`, url])).status).toBe(304);
    expect((await curl(dir, ['-H', 'If-None-Match: "other"', url])).status).toBe(200);
    const notModified = await curl(dir, ['-z', lastModified, url]); // If-Modified-Since
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.body.length).toBe(0);
    expect((await curl(dir, ['-H', 'If-Modified-Since: Thu, 01 Jan 2015 00:00:00 GMT', url])).status).toBe(
      200,
    );
    expect((await curl(dir, ['-H', 'If-Match: "nope"', url])).status).toBe(412);
    expect((await curl(dir, ['-H', `If-Match: ${etag}`, '-r', '0-1', url])).status).toBe(206);
    expect((await curl(dir, ['-H', 'If-Unmodified-Since: Thu, 01 Jan 2015 00:00:00 GMT', url])).status).toBe(
      412,
    );

    const current = await raw(v6, `/images/${ISO}`, { range: 'bytes=10-19', 'if-range': etag });
    expect(current.status).toBe(206);
    expect(current.body.equals(iso.subarray(10, 20))).toBe(true);
    const stale = await raw(v6, `/images/${ISO}`, { range: 'bytes=10-19', 'if-range': '"stale"' });
    expect(stale.status).toBe(200);
    expect(sha(stale.body)).toBe(sha(iso));
    const byDate = await raw(v4, `/images/${ISO}`, { range: 'bytes=10-19', 'if-range': lastModified });
    expect(byDate.status).toBe(206);
    const oldDate = await raw(v4, `/images/${ISO}`, {
      range: 'bytes=10-19',
      'if-range': 'Thu, 01 Jan 2015 00:00:00 GMT',
    });
    expect(oldDate.status).toBe(200);
    expect(oldDate.body.length).toBe(iso.length);
  });

  it('changes the ETag when a file is replaced, so old validators stop matching', async () => {
    const p = join(root, 'images', 'stream.json');
    const before = (await curl(dir, ['-I', `${v4}/images/stream.json`])).headers.etag!;
    const next = Buffer.from('{"stream":"rhcos-4.19"}\n');
    await writeFile(`${p}.new`, next);
    await utimes(`${p}.new`, new Date(), new Date(Date.now() + 5000));
    await rename(`${p}.new`, p);
    files.set('images/stream.json', next);
    const after = await curl(dir, ['-H', `If-None-Match: ${before}`, `${v4}/images/stream.json`]);
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before);
    expect(after.body.equals(next)).toBe(true);
  });

  it('refuses everything outside the directory before touching it', async () => {
    const refused: [string, number][] = [
      ['/../etc/passwd', 400],
      ['/images/../../etc/passwd', 400],
      ['/images/%2e%2e/%2e%2e/etc/passwd', 400],
      ['/images/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', 400],
      ['/images%2F..%2F..%2Fetc%2Fpasswd', 400],
      ['/images/..%5c..%5cetc%5cpasswd', 400],
      ['/images/.%2e/.%2e/etc/passwd', 400],
      ['/images/a.txt%00.iso', 400],
      ['/images/%zz', 400],
      ['//etc/passwd', 404], // inside the root: <root>/etc/passwd does not exist
      ['/etc/passwd', 404],
      ['/images/escape.txt', 404], // symlink to a file outside
      ['/images/outdir/secret.txt', 404], // symlink to a directory outside
      ['/images/relative-escape', 404],
      ['/images/.rhcos.iso.partial', 404], // hidden (being written)
      [`/images/${ISO}/`, 404],
    ];
    for (const base of [v4, v6]) {
      for (const [path, status] of refused) {
        const c = await curl(dir, ['--path-as-is', `${base}${path}`]);
        expect(c.status, `curl ${path}`).toBe(status);
        expect(c.body.toString()).not.toContain('root:');
        expect(c.body.toString()).not.toContain(SECRET);
        const u = await raw(base, path);
        expect(u.status, `undici ${path}`).toBe(status);
        expect(u.body.toString()).not.toContain(SECRET);
      }
    }
    // Absolute-form and asterisk-form targets are refused too.
    const abs = await curl(dir, ['--request-target', 'http://example.com/etc/passwd', `${v4}/`]);
    expect(abs.status).toBe(400);
    const star = await curl(dir, ['-X', 'OPTIONS', '--request-target', '*', `${v4}/`]);
    expect(star.status).toBe(405);
    // A FIFO is not a regular file: refused without blocking on it.
    expect((await curl(dir, ['-m', '5', `${v4}/images/pipe.img`])).status).toBe(403);
    // The operator sees why in the log.
    const problems = log.filter((e) => e.problem).map((e) => e.problem!);
    expect(problems).toContain('dot segment in the path (traversal)');
    expect(problems).toContain('encoded slash in the path');
    expect(problems).toContain('NUL byte in the path');
    expect(problems.some((p) => p.startsWith('resolves outside the served directory'))).toBe(true);
  });

  it('with directoryListing, lists directories as HTML (names escaped) and JSON, without hidden or outside entries', async () => {
    const redirect = await curl(dir, [`${v4}/images`]);
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/images/');
    // Never a protocol-relative redirect to another host.
    const slashes = await curl(dir, ['--path-as-is', `${v4}//images?format=json`]);
    expect(slashes.headers.location).toBe('/images/?format=json');
    const html = await curl(dir, [`${v6}/images/`]);
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    const text = html.body.toString();
    expect(text).toContain(`<a href="${ISO}">${ISO}</a>`);
    expect(text).toContain('a &#60;b&#62;&#38;&#34;c&#39;.txt');
    expect(text).not.toContain('<b>&"c');
    expect(text).toContain('href="100%25%20done.txt"');
    expect(text).toContain('href="sub/"');
    for (const hidden of ['.rhcos.iso.partial', 'escape.txt', 'outdir', 'relative-escape', 'pipe.img'])
      expect(text).not.toContain(hidden);
    const json = await curl(dir, [`${v4}/images/?format=json`]);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    const doc = JSON.parse(json.body.toString()) as {
      path: string;
      entries: { name: string; type: string; size: number; mtime: string }[];
    };
    expect(doc.path).toBe('/images/');
    expect(doc.entries[0]).toMatchObject({ name: 'sub', type: 'directory' });
    const iso = doc.entries.find((e) => e.name === ISO)!;
    expect(iso).toMatchObject({ type: 'file', size: 3 * MiB + 123 });
    expect(new Date(iso.mtime).toISOString()).toBe(iso.mtime);
    expect(doc.entries.map((e) => e.name)).toContain('latest.iso');
    expect(doc.entries.map((e) => e.name)).not.toContain('escape.txt');
    const byAccept = await request(`${v6}/images/sub/`, { headers: { accept: 'application/json' } });
    expect(JSON.parse(await byAccept.body.text())).toMatchObject({
      path: '/images/sub/',
      entries: [{ name: 'nested.txt', type: 'file', size: 7 }],
    });
    const top = JSON.parse((await curl(dir, [`${v4}/?format=json`])).body.toString()) as DirDoc;
    expect(top.entries.map((e) => e.name)).toEqual(['images']);
  });

  it('answers /healthz, and 405 to anything but GET and HEAD without reading a body', async () => {
    const h = await curl(dir, [`${v6}/healthz`]);
    expect(h.status).toBe(200);
    expect(h.body.toString()).toBe('ok\n');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const c = await curl(dir, [
        '-X',
        method,
        '-H',
        'Content-Type: application/json',
        '-d',
        '{"a":',
        `${v4}/images/x`,
      ]);
      expect(c.status, method).toBe(405);
      expect(c.headers.allow).toBe('GET, HEAD');
    }
  });

  it('serves concurrent downloads, and survives clients that leave mid-download', async () => {
    const iso = files.get(`images/${ISO}`)!;
    // Clients that go away mid-download must not keep the server busy, nor their descriptors.
    for (let i = 0; i < 6; i++) {
      const s = connect({ host: '127.0.0.1', port: server.port });
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      s.write(`GET /images/${ISO} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await new Promise<void>((resolve) => s.once('data', () => resolve()));
      s.destroy();
    }
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const base = i % 2 ? v6 : v4;
        const r = await request(`${base}/images/${ISO}`);
        return sha(Buffer.from(await r.body.arrayBuffer()));
      }),
    );
    expect(new Set(results)).toEqual(new Set([sha(iso)]));
    const aborted = log.filter((e) => e.aborted && e.path === `/images/${ISO}`);
    expect(aborted.length).toBeGreaterThanOrEqual(6);
  });

  it('closes a connection that sends a partial header line within the headers timeout', async () => {
    const s = connect({ host: '::1', port: server.port });
    await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    const closed = closedAfter(s);
    s.write(`GET /images/${ISO} HTTP/1.1\r\nHost: x\r\nX-Slow: aaaa`);
    const t = setInterval(() => s.writable && s.write('a'), 300); // trickles bytes, never ends the line
    const { ms, received } = await closed;
    clearInterval(t);
    expect(ms).toBeLessThan(1000 + 200 + 1500);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts a download whose file shrinks while it is served, and keeps serving the others', async () => {
    const p = join(root, 'images', 'shrinking.img');
    await writeFile(p, randomBytes(16 * MiB));
    const s = connect({ host: '127.0.0.1', port: server.port });
    await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    let received = 0;
    s.on('data', (d: Buffer) => (received += d.length));
    const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
    s.write('GET /images/shrinking.img HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((resolve) => s.once('data', () => resolve()));
    s.pause(); // the server stops at the socket buffers, far before the end
    await new Promise((resolve) => setTimeout(resolve, 200));
    await truncate(p, 2 * MiB);
    s.resume();
    await closed;
    expect(received).toBeLessThan(16 * MiB);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const entry = log.findLast((e) => e.path === '/images/shrinking.img')!;
    expect(entry.aborted).toBe(true);
    expect(entry.problem).toMatch(
      /^read failed: the file ended at byte \d+, before 16777216 \(it shrank while served\)$/,
    );
    // Concurrent downloads (which borrow the read-ahead buffers) still get the right bytes.
    const iso = files.get(`images/${ISO}`)!;
    const got = await Promise.all(
      Array.from({ length: 4 }, async () =>
        sha(Buffer.from(await (await request(`${v4}/images/${ISO}`)).body.arrayBuffer())),
      ),
    );
    expect(new Set(got)).toEqual(new Set([sha(iso)]));
  });

  it('lets a download run longer than the request timeout', async () => {
    // requestTimeout (2 s here) bounds receiving the request, never sending the answer.
    const r = await request(`${v4}/images/${ISO}`);
    const chunks: Buffer[] = [];
    let waited = false;
    for await (const c of r.body) {
      chunks.push(c as Buffer);
      if (!waited) {
        waited = true;
        await new Promise((resolve) => setTimeout(resolve, 2600));
      }
    }
    expect(sha(Buffer.concat(chunks))).toBe(sha(files.get(`images/${ISO}`)!));
  });

  it('writes one access-log line per request in combined log format, without query strings', async () => {
    await curl(dir, ['-A', 'curl-test', `${v4}/images/?format=json&token=s3cret`]);
    const line = lines.findLast((l) => l.includes('curl-test'))!;
    expect(line).toMatch(
      /^127\.0\.0\.1 - - \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET \/images\/ HTTP\/1\.1" 200 \d+ "-" "curl-test" \d+\.\d{3}$/,
    );
    expect(lines.join('\n')).not.toContain('s3cret');
    expect(
      formatAccessLog({
        time: new Date('2026-01-02T03:04:05Z'),
        remote: '::1',
        method: 'GET',
        path: '/a"\n',
        httpVersion: '1.1',
        status: 404,
        bytes: 0,
        durationMs: 1.5,
        aborted: false,
        problem: 'x',
      }),
    ).toBe('::1 - - [02/Jan/2026:03:04:05 +0000] "GET /a\\x22\\x0a HTTP/1.1" 404 - "-" "-" 0.002 "x"');
  });

  it('answers 403 for a file it may not read, and keeps serving', async () => {
    if (process.getuid?.() === 0) return; // root reads everything; the CLI test runs this as nobody
    await writeFile(join(root, 'images', 'locked.img'), 'x');
    await chmod(join(root, 'images', 'locked.img'), 0);
    expect((await curl(dir, [`${v4}/images/locked.img`])).status).toBe(403);
    expect((await curl(dir, [`${v4}/healthz`])).status).toBe(200);
  });
});

interface DirDoc {
  entries: { name: string }[];
}

describe('serve-images: directory listings are opt-in', () => {
  let dir: string;
  let server: RunningImageServer;
  let base: string;
  const log: AccessLogEntry[] = [];

  beforeAll(async () => {
    dir = await tempDir('airgap-serve-nolist-');
    await mkdir(join(dir, 'root', 'images', 'sub'), { recursive: true });
    await writeFile(join(dir, 'root', 'images', 'stream.json'), '{}\n');
    server = await serveImages({
      dir: join(dir, 'root'),
      port: 0,
      addresses: ['127.0.0.1'],
      onRequestLog: (e) => log.push(e),
    });
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.close(1000);
  });

  it('answers 404 for every directory by default (no listing, no redirect), and still serves files', async () => {
    for (const path of ['/', '/images/', '/images', '/images/sub/', '/images/?format=json']) {
      const c = await curl(dir, ['--path-as-is', `${base}${path}`]);
      expect(c.status, path).toBe(404);
      expect(c.headers.location, path).toBeUndefined();
      expect(c.body.toString(), path).toBe('Not Found\n');
      const json = await raw(base, path, { accept: 'application/json' });
      expect(json.status, path).toBe(404);
      expect(json.body.toString()).not.toContain('stream.json');
    }
    expect((await curl(dir, ['-I', `${base}/images/`])).status).toBe(404);
    const file = await curl(dir, [`${base}/images/stream.json`]);
    expect(file.status).toBe(200);
    expect(file.body.toString()).toBe('{}\n');
    // The operator sees why in the access log.
    expect(log.find((e) => e.path === '/images/')?.problem).toBe('a directory, and directory listing is off');
  });
});

describe('serve-images: TLS and stopping', () => {
  let dir: string;
  let root: string;
  let big: Buffer;

  beforeAll(async () => {
    dir = await tempDir('airgap-serve-tls-');
    root = join(dir, 'root');
    await mkdir(join(root, 'images'), { recursive: true });
    // Larger than what loopback socket buffers hold, so a slow download stays in flight.
    big = randomBytes(32 * MiB);
    await writeFile(join(root, 'images', 'big.iso'), big);
    const ca = await createCA({ commonName: 'serve test CA', keyType: 'ecdsa-p256' });
    const leaf = await issueServerCert({
      ca,
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      keyType: 'ecdsa-p256',
    });
    const other = await issueServerCert({ ca, dnsNames: ['other'], ipAddresses: [], keyType: 'ecdsa-p256' });
    await writeFile(join(dir, 'ca.crt'), ca.certPem);
    await writeFile(join(dir, 'tls.crt'), leaf.certPem + ca.certPem);
    await writeFile(join(dir, 'tls.key'), leaf.keyPem);
    await writeFile(join(dir, 'other.crt'), other.certPem);
    await writeFile(join(dir, 'other.key'), other.keyPem);
  });

  it('serves HTTPS with a certificate from mint.ts that curl and undici verify', async () => {
    const server = await serveImages({
      dir: root,
      port: 0,
      addresses: ['127.0.0.1', '::1'],
      tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
    });
    try {
      expect(server.urls).toEqual([`https://127.0.0.1:${server.port}/`, `https://[::1]:${server.port}/`]);
      expect(server.warnings).toEqual([]);
      for (const url of server.urls) {
        const c = await curl(dir, [
          '--cacert',
          join(dir, 'ca.crt'),
          '-r',
          '1000-2999',
          `${url}images/big.iso`,
        ]);
        expect(c.status).toBe(206);
        expect(c.body.equals(big.subarray(1000, 3000))).toBe(true);
        const whole = await curl(dir, ['--cacert', join(dir, 'ca.crt'), `${url}images/big.iso`]);
        expect(sha(whole.body)).toBe(sha(big));
        const untrusted = await execa('curl', ['-sS', '-g', '-o', '/dev/null', `${url}healthz`], {
          reject: false,
        });
        expect(untrusted.exitCode).toBe(60); // the peer's certificate cannot be verified
      }
      const agent = new Agent({ connect: { ca: await readFile(join(dir, 'ca.crt'), 'utf8') } });
      const r = await request(`${server.urls[1]}images/big.iso`, { dispatcher: agent, method: 'HEAD' });
      expect(Number(r.headers['content-length'])).toBe(big.length);
      await r.body.dump();
      await agent.close();
    } finally {
      await server.close(1000);
    }
  });

  it('refuses a key that is not the certificate’s, and warns about names the certificate lacks', async () => {
    const err = await loadServerTls(join(dir, 'tls.crt'), join(dir, 'other.key')).catch((e: unknown) => e);
    expect(isAirgapError(err) && err.code).toBe(ServerError.TLS_KEY_MISMATCH);
    expect(isAirgapError(err) && err.exitCode).toBe(2);
    const server = await serveImages({
      dir: root,
      port: 0,
      addresses: ['127.0.0.1', 'localhost'],
      tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
    });
    await server.close(100);
    expect(server.warnings).toEqual([]);
    const uncovered = await serveImages({
      dir: root,
      port: 0,
      addresses: ['127.0.0.1'],
      tls: { certFile: join(dir, 'other.crt'), keyFile: join(dir, 'other.key') },
    });
    await uncovered.close(100);
    expect(uncovered.warnings).toEqual([
      'the certificate does not cover 127.0.0.1: clients that reach the server by it will refuse it',
    ]);
  });

  it('stops gracefully: refuses new connections, lets a download in flight finish', async () => {
    const server = await serveImages({ dir: root, port: 0, addresses: ['127.0.0.1'] });
    const url = `http://127.0.0.1:${server.port}/images/big.iso`;
    // About 2 s at 16 MB/s: the server is still writing when the stop comes.
    const download = curl(dir, ['--limit-rate', '16M', url]);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const started = Date.now();
    const closing = server.close(20_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await execa('curl', ['-sS', '-o', '/dev/null', url], { reject: false });
    expect(refused.exitCode).toBe(7); // could not connect
    const got = await download;
    expect(got.status).toBe(200);
    expect(sha(got.body)).toBe(sha(big));
    expect(await closing).toEqual({ forced: false });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('cuts a download that outlasts the grace period', async () => {
    const server = await serveImages({ dir: root, port: 0, addresses: ['::1'] });
    const s = connect({ host: '::1', port: server.port });
    await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    s.write('GET /images/big.iso HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((resolve) => s.once('data', () => resolve()));
    s.pause(); // never reads again
    const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
    const started = Date.now();
    expect(await server.close(300)).toEqual({ forced: true });
    expect(Date.now() - started).toBeLessThan(3000);
    s.resume(); // read what is left, then see the server's close
    await closed;
  });
});
