/**
 * The mirror registry of the bastion, as files: what the seed runbook's registry script does by hand
 * (htpasswd -bBc, openssl, a config.yml, `podman run --net host` as a systemd service `registry`),
 * written into one directory, checked before anything is written.
 *
 * <out>/auth/htpasswd      bcrypt (`user:$2y$10$…`, as `htpasswd -B` writes it), 0600
 * <out>/certs/tls.crt      the server certificate (then the CA, when one is given)
 * <out>/certs/tls.key      its private key, 0600
 * <out>/certs/ca.crt       the CA, when one is given
 * <out>/conf/config.yml    CNCF distribution configuration (holds http.secret), 0600
 * <out>/registry.service   systemd unit: podman runs the registry image with the files above
 * <out>/install.txt        how to install the unit and trust the CA on the bastion
 *
 * Inside the container the files are at /auth, /certs, /etc/docker/registry/config.yml and the
 * storage at /var/lib/registry (a host directory, --data-dir).
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import bcrypt from 'bcryptjs';
import { formatReference, parseReference } from '../mirror/index.js';
import { usageError } from '../util/errors.js';
import { writeFilesAtomic } from '../util/fs.js';
import { readCertificates, readInputFile, readPrivateKeyFile } from './inspect.js';
import { hostNameProblem } from './names.js';
import { toYaml } from '../util/yaml.js';

export const DEFAULT_REGISTRY_PORT = 5000;
export const DEFAULT_REGISTRY_IMAGE = 'docker.io/library/registry:2';
export const DEFAULT_REGISTRY_DATA_DIR = '/var/lib/registry';
/**
 * bcrypt cost of the htpasswd entry. The registry checks the hash on every request it serves (it
 * keeps no session), so the cost is paid per blob and per manifest: 10 is bcrypt's usual default,
 * about 50 ms of one core per request, and 2^5 times stronger than `htpasswd -B`'s default of 5.
 */
export const HTPASSWD_BCRYPT_COST = 10;
/** bcrypt uses the first 72 bytes of a password and ignores the rest. */
const BCRYPT_MAX_PASSWORD_BYTES = 72;

/** Where each file goes, relative to --out. */
export const REGISTRY_FILES = {
  htpasswd: 'auth/htpasswd',
  certificate: 'certs/tls.crt',
  key: 'certs/tls.key',
  ca: 'certs/ca.crt',
  config: 'conf/config.yml',
  unit: 'registry.service',
  install: 'install.txt',
} as const;
export type RegistryFileKind = keyof typeof REGISTRY_FILES;

/** The paths the registry sees inside its container. */
const IN_CONTAINER = {
  htpasswd: '/auth/htpasswd',
  certificate: '/certs/tls.crt',
  key: '/certs/tls.key',
  storage: '/var/lib/registry',
  /** registry:2 (distribution 2.x) reads this one… */
  config: '/etc/docker/registry/config.yml',
  /** …and registry:3 (distribution 3.x) this one. */
  configV3: '/etc/distribution/config.yml',
} as const;

// ---------------------------------------------------------------------------------------------
// Names, ports, users, passwords (shared with pull-secret.ts)
// ---------------------------------------------------------------------------------------------

/** A host name or address as given on the command line, checked. */
export interface CheckedHost {
  /** The name, or the IP address without brackets. */
  host: string;
  ip: boolean;
  /** As it goes before `:port` in a reference: `registry.example.com`, `10.0.0.5`, `[fd00::5]`. */
  display: string;
}

/**
 * Check a host name (RFC 1123: dot-separated labels of letters, digits and inner hyphens, each at
 * most 63 characters, at most 253 in all, the last label not all digits) or an IP address (IPv6
 * with or without brackets). Throws a usage error naming `flag`.
 */
export function checkHost(input: string, flag: string): CheckedHost {
  const bare = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const kind = isIP(bare);
  if (kind === 6) return { host: bare, ip: true, display: `[${bare}]` };
  if (kind === 4 && bare === input) return { host: bare, ip: true, display: bare };
  const bad = (why: string): never => {
    throw usageError('FLAG_INVALID', `${flag} "${input}" is not a valid host name: ${why}`, {
      hint: `give a DNS name like registry.example.com, an IPv4 address, or an IPv6 address like fd00::5`,
    });
  };
  if (input !== bare) bad('only an IPv6 address goes in brackets');
  const problem = hostNameProblem(input);
  if (problem) bad(problem);
  return { host: input, ip: false, display: input };
}

