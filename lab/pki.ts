/**
 * Test PKI: one CA and one server certificate (localhost, 127.0.0.1, ::1) per test process, minted
 * with src/certs/mint.ts and written as ca.crt, tls.crt and tls.key (0600) into any dir asked for.
 * A server that listens on another address gets a certificate from the same CA that also names it.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createCA, issueServerCert, type CertKeyPair } from '../src/certs/mint.js';

/** The test PKI written into one directory. */
export interface TestPki {
  dir: string;
  /** PEM file of the test CA, to trust. */
  caFile: string;
  /** PEM file of the server certificate for localhost, 127.0.0.1 and ::1 (and any extra IPs asked for). */
  certFile: string;
  /** PEM file of the server key (mode 0600). */
  keyFile: string;
  ca: CertKeyPair;
  server: CertKeyPair;
}

const DEFAULT_IPS = ['127.0.0.1', '::1'];
/** Server certificates with extra IP SANs, by their sorted extra IPs (each minted once). */
const extraServers = new Map<string, Promise<CertKeyPair>>();

/** Where the test run's global setup left the CA and server certificate it minted (a JSON file). */
export const TEST_PKI_ENV = 'AIRGAP_TEST_PKI';

/** Mint a CA and a server certificate for localhost, 127.0.0.1 and ::1 (RSA 2048). */
async function mintTestCertificates(): Promise<{ ca: CertKeyPair; server: CertKeyPair }> {
  const ca = await createCA({ commonName: 'airgap test CA', days: 3650, keyType: 'rsa-2048' });
  const server = await issueServerCert({
    ca,
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: DEFAULT_IPS,
    days: 825,
  });
  return { ca, server };
}

/**
 * The process-wide CA and server certificate, ready when this module loads (the many callers of
 * {@link testCertificates} read them synchronously). In a test run, the ones the global setup
 * minted once for every test file (RSA key generation costs each process about 0.3 s of CPU);
 * elsewhere (benchmarks, the demo), minted here.
 */
const minted: { ca: CertKeyPair; server: CertKeyPair } = process.env[TEST_PKI_ENV]
  ? (JSON.parse(await readFile(process.env[TEST_PKI_ENV], 'utf8')) as {
      ca: CertKeyPair;
      server: CertKeyPair;
    })
  : await mintTestCertificates();

/** The process-wide CA and server certificate (for localhost, 127.0.0.1 and ::1). */
export function testCertificates(): { ca: CertKeyPair; server: CertKeyPair } {
  return minted;
}

/**
 * A server certificate from the test CA for localhost, 127.0.0.1, ::1 and `extraIps` (IPv4 or IPv6
 * literals), minted once per distinct set; with no extra IPs, the process-wide one.
 */
export async function testServerCertificate(extraIps: readonly string[] = []): Promise<CertKeyPair> {
  const { ca, server } = minted;
  const extra = [...new Set(extraIps)].filter((ip) => !DEFAULT_IPS.includes(ip)).sort();
  if (extra.length === 0) return server;
  const key = extra.join(',');
  let cert = extraServers.get(key);
  if (!cert) {
    cert = issueServerCert({
      ca,
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: [...DEFAULT_IPS, ...extra],
      days: 825,
    });
    extraServers.set(key, cert);
  }
  return cert;
}

/**
 * Write the test PKI into `dir` (created if needed) and return the paths and PEMs. The certificates
 * are minted once per process; the files are (re)written on every call, which is cheap. With
 * `ipAddresses`, the server certificate also names those addresses.
 */
export async function testPki(dir: string, opts: { ipAddresses?: readonly string[] } = {}): Promise<TestPki> {
  const { ca } = testCertificates();
  const server = await testServerCertificate(opts.ipAddresses);
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
