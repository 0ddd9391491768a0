/**
 * `airgap certs registry` through the real CLI, proved with real parts: Debian's docker-registry
 * serves the generated config.yml (only its paths, port and storage changed to run outside a
 * container) with the generated htpasswd and TLS files; curl and skopeo log in with the password and
 * trust the registry with only our CA; `htpasswd -vb` checks the hash independently, and
 * `systemd-analyze verify` the unit.
 */
import { X509Certificate } from 'node:crypto';
import { access, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA, issueServerCert, type CertKeyPair } from '../../src/certs/mint.js';
import {
  checkHost,
  checkServerCertificate,
  htpasswdEntry,
  registryConfig,
} from '../../src/certs/registry.js';
import { buildImages } from '../../lab/images.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { freePort } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest } from '../helpers/skopeo.js';
import { CertsError } from '../../src/certs/errors.js';
import { CommonError } from '../../src/util/errors.js';
import { MirrorError } from '../../src/mirror/errors.js';

const NAME = 'registry.airgap.test';
/** A colon, a space and a quote: Basic auth splits at the first colon only. */
const PASSWORD = `c0rrect horse:batt'ry`;
const noStack = /\n\s+at .+:\d+:\d+/;
const mode = async (p: string) => (await stat(p)).mode & 0o777;
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** Every file under `dir`, relative, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** `curl` status code of GET /v2/ (with `--resolve` for the DNS name). */
async function curlStatus(url: string, caFile: string, user?: string, resolve?: string): Promise<string> {
  const r = await execa('curl', [
    '-sS',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '--cacert',
    caFile,
    ...(user ? ['-u', user] : []),
    ...(resolve ? ['--resolve', resolve] : []),
    url,
  ]);
  return r.stdout;
}

function probe(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${url}/v2/`, { ca, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

interface Served {
  port: number;
  child: ResultPromise;
  logs: () => string;
}

/**
 * Run Debian's docker-registry with the generated config.yml, changing only what a container would
 * have provided: the container paths become the real paths under `outDir`, storage a temp dir, and
 * the address 127.0.0.1 with a free port. Everything else is served exactly as generated.
 */
async function serveGenerated(outDir: string, caFile: string, workDir: string): Promise<Served> {
  const config = yaml.load(await readFile(join(outDir, 'conf/config.yml'), 'utf8')) as {
    storage: { filesystem: { rootdirectory: string } };
    http: { addr: string; tls: { certificate: string; key: string } };
    auth: { htpasswd: { path: string } };
  };
  const port = await freePort();
  config.storage.filesystem.rootdirectory = join(workDir, 'storage');
  config.http.addr = `127.0.0.1:${port}`;
  config.http.tls.certificate = join(outDir, 'certs/tls.crt');
  config.http.tls.key = join(outDir, 'certs/tls.key');
  config.auth.htpasswd.path = join(outDir, 'auth/htpasswd');
  const configFile = join(workDir, 'config.yml');
  await writeFile(configFile, yaml.dump(config), { mode: 0o600 });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('REGISTRY_') && !k.startsWith('OTEL_')) env[k] = v;
  let output = '';
  const child = execa('/usr/bin/docker-registry', ['serve', configFile], {
    env,
    extendEnv: false,
    stdin: 'ignore',
    buffer: false,
    reject: false,
    cleanup: true,
  });
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const ca = await readFile(caFile, 'utf8');
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if ((await probe(`https://127.0.0.1:${port}`, ca)) === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`docker-registry did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, child, logs: () => output };
}

async function writePki(dir: string, ca: CertKeyPair, server: CertKeyPair) {
  await mkdir(dir, { recursive: true });
  const files = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  await writeFile(files.ca, ca.certPem);
  await writeFile(files.cert, server.certPem);
  await writeFile(files.key, server.keyPem, { mode: 0o600 });
  return files;
}

