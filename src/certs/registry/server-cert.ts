/**
 * The certificate the bastion registry serves, checked before anything is written: the key
 * belongs to it, it names the registry host in its subject alternative names, it is valid now and
 * may serve TLS, and, with a CA, it chains up to that CA (which then goes into the served chain).
 */
import type { X509Certificate } from 'node:crypto';
import { usageError } from '../../util/errors.js';
import { readCertificates, readPrivateKeyFile } from '../inspect.js';
import type { CheckedHost } from '../names.js';
import { CertsError } from '../errors.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const ANY_EKU = '2.5.29.37.0';
const DAY_MS = 86_400_000;
/** A certificate that ends sooner than this gets a warning. */
const EXPIRY_WARNING_DAYS = 30;

function describeCert(cert: X509Certificate): string {
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  return cn ? `"${cn}"` : `"${cert.subject.replaceAll('\n', ', ')}"`;
}

/** The issuer of `cert` among `pool` (same name, and its key verifies the signature). */
function issuerOf(cert: X509Certificate, pool: readonly X509Certificate[]): X509Certificate | undefined {
  return pool.find((c) => c !== cert && cert.checkIssued(c) && cert.verify(c.publicKey));
}

function isSelfSigned(cert: X509Certificate): boolean {
  return cert.checkIssued(cert) && cert.verify(cert.publicKey);
}

export interface CheckedServerCertificate {
  /** The PEM the registry serves: leaf, any intermediates of --cert, then the CA (if given). */
  chainPem: string;
  /** The PEM of --ca, normalized, if given. */
  caPem?: string;
  keyBytes: Buffer;
  subject: string;
  issuer: string;
  notAfter: string;
  selfSigned: boolean;
  chainLength: number;
  warnings: string[];
}

/** The leaf names `host` in its subject alternative names (Go clients ignore the common name). */
function checkCoversHost(leaf: X509Certificate, host: CheckedHost, certFile: string): void {
  const covered = host.ip
    ? leaf.checkIP(host.host)
    : leaf.checkHost(host.host, { subject: 'never', partialWildcards: false });
  if (!covered) {
    const sans = leaf.subjectAltName ?? 'none';
    throw usageError(
      CertsError.CERT_HOST_MISMATCH,
      `the certificate --cert ${certFile} is not valid for ${host.host} (its subject alternative names: ${sans})`,
      {
        where: certFile,
        hint: `issue a certificate whose subject alternative names include ${host.ip ? 'IP:' : 'DNS:'}${host.host}, or give the --hostname it was made for`,
      },
    );
  }
}

/** The leaf is valid at `now` and may serve TLS; a warning when it ends within 30 days. */
function checkUsableNow(leaf: X509Certificate, certFile: string, now: number): string[] {
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  if (now < from) {
    throw usageError(
      CertsError.CERT_INVALID,
      `the certificate --cert ${certFile} is not valid before ${leaf.validFrom}`,
      {
        where: certFile,
        hint: 'check the clock of this machine, or issue the certificate again',
      },
    );
  }
  if (now > to) {
    throw usageError(
      CertsError.CERT_INVALID,
      `the certificate --cert ${certFile} expired on ${leaf.validTo}`,
      {
        where: certFile,
        hint: 'issue a new certificate for the registry',
      },
    );
  }
  const eku = leaf.keyUsage as string[] | undefined;
  if (eku && eku.length > 0 && !eku.includes(SERVER_AUTH) && !eku.includes(ANY_EKU)) {
    throw usageError(
      CertsError.CERT_INVALID,
      `the certificate --cert ${certFile} may not be used by a TLS server`,
      {
        where: certFile,
        hint: 'its extended key usage lacks serverAuth; issue a server certificate',
      },
    );
  }
  const daysLeft = Math.floor((to - now) / DAY_MS);
  return daysLeft < EXPIRY_WARNING_DAYS
    ? [`the certificate ${certFile} expires in ${daysLeft} day(s), on ${leaf.validTo}`]
    : [];
}

/**
 * The chain to serve when --ca is given: walk up from the leaf through --cert's intermediates and
 * --ca; it must reach a --ca certificate. The CA certificates not already in --cert follow it.
 */
async function chainThroughCa(
  certs: X509Certificate[],
  certFile: string,
  caFile: string,
): Promise<{ chain: X509Certificate[]; caPem: string }> {
  const leaf = certs[0]!;
  const cas = await readCertificates(caFile, '--ca');
  const pool = [...certs, ...cas];
  let current = leaf;
  let reached = cas.some((c) => c.fingerprint256 === leaf.fingerprint256);
  for (let hops = 0; !reached && hops < pool.length; hops++) {
    const next = issuerOf(current, pool);
    if (!next) break;
    current = next;
    reached = cas.some((c) => c.fingerprint256 === next.fingerprint256);
  }
  if (!reached) {
    throw usageError(
      CertsError.CERT_CHAIN_INVALID,
      `the certificate --cert ${certFile} was not signed by the CA --ca ${caFile} (issuer ${leaf.issuer.replaceAll('\n', ', ')})`,
      {
        where: caFile,
        hint: 'give the CA that issued this certificate, or leave out --ca for a self-signed certificate',
      },
    );
  }
  const seen = new Set(certs.map((c) => c.fingerprint256));
  return {
    chain: [...certs, ...cas.filter((c) => !seen.has(c.fingerprint256))],
    caPem: cas.map((c) => c.toString()).join(''),
  };
}

/**
 * Check that the certificate and key belong together, that the certificate names `host` in its
 * subject alternative names (Go clients such as podman, skopeo and CRI-O ignore the common name),
 * is valid now and may serve TLS, and, with a CA, that it was signed by that CA.
 */
export async function checkServerCertificate(opts: {
  certFile: string;
  keyFile: string;
  caFile?: string;
  host: CheckedHost;
  now?: Date;
}): Promise<CheckedServerCertificate> {
  const { certFile, keyFile, caFile, host } = opts;
  const certs = await readCertificates(certFile, '--cert');
  const leaf = certs[0]!;
  const { key, bytes: keyBytes } = await readPrivateKeyFile(keyFile, '--key');
  if (!leaf.checkPrivateKey(key)) {
    throw usageError(
      CertsError.CERT_KEY_MISMATCH,
      `the private key --key ${keyFile} does not belong to the certificate --cert ${certFile}`,
      {
        where: keyFile,
        hint: 'give the key that was generated with this certificate; compare `openssl x509 -in <cert> -noout -pubkey` with `openssl pkey -in <key> -pubout`',
      },
    );
  }
  checkCoversHost(leaf, host, certFile);
  const warnings = checkUsableNow(leaf, certFile, (opts.now ?? new Date()).getTime());

  let chain = certs;
  let caPem: string | undefined;
  if (caFile) {
    ({ chain, caPem } = await chainThroughCa(certs, certFile, caFile));
  } else if (!isSelfSigned(leaf)) {
    warnings.push(
      `no --ca given: clients must already trust the CA that signed ${certFile} (${leaf.issuer.replaceAll('\n', ', ')}); pass --ca to serve it in the chain and get its trust steps in install.txt`,
    );
  }
  return {
    chainPem: chain.map((c) => c.toString()).join(''),
    ...(caPem ? { caPem } : {}),
    keyBytes,
    subject: describeCert(leaf),
    issuer: leaf.issuer.replaceAll('\n', ', '),
    notAfter: new Date(Date.parse(leaf.validTo)).toISOString(),
    selfSigned: isSelfSigned(leaf),
    chainLength: chain.length,
    warnings,
  };
}
