/**
 * What a registry directory holds: registry.json (written by `airgap certs registry`: the address,
 * the user, the data directory, the image) and installed.json (written by `airgap registry install`:
 * the unit, the trust files it added). Both are read strictly: a field of the wrong type is an
 * error naming the file and the field, never a default.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { REGISTRY_FILES, checkHost, checkUnitPath } from '../certs/index.js';
import { formatReference, parseReference } from '../mirror/index.js';
import { AirgapError, usageError } from '../util/errors.js';
import { isNotFound, writeFileAtomic } from '../util/fs.js';
import { BastionError } from './errors.js';
import { unitFile } from './systemd.js';
import { HOST_TRUST_STORES, PODMAN_CERTS_D } from './trust.js';

/** A unit and container name: systemd's and podman's rules, kept to what needs no escaping. */
const NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

export function checkName(name: string): string {
  if (!NAME_RE.test(name))
    throw usageError(
      BastionError.NAME_INVALID,
      `--name ${JSON.stringify(name)} cannot name a unit and a container`,
      {
        hint: 'use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. registry)',
      },
    );
  return name;
}

/** The registry the directory's files make (registry.json). */
export interface RegistrySetup {
  dir: string;
  address: string;
  hostname: string;
  port: number;
  username: string;
  dataDir: string;
  image: string;
  files: { certificate: string; key: string; ca: string; config: string; htpasswd: string; unit: string };
}

/** What `registry install` put on the host (installed.json). */
export interface InstallRecord {
  apiVersion: 'airgap/v1';
  kind: 'InstalledRegistry';
  name: string;
  unitFile: string;
  /** Every address the registry is trusted under in certs.d (host:port). */
  addresses: string[];
  /** The trust files written (host store and certs.d). */
  trustFiles: string[];
  /** The host store's rebuild command, when host files were written. */
  hostStore?: { dir: string; update: string[] };
}

export const INSTALLED_FILE = 'installed.json';

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  try {
    const doc: unknown = JSON.parse(text);
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch (e) {
    throw new AirgapError(BastionError.STATE_INVALID, `${path} is not JSON: ${(e as Error).message}`, {
      where: path,
      hint: 'write it again: airgap certs registry --force (registry.json) or airgap registry install (installed.json)',
    });
  }
  throw new AirgapError(BastionError.STATE_INVALID, `${path} does not hold a JSON object`, { where: path });
}

function field<T>(
  doc: Record<string, unknown>,
  path: string,
  key: string,
  check: (v: unknown) => v is T,
  what: string,
): T {
  const v = doc[key];
  if (check(v)) return v;
  throw new AirgapError(
    BastionError.STATE_INVALID,
    `${path}: ${key} must be ${what}, found ${JSON.stringify(v) ?? 'nothing'}`,
    {
      where: `${path} ${key}`,
      hint: 'write the registry files again: airgap certs registry … --force',
    },
  );
}

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0 && (v as number) < 65536;
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

/** The directory's registry.json, or NOT_INSTALLED (exit 2) when the directory has none. */
export async function readSetup(dirIn: string): Promise<RegistrySetup> {
  const dir = resolve(dirIn);
  const path = join(dir, REGISTRY_FILES.description);
  const doc = await readJson(path);
  if (!doc)
    throw usageError(
      BastionError.NOT_INSTALLED,
      `${dir} holds no registry files (no ${REGISTRY_FILES.description})`,
      {
        where: dir,
        hint: 'give the directory airgap certs registry --output wrote, or let airgap registry install write it (--hostname, --username, --password-file)',
      },
    );
  if (doc.kind !== 'MirrorRegistry')
    throw new AirgapError(
      BastionError.STATE_INVALID,
      `${path} is not a MirrorRegistry (kind ${JSON.stringify(doc.kind)})`,
      {
        where: path,
      },
    );
  const f = (k: RegistrySetupFile) => join(dir, REGISTRY_FILES[k]);
  // What goes into the unit's command line and names files is checked as certs registry checked
  // it when it wrote the file: a hand-edited registry.json cannot smuggle in another command.
  const port = field(doc, path, 'port', isPort, 'a port number');
  const hostname = field(doc, path, 'hostname', isString, 'a host name');
  const host = checked(path, 'hostname', () => checkHost(hostname, 'hostname'));
  const address = field(doc, path, 'address', isString, 'host:port');
  if (address !== `${host.display}:${port}`)
    throw invalid(path, 'address', `address ${address} is not hostname:port (${host.display}:${port})`);
  const rawDataDir = field(doc, path, 'dataDir', isString, 'a directory');
  const dataDir = checked(path, 'dataDir', () => checkUnitPath(rawDataDir, 'dataDir'));
  const image = field(doc, path, 'image', isString, 'an image reference');
  const canonical = checked(path, 'image', () => formatReference(parseReference(image)));
  if (canonical !== image) throw invalid(path, 'image', `image ${image} is not written as ${canonical}`);
  return {
    dir,
    address,
    hostname: host.host,
    port,
    username: field(doc, path, 'username', isString, 'a user name'),
    dataDir,
    image,
    files: {
      certificate: f('certificate'),
      key: f('key'),
      ca: f('ca'),
      config: f('config'),
      htpasswd: f('htpasswd'),
      unit: f('unit'),
    },
  };
}
type RegistrySetupFile = 'certificate' | 'key' | 'ca' | 'config' | 'htpasswd' | 'unit';

