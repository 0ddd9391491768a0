/**
 * `airgap serve-images` through the real CLI: it starts, prints where it serves, serves curl over
 * 127.0.0.1 and [::1] (by default with one dual-stack socket), lists directories only with
 * --directory-listing, logs each request on stderr, serves
 * HTTPS with a certificate from `airgap certs`, and exits 0 on SIGTERM after letting a download in
 * flight finish. Bad input is a clear error with exit 2 (or 1 for a port in use), and a file it may
 * not read is a 403 with a log line, not a crash.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airgap, REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { ServerError } from '../../src/server/errors.js';

const BIN = resolve(REPO_ROOT, 'bin/run.js');
const MiB = 1024 * 1024;
const ISO = 'rhcos-4.18.1-x86_64-live.x86_64.iso';
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

interface Running {
  proc: ResultPromise;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once the server says it is running; rejects if the process ends first. */
  ready: Promise<void>;
}

/** Start `airgap serve-images <args>` and follow its output. */
function startServe(
  args: string[],
  opts: { uid?: number; gid?: number; env?: Record<string, string> } = {},
): Running {
  const proc = execa('node', [BIN, 'serve-images', ...args], {
    reject: false,
    env: { NO_COLOR: '1', ...opts.env },
    stdin: 'ignore',
    timeout: 120_000,
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serve-images: running')) resolve();
    });
    void proc.then((r) => reject(new Error(`serve-images exited ${r.exitCode} before it ran:\n${err}`)));
  });
  return { proc, stdout: () => out, stderr: () => err, ready };
}

