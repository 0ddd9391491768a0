/**
 * Certificate minting: CAs, and server and signing certificates signed by them, with RSA or ECDSA
 * keys. Keys come from node's crypto (fast, native) and node's crypto signs; node-forge builds the
 * X.509 structures (names, extensions, DER). node-forge only knows RSA keys, so the
 * SubjectPublicKeyInfo comes from node's own encoding, which is what lets ECDSA work too.
 * node-forge is imported nowhere outside src/certs/.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

/** The key types airgap mints. */
export const KEY_TYPES = ['rsa-2048', 'rsa-4096', 'ecdsa-p256', 'ecdsa-p384'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** mkcert's cap for leaf certificates, which Apple and browsers also enforce: 825 days. */
export const MAX_LEAF_DAYS = 825;

export interface CreateCAOptions {
  commonName: string;
  organization?: string;
  /** Validity in days from now (default 3650). */
  days?: number;
  /** Default rsa-4096. */
  keyType?: KeyType;
  /** Start of validity (default: a minute ago, for clock skew). For tests of expired CAs. */
  notBefore?: Date;
}

export interface IssueServerCertOptions {
  ca: CertKeyPair;
  /** Default: the first DNS name, else the first IP address. */
  commonName?: string;
  organization?: string;
  dnsNames: string[];
  /** IPv4 or IPv6 literals, without brackets. */
  ipAddresses: string[];
  /** Validity in days from now (default and maximum 825). */
  days?: number;
  /** Default rsa-2048. */
  keyType?: KeyType;
}

export interface IssueSigningCertOptions {
  ca: CertKeyPair;
  commonName: string;
  /** Validity in days from now (default 825). */
  days?: number;
  keyType?: KeyType;
}

const asn1 = forge.asn1;
type Asn1 = forge.asn1.Asn1;
/** forge functions its type declarations leave out. */
const forgeMore = {
  fromDer: asn1.fromDer as unknown as (
    der: forge.util.ByteStringBuffer | string,
    options: { decodeBitStrings: boolean },
  ) => Asn1,
  extensionsToAsn1: (forge.pki as unknown as { certificateExtensionsToAsn1(exts: unknown[]): Asn1 })
    .certificateExtensionsToAsn1,
};

/** Signature algorithm and digest for a signing key. */
function signatureAlgorithm(key: KeyObject): { oid: string; hash: string; params: boolean } {
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === 'secp384r1' || curve === 'P-384'
      ? { oid: '1.2.840.10045.4.3.3', hash: 'sha384', params: false } // ecdsa-with-SHA384
      : { oid: '1.2.840.10045.4.3.2', hash: 'sha256', params: false }; // ecdsa-with-SHA256
  }
  if (key.asymmetricKeyType === 'rsa') return { oid: '1.2.840.113549.1.1.11', hash: 'sha256', params: true }; // sha256WithRSAEncryption
  throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
}

function algorithmIdentifier(alg: { oid: string; params: boolean }): Asn1 {
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(alg.oid).getBytes()),
    ...(alg.params ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')] : []),
  ]);
}

