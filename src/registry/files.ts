/**
 * The registry directory `registry install` works from: the files `airgap certs registry` wrote, or
 * written now (the certificate from --cert/--key, or issued by a CA kept in <dir>/pki, minted once).
 * Also what the certificate names, which is every address clients may use.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  DEFAULT_REGISTRY_DATA_DIR,
  DEFAULT_REGISTRY_IMAGE,
  DEFAULT_REGISTRY_PORT,
  REGISTRY_FILES,
  createCaFiles,
  issueServerFiles,
  writeRegistryFiles,
} from '../certs/index.js';
import { messageOf, usageError } from '../util/errors.js';
import { isNotFound, statIfExists } from '../util/fs.js';
import { BastionError } from './errors.js';
import { pemBlocks } from './probe.js';
import { readSetup, type RegistrySetup } from './state.js';

/** What to write when the directory has no registry yet. */
export interface NewRegistryFiles {
  hostname?: string;
  /** More names for the certificate (DNS names, IPv4 and IPv6 addresses). */
  sans?: string[];
  port?: number;
  username?: string;
  passwordFile: string;
  dataDir?: string;
  image?: string;
  /** Your own certificate (else one is issued by <dir>/pki/ca.crt, minted when missing). */
  cert?: string;
  key?: string;
  ca?: string;
}

/** Where the CA airgap mints for the registry lives: <dir>/pki/ca.crt and ca.key (0600). */
export const pkiDir = (dir: string) => join(resolve(dir), 'pki');

/** Whether the directory already holds registry files (registry.json). */
export async function hasSetup(dir: string): Promise<boolean> {
  return (await statIfExists(join(resolve(dir), REGISTRY_FILES.description))) !== undefined;
}

/**
 * Write the registry files into `dir`: with --cert/--key as given, else issued by the directory's
 * own CA (minted the first time, kept for renewals).
 */
export async function writeNewSetup(dir: string, o: NewRegistryFiles): Promise<RegistrySetup> {
  if (!o.hostname || !o.username)
    throw usageError(BastionError.NOT_INSTALLED, `${resolve(dir)} holds no registry files yet`, {
      where: resolve(dir),
      hint: 'give --hostname and --username (and --password-file) to write them, or --dir a directory airgap certs registry wrote',
    });
  let cert = o.cert;
  let key = o.key;
  let ca = o.ca;
  if (!cert) {
    const pki = pkiDir(dir);
    if (!(await statIfExists(join(pki, 'ca.crt'))))
      await createCaFiles({ out: pki, commonName: `airgap registry CA (${o.hostname})` });
    await issueServerFiles({
      caCert: join(pki, 'ca.crt'),
      caKey: join(pki, 'ca.key'),
      names: [o.hostname, ...(o.sans ?? [])],
      commonName: o.hostname,
      out: join(pki, 'registry'),
      force: true,
    });
    cert = join(pki, 'registry', 'tls.crt');
    key = join(pki, 'registry', 'tls.key');
    ca = join(pki, 'ca.crt');
  }
  await writeRegistryFiles({
    hostname: o.hostname,
    port: o.port ?? DEFAULT_REGISTRY_PORT,
    certFile: cert,
    keyFile: key ?? '',
    ...(ca ? { caFile: ca } : {}),
    username: o.username,
    passwordFile: o.passwordFile,
    dataDir: o.dataDir ?? DEFAULT_REGISTRY_DATA_DIR,
    outDir: dir,
    image: o.image ?? DEFAULT_REGISTRY_IMAGE,
  });
  return readSetup(dir);
}

/** The CAs a client needs to trust the registry: certs/ca.crt, or the self-signed certificate itself. */
export async function trustedCas(setup: RegistrySetup): Promise<string[]> {
  try {
    return pemBlocks(await readFile(setup.files.ca, 'utf8'));
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  // No CA file: the certificate is self-signed (certs registry checked it), and is its own anchor.
  return pemBlocks(await readFile(setup.files.certificate, 'utf8')).slice(0, 1);
}

/** The leaf certificate the directory holds. */
export async function leafCertificate(setup: RegistrySetup): Promise<X509Certificate> {
  const first = pemBlocks(await readFile(setup.files.certificate, 'utf8'))[0];
  if (!first)
    throw usageError(BastionError.STATE_INVALID, `${setup.files.certificate} holds no certificate`, {
      where: setup.files.certificate,
    });
  return new X509Certificate(first);
}

/** Every `host:port` the certificate lets clients use (its DNS and IP names), the registry's own address first. */
export function certifiedAddresses(leaf: X509Certificate, setup: RegistrySetup): string[] {
  const names = (leaf.subjectAltName ?? '')
    .split(', ')
    .map((n) => /^(?:DNS:|IP Address:)(.+)$/.exec(n)?.[1])
    .filter((n): n is string => !!n && !n.startsWith('*'));
  const out = [setup.address];
  for (const n of names) {
    // Node writes IPv6 names expanded (0:0:0:0:0:0:0:1): the URL parser gives the canonical form.
    const a = n.includes(':') ? `${new URL(`http://[${n}]/`).hostname}:${setup.port}` : `${n}:${setup.port}`;
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

/** The registry password from --password-file: one line (a final newline dropped), never printed. */
export async function readPassword(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw usageError(BastionError.PASSWORD_FILE_INVALID, `--password-file ${file}: ${messageOf(e)}`, {
      where: file,
      hint: 'give the file holding the registry password, on one line',
      cause: e,
    });
  }
  const password = text.replace(/\r?\n$/, '');
  if (!password || password.includes('\n'))
    throw usageError(
      BastionError.PASSWORD_FILE_INVALID,
      `--password-file ${file} must hold the password on one line`,
      {
        where: file,
      },
    );
  return password;
}
