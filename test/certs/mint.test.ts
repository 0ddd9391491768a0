/**
 * Certificates as minted: a server certificate lasts exactly the days asked, never more than the
 * 825 days TLS clients accept, counted from a notBefore backdated a minute for clock skew; names
 * read back as given and a Go client (skopeo) parses them; a CA made elsewhere (openssl) signs
 * certificates that openssl verifies.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCaFiles, issueServerFiles } from '../../src/certs/issue.js';
import { createCA, issueServerCert, MAX_LEAF_DAYS, type CertKeyPair } from '../../src/certs/mint.js';
import { tempDir } from '../helpers/fixtures.js';

const DAY = 86_400_000;

/** notAfter − notBefore of a PEM certificate, in ms. */
const span = (pem: string | Buffer) => {
  const c = new X509Certificate(pem);
  return Date.parse(c.validTo) - Date.parse(c.validFrom);
};

describe('certificate validity', () => {
  let ca: CertKeyPair;
  beforeAll(async () => {
    ca = await createCA({ commonName: 'Validity CA', keyType: 'ecdsa-p256' });
  });
  const leaf = async (days?: number) =>
    (
      await issueServerCert({
        ca,
        dnsNames: ['a.test'],
        ipAddresses: [],
        keyType: 'ecdsa-p256',
        ...(days !== undefined ? { days } : {}),
      })
    ).certPem;

  it('lasts at most 825 days by default, and exactly that', async () => {
    expect(MAX_LEAF_DAYS).toBe(825);
    expect(span(await leaf())).toBe(825 * DAY);
    expect(span(await leaf(MAX_LEAF_DAYS))).toBe(825 * DAY);
  });

  it('lasts exactly the days asked for a shorter one, starting a minute back for clock skew', async () => {
    const before = Date.now();
    const pem = await leaf(30);
    const after = Date.now();
    expect(span(pem)).toBe(30 * DAY);
    // X.509 times are whole seconds: notBefore is a minute back, rounded down.
    const from = Date.parse(new X509Certificate(pem).validFrom);
    expect(from).toBeLessThanOrEqual(after - 60_000);
    expect(from).toBeGreaterThan(before - 61_000);
  });

  it('a CA lasts exactly its days too', async () => {
    expect(span((await createCA({ commonName: 'Short CA', keyType: 'ecdsa-p256', days: 10 })).certPem)).toBe(
      10 * DAY,
    );
  });

  it('airgap certs issue caps --days above 825 at 825, and the certificate lasts no longer', async () => {
    const dir = await tempDir();
    const pki = join(dir, 'pki');
    await createCaFiles({ out: pki, commonName: 'Files CA', keyType: 'ecdsa-p256' });
    const r = await issueServerFiles({
      caCert: join(pki, 'ca.crt'),
      caKey: join(pki, 'ca.key'),
      names: ['a.test'],
      days: 900,
      keyType: 'ecdsa-p256',
      out: join(dir, 'leaf'),
    });
    expect(r.warnings.join('\n')).toMatch(/--days 900 is above the 825-day limit/);
    expect(span(await readFile(r.files.certificate))).toBe(825 * DAY);
  });
});

describe('names and key identifiers', () => {
  const openssl = async (...args: string[]) => (await execa('openssl', args)).stdout;

  it('names outside the PrintableString alphabet read back as given, Go parses them, and every SAN form is the address', async () => {
    const dir = await tempDir();
    const pki = join(dir, 'pki');
    const org = 'Café Lab_ops "east" \\ 2';
    await createCaFiles({ out: pki, commonName: 'Zürich CA', organization: org, keyType: 'ecdsa-p256' });
    const r = await issueServerFiles({
      caCert: join(pki, 'ca.crt'),
      caKey: join(pki, 'ca.key'),
      names: ['*.apps.example.com', '127.0.0.1', '::ffff:10.1.2.3', '2001:db8::1:0'],
      keyType: 'ecdsa-p256',
      out: join(dir, 'leaf'),
    });
    const ca = new X509Certificate(await readFile(join(pki, 'ca.crt')));
    const leaf = new X509Certificate(await readFile(r.files.certificate));
    // Node prints names as RFC 2253 does: quotes and backslashes escaped.
    expect(ca.subject).toBe(`O=${org.replace(/["\\]/g, '\\$&')}\nCN=Zürich CA`);
    expect(leaf.issuer).toBe(ca.subject);
    expect(leaf.subject).toBe('CN=*.apps.example.com');
    expect(leaf.subjectAltName).toBe(
      'DNS:*.apps.example.com, IP Address:127.0.0.1, IP Address:0:0:0:0:0:FFFF:A01:203, IP Address:2001:DB8:0:0:0:0:1:0',
    );
    expect(await openssl('verify', '-CAfile', join(pki, 'ca.crt'), r.files.certificate)).toMatch(/: OK$/);
    // Go (skopeo here; OpenShift, registries) refuses a PrintableString holding a character outside
    // its alphabet ('_', quotes, non-ASCII): the TLS handshake fails before any HTTP.
    const certDir = join(dir, 'trust');
    await mkdir(certDir);
    await writeFile(join(certDir, 'ca.crt'), await readFile(join(pki, 'ca.crt')));
    const server = createServer(
      { cert: await readFile(r.files.fullchain!), key: await readFile(r.files.key) },
      (_req, res) => res.writeHead(404).end(),
    );
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { port } = server.address() as AddressInfo;
      const skopeo = await execa(
        'skopeo',
        ['inspect', '--raw', '--cert-dir', certDir, `docker://127.0.0.1:${port}/x:latest`],
        { reject: false, timeout: 60_000 },
      );
      expect(skopeo.stderr).toContain('invalid status code from registry 404');
    } finally {
      server.close();
    }
  });

  it('a CA made by openssl with its own key identifier signs certificates that openssl verifies', async () => {
    const dir = await tempDir();
    const [caCert, caKey] = [join(dir, 'ca.crt'), join(dir, 'ca.key')];
    // RFC 5280 lets a CA choose its key identifier; the issued certificate must name that one.
    await openssl(
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384', '-nodes'],
      ...['-keyout', caKey, '-out', caCert, '-subj', '/O=Elsewhere/CN=Site CA', '-days', '30'],
      ...[
        '-addext',
        'subjectKeyIdentifier=0102030405060708',
        '-addext',
        'authorityKeyIdentifier=keyid:always',
      ],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    );
    const r = await issueServerFiles({ caCert, caKey, names: ['a.test'], out: join(dir, 'leaf') });
    const text = await openssl(
      'x509',
      '-in',
      r.files.certificate,
      '-noout',
      '-ext',
      'authorityKeyIdentifier',
    );
    expect(text).toContain('01:02:03:04:05:06:07:08');
    expect(await openssl('verify', '-CAfile', caCert, r.files.certificate)).toMatch(/: OK$/);
    expect(await openssl('x509', '-in', r.files.certificate, '-noout', '-text')).toContain(
      'ecdsa-with-SHA384',
    );
  });
});