/** A new key pair of the given type; the private key as PKCS#8 PEM (what Go, openssl and nginx read). */
function generateKey(type: KeyType): { privateKey: KeyObject; publicKey: KeyObject; keyPem: string } {
  const { privateKey, publicKey } =
    type === 'rsa-2048' || type === 'rsa-4096'
      ? generateKeyPairSync('rsa', { modulusLength: type === 'rsa-2048' ? 2048 : 4096 })
      : generateKeyPairSync('ec', { namedCurve: type === 'ecdsa-p256' ? 'P-256' : 'P-384' });
  return { privateKey, publicKey, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** The SubjectPublicKeyInfo of a key as ASN.1, and its key identifier (SHA-1 of the key bits, RFC 5280 4.2.1.2). */
function publicKeyInfo(key: KeyObject): { spki: Asn1; keyId: string } {
  const der = key.export({ type: 'spki', format: 'der' });
  const spki = forgeMore.fromDer(forge.util.createBuffer(der.toString('binary')), {
    decodeBitStrings: false,
  });
  const bits = (spki.value as Asn1[])[1]!.value as string; // leading byte: unused bits (0)
  const keyId = createHash('sha1')
    .update(Buffer.from(bits.slice(1), 'binary'))
    .digest('binary');
  return { spki, keyId };
}

/** A random positive serial number (16 bytes, high bit cleared), as a forge binary string. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('binary');
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function timeAsn1(d: Date): Asn1 {
  return d.getUTCFullYear() < 2050
    ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(d))
    : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
}

function nameAsn1(commonName: string, organization?: string): Asn1 {
  const attributes = [
    ...(organization ? [{ name: 'organizationName', value: organization }] : []),
    { name: 'commonName', value: commonName },
  ];
  // forge fills type OIDs and value tags for named attributes.
  const cert = forge.pki.createCertificate();
  cert.setSubject(attributes);
  return forge.pki.distinguishedNameToAsn1(cert.subject);
}

/** Extensions in forge's descriptive form, encoded by forge (no key material needed: SKI/AKI are given). */
function extensionsAsn1(extensions: object[]): Asn1 {
  const cert = forge.pki.createCertificate();
  cert.setExtensions(extensions);
  return forgeMore.extensionsToAsn1((cert as unknown as { extensions: unknown[] }).extensions);
}

const octets = (bytes: string): Asn1 =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes);

interface Template {
  subject: Asn1;
  issuer: Asn1;
  notBefore: Date;
  notAfter: Date;
  publicKey: KeyObject;
  signingKey: KeyObject;
  /** Extensions except the key identifiers, which are added here. */
  extensions: object[];
  /** The issuer's key identifier (absent for a self-signed certificate: its own). */
  authorityKeyId?: string;
}

/** Build the TBSCertificate, sign it with node's crypto, and return the certificate PEM. */
function signCertificate(t: Template): string {
  const alg = signatureAlgorithm(t.signingKey);
  const { spki, keyId } = publicKeyInfo(t.publicKey);
  const tbs = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(2).getBytes()), // v3
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, randomSerial()),
    algorithmIdentifier(alg),
    t.issuer,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      timeAsn1(t.notBefore),
      timeAsn1(t.notAfter),
    ]),
    t.subject,
    spki,
    extensionsAsn1([
      ...t.extensions,
      { name: 'subjectKeyIdentifier', value: octets(keyId) },
      { name: 'authorityKeyIdentifier', keyIdentifier: t.authorityKeyId ?? keyId },
    ]),
  ]);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign(alg.hash, tbsDer, t.signingKey);
  const cert = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    algorithmIdentifier(alg),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\0${signature.toString('binary')}`),
  ]);
  const der = forge.util.encode64(asn1.toDer(cert).getBytes(), 64);
  return `-----BEGIN CERTIFICATE-----\n${der}\n-----END CERTIFICATE-----\n`;
}

/**
 * Validity from `notBefore` for exactly `days`. notBefore defaults to a minute ago, so that a client
 * whose clock is a little behind ours already accepts the certificate; the end is counted from that
 * start, not from now, so the certificate never lasts longer than asked (825 days is a limit TLS
 * clients enforce on the whole validity period).
 */
function validity(days: number, notBefore?: Date): { notBefore: Date; notAfter: Date } {
  const start = notBefore ?? new Date(Date.now() - 60_000);
  return { notBefore: start, notAfter: new Date(start.getTime() + days * 86_400_000) };
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

/** The CA's subject name and key identifier, read back from its certificate. */
function issuerOf(ca: CertKeyPair): { name: Asn1; keyId: string; key: KeyObject } {
  const caAsn1 = asn1.fromDer(forge.util.decode64(ca.certPem.replace(/-----[^-]+-----|\s/g, '')));
  const tbs = (caAsn1.value as Asn1[])[0]!.value as Asn1[];
  // TBSCertificate: [0] version, serial, signature, issuer, validity, subject(5), spki(6), …
  const name = tbs[5]!;
  const caPub = createPublicKey(ca.certPem);
  return { name, keyId: publicKeyInfo(caPub).keyId, key: createPrivateKey(ca.keyPem) };
}

/** Create a self-signed CA certificate (CA:true critical, pathlen 0; keyCertSign + cRLSign). */
export function createCA(options: CreateCAOptions): CertKeyPair {
  const keys = generateKey(options.keyType ?? 'rsa-4096');
  const name = nameAsn1(options.commonName, options.organization);
  const certPem = signCertificate({
    subject: name,
    issuer: name,
    ...validity(options.days ?? 3650, options.notBefore),
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { certPem, keyPem: keys.keyPem };
}

/** A certificate for a new key, signed by `ca`, with the given extensions. */
function issueLeaf(
  options: { ca: CertKeyPair; commonName: string; organization?: string; days?: number; keyType?: KeyType },
  extensions: (rsa: boolean) => object[],
): CertKeyPair {
  const issuer = issuerOf(options.ca);
  const keyType = options.keyType ?? 'rsa-2048';
  const keys = generateKey(keyType);
  const certPem = signCertificate({
    subject: nameAsn1(options.commonName, options.organization),
    issuer: issuer.name,
    ...validity(options.days ?? MAX_LEAF_DAYS),
    publicKey: keys.publicKey,
    signingKey: issuer.key,
    extensions: extensions(keyType.startsWith('rsa')),
    authorityKeyId: issuer.keyId,
  });
  return { certPem, keyPem: keys.keyPem };
}

/** Issue a TLS server certificate signed by `ca`, with DNS and IP (v4/v6) subject alternative names. */
export function issueServerCert(options: IssueServerCertOptions): CertKeyPair {
  // GeneralName types: 2 = dNSName, 7 = iPAddress (raw bytes).
  const altNames = [
    ...options.dnsNames.map((value) => ({ type: 2, value })),
    ...options.ipAddresses.map((ip) => ({ type: 7, value: ipToBytes(ip) })),
  ];
  const commonName = options.commonName ?? options.dnsNames[0] ?? options.ipAddresses[0] ?? 'server';
  return issueLeaf({ ...options, commonName }, (rsa) => [
    { name: 'basicConstraints', cA: false, critical: true },
    // keyEncipherment only for RSA keys (RSA key exchange); ECDSA keys only sign.
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: rsa, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
}

/**
 * Issue a signing certificate signed by `ca`: digitalSignature only, no extended key usage and no
 * subject alternative names, for a key that signs data (a registry token service's JWTs, whose
 * `x5c` header the registry verifies against the CA) rather than serving TLS.
 */
export function issueSigningCert(options: IssueSigningCertOptions): CertKeyPair {
  return issueLeaf(options, () => [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, critical: true },
  ]);
}