describe('airgap certs registry', () => {
  let dir: string;
  let ca: CertKeyPair;
  let server: CertKeyPair;
  let pki: { ca: string; cert: string; key: string };
  let passwordFile: string;
  let served: Served | undefined;
  /** The arguments every good run shares; `out` varies. */
  const args = (out: string, ...extra: string[]) => [
    'certs',
    'registry',
    '--hostname',
    NAME,
    '--cert',
    pki.cert,
    '--key',
    pki.key,
    '--ca',
    pki.ca,
    '--username',
    'admin',
    '--password-file',
    passwordFile,
    '--out',
    out,
    ...extra,
  ];

  beforeAll(async () => {
    dir = await tempDir();
    ca = await createCA({ commonName: 'airgap registry test CA', days: 30 });
    server = await issueServerCert({
      ca,
      commonName: NAME,
      dnsNames: [NAME],
      ipAddresses: ['127.0.0.1'],
      days: 90,
    });
    pki = await writePki(join(dir, 'pki'), ca, server);
    passwordFile = join(dir, 'registry.pass');
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  });

  afterAll(async () => {
    if (served) {
      served.child.kill('SIGTERM');
      await served.child;
    }
  });

  it('writes files that a real registry serves: TLS with the full chain, the password, pushes and pulls', async () => {
    const out = join(dir, 'registry');
    const r = await airgap([...args(out), '--data-dir', '/srv/registry-data', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({
      registry: `${NAME}:5000`,
      hostname: NAME,
      port: 5000,
      username: 'admin',
      outDir: out,
      dataDir: '/srv/registry-data',
      image: 'docker.io/library/registry:2',
      trustFile: join(out, 'certs/ca.crt'),
      certificate: { selfSigned: false, chainLength: 2 },
      warnings: [],
    });
    expect(await listFiles(out)).toEqual([
      'auth/htpasswd',
      'certs/ca.crt',
      'certs/tls.crt',
      'certs/tls.key',
      'conf/config.yml',
      'install.txt',
      'registry.json',
      'registry.service',
    ]);
    expect(Object.values(result.files).sort()).toEqual((await listFiles(out)).map((f) => join(out, f)));
    // What `airgap registry install --dir` reads back: the registry described, no secret.
    const described = await readFile(join(out, 'registry.json'), 'utf8');
    expect(JSON.parse(described)).toEqual({
      apiVersion: 'airgap/v1',
      kind: 'MirrorRegistry',
      address: result.registry,
      hostname: result.hostname,
      port: result.port,
      username: result.username,
      dataDir: '/srv/registry-data',
      image: 'docker.io/library/registry:2',
    });
    // Secrets 0600, the rest readable.
    expect(await mode(join(out, 'auth/htpasswd'))).toBe(0o600);
    expect(await mode(join(out, 'certs/tls.key'))).toBe(0o600);
    expect(await mode(join(out, 'conf/config.yml'))).toBe(0o600);
    expect(await mode(join(out, 'certs/tls.crt'))).toBe(0o644);
    expect(await mode(join(out, 'registry.service'))).toBe(0o644);

    // tls.crt: the leaf, then the CA; the key copied byte for byte; ca.crt the CA.
    const chain = (await readFile(join(out, 'certs/tls.crt'), 'utf8')).match(
      /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g,
    )!;
    expect(chain.map((p) => new X509Certificate(p).fingerprint256)).toEqual([
      new X509Certificate(server.certPem).fingerprint256,
      new X509Certificate(ca.certPem).fingerprint256,
    ]);
    expect(await readFile(join(out, 'certs/tls.key'), 'utf8')).toBe(server.keyPem);
    expect(new X509Certificate(await readFile(join(out, 'certs/ca.crt'))).fingerprint256).toBe(
      new X509Certificate(ca.certPem).fingerprint256,
    );

    // config.yml: paths as the container sees them.
    const config = yaml.load(await readFile(join(out, 'conf/config.yml'), 'utf8')) as Record<string, never>;
    const secret = (config.http as { secret: string }).secret;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(config).toEqual(registryConfig({ port: 5000, secret, realm: 'Registry' }));
    expect(config).toMatchObject({
      version: 0.1,
      storage: { filesystem: { rootdirectory: '/var/lib/registry' }, delete: { enabled: true } },
      http: {
        addr: ':5000',
        headers: { 'X-Content-Type-Options': ['nosniff'] },
        tls: { certificate: '/certs/tls.crt', key: '/certs/tls.key' },
      },
      auth: { htpasswd: { path: '/auth/htpasswd' } },
      health: { storagedriver: { enabled: true } },
      validation: { manifests: { indexes: { platforms: 'none' } } },
    });

    // htpasswd: bcrypt as htpasswd -B writes it, cost ≥ 10, and apache's own tool agrees.
    const htpasswd = await readFile(join(out, 'auth/htpasswd'), 'utf8');
    const cost = Number(/^admin:\$2y\$(\d\d)\$[./A-Za-z0-9]{53}\n$/.exec(htpasswd)?.[1]);
    expect(cost).toBeGreaterThanOrEqual(10);
    const good = await execa('htpasswd', ['-vb', join(out, 'auth/htpasswd'), 'admin', PASSWORD], {
      reject: false,
    });
    expect(good.exitCode, good.stderr).toBe(0);
    const bad = await execa('htpasswd', ['-vb', join(out, 'auth/htpasswd'), 'admin', 'nope'], {
      reject: false,
    });
    expect(bad.exitCode).not.toBe(0);

    // The real registry, with the generated config.
    served = await serveGenerated(out, pki.ca, await tempDir('airgap-served-'));
    const url = `https://127.0.0.1:${served.port}/v2/`;
    expect(await curlStatus(url, pki.ca, `admin:${PASSWORD}`)).toBe('200');
    expect(await curlStatus(url, pki.ca, 'admin:wrong-password')).toBe('401');
    expect(await curlStatus(url, pki.ca)).toBe('401');
    // By the DNS name the certificate was made for.
    expect(
      await curlStatus(
        `https://${NAME}:${served.port}/v2/`,
        pki.ca,
        `admin:${PASSWORD}`,
        `${NAME}:${served.port}:127.0.0.1`,
      ),
    ).toBe('200');
    // The registry serves the chain: openssl, given only the CA, verifies it and sees two certificates.
    const sc = await execa(
      'openssl',
      [
        's_client',
        '-connect',
        `127.0.0.1:${served.port}`,
        '-servername',
        NAME,
        '-verify_hostname',
        NAME,
        '-CAfile',
        pki.ca,
        '-verify_return_error',
        '-showcerts',
      ],
      { input: '', reject: false },
    );
    expect(sc.exitCode, sc.stderr).toBe(0);
    expect(sc.stdout).toContain('Verify return code: 0 (ok)');
    expect(sc.stdout.match(/-----BEGIN CERTIFICATE-----/g)).toHaveLength(2);

    // skopeo pushes an image with the password and reads it back.
    const host = `127.0.0.1:${served.port}`;
    const work = await tempDir('airgap-skopeo-');
    const authFile = join(work, 'auth.json');
    await writeFile(
      authFile,
      JSON.stringify({ auths: { [host]: { auth: Buffer.from(`admin:${PASSWORD}`).toString('base64') } } }),
      { mode: 0o600 },
    );
    const certDir = join(work, 'certs.d');
    await mkdir(certDir);
    await writeFile(join(certDir, 'ca.crt'), ca.certPem);
    const layout = await OciLayout.open(join(work, 'layout'));
    const [image] = await buildImages(layout, [
      { repo: 'airgap/app', tag: 'v1', layers: [{ size: 50_000 }, { size: 3_000 }] },
    ]);
    await skopeoCopy(`oci:${layout.dir}:airgap/app:v1`, `docker://${host}/airgap/app:v1`, {
      authFile,
      certDir,
      extraArgs: ['--preserve-digests'],
    });
    expect(await skopeoDigest(`docker://${host}/airgap/app:v1`, { authFile, certDir })).toBe(image!.digest);
    await skopeoCopy(`docker://${host}/airgap/app:v1`, `oci:${join(work, 'back')}:app`, {
      authFile,
      certDir,
      extraArgs: ['--preserve-digests'],
    });
    expect(await skopeoDigest(`oci:${join(work, 'back')}:app`)).toBe(image!.digest);
    // Without the password, the push is refused.
    const anon = join(work, 'anon.json');
    await writeFile(anon, '{"auths":{}}');
    await expect(
      skopeoCopy(`oci:${layout.dir}:airgap/app:v1`, `docker://${host}/airgap/other:v1`, {
        authFile: anon,
        certDir,
      }),
    ).rejects.toThrow(/unauthorized|authentication required/i);
    expect(served.logs()).not.toContain(PASSWORD);
  });

  it('writes a systemd unit that runs the registry with podman, and install steps', async () => {
    const out = join(dir, 'unit');
    const r = await airgap([...args(out), '--port', '8443', '--data-dir', '/data/registry']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote the registry ${NAME}:8443 into ${out}`);
    expect(r.stdout).toContain('install.txt');
    const unit = await readFile(join(out, 'registry.service'), 'utf8');
    const execStart = /^ExecStart=(.*)$/m.exec(unit.replace(/\s*\\\n\s*/g, ' '))![1];
    expect(execStart).toBe(
      [
        '/usr/bin/podman run --rm --pull never --name registry --net host',
        `-v ${out}/auth:/auth:z`,
        `-v ${out}/certs:/certs:z`,
        `-v ${out}/conf/config.yml:/etc/docker/registry/config.yml:z`,
        `-v ${out}/conf/config.yml:/etc/distribution/config.yml:z`,
        '-v /data/registry:/var/lib/registry:z',
        'docker.io/library/registry:2',
      ].join(' '),
    );
    expect(unit).toMatch(/^Restart=always$/m);
    expect(unit).toMatch(/^After=network-online\.target$/m);
    expect(unit).toMatch(/^Wants=network-online\.target$/m);
    expect(unit).toMatch(/^WantedBy=multi-user\.target$/m);
    expect(unit).toContain('ExecStartPre=/usr/bin/mkdir -p /data/registry');
    const config = yaml.load(await readFile(join(out, 'conf/config.yml'), 'utf8')) as {
      http: { addr: string };
    };
    expect(config.http.addr).toBe(':8443');

    if (await exists('/usr/bin/systemd-analyze')) {
      const v = await execa('systemd-analyze', ['verify', join(out, 'registry.service')], { reject: false });
      // Only a missing podman may be reported (this test machine runs no podman); anything else is a
      // mistake in the unit.
      const podman = await exists('/usr/bin/podman');
      const problems = `${v.stdout}\n${v.stderr}`
        .split('\n')
        .filter((l) => l.trim() !== '')
        .filter((l) => podman || !/Command \/usr\/bin\/podman is not executable/.test(l));
      expect(problems, `${v.stdout}\n${v.stderr}`).toEqual([]);
    }

    const install = await readFile(join(out, 'install.txt'), 'utf8');
    const lines = install.split('\n').map((l) => l.trim());
    expect(lines).toContain(`cp ${out}/registry.service /etc/systemd/system/registry.service`);
    expect(lines).toContain('systemctl daemon-reload');
    expect(lines).toContain('systemctl enable --now registry');
    expect(lines).toContain(
      `cp ${out}/certs/ca.crt /etc/pki/ca-trust/source/anchors/${NAME}-registry-ca.crt`,
    );
    expect(lines).toContain('update-ca-trust extract');
    expect(lines).toContain(
      `mkdir -p /etc/containers/certs.d/${NAME}:8443 && cp ${out}/certs/ca.crt /etc/containers/certs.d/${NAME}:8443/ca.crt`,
    );
    expect(install).toContain(`https://${NAME}:8443/v2/`);
    expect(install).not.toContain(PASSWORD);
  });

  it('refuses to replace files without --force (exit 2, nothing changed); --force replaces them', async () => {
    const out = join(dir, 'again');
    expect((await airgap(args(out))).exitCode).toBe(0);
    const before = new Map<string, Buffer>();
    for (const f of await listFiles(out)) before.set(f, await readFile(join(out, f)));

    const r = await airgap(args(out));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error [OUTPUT_EXISTS]');
    expect(r.stderr).toContain('auth/htpasswd, certs/tls.crt, certs/tls.key, certs/ca.crt, conf/config.yml');
    expect(r.stderr).toContain('--force');
    expect(r.stderr).not.toMatch(noStack);
    for (const [f, bytes] of before) expect(await readFile(join(out, f)), f).toEqual(bytes);
    expect(await listFiles(out)).toEqual([...before.keys()]);

    const forced = await airgap([...args(out), '--force']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(await listFiles(out)).toEqual([...before.keys()]);
    // A new hash (new salt) and a new http.secret; the same certificate.
    expect(await readFile(join(out, 'auth/htpasswd'))).not.toEqual(before.get('auth/htpasswd'));
    expect(await readFile(join(out, 'conf/config.yml'))).not.toEqual(before.get('conf/config.yml'));
    expect(await readFile(join(out, 'certs/tls.crt'))).toEqual(before.get('certs/tls.crt'));
    expect(await mode(join(out, 'auth/htpasswd'))).toBe(0o600);

    // Again without --ca: the old ca.crt stays, and both warnings say why that matters.
    const noCa = args(out, '--force');
    noCa.splice(noCa.indexOf('--ca'), 2);
    const r3 = await airgap(noCa);
    expect(r3.exitCode, r3.stderr).toBe(0);
    expect(r3.stderr).toContain('warning: no --ca given: clients must already trust the CA that signed');
    expect(r3.stderr).toContain(`warning: ${join(out, 'certs/ca.crt')} is left from an earlier run`);
    expect((await readFile(join(out, 'certs/tls.crt'), 'utf8')).match(/BEGIN CERTIFICATE/g)).toHaveLength(1);
  });

  it('takes a self-signed certificate made with openssl as the runbook does (no --ca), and an IP as hostname', async () => {
    const work = join(dir, 'openssl');
    await mkdir(work);
    await execa('openssl', [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-sha256',
      '-keyout',
      join(work, 'domain.key'),
      '-x509',
      '-days',
      '365',
      '-out',
      join(work, 'domain.crt'),
      '-subj',
      `/CN=${NAME}`,
      '-addext',
      `subjectAltName=DNS:${NAME},IP:10.1.2.3`,
    ]);
    const out = join(work, 'out');
    const r = await airgap([
      'certs',
      'registry',
      '--hostname',
      '10.1.2.3',
      '--cert',
      join(work, 'domain.crt'),
      '--key',
      join(work, 'domain.key'),
      '--username',
      'admin',
      '--password-file',
      passwordFile,
      '--out',
      out,
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.registry).toBe('10.1.2.3:5000');
    expect(result.certificate).toMatchObject({ selfSigned: true, chainLength: 1 });
    expect(result.trustFile).toBe(join(out, 'certs/tls.crt'));
    expect(result.files.ca).toBeUndefined();
    expect(await exists(join(out, 'certs/ca.crt'))).toBe(false);
    expect(await readFile(join(out, 'install.txt'), 'utf8')).toContain(
      `cp ${out}/certs/tls.crt /etc/pki/ca-trust/source/anchors/10.1.2.3-registry-ca.crt`,
    );
  });

  describe('bad input: exit 2, a clear error naming the file, nothing written, no password shown', () => {
    let other: CertKeyPair;
    let otherCa: CertKeyPair;
    const files: Record<string, string> = {};

    beforeAll(async () => {
      otherCa = await createCA({ commonName: 'some other CA', days: 30 });
      other = await issueServerCert({
        ca: ca,
        commonName: NAME,
        dnsNames: [NAME],
        ipAddresses: [],
        days: 30,
      });
      const put = async (name: string, data: string, m = 0o600) => {
        files[name] = join(dir, 'bad', name);
        await mkdir(join(dir, 'bad'), { recursive: true });
        await writeFile(files[name]!, data, { mode: m });
      };
      await put('other.key', other.keyPem);
      await put('other-ca.crt', otherCa.certPem);
      await put('garbage.crt', 'this is not a certificate\n');
      await put('empty.pass', '\n');
      await put('two-lines.pass', `${PASSWORD}\nsecond line\n`);
      await put('long.pass', `${'x'.repeat(73)}\n`);
      // A certificate with the name only in its common name: Go clients ignore that.
      const work = join(dir, 'bad');
      await execa('openssl', [
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(work, 'cn-only.key'),
        '-x509',
        '-days',
        '30',
        '-out',
        join(work, 'cn-only.crt'),
        '-subj',
        `/CN=${NAME}`,
      ]);
      files['cn-only.crt'] = join(work, 'cn-only.crt');
      files['cn-only.key'] = join(work, 'cn-only.key');
      await execa('openssl', [
        'pkey',
        '-in',
        pki.key,
        '-aes256',
        '-passout',
        'pass:secret',
        '-out',
        join(work, 'encrypted.key'),
      ]);
      files['encrypted.key'] = join(work, 'encrypted.key');
    });

    /** Replace flag values in the good arguments. */
    const withFlags = (out: string, changes: Record<string, string>) => {
      const a = args(out);
      for (const [flag, value] of Object.entries(changes)) {
        const i = a.indexOf(flag);
        if (i >= 0) a[i + 1] = value;
        else a.push(flag, value);
      }
      return a;
    };

    const cases: [string, () => Record<string, string>, string, () => string][] = [
      [
        'hostname not in the certificate',
        () => ({ '--hostname': 'mirror.example.com' }),
        CertsError.CERT_HOST_MISMATCH,
        () => pki.cert,
      ],
      [
        'IP not in the certificate',
        () => ({ '--hostname': '10.9.9.9' }),
        CertsError.CERT_HOST_MISMATCH,
        () => pki.cert,
      ],
      [
        'name only in the common name',
        () => ({
          '--cert': files['cn-only.crt']!,
          '--key': files['cn-only.key']!,
          '--ca': files['cn-only.crt']!,
        }),
        CertsError.CERT_HOST_MISMATCH,
        () => files['cn-only.crt']!,
      ],
      [
        'key of another certificate',
        () => ({ '--key': files['other.key']! }),
        CertsError.CERT_KEY_MISMATCH,
        () => files['other.key']!,
      ],
      [
        'encrypted key',
        () => ({ '--key': files['encrypted.key']! }),
        CertsError.KEY_INVALID,
        () => files['encrypted.key']!,
      ],
      [
        'key file missing',
        () => ({ '--key': join(dir, 'nope.key') }),
        CommonError.FILE_UNREADABLE,
        () => join(dir, 'nope.key'),
      ],
      [
        'not a certificate',
        () => ({ '--cert': files['garbage.crt']! }),
        CertsError.CERT_INVALID,
        () => files['garbage.crt']!,
      ],
      [
        'another CA',
        () => ({ '--ca': files['other-ca.crt']! }),
        CertsError.CERT_CHAIN_INVALID,
        () => files['other-ca.crt']!,
      ],
      [
        'bad host name',
        () => ({ '--hostname': 'bad_name.example.com' }),
        CommonError.FLAG_INVALID,
        () => 'bad_name.example.com',
      ],
      [
        'host name with a leading hyphen',
        () => ({ '--hostname': '-x.example.com' }),
        CommonError.FLAG_INVALID,
        () => '-x.example.com',
      ],
      [
        'empty label',
        () => ({ '--hostname': 'a..example.com' }),
        CommonError.FLAG_INVALID,
        () => 'a..example.com',
      ],
      ['port 0', () => ({ '--port': '0' }), CommonError.FLAG_INVALID, () => '--port'],
      ['port 70000', () => ({ '--port': '70000' }), CommonError.FLAG_INVALID, () => '--port'],
      ['user with a colon', () => ({ '--username': 'ad:min' }), CommonError.FLAG_INVALID, () => '--username'],
      [
        'password file missing',
        () => ({ '--password-file': join(dir, 'nope.pass') }),
        CommonError.FILE_UNREADABLE,
        () => join(dir, 'nope.pass'),
      ],
      [
        'password file a directory',
        () => ({ '--password-file': dir }),
        CommonError.FILE_UNREADABLE,
        () => dir,
      ],
      [
        'empty password',
        () => ({ '--password-file': files['empty.pass']! }),
        CertsError.PASSWORD_INVALID,
        () => files['empty.pass']!,
      ],
      [
        'password of two lines',
        () => ({ '--password-file': files['two-lines.pass']! }),
        CertsError.PASSWORD_INVALID,
        () => files['two-lines.pass']!,
      ],
      [
        'password over 72 bytes',
        () => ({ '--password-file': files['long.pass']! }),
        CertsError.PASSWORD_INVALID,
        () => files['long.pass']!,
      ],
      [
        'data dir with a space',
        () => ({ '--data-dir': '/srv/my registry' }),
        CommonError.FLAG_INVALID,
        () => '/srv/my registry',
      ],
      ['bad image', () => ({ '--image': 'Registry:2 x' }), MirrorError.REF_INVALID, () => 'Registry:2 x'],
    ];

    it.each(cases)('%s', async (_name, changes, code, named) => {
      const out = join(dir, 'bad-out', _name.replace(/\W+/g, '-'));
      const r = await airgap(withFlags(out, changes()));
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`error [${code}]`);
      expect(r.stderr).toContain(named());
      expect(r.stderr).toContain('hint:');
      expect(r.stderr).not.toMatch(noStack);
      expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      expect(r.stdout + r.stderr).not.toContain('c0rrect');
      expect(await exists(out)).toBe(false);
    });

    it('--out that is a file', async () => {
      const r = await airgap(args(passwordFile));
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('error [FLAG_INVALID]');
      expect(r.stderr).toContain(`--out ${passwordFile} is a file`);
    });

    it('a missing required flag is a usage error', async () => {
      const r = await airgap(['certs', 'registry', '--hostname', NAME]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/Missing required flag/);
    });
  });

  describe('library checks', () => {
    it('checks host names as RFC 1123 does, and takes IP addresses', () => {
      for (const ok of [
        'registry.example.com',
        'localhost',
        'a-b.c-d.example',
        'x1.example.com',
        'A.EXAMPLE',
      ])
        expect(checkHost(ok, '--hostname')).toMatchObject({ host: ok, ip: false });
      expect(checkHost('10.0.0.5', '--hostname')).toEqual({
        host: '10.0.0.5',
        ip: true,
        display: '10.0.0.5',
      });
      expect(checkHost('fd00::5', '--hostname')).toEqual({ host: 'fd00::5', ip: true, display: '[fd00::5]' });
      expect(checkHost('[fd00::5]', '--hostname')).toEqual({
        host: 'fd00::5',
        ip: true,
        display: '[fd00::5]',
      });
      for (const bad of [
        '',
        'a_b.example.com',
        '-a.example.com',
        'a-.example.com',
        'a..b',
        '.a.b',
        'a.b.',
        'x'.repeat(64) + '.com',
        `${'a.'.repeat(127)}com`,
        '1.2.3.4.5',
        '[10.0.0.5]',
        'host:5000',
        'héllo.example.com',
      ])
        expect(() => checkHost(bad, '--hostname'), bad).toThrow(/not a valid host name/);
    });

    it('refuses an expired certificate, and warns about one that ends soon', async () => {
      const host = checkHost(NAME, '--hostname');
      const day = 86_400_000;
      const later = new Date(Date.now() + 91 * day);
      await expect(
        checkServerCertificate({ certFile: pki.cert, keyFile: pki.key, caFile: pki.ca, host, now: later }),
      ).rejects.toMatchObject({
        code: CertsError.CERT_INVALID,
        exitCode: 2,
        message: expect.stringMatching(/expired on/),
      });
      const now = await checkServerCertificate({
        certFile: pki.cert,
        keyFile: pki.key,
        caFile: pki.ca,
        host,
      });
      expect(now.warnings).toEqual([]);
      const soon = await checkServerCertificate({
        certFile: pki.cert,
        keyFile: pki.key,
        caFile: pki.ca,
        host,
        now: new Date(Date.now() + 70 * day),
      });
      expect(soon.warnings.join('\n')).toMatch(/expires in (19|20) day/);
    });

    it('writes htpasswd lines that htpasswd -vb accepts, for any cost asked', async () => {
      const line = htpasswdEntry('u', 'p@ss word', 12);
      expect(line).toMatch(/^u:\$2y\$12\$/);
      const f = join(dir, 'lib.htpasswd');
      await writeFile(f, line);
      expect((await execa('htpasswd', ['-vb', f, 'u', 'p@ss word'], { reject: false })).exitCode).toBe(0);
    });
  });
});
