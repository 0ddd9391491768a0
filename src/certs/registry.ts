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
 *
 * Each file is made in registry/: htpasswd.ts (user, password, the htpasswd line), server-cert.ts
 * (the certificate checked), config.ts (config.yml), unit.ts (the systemd unit and install.txt),
 * layout.ts (where each file goes). This module checks the options and writes them as one set.
 */
import { randomBytes } from 'node:crypto';
import { lstat, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { formatReference, parseReference } from '../mirror/index.js';
import { usageError, CommonError } from '../util/errors.js';
import { writeFilesAtomic } from '../util/fs.js';
import { toYaml } from '../util/yaml.js';
import { checkHost, checkPort, type CheckedHost } from './names.js';
import { registryConfig } from './registry/config.js';
import {
  BCRYPT_MAX_PASSWORD_BYTES,
  checkUsername,
  htpasswdEntry,
  readPasswordFile,
} from './registry/htpasswd.js';
import {
  DEFAULT_REGISTRY_DATA_DIR,
  DEFAULT_REGISTRY_IMAGE,
  DEFAULT_REGISTRY_PORT,
  REGISTRY_FILES,
  type RegistryFileKind,
} from './registry/layout.js';
import { checkServerCertificate, type CheckedServerCertificate } from './registry/server-cert.js';
import { checkUnitPath, installText, registryUnit } from './registry/unit.js';
import { CertsError } from './errors.js';

export { checkHost } from './names.js';
export { registryConfig } from './registry/config.js';
export { htpasswdEntry } from './registry/htpasswd.js';
export {
  DEFAULT_REGISTRY_DATA_DIR,
  DEFAULT_REGISTRY_IMAGE,
  DEFAULT_REGISTRY_PORT,
  IN_CONTAINER,
  REGISTRY_FILES,
  type RegistryFileKind,
} from './registry/layout.js';
export { checkServerCertificate } from './registry/server-cert.js';
export { checkUnitPath, registryMounts, registryRunCommand, registryUnit } from './registry/unit.js';

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

/** The options that need no file read, checked: names, port, user, directories, image. */
interface CheckedOptions {
  host: CheckedHost;
  port: number;
  username: string;
  outDir: string;
  dataDir: string;
  image: string;
  /** `host:port` as clients name the registry. */
  address: string;
}

/** Check the options that need no file read; --out may be missing but not a file. */
async function checkOptions(options: RegistryFilesOptions): Promise<CheckedOptions> {
  const host = checkHost(options.hostname, '--hostname');
  const port = checkPort(options.port ?? DEFAULT_REGISTRY_PORT, '--port');
  const username = checkUsername(options.username);
  const outDir = checkUnitPath(resolve(options.outDir), '--out');
  const dataDir = checkUnitPath(resolve(options.dataDir ?? DEFAULT_REGISTRY_DATA_DIR), '--data-dir');
  const image = formatReference(parseReference(options.image ?? DEFAULT_REGISTRY_IMAGE));
  const outStat = await stat(outDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (outStat && !outStat.isDirectory()) {
    throw usageError(CommonError.FLAG_INVALID, `--out ${outDir} is a file, not a directory`, {
      where: outDir,
      hint: 'name a directory (it is created if missing), e.g. --out /opt/registry',
    });
  }
  return { host, port, username, outDir, dataDir, image, address: `${host.display}:${port}` };
}

/** The password of --password-file, at most the bytes bcrypt reads. */
async function readRegistryPassword(passwordFile: string): Promise<string> {
  const password = await readPasswordFile(passwordFile);
  if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_PASSWORD_BYTES) {
    throw usageError(
      CertsError.PASSWORD_INVALID,
      `the password in --password-file ${passwordFile} is longer than ${BCRYPT_MAX_PASSWORD_BYTES} bytes; bcrypt would ignore the rest`,
      { where: passwordFile, hint: `use a password of at most ${BCRYPT_MAX_PASSWORD_BYTES} bytes` },
    );
  }
  return password;
}

/** The kind of registry.json: what `airgap registry install` reads back. */
const REGISTRY_DESCRIPTION_KIND = 'MirrorRegistry';
const REGISTRY_DESCRIPTION_API = 'airgap/v1';

/** registry.json: the registry these files make, for `airgap registry` (no secret in it). */
function registryDescription(o: CheckedOptions): Record<string, unknown> {
  return {
    apiVersion: REGISTRY_DESCRIPTION_API,
    kind: REGISTRY_DESCRIPTION_KIND,
    address: o.address,
    hostname: o.host.host,
    port: o.port,
    username: o.username,
    dataDir: o.dataDir,
    image: o.image,
  };
}

/** Each file of the set: its kind, its content and its mode. */
function registryFileSet(
  o: CheckedOptions,
  cert: CheckedServerCertificate,
  htpasswd: string,
  trustFile: string | undefined,
): [RegistryFileKind, string | Buffer, number][] {
  const { host, port, username, outDir, dataDir, image, address } = o;
  return [
    ['htpasswd', htpasswd, 0o600],
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
    ['description', `${JSON.stringify(registryDescription(o), null, 2)}\n`, 0o644],
  ];
}

/** Refuse, naming all of them, files of the set that are already in `outDir`. */
async function refuseExisting(outDir: string, kinds: RegistryFileKind[]): Promise<void> {
  const present: string[] = [];
  for (const kind of kinds)
    if (await exists(join(outDir, REGISTRY_FILES[kind]))) present.push(REGISTRY_FILES[kind]);
  if (present.length > 0) {
    throw usageError(
      CommonError.OUTPUT_EXISTS,
      `${outDir} already holds ${present.join(', ')}; not replacing ${present.length === 1 ? 'it' : 'them'}`,
      {
        where: outDir,
        hint: 'pass --force to replace them (a new password hash and http.secret), or choose another --out',
      },
    );
  }
}

/**
 * Check everything, then write the registry's files into `outDir` as one set (each to a temp name,
 * then all renamed). Nothing is written when a check fails, or when a file is already there and
 * `force` is not set.
 */
export async function writeRegistryFiles(options: RegistryFilesOptions): Promise<RegistryFilesResult> {
  const o = await checkOptions(options);
  const password = await readRegistryPassword(options.passwordFile);
  const cert = await checkServerCertificate({
    certFile: options.certFile,
    keyFile: options.keyFile,
    caFile: options.caFile,
    host: o.host,
  });

  const path = (kind: RegistryFileKind) => join(o.outDir, REGISTRY_FILES[kind]);
  const trustFile = cert.caPem ? path('ca') : cert.selfSigned ? path('certificate') : undefined;
  const htpasswd = htpasswdEntry(o.username, password, options.bcryptCost);
  const contents = registryFileSet(o, cert, htpasswd, trustFile);
  if (!options.force)
    await refuseExisting(
      o.outDir,
      contents.map(([kind]) => kind),
    );

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
    registry: o.address,
    hostname: o.host.host,
    port: o.port,
    username: o.username,
    outDir: o.outDir,
    dataDir: o.dataDir,
    image: o.image,
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