/** Check a TCP port given as a number or a string: a whole number from 1 to 65535. */
export function checkPort(input: number | string, flag: string): number {
  const text = String(input).trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw usageError('FLAG_INVALID', `${flag} "${String(input)}" is not a TCP port`, {
      hint: 'give a whole number from 1 to 65535, e.g. 5000',
    });
  }
  return port;
}

/**
 * Check a registry user name: not empty, no colon (Basic auth and htpasswd split there), no control
 * characters, no spaces at either end, and not starting with `#` (a comment in htpasswd).
 */
export function checkUsername(username: string, flag = '--username'): string {
  const bad = (why: string): never => {
    throw usageError('FLAG_INVALID', `${flag} is not a usable registry user name: ${why}`, {
      hint: 'use letters, digits and punctuation other than ":", e.g. --username admin',
    });
  };
  if (username === '') bad('it is empty');
  if (username.includes(':')) bad('it contains ":"');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(username)) bad('it contains a control character');
  if (username.trim() !== username) bad('it starts or ends with a space');
  if (username.startsWith('#')) bad('it starts with "#", which htpasswd reads as a comment');
  return username;
}

/** The code and message for a file we could not read, by errno. */
/**
 * Read a password from a file: the whole file, less one final newline (`\n` or `\r\n`, as `echo`
 * or an editor leaves it). It must not be empty and must be one line. The password never appears
 * in an error.
 */
export async function readPasswordFile(path: string, flag = '--password-file'): Promise<string> {
  let password = (await readInputFile(path, flag, 'password file')).toString('utf8');
  if (password.endsWith('\r\n')) password = password.slice(0, -2);
  else if (password.endsWith('\n')) password = password.slice(0, -1);
  if (password === '') {
    throw usageError('PASSWORD_INVALID', `the password file ${flag} ${path} is empty`, {
      where: path,
      hint: 'write the password into the file, e.g. (umask 077; printf %s "$PASSWORD" > registry.pass)',
    });
  }
  if (/[\r\n]/.test(password)) {
    throw usageError('PASSWORD_INVALID', `the password file ${flag} ${path} holds more than one line`, {
      where: path,
      hint: 'put only the password in the file, on one line',
    });
  }
  return password;
}

