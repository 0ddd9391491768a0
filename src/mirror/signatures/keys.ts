/**
 * The keys release signatures are verified with. airgap carries no key of its own: the Red Hat
 * release key comes from where the system installed it (RHEL's redhat-release package puts release
 * key 2, which signs OpenShift releases, with Red Hat's other keys in one file), or from the files
 * --release-keyring (else AIRGAP_RELEASE_KEYRING) names: OKD's keys, a site's own signer. Without
 * either a run verifies no release signature and writes none.
 */
import { readFile } from 'node:fs/promises';
import type * as OpenPGP from 'openpgp';
import { AirgapError, unreadableReason, usageError } from '../../util/errors.js';
import { isNotFound } from '../../util/fs.js';
import { MirrorError } from '../errors.js';

/**
 * Where the system keeps the Red Hat release keys: RHEL (and images built on it) installs them
 * with the redhat-release package, one armored block per key (release key 2, the auxiliary keys,
 * and on RHEL 10 release key 4). Every key in the file is trusted as a Red Hat key.
 */
const SYSTEM_RELEASE_KEYRINGS = ['/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release'];

/** What a run says, once and before it fetches anything, when it has no release key. */
export const NO_RELEASE_KEY =
  'no release key: release signatures cannot be verified and none will be written; install the Red Hat release key (/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release, package redhat-release) or give --release-keyring FILE (or AIRGAP_RELEASE_KEYRING)';

let loaded: Promise<typeof OpenPGP> | undefined;

/**
 * OpenPGP.js, loaded on first use: it is large, and most runs verify no GPG signature (a Sigstore
 * signature is checked with node's crypto), so they never pay for loading it.
 */
export function openpgpLib(): Promise<typeof OpenPGP> {
  return (loaded ??= import('openpgp'));
}

/** Public keys to verify release signatures with, and where they came from. */
export interface Keyring {
  keys: OpenPGP.PublicKey[];
  /** Upper-case hex fingerprints of the primary keys. */
  fingerprints: string[];
  /** The files the keys were read from. */
  source: string;
}

/** The keys in the given files (armored or binary, one or many each): each file must hold one. */
export async function loadKeyring(files: string[]): Promise<Keyring> {
  const keys: OpenPGP.Key[] = [];
  for (const file of files) keys.push(...(await readKeyFile(file)));
  return keyringOf(keys, files.join(', '));
}

/**
 * The release keyring of a run: the files given (--release-keyring, else AIRGAP_RELEASE_KEYRING),
 * each of which must be a readable key; else the keys installed on the system (`systemFiles`,
 * default SYSTEM_RELEASE_KEYRINGS), where a file that does not exist is absence and any other
 * failure to read it is an error; else none (undefined).
 */
export async function findReleaseKeyring(o: {
  files?: string[];
  systemFiles?: string[];
}): Promise<Keyring | undefined> {
  if (o.files && o.files.length > 0) return loadKeyring(o.files);
  const keys: OpenPGP.Key[] = [];
  const found: string[] = [];
  for (const file of o.systemFiles ?? SYSTEM_RELEASE_KEYRINGS) {
    const inFile = await readSystemKeyFile(file);
    if (!inFile) continue;
    keys.push(...inFile);
    found.push(file);
  }
  return found.length > 0 ? keyringOf(keys, found.join(', ')) : undefined;
}

/** The keys of a system key file; undefined when it does not exist (ENOENT, nothing else). */
async function readSystemKeyFile(file: string): Promise<OpenPGP.Key[] | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw new AirgapError(
      MirrorError.SIGNATURE_SYSTEM_KEYRING_UNREADABLE,
      `cannot read the release keys installed at ${file}: ${unreadableReason(e)}`,
      {
        cause: e,
        hint: `make ${file} readable to this user, or give --release-keyring FILE`,
      },
    );
  }
  try {
    return await parseKeys(bytes);
  } catch (e) {
    throw new AirgapError(
      MirrorError.SIGNATURE_SYSTEM_KEYRING_UNREADABLE,
      `${file} holds no OpenPGP public key: ${(e as Error).message}`,
      {
        cause: e,
        hint: 'reinstall the package that owns it (rpm -qf, then dnf reinstall), or give --release-keyring FILE',
      },
    );
  }
}

/** A keyring from keys given as armored text or binary bytes (a containers-policy.json keyData or keyPath). */
export async function keyringFromKeys(keys: string | Uint8Array, source = 'the policy'): Promise<Keyring> {
  return keyringOf(await parseKeys(keys), source);
}

async function readKeyFile(file: string): Promise<OpenPGP.Key[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw usageError(
      MirrorError.SIGNATURE_KEYRING_INVALID,
      `cannot read the release keyring ${file}: ${unreadableReason(e)}`,
      {
        hint: 'give --release-keyring the path of an OpenPGP public key file (gpg --export [--armor] <key>)',
      },
    );
  }
  try {
    return await parseKeys(bytes);
  } catch (e) {
    throw usageError(
      MirrorError.SIGNATURE_KEYRING_INVALID,
      `${file} holds no OpenPGP public key: ${(e as Error).message}`,
      {
        hint: 'export the key with gpg --export --armor <key id> > keyring.asc and give that file',
      },
    );
  }
}

/** An armored key block (a file may hold several, one after another, as RHEL's key file does). */
const ARMORED_KEY = /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*?-----END PGP PUBLIC KEY BLOCK-----/g;

/** Armored (each block, with any text around them, as key files often have) or binary OpenPGP keys. */
async function parseKeys(data: string | Uint8Array): Promise<OpenPGP.Key[]> {
  const openpgp = await openpgpLib();
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
  if (text.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----')) {
    const utf8 = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    // OpenPGP.js reads the first armored block of a text only: each block is read on its own.
    const blocks = utf8.match(ARMORED_KEY) ?? [utf8];
    return (await Promise.all(blocks.map((armoredKeys) => openpgp.readKeys({ armoredKeys })))).flat();
  }
  return openpgp.readKeys({ binaryKeys: typeof data === 'string' ? Buffer.from(data, 'latin1') : data });
}

/** The public half of each key (a secret key given by mistake verifies as its public key), each once. */
function keyringOf(keys: OpenPGP.Key[], source: string): Keyring {
  const unique = new Map<string, OpenPGP.PublicKey>();
  for (const k of keys) unique.set(k.getFingerprint().toUpperCase(), k.toPublic());
  return { keys: [...unique.values()], fingerprints: [...unique.keys()], source };
}
