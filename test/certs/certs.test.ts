/**
 * `airgap certs ca / issue / show / verify` through the real CLI, proved with real parts: Debian's
 * docker-registry serves the issued certificate on 127.0.0.1 and [::1]; curl, skopeo and openssl,
 * given only our CA, trust it by IPv4 address, IPv6 address and DNS name, and refuse it without.
 */
import { X509Certificate, createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA, issueServerCert } from '../../src/certs/mint.js';
import { airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';

const NAME = 'registry.airgap.test';
const noStack = /\n\s+at .+:\d+:\d+/;

const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe('airgap certs: a CA and a registry certificate that real clients trust', () => {
  let dir: string;
  let v4: TestRegistry;
  let v6: TestRegistry;
  let reg: string;
  let digest: string;
  let digest6: string;

  beforeAll(async () => {
    dir = await tempDir();
    const ca = await airgap([
      'certs',
      'ca',
      '--out',
      join(dir, 'pki'),
      '--common-name',
      'Lab CA',
      '--key-type',
      'ecdsa-p256',
    ]);
    expect(ca.exitCode, ca.stderr).toBe(0);
    reg = join(dir, 'pki', 'registry');
    const issued = await airgap([
      'certs',
      'issue',
      '--ca',
      join(dir, 'pki'),
      '--san',
      `${NAME},127.0.0.1`,
      '--san',
      '::1',
      '--out',
      reg,
      '--json',
    ]);
    expect(issued.exitCode, issued.stderr).toBe(0);
    const serverTls = {
      certFile: join(reg, 'fullchain.crt'),
      keyFile: join(reg, 'tls.key'),
      caFile: join(reg, 'ca.crt'),
    };
    [v4, v6] = await Promise.all([startRegistry({ serverTls }), startRegistry({ host: '::1', serverTls })]);
    // An image to read back, pushed by our own client trusting only our CA.
    const spec = [{ repo: 'team/app', tag: 'v1', layers: [{ id: 'app', size: 2000 }] }];
    digest = (await seedRegistry(v4, spec))[0]!.digest;
    digest6 = (await seedRegistry(v6, spec))[0]!.digest;
  }, 120_000);

  afterAll(async () => {
    await Promise.all([v4?.stop(), v6?.stop()]);
  });

  it('writes the CA and the server files with private keys 0600 and refuses to replace them', async () => {
    expect(await mode(join(dir, 'pki', 'ca.key'))).toBe(0o600);
    expect(await mode(join(reg, 'tls.key'))).toBe(0o600);
    const ca = new X509Certificate(await readFile(join(dir, 'pki', 'ca.crt')));
    expect(ca.ca).toBe(true);
    const leaf = new X509Certificate(await readFile(join(reg, 'tls.crt')));
    expect(leaf.ca).toBe(false);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth only
    expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    const days = (new Date(leaf.validTo).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeLessThanOrEqual(825 + 1);
    const before = await readFile(join(dir, 'pki', 'ca.key'));
    const again = await airgap(['certs', 'ca', '--out', join(dir, 'pki')]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/ca\.crt already exists[\s\S]*--force/);
    expect(await readFile(join(dir, 'pki', 'ca.key'))).toEqual(before); // untouched
  });

  it('openssl verifies the chain, and the full chain file presents leaf then CA', async () => {
    const ok = await execa('openssl', ['verify', '-CAfile', join(reg, 'ca.crt'), join(reg, 'tls.crt')], {
      reject: false,
    });
    expect(ok.stdout).toContain(': OK');
    const chain = await readFile(join(reg, 'fullchain.crt'), 'utf8');
    expect(chain.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(chain.startsWith(await readFile(join(reg, 'tls.crt'), 'utf8'))).toBe(true);
  });

  it('curl trusts the registry by IPv4 address, IPv6 address and DNS name with our CA, and not without it', async () => {
    const port4 = v4.host.split(':').pop()!;
    const port6 = v6.host.split(':').pop()!;
    const curl = (url: string, extra: string[] = []) =>
      execa('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5', ...extra, url], {
        reject: false,
      });
    const withCa = ['--cacert', join(reg, 'ca.crt')];
    for (const [url, extra] of [
      [`https://127.0.0.1:${port4}/v2/`, []],
      [`https://[::1]:${port6}/v2/`, []],
      [`https://${NAME}:${port4}/v2/`, ['--resolve', `${NAME}:${port4}:127.0.0.1`]],
    ] as [string, string[]][]) {
      const trusted = await curl(url, [...withCa, ...extra]);
      expect(trusted.stdout, url).toBe('401'); // TLS held; the registry asks for credentials
      const untrusted = await curl(url, extra);
      expect(untrusted.exitCode, url).toBe(60); // peer certificate cannot be authenticated
    }
    // A name the certificate does not cover fails even with the CA.
    const other = await curl(`https://other.airgap.test:${port4}/v2/`, [
      ...withCa,
      '--resolve',
      `other.airgap.test:${port4}:127.0.0.1`,
    ]);
    expect(other.exitCode).toBe(60);
  });

  /**
   * skopeo inspect --raw of team/app:v1 by a DNS name that this one process resolves to `address`
   * (a private mount namespace with its own /etc/hosts: the machine's file is never touched).
   */
  const skopeoByName = async (r: TestRegistry, address: string, certDir: string) => {
    const hosts = join(dir, `hosts-${address.replace(/:/g, '_')}`);
    await writeFile(hosts, `${address} ${NAME}\n`);
    const port = r.host.split(':').pop()!;
    const script = 'mount --bind "$0" /etc/hosts && exec "$@"';
    return execa(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        script,
        hosts,
        'skopeo',
        'inspect',
        '--raw',
        '--cert-dir',
        certDir,
        '--creds',
        `${r.username}:${r.password}`,
        `docker://${NAME}:${port}/team/app:v1`,
      ],
      { reject: false, encoding: 'buffer', stripFinalNewline: false },
    );
  };

  it('skopeo with --cert-dir holding our CA reads the image by name over IPv4 and over IPv6; without it, it refuses', async () => {
    const caDir = join(dir, 'skopeo-ca');
    await mkdir(caDir, { recursive: true });
    await writeFile(join(caDir, 'ca.crt'), await readFile(join(reg, 'ca.crt')));
    for (const [r, address, want] of [
      [v4, '127.0.0.1', digest],
      [v6, '::1', digest6],
    ] as [TestRegistry, string, string][]) {
      const ok = await skopeoByName(r, address, caDir);
      expect(ok.exitCode, Buffer.from(ok.stderr).toString()).toBe(0);
      expect(`sha256:${createHash('sha256').update(ok.stdout).digest('hex')}`).toBe(want);
      const refused = await skopeoByName(r, address, join(dir, 'empty-certs'));
      expect(refused.exitCode).not.toBe(0);
      expect(Buffer.from(refused.stderr).toString()).toMatch(/certificate signed by unknown authority|x509/);
    }
    // And by IPv4 address, as the registry's own certs.d names it.
    expect(await skopeoDigest(`docker://${v4.host}/team/app:v1`, v4.skopeo)).toBe(digest);
  });

  it('show says what it covers; verify says whether cert, key and CA belong together', async () => {
    const show = await airgap(['certs', 'show', join(reg, 'tls.crt'), '--json']);
    const [info] = JSON.parse(show.stdout);
    expect(info).toMatchObject({
      dnsNames: [NAME],
      ipAddresses: ['127.0.0.1', '::1'],
      isCA: false,
      keyType: 'rsa-2048',
    });
    const ok = await airgap([
      'certs',
      'verify',
      join(reg, 'fullchain.crt'),
      '--key',
      join(reg, 'tls.key'),
      '--ca',
      join(dir, 'pki', 'ca.crt'),
      '--host',
      NAME,
      '--host',
      '::1',
    ]);
    expect(ok.exitCode, ok.stdout).toBe(0);
    expect(ok.stdout).toContain('belong together');
    // Another key, another CA, an uncovered name: each named.
    const other = await createCA({ commonName: 'Other CA', keyType: 'ecdsa-p256' });
    const stray = await issueServerCert({
      ca: other,
      dnsNames: ['x.test'],
      ipAddresses: [],
      keyType: 'ecdsa-p256',
    });
    await writeFile(join(dir, 'other-ca.crt'), other.certPem);
    await writeFile(join(dir, 'stray.key'), stray.keyPem, { mode: 0o600 });
    const bad = await airgap([
      'certs',
      'verify',
      join(reg, 'tls.crt'),
      '--key',
      join(dir, 'stray.key'),
      '--ca',
      join(dir, 'other-ca.crt'),
      '--host',
      '10.9.8.7',
      '--json',
    ]);
    expect(bad.exitCode).toBe(1);
    const r = JSON.parse(bad.stdout);
    expect(r.problems.join('\n')).toMatch(/stray\.key is not the key/);
    expect(r.problems.join('\n')).toMatch(/not issued by the CA in .*other-ca\.crt/);
    expect(r.problems.join('\n')).toMatch(/does not cover 10\.9\.8\.7/);
  });

  it('warns 30 days before expiry, and refuses an expired CA or a server certificate as CA', async () => {
    const soon = await createCA({ commonName: 'Short CA', keyType: 'ecdsa-p256', days: 10 });
    await writeFile(join(dir, 'soon.crt'), soon.certPem);
    const warned = await airgap(['certs', 'verify', join(dir, 'soon.crt')]);
    expect(warned.exitCode).toBe(0);
    expect(warned.stdout).toMatch(/warning .*expires in 9 day/);

    const old = await createCA({
      commonName: 'Old CA',
      keyType: 'ecdsa-p256',
      days: 1,
      notBefore: new Date(Date.now() - 10 * 86_400_000),
    });
    await writeFile(join(dir, 'old.crt'), old.certPem);
    await writeFile(join(dir, 'old.key'), old.keyPem, { mode: 0o600 });
    const expired = await airgap([
      'certs',
      'issue',
      '--ca-cert',
      join(dir, 'old.crt'),
      '--ca-key',
      join(dir, 'old.key'),
      '--san',
      'a.test',
      '--out',
      join(dir, 'never'),
    ]);
    expect(expired.exitCode).toBe(2);
    expect(expired.stderr).toMatch(/CERT_EXPIRED.*old\.crt expired/);
    const notCa = await airgap([
      'certs',
      'issue',
      '--ca-cert',
      join(reg, 'tls.crt'),
      '--ca-key',
      join(reg, 'tls.key'),
      '--san',
      'a.test',
      '--out',
      join(dir, 'never'),
    ]);
    expect(notCa.exitCode).toBe(2);
    expect(notCa.stderr).toMatch(/CERT_NOT_CA.*tls\.crt is not a CA/);
    const mismatch = await airgap([
      'certs',
      'issue',
      '--ca-cert',
      join(dir, 'pki', 'ca.crt'),
      '--ca-key',
      join(reg, 'tls.key'),
      '--san',
      'a.test',
      '--out',
      join(dir, 'never'),
    ]);
    expect(mismatch.exitCode).toBe(2);
    expect(mismatch.stderr).toMatch(/KEY_MISMATCH.*tls\.key is not the key of the CA/);
    await expect(stat(join(dir, 'never'))).rejects.toThrow(); // nothing written
  });

  it('refuses bad names and files with what is wrong and where, and no stack trace', async () => {
    const issue = (...san: string[]) =>
      airgap([
        'certs',
        'issue',
        '--ca',
        join(dir, 'pki'),
        ...san.flatMap((s) => ['--san', s]),
        '--out',
        join(dir, 'never'),
      ]);
    const cases: [Promise<{ exitCode: number; stderr: string }>, RegExp][] = [
      [issue('[fd00::1]'), /without brackets[\s\S]*--san fd00::1/],
      [
        issue('fe80::1%eth0'),
        /--san fe80::1%eth0: a certificate cannot carry an IPv6 zone \(%eth0\)[\s\S]*without it: --san fe80::1$/,
      ],
      [issue('[fe80::1%eth0]'), /IPv6 zone \(%eth0\)[\s\S]*--san fe80::1$/],
      [issue('registry_01.example.com'), /registry_01\.example\.com is neither a valid host name nor an IP/],
      [issue('10.0.0.300'), /10\.0\.0\.300 is neither[\s\S]*four numbers/],
      [issue('-bad.example.com'), /-bad\.example\.com is neither/],
      [
        airgap(['certs', 'show', join(reg, 'tls.key')]),
        /tls\.key holds no PEM certificate \(it holds a PRIVATE KEY\)/,
      ],
      [
        airgap(['certs', 'show', join(dir, 'missing.crt')]),
        /cannot read the certificate file .*missing\.crt: it does not exist/,
      ],
      [airgap(['certs', 'issue', '--san', 'a.test', '--out', join(dir, 'never')]), /say which CA/],
    ];
    for (const [p, re] of cases) {
      const r = await p;
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).not.toMatch(noStack);
    }
    await expect(stat(join(dir, 'never'))).rejects.toThrow();
  });

  it('mints every key type, each verified by openssl', async () => {
    for (const keyType of ['rsa-2048', 'ecdsa-p256', 'ecdsa-p384'] as const) {
      const ca = await createCA({ commonName: `CA ${keyType}`, keyType });
      const leaf = await issueServerCert({ ca, dnsNames: ['a.test'], ipAddresses: ['fd00::1'], keyType });
      await writeFile(join(dir, `${keyType}-ca.crt`), ca.certPem);
      await writeFile(join(dir, `${keyType}.crt`), leaf.certPem);
      const r = await execa(
        'openssl',
        ['verify', '-CAfile', join(dir, `${keyType}-ca.crt`), join(dir, `${keyType}.crt`)],
        { reject: false },
      );
      expect(r.stdout, `${keyType}: ${r.stderr}`).toContain(': OK');
      const text = (await execa('openssl', ['x509', '-in', join(dir, `${keyType}.crt`), '-noout', '-text']))
        .stdout;
      expect(text).toContain('IP Address:FD00:0:0:0:0:0:0:1');
      expect(text).toMatch(keyType.startsWith('rsa') ? /sha256WithRSAEncryption/ : /ecdsa-with-SHA(256|384)/);
    }
  });
});
