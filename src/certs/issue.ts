/**
 * `airgap certs ca` and `airgap certs issue` as library calls: validate the names, mint, and write
 * the files as one set (keys 0600), refusing to replace existing files without `force`.
 */
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { usageError, CommonError } from '../util/errors.js';
import { writeFilesAtomic } from '../util/fs.js';
import { describeCertificate, existsError, loadSigningCA, type CertificateInfo } from './inspect.js';
import { createCA, issueServerCert, MAX_LEAF_DAYS, type KeyType } from './mint.js';
import { hostNameProblem } from './names.js';
import { X509Certificate } from 'node:crypto';
import { CertsError } from './errors.js';

/** DNS names and IP addresses for a certificate, sorted out of one list. */
export interface SubjectNames {
  dnsNames: string[];
  ipAddresses: string[];
}

/**
 * Split `--san` values into DNS names and IP addresses, refusing what a TLS client would not match:
 * IPv6 with a zone (`fe80::1%eth0`: a certificate holds the address only), bracketed IPv6
 * (`[fd00::1]` is URL syntax, a certificate holds the bare address), invalid host names (RFC 1123
 * labels; one leading `*.` wildcard allowed), empty values.
 */
function parseSubjectNames(values: string[], flag = '--san'): SubjectNames {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const raw of values.flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (raw === '') continue;
    // A zone (`%eth0`) says which interface reaches a link-local address; it means nothing to a
    // TLS client, and an iPAddress SAN has no room for it.
    const zoned = /^\[?([^%\]]*)(%[^\]]*)\]?$/.exec(raw);
    if (zoned && isIP(zoned[1]!) === 6) {
      throw usageError(
        CertsError.SAN_INVALID,
        `${flag} ${raw}: a certificate cannot carry an IPv6 zone (${zoned[2]})`,
        {
          hint: `give the address without it: ${flag} ${zoned[1]}`,
        },
      );
    }
    if (/^\[.*\]$/.test(raw)) {
      throw usageError(
        CertsError.SAN_INVALID,
        `${flag} ${raw}: an IPv6 address goes into a certificate without brackets`,
        {
          hint: `write ${flag} ${raw.slice(1, -1)}`,
        },
      );
    }
    if (isIP(raw)) {
      ipAddresses.push(raw);
      continue;
    }
    const name = raw.toLowerCase();
    const looksNumeric = /^[\d.]+$/.test(name) || name.includes(':');
    const problem = looksNumeric ? 'not an address' : hostNameProblem(name, { wildcard: true });
    if (problem) {
      throw usageError(
        CertsError.SAN_INVALID,
        `${flag} ${raw} is neither a valid host name nor an IP address (${problem})`,
        {
          hint: looksNumeric
            ? 'check the address: IPv4 is four numbers 0–255 (10.0.0.5), IPv6 is hex groups (fd00::5)'
            : 'host names are letters, digits and hyphens in dot-separated labels (registry.example.com); a wildcard only as the first label (*.apps.example.com)',
        },
      );
    }
    dnsNames.push(name);
  }
  if (dnsNames.length === 0 && ipAddresses.length === 0)
    throw usageError(CertsError.SAN_MISSING, `a server certificate needs at least one name (${flag})`, {
      hint: `give the names clients use to reach the server, e.g. ${flag} registry.example.com ${flag} 192.168.1.10`,
    });
  return { dnsNames: [...new Set(dnsNames)], ipAddresses: [...new Set(ipAddresses)] };
}

export interface CreateCaFilesOptions {
  out: string;
  commonName: string;
  organization?: string;
  days?: number;
  keyType?: KeyType;
  force?: boolean;
}

export interface WrittenCertificate {
  files: { certificate: string; key: string; ca?: string; fullchain?: string };
  certificate: CertificateInfo;
  warnings: string[];
}

/** Make a CA: `<out>/ca.crt` and `<out>/ca.key` (0600). */
export async function createCaFiles(o: CreateCaFilesOptions): Promise<WrittenCertificate> {
  if (o.days !== undefined && (o.days < 1 || o.days > 36500))
    throw usageError(CommonError.FLAG_INVALID, `--days ${o.days} is out of range`, {
      hint: 'a CA is valid for 1 to 36500 days',
    });
  const out = resolve(o.out);
  const ca = await createCA({
    commonName: o.commonName,
    ...(o.organization ? { organization: o.organization } : {}),
    ...(o.days ? { days: o.days } : {}),
    ...(o.keyType ? { keyType: o.keyType } : {}),
  });
  const certificate = join(out, 'ca.crt');
  const key = join(out, 'ca.key');
  await writeFilesAtomic(
    [
      { path: certificate, data: ca.certPem },
      { path: key, data: ca.keyPem, mode: 0o600 },
    ],
    { force: o.force, onExisting: existsError },
  );
  return {
    files: { certificate, key },
    certificate: describeCertificate(new X509Certificate(ca.certPem)),
    warnings: [],
  };
}

export interface IssueFilesOptions {
  caCert: string;
  caKey: string;
  /** DNS names and IP addresses (see {@link parseSubjectNames}). */
  names: string[];
  commonName?: string;
  days?: number;
  keyType?: KeyType;
  out: string;
  force?: boolean;
}

/**
 * Issue a server certificate from a CA: `tls.crt`, `tls.key` (0600), `ca.crt` and `fullchain.crt`
 * (leaf then CA, what nginx and distribution serve) in `out`. Validity is capped at 825 days and at
 * the CA's own expiry.
 */
export async function issueServerFiles(o: IssueFilesOptions): Promise<WrittenCertificate> {
  const names = parseSubjectNames(o.names);
  const warnings: string[] = [];
  let days = o.days ?? MAX_LEAF_DAYS;
  if (days < 1)
    throw usageError(CommonError.FLAG_INVALID, `--days ${days} is out of range`, {
      hint: `1 to ${MAX_LEAF_DAYS}`,
    });
  if (days > MAX_LEAF_DAYS) {
    warnings.push(
      `--days ${days} is above the ${MAX_LEAF_DAYS}-day limit TLS clients enforce; capped at ${MAX_LEAF_DAYS}`,
    );
    days = MAX_LEAF_DAYS;
  }
  const ca = await loadSigningCA(o.caCert, o.caKey);
  const caDaysLeft = Math.floor((ca.notAfter.getTime() - Date.now()) / 86_400_000);
  if (days > caDaysLeft) {
    warnings.push(`the CA expires in ${caDaysLeft} day(s); the certificate is capped to end with it`);
    days = Math.max(1, caDaysLeft);
  }
  const leaf = await issueServerCert({
    ca,
    ...(o.commonName ? { commonName: o.commonName } : {}),
    ...names,
    days,
    ...(o.keyType ? { keyType: o.keyType } : {}),
  });
  const out = resolve(o.out);
  const files = {
    certificate: join(out, 'tls.crt'),
    key: join(out, 'tls.key'),
    ca: join(out, 'ca.crt'),
    fullchain: join(out, 'fullchain.crt'),
  };
  await writeFilesAtomic(
    [
      { path: files.certificate, data: leaf.certPem },
      { path: files.key, data: leaf.keyPem, mode: 0o600 },
      { path: files.ca, data: ca.certPem.endsWith('\n') ? ca.certPem : `${ca.certPem}\n` },
      {
        path: files.fullchain,
        data: `${leaf.certPem}${ca.certPem.endsWith('\n') ? ca.certPem : `${ca.certPem}\n`}`,
      },
    ],
    { force: o.force, onExisting: existsError },
  );
  return { files, certificate: describeCertificate(new X509Certificate(leaf.certPem)), warnings };
}