/**
 * installed.json of the directory; undefined when install never ran there. uninstall removes the
 * files it lists and runs its trust store's rebuild command, so each is held to what install
 * writes: the unit file of the name, a known store and its command, files of this name in the
 * store, and `ca*.crt` in a certs.d directory of one address.
 */
export async function readInstall(dir: string): Promise<InstallRecord | undefined> {
  const path = join(resolve(dir), INSTALLED_FILE);
  const doc = await readJson(path);
  if (!doc) return undefined;
  const name = checkName(field(doc, path, 'name', isString, 'a unit name'));
  const unit = field(doc, path, 'unitFile', isString, 'a path');
  if (unit !== unitFile(name)) throw invalid(path, 'unitFile', `unitFile ${unit} is not ${unitFile(name)}`);
  let hostStore: InstallRecord['hostStore'];
  if (doc.hostStore !== undefined) {
    const raw = doc.hostStore as Record<string, unknown>;
    const known = HOST_TRUST_STORES.find(
      (s) => raw && s.dir === raw.dir && JSON.stringify(s.update) === JSON.stringify(raw.update),
    );
    if (!known)
      throw invalid(path, 'hostStore', `hostStore ${JSON.stringify(raw)} is not a trust store airgap knows`);
    hostStore = { dir: known.dir, update: [...known.update] };
  }
  const trustFiles = Array.isArray(doc.trustFiles)
    ? field(doc, path, 'trustFiles', isStrings, 'a list of paths')
    : [];
  for (const f of trustFiles)
    if (!isTrustFile(f, name, hostStore?.dir))
      throw invalid(
        path,
        'trustFiles',
        `trustFiles holds ${JSON.stringify(f)}, not a trust file install writes for ${name}`,
      );
  return {
    apiVersion: 'airgap/v1',
    kind: 'InstalledRegistry',
    name,
    unitFile: unit,
    addresses: field(doc, path, 'addresses', isStrings, 'a list of host:port'),
    trustFiles,
    ...(hostStore ? { hostStore } : {}),
  };
}

/** `<store>/airgap-<name>[-N].crt`, or `/etc/containers/certs.d/<host:port>/ca[-N].crt`. */
function isTrustFile(f: string, name: string, storeDir: string | undefined): boolean {
  const n = '(?:-[1-9][0-9]{0,2})?\\.crt';
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (storeDir && new RegExp(`^${esc(storeDir)}/airgap-${esc(name)}${n}$`).test(f)) return true;
  return new RegExp(
    `^${esc(PODMAN_CERTS_D)}/(?:\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}/ca${n}$`,
  ).test(f);
}

function invalid(path: string, key: string, message: string): AirgapError {
  return new AirgapError(BastionError.STATE_INVALID, `${path}: ${message}`, {
    where: `${path} ${key}`,
    hint: 'this file is written by airgap; write it again (airgap certs registry --force, or airgap registry install) rather than by hand',
  });
}

/** `check()`'s value; its error, if any, said as the file's. */
function checked<T>(path: string, key: string, check: () => T): T {
  try {
    return check();
  } catch (e) {
    // Only the check's own verdict (a usage error) is the file's; anything else goes on as it is.
    if (!(e instanceof AirgapError) || e.exitCode !== 2) throw e;
    throw new AirgapError(BastionError.STATE_INVALID, `${path}: ${e.message}`, {
      where: `${path} ${key}`,
      hint: 'this file is written by airgap certs registry; write it again with --force rather than by hand',
      cause: e,
    });
  }
}

export async function writeInstall(dir: string, record: InstallRecord): Promise<void> {
  await writeFileAtomic(join(resolve(dir), INSTALLED_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * The directory's registry and what install recorded; the unit name is --name, else the one
 * install recorded, else `registry`. A --name other than the recorded one is refused: it would
 * act on another unit than the one this directory runs under.
 */
export async function locateRegistry(
  dir: string,
  nameFlag: string | undefined,
): Promise<{ setup: RegistrySetup; record?: InstallRecord; name: string }> {
  const setup = await readSetup(dir);
  const record = await readInstall(setup.dir);
  if (nameFlag !== undefined && record && record.name !== nameFlag)
    throw usageError(
      BastionError.NAME_INVALID,
      `--name ${nameFlag}: ${setup.dir} was installed as ${record.name}`,
      {
        hint: `leave out --name, or give --name ${record.name}`,
      },
    );
  return { setup, ...(record ? { record } : {}), name: checkName(nameFlag ?? record?.name ?? 'registry') };
}
