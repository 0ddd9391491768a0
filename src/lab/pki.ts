/**
 * Test PKI: one CA and one server certificate (localhost, 127.0.0.1, ::1) per test process, minted
 * with src/certs/mint.ts and written as ca.crt, tls.crt and tls.key (0600) into any dir asked for.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createCA, issueServerCert, type CertKeyPair } from '../certs/mint.js';

/** The test PKI written into one directory. */
export interface TestPki {
  dir: string;
  /** PEM file of the test CA, to trust. */
  caFile: string;
  /** PEM file of the server certificate for localhost, 127.0.0.1 and ::1. */
  certFile: string;
  /** PEM file of the server key (mode 0600). */
  keyFile: string;
  ca: CertKeyPair;
  server: CertKeyPair;
}

let minted: { ca: CertKeyPair; server: CertKeyPair } | undefined;

/** The process-wide CA and server certificate, minted on first use (RSA 2048, about half a second). */
export function testCertificates(): { ca: CertKeyPair; server: CertKeyPair } {
  if (!minted) {
    const ca = createCA({ commonName: 'airgap test CA', days: 30 });
    const server = issueServerCert({
      ca,
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      days: 30,
    });
    minted = { ca, server };
  }
  return minted;
}

/**
 * Write the test PKI into `dir` (created if needed) and return the paths and PEMs. The certificates
 * are minted once per process; the files are (re)written on every call, which is cheap.
 */
export async function testPki(dir: string): Promise<TestPki> {
  const { ca, server } = testCertificates();
  dir = resolve(dir);
  await mkdir(dir, { recursive: true });
  const pki: TestPki = {
    dir,
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    ca,
    server,
  };
  await writeFile(pki.caFile, ca.certPem, { mode: 0o644 });
  await writeFile(pki.certFile, server.certPem, { mode: 0o644 });
  await writeFile(pki.keyFile, server.keyPem, { mode: 0o600 });
  await chmod(pki.keyFile, 0o600);
  return pki;
}
