/**
 * Minimal certificate minting: a CA, and server and signing certificates signed by it. Keys come
 * from node's crypto (fast, native); node-forge only builds and signs the X.509 structures.
 * node-forge is imported nowhere outside src/certs/.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

export interface CreateCAOptions {
  commonName: string;
  /** Validity in days from now (default 3650). */
  days?: number;
  /** RSA modulus length (default 2048). */
  keyBits?: number;
}

export interface IssueServerCertOptions {
  ca: CertKeyPair;
  commonName: string;
  dnsNames: string[];
  /** IPv4 or IPv6 literals, without brackets. */
  ipAddresses: string[];
  /** Validity in days from now (default 825). */
  days?: number;
  keyBits?: number;
}

export interface IssueSigningCertOptions {
  ca: CertKeyPair;
  commonName: string;
  /** Validity in days from now (default 825). */
  days?: number;
  keyBits?: number;
}

interface ForgeKeys {
  publicKey: forge.pki.rsa.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
  keyPem: string;
}

function generateKeys(bits = 2048): ForgeKeys {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
    keyPem: privateKey,
  };
}

/** A random positive serial number (16 bytes, high bit cleared), as hex. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** Not-before one minute in the past (clock skew), not-after `days` ahead. */
function setValidity(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + days * 86_400_000);
}

/**
 * The key identifier of a CA, as raw bytes (a forge binary string): its own subjectKeyIdentifier
 * extension when present, else the SHA-1 of its public key (RFC 5280 method 1, as forge computes it).
 */
function authorityKeyId(caCert: forge.pki.Certificate): string {
  const ski = caCert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | null;
  if (ski?.subjectKeyIdentifier) return forge.util.hexToBytes(ski.subjectKeyIdentifier);
  return caCert.generateSubjectKeyIdentifier().getBytes();
}

/**
 * An IP literal (v4, v6, optionally bracketed, IPv4-embedded v6) as network-order bytes in a forge
 * binary string. forge's own parser mishandles some IPv6 forms, so we do it here.
 */
export function ipToBytes(ip: string): string {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const kind = isIP(bare);
  if (kind === 4) return String.fromCharCode(...bare.split('.').map(Number));
  if (kind !== 6) throw new Error(`not an IP address: ${ip}`);
  // Rewrite an embedded IPv4 tail (::ffff:10.0.0.1) as two hex groups.
  const text = bare.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    [((+a << 8) | +b).toString(16), ((+c << 8) | +d).toString(16)].join(':'),
  );
  const parse = (s: string): number[] => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...new Array<number>(zeros).fill(0), ...right];
  return String.fromCharCode(...groups.flatMap((g) => [g >> 8, g & 0xff]));
}

/** Create a self-signed CA certificate (CA:true critical, keyCertSign + cRLSign). */
export function createCA(options: CreateCAOptions): CertKeyPair {
  const keys = generateKeys(options.keyBits);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  setValidity(cert, options.days ?? 3650);
  const subject = [{ name: 'commonName', value: options.commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A certificate for a new key, signed by `ca`, with the given extensions. */
function issueLeaf(
  options: { ca: CertKeyPair; commonName: string; days?: number; keyBits?: number },
  extensions: (caCert: forge.pki.Certificate) => object[],
): CertKeyPair {
  const caCert = forge.pki.certificateFromPem(options.ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(options.ca.keyPem) as forge.pki.rsa.PrivateKey;
  const keys = generateKeys(options.keyBits);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  setValidity(cert, options.days ?? 825);
  cert.setSubject([{ name: 'commonName', value: options.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions(extensions(caCert));
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** Issue a TLS server certificate signed by `ca`, with DNS and IP (v4/v6) subject alternative names. */
export function issueServerCert(options: IssueServerCertOptions): CertKeyPair {
  // GeneralName types: 2 = dNSName, 7 = iPAddress (raw bytes).
  const altNames = [
    ...options.dnsNames.map((value) => ({ type: 2, value })),
    ...options.ipAddresses.map((ip) => ({ type: 7, value: ipToBytes(ip) })),
  ];
  return issueLeaf(options, (caCert) => [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId(caCert) },
  ]);
}

/**
 * Issue a signing certificate signed by `ca`: digitalSignature only, no extended key usage and no
 * subject alternative names, for a key that signs data (a registry token service's JWTs, whose
 * `x5c` header the registry verifies against the CA) rather than serving TLS.
 */
export function issueSigningCert(options: IssueSigningCertOptions): CertKeyPair {
  return issueLeaf(options, (caCert) => [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId(caCert) },
  ]);
}
