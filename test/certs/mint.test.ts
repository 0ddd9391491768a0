/**
 * Certificate validity as minted: a server certificate lasts exactly the days asked, never more
 * than the 825 days TLS clients accept, counted from a notBefore backdated a minute for clock skew.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCaFiles, issueServerFiles } from '../../src/certs/issue.js';
import { createCA, issueServerCert, MAX_LEAF_DAYS } from '../../src/certs/mint.js';
import { tempDir } from '../helpers/fixtures.js';

const DAY = 86_400_000;

/** notAfter − notBefore of a PEM certificate, in ms. */
const span = (pem: string | Buffer) => {
  const c = new X509Certificate(pem);
  return Date.parse(c.validTo) - Date.parse(c.validFrom);
};

describe('certificate validity', () => {
  const ca = createCA({ commonName: 'Validity CA', keyType: 'ecdsa-p256' });
  const leaf = (days?: number) =>
    issueServerCert({
      ca,
      dnsNames: ['a.test'],
      ipAddresses: [],
      keyType: 'ecdsa-p256',
      ...(days !== undefined ? { days } : {}),
    }).certPem;

  it('lasts at most 825 days by default, and exactly that', () => {
    expect(MAX_LEAF_DAYS).toBe(825);
    expect(span(leaf())).toBeLessThanOrEqual(825 * DAY);
    expect(span(leaf())).toBe(825 * DAY);
    expect(span(leaf(MAX_LEAF_DAYS))).toBe(825 * DAY);
  });

  it('lasts exactly the days asked for a shorter one, starting a minute back for clock skew', () => {
    const before = Date.now();
    const pem = leaf(30);
    const after = Date.now();
    expect(span(pem)).toBe(30 * DAY);
    // X.509 times are whole seconds: notBefore is a minute back, rounded down.
    const from = Date.parse(new X509Certificate(pem).validFrom);
    expect(from).toBeLessThanOrEqual(after - 60_000);
    expect(from).toBeGreaterThan(before - 61_000);
  });

  it('a CA lasts exactly its days too', () => {
    expect(span(createCA({ commonName: 'Short CA', keyType: 'ecdsa-p256', days: 10 }).certPem)).toBe(
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
