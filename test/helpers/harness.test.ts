import { createHash, X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { execa } from 'execa';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { startRegistry, stopAllRegistries, type TestRegistry } from './registry.js';
import { skopeoCopy, skopeoDigest, skopeoInspect, skopeoListTags } from './skopeo.js';
import { ipToBytes } from '../../src/certs/mint.js';
import { testCertificates, testPki } from './tls.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

function sha256(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** A one-file ustar archive, built by hand. */
function tarOf(name: string, content: Buffer): Buffer {
  const header = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string) =>
    header.write(value, offset, length, 'ascii');
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0') + '\0';
  field(0, 100, name);
  field(100, 8, octal(0o644, 8));
  field(108, 8, octal(0, 8));
  field(116, 8, octal(0, 8));
  field(124, 12, octal(content.length, 12));
  field(136, 12, octal(0, 12));
  field(148, 8, '        ');
  field(156, 1, '0');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  let sum = 0;
  for (const b of header) sum += b;
  field(148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  const padded = Buffer.alloc(Math.ceil(content.length / 512) * 512);
  content.copy(padded);
  return Buffer.concat([header, padded, Buffer.alloc(1024)]);
}

interface TinyLayout {
  dir: string;
  manifestDigest: string;
  manifest: Buffer;
  layerDigest: string;
  layer: Buffer;
}

/** An OCI image layout with one image (tag "latest"): a config blob, one gzip layer, a manifest. */
async function buildTinyLayout(dir: string): Promise<TinyLayout> {
  const blobs = join(dir, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const putBlob = async (data: Buffer) => {
    const digest = sha256(data);
    await writeFile(join(blobs, digest.slice('sha256:'.length)), data);
    return { digest, size: data.length };
  };
  const tar = tarOf('hello.txt', Buffer.from('hello from airgap\n'));
  const layer = gzipSync(tar);
  const layerBlob = await putBlob(layer);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: {},
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
    }),
  );
  const configBlob = await putBlob(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...configBlob },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layerBlob }],
    }),
  );
  const manifestBlob = await putBlob(manifest);
  await writeFile(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: OCI_MANIFEST,
          ...manifestBlob,
          annotations: { 'org.opencontainers.image.ref.name': 'latest' },
        },
      ],
    }),
  );
  return { dir, manifestDigest: manifestBlob.digest, manifest, layerDigest: layerBlob.digest, layer };
}

async function curlStatus(url: string, args: string[]): Promise<{ status: number; headers: string }> {
  const { stdout } = await execa('curl', ['-sS', '-g', '-D', '-', '-o', '/dev/null', ...args, url]);
  const status = Number(/^HTTP\/[\d.]+ (\d+)/.exec(stdout)?.[1]);
  return { status, headers: stdout };
}

function basic(reg: TestRegistry): string {
  return `Basic ${Buffer.from(`${reg.username}:${reg.password}`).toString('base64')}`;
}

let work: string;
let v4: TestRegistry;
let v6: TestRegistry;
let tiny: TinyLayout;
let agent: Agent;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'airgap-harness-'));
  [v4, v6, tiny] = await Promise.all([
    startRegistry(),
    startRegistry({ host: '::1' }),
    buildTinyLayout(join(work, 'oci')),
  ]);
  agent = new Agent({ connect: { ca: testCertificates().ca.certPem } });
});

