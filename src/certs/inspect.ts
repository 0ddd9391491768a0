/**
 * Reading certificates and keys, saying what they cover and whether they belong together. Node's
 * X509Certificate does the parsing and the signature checks (RSA and ECDSA alike); every problem
 * names the file it came from.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { AirgapError, unreadableReason, usageError, CommonError } from '../util/errors.js';
import { CertsError } from './errors.js';

/** Warn this many days before a certificate expires. */
export const EXPIRY_WARNING_DAYS = 30;
const DAY = 86_400_000;

/** What a certificate is and covers, for people and for --json. */
export interface CertificateInfo {
  subject: string;
  issuer: string;
  serial: string;
  notBefore: string;
  notAfter: string;
  /** Whole days until notAfter (negative once expired). */
  daysLeft: number;
  isCA: boolean;
  selfSigned: boolean;
  dnsNames: string[];
  ipAddresses: string[];
  /** `rsa-4096`, `ecdsa-p256`, … */
  keyType: string;
  /** Extended key usages (OIDs, `1.3.6.1.5.5.7.3.1` is server auth). */
  extendedKeyUsage: string[];
  sha256Fingerprint: string;
}

function unreadable(path: string, flag: string, what: string, e: unknown): AirgapError {
  const why = unreadableReason(e);
  return usageError(
    CommonError.FILE_UNREADABLE,
    `cannot read the ${what} ${flag ? `${flag} ` : ''}${path}: ${why}`,
    {
      where: path,
      hint: flag ? `check the path given to ${flag}` : 'check the path and its permissions',
    },
  );
}

/** Read a whole input file, or throw a usage error that names the flag, the file and why. */
export async function readInputFile(path: string, flag: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    throw unreadable(path, flag, what, e);
  }
}

/** Every certificate in a PEM file, in order (a chain file holds the leaf first). `flag` names it in messages. */
export async function readCertificates(file: string, flag?: string): Promise<X509Certificate[]> {
  const text = (await readInputFile(file, flag ?? '', 'certificate file')).toString('utf8');
  const named = flag ? `${flag} ${file}` : file;
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) {
    const kind = /-----BEGIN ([A-Z ]+)-----/.exec(text)?.[1];
    throw usageError(
      CertsError.CERT_INVALID,
      `${named} holds no PEM certificate${kind ? ` (it holds a ${kind})` : ''}`,
      {
        where: file,
        hint: kind
          ? 'give the file with -----BEGIN CERTIFICATE----- blocks (tls.crt or ca.crt, not the key)'
          : 'give a PEM file (-----BEGIN CERTIFICATE-----); convert DER with `openssl x509 -inform der -in cert.der -out cert.pem`',
      },
    );
  }
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (e) {
      throw usageError(
        CertsError.CERT_INVALID,
        `certificate ${i + 1} of ${named} cannot be read: ${(e as Error).message}`,
        {
          where: file,
          hint: 'check that the file was copied whole; `openssl x509 -in <file> -noout -text` shows what is wrong',
        },
      );
    }
  });
}

/** The private key of a PEM file (PKCS#8, PKCS#1 or SEC1; not encrypted) and its bytes. */
export async function readPrivateKeyFile(
  file: string,
  flag?: string,
): Promise<{ key: KeyObject; bytes: Buffer }> {
  const bytes = await readInputFile(file, flag ?? '', 'private key file');
  const named = flag ? `${flag} ${file}` : file;
  try {
    return { key: createPrivateKey({ key: bytes, format: 'pem' }), bytes };
  } catch (e) {
    if (
      (e as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' ||
      /passphrase/i.test((e as Error).message)
    ) {
      throw usageError(CertsError.KEY_INVALID, `the private key ${named} is encrypted`, {
        where: file,
        hint: 'servers cannot ask for a passphrase; decrypt it first: openssl pkey -in <key> -out tls.key',
      });
    }
    const kind = /-----BEGIN ([A-Z ]+)-----/.exec(bytes.toString('utf8'))?.[1];
    throw usageError(
      CertsError.KEY_INVALID,
      `${named} holds no usable private key${kind ? ` (it holds a ${kind})` : ''}`,
      {
        where: file,
        hint: 'give the unencrypted PEM key written with the certificate (tls.key or ca.key)',
      },
    );
  }
}

/** The private key of a PEM file. */
async function readPrivateKey(file: string, flag?: string): Promise<KeyObject> {
  return (await readPrivateKeyFile(file, flag)).key;
}

function keyTypeOf(k: KeyObject): string {
  if (k.asymmetricKeyType === 'rsa') return `rsa-${k.asymmetricKeyDetails?.modulusLength ?? '?'}`;
  if (k.asymmetricKeyType === 'ec') {
    const curve = k.asymmetricKeyDetails?.namedCurve ?? '?';
    return `ecdsa-${{ prime256v1: 'p256', secp384r1: 'p384', secp521r1: 'p521' }[curve] ?? curve}`;
  }
  return k.asymmetricKeyType ?? 'unknown';
}

/** IPv6 in its short form (`::1`), as people write it. */
function shortIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
}

