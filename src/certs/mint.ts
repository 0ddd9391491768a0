/**
 * Certificate minting: CAs, and server and signing certificates signed by them, with RSA or ECDSA
 * keys. @peculiar/x509 builds and signs the certificates over Node's WebCrypto (node:crypto's
 * `webcrypto`, which is `globalThis.crypto`); keys are generated there too, off the main thread, and
 * written as PKCS#8 PEM. @peculiar/x509 and the Reflect polyfill
 * its dependency container needs are imported nowhere outside src/certs/, and only on the first
 * mint: they take a few hundred milliseconds to load, which no command that does not mint pays.
 */
import { createPrivateKey, KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

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

/**
 * @peculiar/x509, after reflect-metadata (its container, tsyringe, refuses to load without). Its
 * module is CommonJS: its exports are the import's `default`, the one form both Node and the
 * release bundle (where esbuild gives a CommonJS chunk no named exports) agree on.
 */
const load = () => import('reflect-metadata').then(() => import('@peculiar/x509')).then((m) => m.default);
type Lib = Awaited<ReturnType<typeof load>>;
let loading: Promise<Lib> | undefined;
/** @peculiar/x509, loaded on the first call. */
function x509(): Promise<Lib> {
  loading ??= load();
  return loading;
}

type CryptoKey = webcrypto.CryptoKey;
const { subtle } = webcrypto;

/** The WebCrypto algorithm that signs with a key of this type: RSA PKCS#1 v1.5 or ECDSA, with its hash. */
type SigningAlgorithm =
  webcrypto.RsaHashedImportParams | (webcrypto.EcKeyImportParams & webcrypto.EcdsaParams);

const RSA: webcrypto.RsaHashedImportParams = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
/** ECDSA on each curve with the hash of its size (ecdsa-with-SHA256/384/512), by OpenSSL's curve name. */
const ECDSA: Record<string, SigningAlgorithm> = {
  prime256v1: { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
  secp384r1: { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
  secp521r1: { name: 'ECDSA', namedCurve: 'P-521', hash: 'SHA-512' },
};

/** How a CA's private key signs, from the key itself (an RSA or ECDSA key on a NIST curve). */
function signingAlgorithm(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return RSA;
  const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
  const ecdsa = key.asymmetricKeyType === 'ec' ? ECDSA[curve] : undefined;
  if (ecdsa) return ecdsa;
  throw new Error(
    `cannot sign with a ${key.asymmetricKeyType}${curve ? ` ${curve}` : ''} CA key: airgap signs with RSA or ECDSA (P-256, P-384, P-521) keys`,
  );
}

/** A new key pair of the given type; the private key also as PKCS#8 PEM (what Go, openssl and nginx read). */
async function generateKey(type: KeyType): Promise<{ keys: webcrypto.CryptoKeyPair; keyPem: string }> {
  const algorithm: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams =
    type === 'rsa-2048' || type === 'rsa-4096'
      ? {
          ...RSA,
          modulusLength: type === 'rsa-2048' ? 2048 : 4096,
          publicExponent: new Uint8Array([1, 0, 1]),
        }
      : { name: 'ECDSA', namedCurve: type === 'ecdsa-p256' ? 'P-256' : 'P-384' };
  const keys = await subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const keyPem = KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString();
  return { keys, keyPem };
}

/** A random positive serial number: 16 bytes, high bit cleared and a non-zero first byte, in hex. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/**
 * A name of an organization (when given) and a common name, each a PrintableString when it fits
 * that alphabet and a UTF8String otherwise. Given as typed values, so that @peculiar/x509 takes them
 * as they are (it reads quotes and backslashes in plain strings as RFC 4514 escapes).
 */
function distinguishedName(lib: Lib, commonName: string, organization?: string): X509.Name {
  const value = (v: string) => [lib.Name.isPrintableString(v) ? { printableString: v } : { utf8String: v }];
  return new lib.Name([...(organization ? [{ O: value(organization) }] : []), { CN: value(commonName) }]);
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

/** An IP literal (v4, v6, optionally bracketed or zoned, IPv4-embedded v6) as its network-order bytes. */
export function ipToBytes(ip: string): Buffer {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const kind = isIP(bare);
  if (kind === 4) return Buffer.from(bare.split('.').map(Number));
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
  return Buffer.from(groups.flatMap((g) => [g >> 8, g & 0xff]));
}

/**
 * An IP literal in the one form @peculiar/x509 parses right: dotted IPv4, or all eight IPv6 groups
 * (its parser takes neither an embedded IPv4 tail nor brackets).
 */
function canonicalIp(ip: string): string {
  const bytes = ipToBytes(ip);
  if (bytes.length === 4) return [...bytes].join('.');
  return Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(':');
}

interface Issuer {
  /** The issuer's subject, as its certificate encodes it (clients compare it byte for byte). */
  name: X509.Name;
  /** The issuer's key identifier: its certificate's subjectKeyIdentifier (absent when self-signed: its own). */
  keyId?: string;
  key: CryptoKey;
  algorithm: SigningAlgorithm;
}

/**
 * The CA as a signer: its subject name and key identifier read from its certificate (the key
 * identifier computed from its public key when the certificate has none), its key imported.
 */
async function issuerOf(lib: Lib, ca: CertKeyPair): Promise<Issuer> {
  const cert = new lib.X509Certificate(ca.certPem);
  const ski = cert.getExtension(lib.SubjectKeyIdentifierExtension);
  const keyId = ski
    ? ski.keyId
    : Buffer.from(await cert.publicKey.getKeyIdentifier(webcrypto)).toString('hex');
  const privateKey = createPrivateKey(ca.keyPem);
  const algorithm = signingAlgorithm(privateKey);
  const der = privateKey.export({ type: 'pkcs8', format: 'der' });
  const key = await subtle.importKey('pkcs8', der, algorithm, false, ['sign']);
  return { name: cert.subjectName, keyId, key, algorithm };
}

/** Sign a certificate for `publicKey` with the issuer's key, adding the key identifiers; the certificate as PEM. */
async function signCertificate(
  lib: Lib,
  t: {
    subject: X509.Name;
    issuer: Issuer;
    validity: { notBefore: Date; notAfter: Date };
    publicKey: CryptoKey;
    extensions: X509.Extension[];
  },
): Promise<string> {
  const ski = await lib.SubjectKeyIdentifierExtension.create(t.publicKey, false, webcrypto);
  const cert = await lib.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject: t.subject,
      issuer: t.issuer.name,
      ...t.validity,
      publicKey: t.publicKey,
      signingKey: t.issuer.key,
      signingAlgorithm: t.issuer.algorithm,
      extensions: [
        ...t.extensions,
        ski,
        new lib.AuthorityKeyIdentifierExtension(t.issuer.keyId ?? ski.keyId),
      ],
    },
    webcrypto,
  );
  return `${cert.toString('pem')}\n`;
}

/** Create a self-signed CA certificate (CA:true critical, pathlen 0; keyCertSign + cRLSign). */
export async function createCA(options: CreateCAOptions): Promise<CertKeyPair> {
  const lib = await x509();
  const keyType = options.keyType ?? 'rsa-4096';
  const { keys, keyPem } = await generateKey(keyType);
  const name = distinguishedName(lib, options.commonName, options.organization);
  const { KeyUsageFlags: use } = lib;
  const certPem = await signCertificate(lib, {
    subject: name,
    issuer: { name, key: keys.privateKey, algorithm: signingAlgorithm(KeyObject.from(keys.privateKey)) },
    validity: validity(options.days ?? 3650, options.notBefore),
    publicKey: keys.publicKey,
    extensions: [
      new lib.BasicConstraintsExtension(true, 0, true),
      new lib.KeyUsagesExtension(use.keyCertSign | use.cRLSign | use.digitalSignature, true),
    ],
  });
  return { certPem, keyPem };
}

/** A certificate for a new key, signed by `ca`, with the given extensions. */
async function issueLeaf(
  options: { ca: CertKeyPair; commonName: string; organization?: string; days?: number; keyType?: KeyType },
  extensions: (lib: Lib, rsa: boolean) => X509.Extension[],
): Promise<CertKeyPair> {
  const lib = await x509();
  const issuer = await issuerOf(lib, options.ca);
  const keyType = options.keyType ?? 'rsa-2048';
  const { keys, keyPem } = await generateKey(keyType);
  const certPem = await signCertificate(lib, {
    subject: distinguishedName(lib, options.commonName, options.organization),
    issuer,
    validity: validity(options.days ?? MAX_LEAF_DAYS),
    publicKey: keys.publicKey,
    extensions: extensions(lib, keyType.startsWith('rsa')),
  });
  return { certPem, keyPem };
}

/** Issue a TLS server certificate signed by `ca`, with DNS and IP (v4/v6) subject alternative names. */
export async function issueServerCert(options: IssueServerCertOptions): Promise<CertKeyPair> {
  const altNames: X509.JsonGeneralNames = [
    ...options.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...options.ipAddresses.map((ip) => ({ type: 'ip' as const, value: canonicalIp(ip) })),
  ];
  const commonName = options.commonName ?? options.dnsNames[0] ?? options.ipAddresses[0] ?? 'server';
  return issueLeaf({ ...options, commonName }, (lib, rsa) => [
    new lib.BasicConstraintsExtension(false, undefined, true),
    // keyEncipherment only for RSA keys (RSA key exchange); ECDSA keys only sign.
    new lib.KeyUsagesExtension(
      lib.KeyUsageFlags.digitalSignature | (rsa ? lib.KeyUsageFlags.keyEncipherment : 0),
      true,
    ),
    new lib.ExtendedKeyUsageExtension([lib.ExtendedKeyUsage.serverAuth]),
    new lib.SubjectAlternativeNameExtension(altNames),
  ]);
}

/**
 * Issue a signing certificate signed by `ca`: digitalSignature only, no extended key usage and no
 * subject alternative names, for a key that signs data (a registry token service's JWTs, whose
 * `x5c` header the registry verifies against the CA) rather than serving TLS.
 */
export async function issueSigningCert(options: IssueSigningCertOptions): Promise<CertKeyPair> {
  return issueLeaf(options, (lib) => [
    new lib.BasicConstraintsExtension(false, undefined, true),
    new lib.KeyUsagesExtension(lib.KeyUsageFlags.digitalSignature, true),
  ]);
}