afterAll(async () => {
  await agent?.close();
  await stopAllRegistries();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('test PKI', () => {
  it('mints a CA and a server certificate for localhost, 127.0.0.1 and ::1', async () => {
    const pki = await testPki(join(work, 'pki'));
    const ca = new X509Certificate(pki.ca.certPem);
    const server = new X509Certificate(pki.server.certPem);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkIP('::1')).toBe('::1');
    expect((await stat(pki.keyFile)).mode & 0o777).toBe(0o600);
    const { stdout } = await execa('openssl', [
      'verify',
      '-purpose',
      'sslserver',
      '-CAfile',
      pki.caFile,
      pki.certFile,
    ]);
    expect(stdout).toContain(': OK');
  });

  it('encodes IP SANs in every textual form', () => {
    const hex = (ip: string) => ipToBytes(ip).toString('hex');
    expect(hex('10.1.2.3')).toBe('0a010203');
    expect(hex('[::1]')).toBe('00000000000000000000000000000001');
    expect(hex('2001:db8::1:0')).toBe('20010db8000000000000000000010000');
    expect(hex('::ffff:10.1.2.3')).toBe('00000000000000000000ffff0a010203');
    expect(hex('fe80::1%eth0')).toBe('fe800000000000000000000000000001');
    expect(() => ipToBytes('localhost')).toThrow(/not an IP/);
  });
});

describe('registry', () => {
  it.each([
    ['127.0.0.1', () => v4],
    ['::1', () => v6],
  ])('on %s answers 401 Basic without credentials and 200 with them', async (_name, reg) => {
    const r = reg();
    expect(r.url).toBe(`https://${r.host}`);
    const anonymous = await curlStatus(`${r.url}/v2/`, ['--cacert', r.caFile]);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers).toMatch(/www-authenticate: Basic realm="airgap-test"/i);
    const authed = await curlStatus(`${r.url}/v2/`, [
      '--cacert',
      r.caFile,
      '-u',
      `${r.username}:${r.password}`,
    ]);
    expect(authed.status).toBe(200);
    expect((await stat(r.authFile)).mode & 0o777).toBe(0o600);
  });

  it('takes an image from skopeo and gives it back unchanged (IPv4)', async () => {
    const ref = `docker://${v4.host}/test/tiny:1`;
    await skopeoCopy(`oci:${tiny.dir}:latest`, ref, v4.skopeo);
    expect(await skopeoDigest(ref, v4.skopeo)).toBe(tiny.manifestDigest);
    expect(await skopeoInspect(ref, { ...v4.skopeo, raw: true })).toBe(tiny.manifest.toString('utf8'));
    const info = await skopeoInspect(ref, v4.skopeo);
    expect(info.Digest).toBe(tiny.manifestDigest);
    expect(info.Layers).toEqual([tiny.layerDigest]);
    expect(await skopeoListTags(`docker://${v4.host}/test/tiny`, v4.skopeo)).toEqual(['1']);
  });

  it('serves IPv6: skopeo pushes through the 127.0.0.1 relay, curl reads on [::1]', async () => {
    expect(v6.host).toMatch(/^\[::1\]:\d+$/);
    expect(v6.skopeoHost).toMatch(/^127\.0\.0\.1:\d+$/);
    await skopeoCopy(`oci:${tiny.dir}:latest`, `docker://${v6.skopeoHost}/test/tiny:6`, v6.skopeo);
    const { stdout } = await execa('curl', [
      '-sS',
      '-g',
      '--fail',
      '--cacert',
      v6.caFile,
      '-u',
      `${v6.username}:${v6.password}`,
      '-H',
      `Accept: ${OCI_MANIFEST}`,
      `${v6.url}/v2/test/tiny/manifests/6`,
    ]);
    expect(sha256(stdout)).toBe(tiny.manifestDigest);
  });

  it('runs without TLS and auth, takes extra config, and reports why it cannot start', async () => {
    const plain = await startRegistry({
      tls: false,
      auth: false,
      extraConfig: { log: { accesslog: { disabled: true } } },
    });
    try {
      expect(plain.url).toBe(`http://${plain.host}`);
      expect((await curlStatus(`${plain.url}/v2/`, [])).status).toBe(200);
      await skopeoCopy(`oci:${tiny.dir}:latest`, `docker://${plain.host}/test/plain:1`, plain.skopeo);
      expect(await skopeoDigest(`docker://${plain.host}/test/plain:1`, plain.skopeo)).toBe(
        tiny.manifestDigest,
      );
      expect(plain.logs()).not.toContain('GET /v2/');
    } finally {
      await plain.stop();
    }
    await expect(stat(plain.storageDir)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(
      startRegistry({ extraConfig: { storage: { filesystem: null, nosuchdriver: {} } } }),
    ).rejects.toThrow(/did not start[\s\S]*nosuchdriver/);
  });

  it('is not trusted by skopeo without the CA', async () => {
    const ref = `docker://${v4.host}/test/tiny:1`;
    await expect(skopeoInspect(ref, { authFile: v4.authFile })).rejects.toThrow(/x509|certificate/);
  });
});

describe('fault proxy', () => {
  let proxy: FaultProxy;

  beforeAll(async () => {
    await skopeoCopy(`oci:${tiny.dir}:latest`, `docker://${v4.host}/test/faults:1`, v4.skopeo);
    proxy = await startFaultProxy({ target: v4.url, caFile: v4.caFile, tls: testCertificates().server });
  });

  afterAll(async () => {
    await proxy?.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    request(`${proxy.url}${path}`, {
      dispatcher: agent,
      headers: { authorization: basic(v4), accept: OCI_MANIFEST, ...headers },
    });

  it('injects a 503 once, then forwards', async () => {
    proxy.setRules([{ match: { path: /^\/v2\/$/ }, fault: 'status', status: 503 }]);
    const first = await get('/v2/');
    expect(first.statusCode).toBe(503);
    expect(((await first.body.json()) as { errors: Array<{ code: string }> }).errors[0]?.code).toBe(
      'UNAVAILABLE',
    );
    const second = await get('/v2/');
    expect(second.statusCode).toBe(200);
    await second.body.dump();
    expect(proxy.stats().byRule).toEqual([1]);
  });

  it('answers 429 with Retry-After', async () => {
    proxy.setRules([{ fault: 'retry-after', retryAfterSeconds: 7 }]);
    const res = await get('/v2/');
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    await res.body.dump();
  });

  it('corrupts one byte of a body and keeps its length', async () => {
    const path = '/v2/test/faults/manifests/1';
    proxy.setRules([{ match: { method: 'GET', path: /\/manifests\// }, fault: 'corrupt' }]);
    const bad = Buffer.from(await (await get(path)).body.arrayBuffer());
    const good = Buffer.from(await (await get(path)).body.arrayBuffer());
    expect(good.equals(tiny.manifest)).toBe(true);
    expect(bad.length).toBe(good.length);
    expect([...bad].filter((b, i) => b !== good[i])).toHaveLength(1);
  });

  it('truncates a blob after some bytes', async () => {
    proxy.setRules([{ match: { path: /\/blobs\/sha256:/ }, fault: 'truncate', afterBytes: 10 }]);
    const res = await get(`/v2/test/faults/blobs/${tiny.layerDigest}`);
    expect(res.headers['content-length']).toBe(String(tiny.layer.length));
    await expect(res.body.arrayBuffer()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('resets the connection, before the headers or mid-body', async () => {
    proxy.setRules([{ fault: 'reset' }]);
    await expect(get('/v2/')).rejects.toMatchObject({ code: 'ECONNRESET' });
    proxy.setRules([{ match: { path: /\/blobs\// }, fault: 'reset', afterBytes: 5 }]);
    const res = await get(`/v2/test/faults/blobs/${tiny.layerDigest}`);
    expect(res.statusCode).toBe(200);
    let received = 0;
    await expect(
      (async () => {
        for await (const chunk of res.body) received += (chunk as Buffer).length;
      })(),
    ).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(received).toBe(5);
    const after = await get('/v2/');
    expect(after.statusCode).toBe(200);
    await after.body.dump();
  });

  it('fires on every nth request, a limited number of times', async () => {
    proxy.setRules([{ fault: 'status', status: 500, every: 2, times: 2 }]);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await get('/v2/');
      codes.push(res.statusCode);
      await res.body.dump();
    }
    expect(codes).toEqual([200, 500, 200, 500, 200, 200]);
  });

  it('rewrites Location to the proxy and carries a whole skopeo push', async () => {
    proxy.setRules([{ match: { method: 'PUT' }, fault: 'slow', delayMs: 100, times: Infinity }]);
    const post = await request(`${proxy.url}/v2/test/viaproxy/blobs/uploads/`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: basic(v4) },
    });
    expect(post.statusCode).toBe(202);
    expect(String(post.headers.location)).toMatch(
      new RegExp(`^${proxy.url}/v2/test/viaproxy/blobs/uploads/`),
    );
    await post.body.dump();

    const authFile = join(work, 'proxy-auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { [proxy.host]: { auth: basic(v4).slice(6) } } }), {
      mode: 0o600,
    });
    const opts = { authFile, certDir: v4.skopeo.certDir };
    const before = proxy.stats().forwarded;
    await skopeoCopy(`oci:${tiny.dir}:latest`, `docker://${proxy.host}/test/viaproxy:1`, opts);
    expect(proxy.stats().forwarded).toBeGreaterThan(before + 3);
    expect(proxy.stats().byFault.slow).toBeGreaterThan(0);
    expect(await skopeoDigest(`docker://${v4.host}/test/viaproxy:1`, v4.skopeo)).toBe(tiny.manifestDigest);
  });
});