/** Describe one certificate. */
export function describeCertificate(x: X509Certificate, now = new Date()): CertificateInfo {
  const sans = (x.subjectAltName ?? '').split(/,\s*/).filter(Boolean);
  const notAfter = new Date(x.validTo);
  return {
    subject: x.subject.replace(/\n/g, ', '),
    issuer: x.issuer.replace(/\n/g, ', '),
    serial: x.serialNumber,
    notBefore: new Date(x.validFrom).toISOString(),
    notAfter: notAfter.toISOString(),
    daysLeft: Math.floor((notAfter.getTime() - now.getTime()) / DAY),
    isCA: x.ca,
    selfSigned: x.checkIssued(x) && x.verify(x.publicKey),
    dnsNames: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)),
    ipAddresses: sans.filter((s) => s.startsWith('IP Address:')).map((s) => shortIp(s.slice(11))),
    keyType: keyTypeOf(x.publicKey),
    extendedKeyUsage: x.keyUsage ?? [],
    sha256Fingerprint: x.fingerprint256,
  };
}

/** The result of {@link verifyCertificate}: problems make it fail; warnings do not. */
export interface VerifyResult {
  ok: boolean;
  certificate: CertificateInfo;
  problems: string[];
  warnings: string[];
}

export interface VerifyInput {
  certFile: string;
  keyFile?: string;
  caFile?: string;
  /** Names (DNS or IP) the certificate must cover. */
  hosts?: string[];
  now?: Date;
}

function validityProblems(
  x: X509Certificate,
  file: string,
  now: Date,
  problems: string[],
  warnings: string[],
): void {
  const from = new Date(x.validFrom);
  const to = new Date(x.validTo);
  if (now < from) problems.push(`${file}: not valid before ${from.toISOString()}`);
  if (now > to) problems.push(`${file}: expired on ${to.toISOString()}`);
  else if (to.getTime() - now.getTime() < EXPIRY_WARNING_DAYS * DAY)
    warnings.push(
      `${file}: expires in ${Math.floor((to.getTime() - now.getTime()) / DAY)} day(s), on ${to.toISOString()}`,
    );
}

/**
 * Whether a certificate, its key and its CA belong together: the key matches, the CA is a CA that
 * signed it (through any intermediates in the certificate file), everything is within its validity,
 * and the requested names are covered. Expiry within 30 days is a warning.
 */
export async function verifyCertificate(v: VerifyInput): Promise<VerifyResult> {
  const now = v.now ?? new Date();
  const chain = await readCertificates(v.certFile);
  const leaf = chain[0]!;
  const problems: string[] = [];
  const warnings: string[] = [];
  validityProblems(leaf, v.certFile, now, problems, warnings);
  if (v.keyFile) {
    const key = await readPrivateKey(v.keyFile);
    if (!leaf.checkPrivateKey(key))
      problems.push(`${v.keyFile} is not the key of ${v.certFile} (the public keys differ)`);
  }
  // Walk the chain as given: each certificate must be issued by the next.
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i]!.checkIssued(chain[i + 1]!) || !chain[i]!.verify(chain[i + 1]!.publicKey))
      problems.push(
        `${v.certFile}: certificate ${i + 1} is not signed by certificate ${i + 2} of the same file`,
      );
  }
  if (v.caFile) {
    const cas = await readCertificates(v.caFile);
    const ca = cas[0]!;
    if (!ca.ca) problems.push(`${v.caFile} is not a CA certificate (basicConstraints CA:FALSE or missing)`);
    validityProblems(ca, v.caFile, now, problems, warnings);
    const top = chain[chain.length - 1]!;
    const signed =
      cas.some((c) => top.checkIssued(c) && top.verify(c.publicKey)) ||
      cas.some((c) => c.fingerprint256 === top.fingerprint256);
    if (!signed) problems.push(`${v.certFile} was not issued by the CA in ${v.caFile}`);
  }
  for (const host of v.hosts ?? []) {
    const covered = isIP(host) ? leaf.checkIP(host) !== undefined : leaf.checkHost(host) !== undefined;
    if (!covered) problems.push(`${v.certFile} does not cover ${host}`);
  }
  return { ok: problems.length === 0, certificate: describeCertificate(leaf, now), problems, warnings };
}

/**
 * A CA to sign with: its certificate and key, checked to be a CA, within its validity and a pair.
 * Throws a usage error naming the file otherwise.
 */
export async function loadSigningCA(
  certFile: string,
  keyFile: string,
  now = new Date(),
): Promise<{ certPem: string; keyPem: string; notAfter: Date; info: CertificateInfo }> {
  const [ca] = await readCertificates(certFile);
  const key = await readPrivateKey(keyFile);
  if (!ca!.ca)
    throw usageError(
      CertsError.CERT_NOT_CA,
      `${certFile} is not a CA certificate (basicConstraints CA:FALSE or missing)`,
      {
        where: certFile,
        hint: 'sign with the CA made by `airgap certs ca` (ca.crt and ca.key), not with a server certificate',
      },
    );
  if (now > new Date(ca!.validTo))
    throw usageError(
      CertsError.CERT_EXPIRED,
      `the CA ${certFile} expired on ${new Date(ca!.validTo).toISOString()}`,
      {
        where: certFile,
        hint: 'make a new CA with `airgap certs ca` and distribute it again (registry-config, user-ca-bundle, custom-registries)',
      },
    );
  if (!ca!.checkPrivateKey(key))
    throw usageError(CertsError.KEY_MISMATCH, `${keyFile} is not the key of the CA ${certFile}`, {
      where: keyFile,
      hint: 'give the ca.key written together with this ca.crt',
    });
  return {
    certPem: ca!.toString(),
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    notAfter: new Date(ca!.validTo),
    info: describeCertificate(ca!, now),
  };
}

/** Raised when a file the caller wants written already exists. */
export function existsError(path: string): AirgapError {
  return usageError(CommonError.OUTPUT_EXISTS, `${path} already exists`, {
    where: path,
    hint: 'choose another --out directory, or pass --force to replace the files',
  });
}