/** One htpasswd line, `user:$2y$<cost>$…\n`, exactly as `htpasswd -B` writes it. */
export function htpasswdEntry(username: string, password: string, cost = HTPASSWD_BCRYPT_COST): string {
  checkUsername(username);
  if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_PASSWORD_BYTES) {
    // bcrypt would silently use only the first 72 bytes; say so instead.
    throw usageError(
      'PASSWORD_INVALID',
      `the password is longer than ${BCRYPT_MAX_PASSWORD_BYTES} bytes, and bcrypt ignores everything after that`,
      { hint: `use a password of at most ${BCRYPT_MAX_PASSWORD_BYTES} bytes` },
    );
  }
  // bcryptjs writes the $2b$ prefix; $2y$ (what htpasswd writes) names the same algorithm.
  const salt = bcrypt.genSaltSync(cost).replace(/^\$2b\$/, '$2y$');
  return `${username}:${bcrypt.hashSync(password, salt)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Certificates
// ---------------------------------------------------------------------------------------------

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
      'CERT_KEY_MISMATCH',
      `the private key --key ${keyFile} does not belong to the certificate --cert ${certFile}`,
      {
        where: keyFile,
        hint: 'give the key that was generated with this certificate; compare `openssl x509 -in <cert> -noout -pubkey` with `openssl pkey -in <key> -pubout`',
      },
    );
  }
  const covered = host.ip
    ? leaf.checkIP(host.host)
    : leaf.checkHost(host.host, { subject: 'never', partialWildcards: false });
  if (!covered) {
    const sans = leaf.subjectAltName ?? 'none';
    throw usageError(
      'CERT_HOST_MISMATCH',
      `the certificate --cert ${certFile} is not valid for ${host.host} (its subject alternative names: ${sans})`,
      {
        where: certFile,
        hint: `issue a certificate whose subject alternative names include ${host.ip ? 'IP:' : 'DNS:'}${host.host}, or give the --hostname it was made for`,
      },
    );
  }
  const now = (opts.now ?? new Date()).getTime();
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  if (now < from) {
    throw usageError(
      'CERT_INVALID',
      `the certificate --cert ${certFile} is not valid before ${leaf.validFrom}`,
      {
        where: certFile,
        hint: 'check the clock of this machine, or issue the certificate again',
      },
    );
  }
  if (now > to) {
    throw usageError('CERT_INVALID', `the certificate --cert ${certFile} expired on ${leaf.validTo}`, {
      where: certFile,
      hint: 'issue a new certificate for the registry',
    });
  }
  const eku = leaf.keyUsage as string[] | undefined;
  if (eku && eku.length > 0 && !eku.includes(SERVER_AUTH) && !eku.includes(ANY_EKU)) {
    throw usageError('CERT_INVALID', `the certificate --cert ${certFile} may not be used by a TLS server`, {
      where: certFile,
      hint: 'its extended key usage lacks serverAuth; issue a server certificate',
    });
  }

  const warnings: string[] = [];
  const daysLeft = Math.floor((to - now) / DAY_MS);
  if (daysLeft < EXPIRY_WARNING_DAYS)
    warnings.push(`the certificate ${certFile} expires in ${daysLeft} day(s), on ${leaf.validTo}`);

  let chain = certs;
  let caPem: string | undefined;
  if (caFile) {
    const cas = await readCertificates(caFile, '--ca');
    // Walk up from the leaf through --cert's intermediates and --ca; it must reach a --ca cert.
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
        'CERT_CHAIN_INVALID',
        `the certificate --cert ${certFile} was not signed by the CA --ca ${caFile} (issuer ${leaf.issuer.replaceAll('\n', ', ')})`,
        {
          where: caFile,
          hint: 'give the CA that issued this certificate, or leave out --ca for a self-signed certificate',
        },
      );
    }
    const seen = new Set(certs.map((c) => c.fingerprint256));
    chain = [...certs, ...cas.filter((c) => !seen.has(c.fingerprint256))];
    caPem = cas.map((c) => c.toString()).join('');
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
    notAfter: new Date(to).toISOString(),
    selfSigned: isSelfSigned(leaf),
    chainLength: chain.length,
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// The files
// ---------------------------------------------------------------------------------------------

/**
 * The registry's config.yml (CNCF distribution, version 0.1), with the paths as the container sees
 * them. `http.secret` signs upload state; it is random, and makes this file a secret.
 */
export function registryConfig(opts: {
  port: number;
  secret: string;
  realm: string;
}): Record<string, unknown> {
  return {
    version: 0.1,
    log: { fields: { service: 'registry' } },
    storage: {
      filesystem: { rootdirectory: IN_CONTAINER.storage },
      delete: { enabled: true },
      cache: { blobdescriptor: 'inmemory' },
    },
    http: {
      addr: `:${opts.port}`,
      secret: opts.secret,
      headers: { 'X-Content-Type-Options': ['nosniff'] },
      tls: { certificate: IN_CONTAINER.certificate, key: IN_CONTAINER.key },
    },
    auth: { htpasswd: { realm: opts.realm, path: IN_CONTAINER.htpasswd } },
    health: { storagedriver: { enabled: true, interval: '10s', threshold: 3 } },
    // distribution 3 (registry:3) accepts an index whose platform manifests are not all pushed
    // (a mirror keeps only the architectures it needs); distribution 2 ignores this key.
    validation: { manifests: { indexes: { platforms: 'none' } } },
  };
}

/** Characters a path may hold to go unquoted into a systemd ExecStart line and a `podman -v` spec. */
const SAFE_PATH_RE = /^\/[\w./+@-]*$/;

function checkUnitPath(path: string, flag: string): string {
  if (!SAFE_PATH_RE.test(path)) {
    throw usageError(
      'FLAG_INVALID',
      `${flag} ${path} cannot go into the systemd unit: use only letters, digits and . _ - + @ /`,
      {
        hint: 'spaces, ":", ",", "%" and "$" have meanings of their own in a systemd unit or in podman -v; choose another directory',
      },
    );
  }
  return path;
}

/** The systemd unit that runs the registry with podman (`systemctl enable --now registry`). */
export function registryUnit(opts: {
  outDir: string;
  dataDir: string;
  image: string;
  address: string;
}): string {
  const { outDir, dataDir, image, address } = opts;
  const mounts = [
    `${join(outDir, 'auth')}:/auth:z`,
    `${join(outDir, 'certs')}:/certs:z`,
    `${join(outDir, REGISTRY_FILES.config)}:${IN_CONTAINER.config}:z`,
    `${join(outDir, REGISTRY_FILES.config)}:${IN_CONTAINER.configV3}:z`,
    `${dataDir}:${IN_CONTAINER.storage}:z`,
  ];
  return [
    `# The mirror registry ${address}, written by airgap certs registry.`,
    `# Install: see ${join(outDir, REGISTRY_FILES.install)}.`,
    `# The config is mounted twice: registry:2 reads ${IN_CONTAINER.config}, registry:3 ${IN_CONTAINER.configV3}.`,
    '[Unit]',
    `Description=Mirror registry ${address} (CNCF distribution in podman)`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStartPre=/usr/bin/mkdir -p ${dataDir}`,
    // A container left behind by a crash would block the name; "-" ignores "no such container".
    'ExecStartPre=-/usr/bin/podman rm --force registry',
    `ExecStart=/usr/bin/podman run --rm --name registry --net host \\`,
    ...mounts.map((m) => `  -v ${m} \\`),
    `  ${image}`,
    'ExecStop=/usr/bin/podman stop --time 10 registry',
    'Restart=always',
    'RestartSec=5',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** install.txt: the commands to install the unit and trust the CA on the bastion. */
export function installText(opts: {
  outDir: string;
  dataDir: string;
  address: string;
  host: CheckedHost;
  port: number;
  username: string;
  image: string;
  /** The file to trust: certs/ca.crt, or the self-signed tls.crt; undefined when neither applies. */
  trustFile?: string;
}): string {
  const { outDir, address, port, username } = opts;
  const anchor = `/etc/pki/ca-trust/source/anchors/${opts.host.host.replace(/[^\w.-]/g, '_')}-registry-ca.crt`;
  const trust = opts.trustFile
    ? [`  cp ${opts.trustFile} ${anchor}`, '  update-ca-trust extract']
    : [
        '  The certificate was not self-signed and no --ca was given: copy the CA that signed',
        `  ${join(outDir, REGISTRY_FILES.certificate)} to ${anchor}, then run: update-ca-trust extract`,
      ];
  return [
    `The mirror registry ${address}`,
    '='.repeat(`The mirror registry ${address}`.length),
    '',
    `Written by airgap certs registry into ${outDir}. Run these as root on the bastion.`,
    '',
    '1. Install and start the service (podman runs the registry image; it listens on',
    `   port ${port} of every address of this host, with TLS and a password):`,
    '',
    `  cp ${join(outDir, REGISTRY_FILES.unit)} /etc/systemd/system/registry.service`,
    '  systemctl daemon-reload',
    '  systemctl enable --now registry',
    '',
    '2. Trust the registry CA on this bastion (podman, skopeo, curl and oc read the system trust):',
    '',
    ...trust,
    '',
    '3. Check it (asks for the password; {"repositories":[…]} means it works):',
    '',
    `  curl -u ${username} https://${address}/v2/_catalog`,
    `  systemctl status registry        # logs: journalctl -u registry`,
    '',
    'Notes:',
    `- Images are stored in ${opts.dataDir} (created on start); give it room (hundreds of GB).`,
    `- Open the port if firewalld runs: firewall-cmd --permanent --add-port=${port}/tcp && firewall-cmd --reload`,
    `- podman pulls ${opts.image} the first time. Without internet, load it first:`,
    `  on a connected host: podman pull ${opts.image} && podman save -o registry.tar ${opts.image}`,
    `  here:                podman load -i registry.tar`,
    `- Add the credentials to the pull secret: airgap certs pull-secret --pull-secret pull-secret.json \\`,
    `    --registry ${address} --username ${username} --password-file <file> --out pull-secret-mirror.json`,
    `- ${REGISTRY_FILES.htpasswd}, ${REGISTRY_FILES.key} and ${REGISTRY_FILES.config} are secrets (mode 0600).`,
    '',
  ].join('\n');
}