/** GET `url` with curl into memory: status and body. */
async function get(url: string, extra: string[] = []): Promise<{ status: number; body: Buffer }> {
  const file = join(tmpdir(), `curl-${randomBytes(6).toString('hex')}`);
  const r = await execa('curl', ['-sS', '-g', '-o', file, '-w', '%{http_code}', ...extra, url], {
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(`curl ${url} failed (${r.exitCode}): ${r.stderr}`);
  const body = await readFile(file);
  await rm(file, { force: true });
  return { status: Number(r.stdout), body };
}

/** An address from the documentation ranges that this host does not have. */
function foreignAddress(): string {
  const local = new Set(
    Object.values(networkInterfaces())
      .flatMap((l) => l ?? [])
      .map((a) => a.address),
  );
  return ['192.0.2.1', '198.51.100.1', '203.0.113.1', '192.0.2.254'].find((a) => !local.has(a))!;
}

/** Let other users reach `dir` (x on every ancestor up to the run's temporary directory). */
async function traversable(dir: string): Promise<void> {
  for (let d = dir; d !== dirname(d); d = dirname(d)) {
    const mode = (await stat(d)).mode & 0o777;
    if ((mode & 0o001) === 0) await chmod(d, mode | 0o011);
    if (d === tmpdir()) break;
  }
}

describe('airgap serve-images (the CLI)', () => {
  let dir: string;
  let root: string;
  let iso: Buffer;
  let big: Buffer;

  beforeAll(async () => {
    dir = await tempDir('airgap-serve-cli-');
    root = join(dir, 'boot');
    await mkdir(join(root, 'images'), { recursive: true });
    iso = randomBytes(2 * MiB + 11);
    big = randomBytes(32 * MiB);
    await writeFile(join(root, 'images', ISO), iso);
    await writeFile(join(root, 'images', 'big.img'), big);
  });

  it('serves 127.0.0.1 and [::1], prints its URLs as JSON, logs requests, exits 0 on SIGTERM', async () => {
    const s = startServe([
      '--dir',
      root,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--address',
      '[::1]',
      '--json',
    ]);
    await s.ready;
    const doc = JSON.parse(s.stdout()) as { root: string; port: number; urls: string[]; tls: boolean };
    expect(doc.tls).toBe(false);
    expect(doc.urls).toEqual([`http://127.0.0.1:${doc.port}/`, `http://[::1]:${doc.port}/`]);
    for (const url of doc.urls) {
      const whole = await get(`${url}images/${ISO}`);
      expect(whole.status).toBe(200);
      expect(sha(whole.body)).toBe(sha(iso));
      const part = await get(`${url}images/${ISO}`, ['-r', '1048570-1048580']);
      expect(part.status).toBe(206);
      expect(part.body.equals(iso.subarray(1048570, 1048581))).toBe(true);
    }
    expect((await get(`${doc.urls[0]}images/../../etc/passwd`, ['--path-as-is'])).status).toBe(400);
    // No directory listings without --directory-listing.
    expect((await get(`${doc.urls[0]}images/`)).status).toBe(404);
    expect((await get(`${doc.urls[0]}images/?format=json`)).status).toBe(404);
    s.proc.kill('SIGTERM');
    const r = await s.proc;
    expect(r.exitCode, s.stderr()).toBe(0);
    expect(s.stderr()).toMatch(
      /^127\.0\.0\.1 - - \[.+\] "GET \/images\/rhcos-[^"]+ HTTP\/1\.1" 200 2097163 /m,
    );
    expect(s.stderr()).toMatch(/^::1 - - \[.+\] "GET \/images\/rhcos-[^"]+ HTTP\/1\.1" 206 11 /m);
    expect(s.stderr()).toContain('serve-images: stopped');
    // --json: stdout is that one document and nothing else.
    expect(JSON.parse(s.stdout())).toEqual(doc);
  });

  it('listens on IPv4 and IPv6 with one socket by default, lists directories with --directory-listing, and stops on SIGINT', async () => {
    const s = startServe(['--dir', root, '--port', '0', '--quiet', '--directory-listing']);
    await s.ready;
    expect(s.stdout()).toMatch(/over HTTP on IPv4 and IPv6 on every address, port \d+:/);
    const port = /port (\d+):/.exec(s.stdout())![1];
    expect(s.stdout()).toContain(`  http://127.0.0.1:${port}/`);
    expect(s.stdout()).toContain(`  http://[::1]:${port}/`);
    for (const host of ['127.0.0.1', '[::1]']) {
      const r = await get(`http://${host}:${port}/images/${ISO}`);
      expect(sha(r.body)).toBe(sha(iso));
    }
    const listing = await get(`http://127.0.0.1:${port}/images/?format=json`);
    expect(listing.status).toBe(200);
    expect(
      (JSON.parse(listing.body.toString()) as { entries: { name: string }[] }).entries.map((e) => e.name),
    ).toEqual(['big.img', ISO]);
    expect((await get(`http://[::1]:${port}/images/`)).body.toString()).toContain(`<a href="${ISO}">`);
    s.proc.kill('SIGINT');
    expect((await s.proc).exitCode).toBe(0);
    expect(s.stderr()).not.toContain('"GET'); // --quiet: no access log
  });

  it('lets a download in flight finish after SIGTERM, and accepts no new connection', async () => {
    const s = startServe(['--dir', root, '--port', '0', '--address', '127.0.0.1', '--json']);
    await s.ready;
    const { port } = JSON.parse(s.stdout()) as { port: number };
    const url = `http://127.0.0.1:${port}/images/big.img`;
    const download = get(url, ['--limit-rate', '16M']); // about 2 s
    await new Promise((r) => setTimeout(r, 700));
    s.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const late = await execa('curl', ['-sS', '-o', '/dev/null', url], { reject: false });
    expect(late.exitCode).toBe(7); // connection refused
    const got = await download;
    expect(got.status).toBe(200);
    expect(sha(got.body)).toBe(sha(big));
    const r = await s.proc;
    expect(r.exitCode, s.stderr()).toBe(0);
    expect(s.stderr()).toContain('serve-images: stopped (no download was cut)');
  });

  it('serves HTTPS with a certificate from airgap certs, verified by curl on both addresses', async () => {
    const pki = join(dir, 'pki');
    const ca = await airgap([
      'certs',
      'ca',
      '-o',
      pki,
      '--common-name',
      'Boot CA',
      '--key-type',
      'ecdsa-p256',
    ]);
    expect(ca.exitCode, ca.stderr).toBe(0);
    const web = join(pki, 'web');
    const issued = await airgap([
      'certs',
      'issue',
      '--ca',
      pki,
      '--san',
      'localhost,127.0.0.1,::1',
      '--key-type',
      'ecdsa-p256',
      '-o',
      web,
    ]);
    expect(issued.exitCode, issued.stderr).toBe(0);
    const s = startServe([
      '--dir',
      root,
      '--port',
      '0',
      '--address',
      '127.0.0.1',
      '--address',
      '::1',
      '--tls-cert',
      join(web, 'fullchain.crt'),
      '--tls-key',
      join(web, 'tls.key'),
      '--json',
    ]);
    await s.ready;
    const doc = JSON.parse(s.stdout()) as { urls: string[]; tls: boolean; warnings: string[] };
    expect(doc.tls).toBe(true);
    expect(doc.warnings).toEqual([]);
    expect(doc.urls.every((u) => u.startsWith('https://'))).toBe(true);
    for (const url of doc.urls) {
      const r = await get(`${url}images/${ISO}`, ['--cacert', join(pki, 'ca.crt')]);
      expect(r.status).toBe(200);
      expect(sha(r.body)).toBe(sha(iso));
    }
    s.proc.kill('SIGTERM');
    expect((await s.proc).exitCode).toBe(0);
  });

  describe('bad input: a clear error and exit 2, or 1 for a port in use', () => {
    let holder: Server;
    let busyPort: number;

    beforeAll(async () => {
      holder = createServer();
      await new Promise<void>((r) => holder.listen({ host: '127.0.0.1', port: 0 }, () => r()));
      busyPort = (holder.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise((r) => holder.close(r));
    });

    it('a directory that does not exist', async () => {
      const r = await airgap(['serve-images', '--dir', join(dir, 'nope')]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        `error [SERVE_DIR_MISSING]: the directory ${join(dir, 'nope')} does not exist`,
      );
      expect(r.stderr).toContain('hint:');
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    });

    it('a file instead of a directory', async () => {
      const r = await airgap(['serve-images', '--dir', join(root, 'images', ISO)]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(ServerError.SERVE_DIR_NOT_DIR);
    });

    it('a port in use', async () => {
      const r = await airgap([
        'serve-images',
        '--dir',
        root,
        '--address',
        '127.0.0.1',
        '--port',
        String(busyPort),
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(
        `error [SERVE_PORT_IN_USE]: port ${busyPort} is already in use on 127.0.0.1`,
      );
      // The default (every address, IPv4 and IPv6) collides with it too.
      const d = await airgap(['serve-images', '--dir', root, '--port', String(busyPort)]);
      expect(d.exitCode).toBe(1);
      expect(d.stderr).toContain(`port ${busyPort} is already in use`);
    });

    it('an address that is not on this host', async () => {
      const foreign = foreignAddress();
      const r = await airgap(['serve-images', '--dir', root, '--address', foreign, '--port', '0']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        `error [SERVE_ADDRESS_NOT_LOCAL]: ${foreign} is not an address of this host`,
      );
      const bad = await airgap(['serve-images', '--dir', root, '--address', 'not an address!']);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain(ServerError.SERVE_ADDRESS_INVALID);
    });

    it('TLS flags that do not fit together', async () => {
      const half = await airgap(['serve-images', '--dir', root, '--tls-cert', join(dir, 'pki', 'ca.crt')]);
      expect(half.exitCode).toBe(2);
      const pki = join(dir, 'pki2');
      expect(
        (await airgap(['certs', 'ca', '-o', pki, '--common-name', 'X', '--key-type', 'ecdsa-p256'])).exitCode,
      ).toBe(0);
      // The CA's key is not the key of another certificate.
      await mkdir(join(pki, 'web'), { recursive: true });
      const issued = await airgap([
        'certs',
        'issue',
        '--ca',
        pki,
        '--san',
        '127.0.0.1',
        '-o',
        join(pki, 'web'),
      ]);
      expect(issued.exitCode).toBe(0);
      const r = await airgap([
        'serve-images',
        '--dir',
        root,
        '--tls-cert',
        join(pki, 'web', 'tls.crt'),
        '--tls-key',
        join(pki, 'ca.key'),
      ]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('error [TLS_KEY_MISMATCH]');
      const port = await airgap(['serve-images', '--dir', root, '--port', '70000']);
      expect(port.exitCode).toBe(2);
    });

    it('a file it may not read: 403 and a log line, and it keeps serving', async () => {
      const served = join(dir, 'locked');
      await mkdir(join(served, 'images'), { recursive: true });
      await writeFile(join(served, 'images', 'ok.txt'), 'fine\n');
      await writeFile(join(served, 'images', 'locked.img'), 'secret\n');
      await chmod(join(served, 'images', 'locked.img'), 0);
      // root reads any file, so the server runs as nobody when the tests run as root.
      const asRoot = process.getuid?.() === 0;
      if (asRoot) {
        await traversable(join(served, 'images'));
        await chmod(served, 0o755);
        await chmod(join(served, 'images'), 0o755);
      }
      const s = startServe(
        ['--dir', served, '--port', '0', '--address', '127.0.0.1', '--json'],
        asRoot ? { uid: 65534, gid: 65534, env: { HOME: served } } : {},
      );
      await s.ready;
      const { urls } = JSON.parse(s.stdout()) as { urls: string[] };
      const locked = await get(`${urls[0]}images/locked.img`);
      expect(locked.status).toBe(403);
      expect(locked.body.toString()).not.toContain('secret');
      expect((await get(`${urls[0]}images/ok.txt`)).body.toString()).toBe('fine\n');
      s.proc.kill('SIGTERM');
      const r = await s.proc;
      expect(r.exitCode, s.stderr()).toBe(0);
      expect(s.stderr()).toMatch(
        /"GET \/images\/locked\.img HTTP\/1\.1" 403 \d+ .*"opening the file: permission denied \(EACCES\)"/,
      );
    });
  });
});