export interface RegistryFilesOptions {
  /** The name clients use for the registry (the certificate must name it). */
  hostname: string;
  port?: number | string;
  certFile: string;
  keyFile: string;
  caFile?: string;
  username: string;
  passwordFile: string;
  /** Host directory for the registry's storage (default /var/lib/registry). */
  dataDir?: string;
  outDir: string;
  /** Replace files that are already there. */
  force?: boolean;
  image?: string;
  /** bcrypt cost (default {@link HTPASSWD_BCRYPT_COST}). */
  bcryptCost?: number;
}

export interface RegistryFilesResult {
  /** `host:port` as clients name the registry (IPv6 in brackets). */
  registry: string;
  hostname: string;
  port: number;
  username: string;
  outDir: string;
  dataDir: string;
  image: string;
  /** Absolute paths of the files written. */
  files: Partial<Record<RegistryFileKind, string>>;
  certificate: {
    subject: string;
    issuer: string;
    notAfter: string;
    selfSigned: boolean;
    /** Certificates in tls.crt (leaf first). */
    chainLength: number;
  };
  /** The file clients should trust, if known. */
  trustFile?: string;
  warnings: string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/**
 * Check everything, then write the registry's files into `outDir` as one set (each to a temp name,
 * then all renamed). Nothing is written when a check fails, or when a file is already there and
 * `force` is not set.
 */
export async function writeRegistryFiles(options: RegistryFilesOptions): Promise<RegistryFilesResult> {
  const host = checkHost(options.hostname, '--hostname');
  const port = checkPort(options.port ?? DEFAULT_REGISTRY_PORT, '--port');
  const username = checkUsername(options.username);
  const outDir = checkUnitPath(resolve(options.outDir), '--out');
  const dataDir = checkUnitPath(resolve(options.dataDir ?? DEFAULT_REGISTRY_DATA_DIR), '--data-dir');
  const image = formatReference(parseReference(options.image ?? DEFAULT_REGISTRY_IMAGE));
  const address = `${host.display}:${port}`;
  const outStat = await stat(outDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (outStat && !outStat.isDirectory()) {
    throw usageError('FLAG_INVALID', `--out ${outDir} is a file, not a directory`, {
      where: outDir,
      hint: 'name a directory (it is created if missing), e.g. --out /opt/registry',
    });
  }

  const password = await readPasswordFile(options.passwordFile);
  if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_PASSWORD_BYTES) {
    throw usageError(
      'PASSWORD_INVALID',
      `the password in --password-file ${options.passwordFile} is longer than ${BCRYPT_MAX_PASSWORD_BYTES} bytes; bcrypt would ignore the rest`,
      { where: options.passwordFile, hint: `use a password of at most ${BCRYPT_MAX_PASSWORD_BYTES} bytes` },
    );
  }
  const cert = await checkServerCertificate({
    certFile: options.certFile,
    keyFile: options.keyFile,
    caFile: options.caFile,
    host,
  });

  const path = (kind: RegistryFileKind) => join(outDir, REGISTRY_FILES[kind]);
  const trustFile = cert.caPem ? path('ca') : cert.selfSigned ? path('certificate') : undefined;
  const contents: [RegistryFileKind, string | Buffer, number][] = [
    ['htpasswd', htpasswdEntry(username, password, options.bcryptCost), 0o600],
    ['certificate', cert.chainPem, 0o644],
    ['key', cert.keyBytes, 0o600],
    ...(cert.caPem ? ([['ca', cert.caPem, 0o644]] as [RegistryFileKind, string, number][]) : []),
    [
      'config',
      toYaml(registryConfig({ port, secret: randomBytes(32).toString('hex'), realm: 'Registry' })),
      0o600,
    ],
    ['unit', registryUnit({ outDir, dataDir, image, address }), 0o644],
    ['install', installText({ outDir, dataDir, address, host, port, username, image, trustFile }), 0o644],
  ];

  if (!options.force) {
    const present: string[] = [];
    for (const [kind] of contents) if (await exists(path(kind))) present.push(REGISTRY_FILES[kind]);
    if (present.length > 0) {
      throw usageError(
        'OUTPUT_EXISTS',
        `${outDir} already holds ${present.join(', ')}; not replacing ${present.length === 1 ? 'it' : 'them'}`,
        {
          where: outDir,
          hint: 'pass --force to replace them (a new password hash and http.secret), or choose another --out',
        },
      );
    }
  }

  const warnings = [...cert.warnings];
  if (!cert.caPem && (await exists(path('ca')))) {
    warnings.push(
      `${path('ca')} is left from an earlier run and was not written now (no --ca); remove it if it is not the CA of this certificate`,
    );
  }

  // All or nothing: every file goes to a temp name first, then they are renamed into place.
  await writeFilesAtomic(
    contents.map(([kind, data, mode]) => ({ path: path(kind), data, mode })),
    { force: true }, // existing files were checked above, all of them named in one error
  );
  const files = Object.fromEntries(contents.map(([kind]) => [kind, path(kind)])) as Partial<
    Record<RegistryFileKind, string>
  >;
  return {
    registry: address,
    hostname: host.host,
    port,
    username,
    outDir,
    dataDir,
    image,
    files,
    certificate: {
      subject: cert.subject,
      issuer: cert.issuer,
      notAfter: cert.notAfter,
      selfSigned: cert.selfSigned,
      chainLength: cert.chainLength,
    },
    ...(trustFile ? { trustFile } : {}),
    warnings,
  };
}
