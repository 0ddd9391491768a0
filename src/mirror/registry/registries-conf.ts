/**
 * Read containers-registries.conf(5) (version 2, TOML) for where images are read from: the
 * `[[registry]]` tables with their `prefix`, `location`, `blocked`, `insecure`,
 * `mirror-by-digest-only` and `[[registry.mirror]]` (`location`, `insecure`, `pull-from-mirror`).
 * This is what lets the disconnected side read from an intermediate registry (an enclave's
 * upstream) while the plan and the cluster resources keep the images' real names.
 *
 * Which file, as podman and skopeo choose it: `--registries-conf`, else `CONTAINERS_REGISTRIES_CONF`,
 * else `$HOME/.config/containers/registries.conf` when it exists, else
 * `/etc/containers/registries.conf` with its `registries.conf.d/*.conf` drop-ins (a later table
 * with the same prefix replaces an earlier one). The other settings (search registries, aliases,
 * credential helpers) do not decide where an image is read from and are left alone.
 */
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { usageError, type AirgapError } from '../../util/errors.js';
import { isNotFound } from '../../util/fs.js';
import { MirrorError } from '../errors.js';

export type PullFromMirror = 'all' | 'digest-only' | 'tag-only';

export interface SourceMirror {
  location: string;
  insecure: boolean;
  pullFromMirror: PullFromMirror;
}

/** One `[[registry]]` table. */
export interface RegistryTable {
  /** The image name prefix it applies to (`*.example.com` for subdomains). */
  prefix: string;
  /** Where the prefix really is; empty for a wildcard prefix (no rewrite). */
  location: string;
  blocked: boolean;
  insecure: boolean;
  mirrors: SourceMirror[];
  /** The file it was read from, and its place there, for messages. */
  where: string;
}

/** The tables that say where images are read from, and the files they came from. */
export interface RegistriesConf {
  tables: RegistryTable[];
  files: string[];
}

/** Options of {@link loadRegistriesConf}. */
export interface LoadRegistriesConfOptions {
  /** An explicit file (--registries-conf): it must exist. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  /** The system file; tests point it elsewhere. Default /etc/containers/registries.conf. */
  systemPath?: string;
}

const SYSTEM_PATH = '/etc/containers/registries.conf';

function invalid(where: string, what: string, hint: string): AirgapError {
  return usageError(MirrorError.REGISTRIES_CONF_INVALID, `${where}: ${what}`, { hint });
}

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw usageError(MirrorError.REGISTRIES_CONF_INVALID, `cannot read ${path}: ${(e as Error).message}`, {
      hint: 'check the path and its permissions',
    });
  }
}

/** The registries configuration in effect (no file at all: no tables). */
export async function loadRegistriesConf(opts: LoadRegistriesConfOptions = {}): Promise<RegistriesConf> {
  const env = opts.env ?? process.env;
  const explicit = opts.path ?? (env.CONTAINERS_REGISTRIES_CONF || undefined);
  if (explicit) {
    const text = await readIfThere(explicit);
    if (text === undefined) {
      throw usageError(MirrorError.REGISTRIES_CONF_INVALID, `${explicit} does not exist`, {
        hint: opts.path
          ? 'give --registries-conf an existing containers-registries.conf(5) file'
          : 'CONTAINERS_REGISTRIES_CONF names a file that does not exist: fix or unset it',
      });
    }
    return { tables: parseRegistriesConf(text, explicit), files: [explicit] };
  }
  const home = env.HOME ?? homedir();
  const user = join(home, '.config', 'containers', 'registries.conf');
  const userText = await readIfThere(user);
  if (userText !== undefined) return { tables: parseRegistriesConf(userText, user), files: [user] };
  const system = opts.systemPath ?? SYSTEM_PATH;
  const files: string[] = [];
  const byPrefix = new Map<string, RegistryTable>();
  const add = (text: string, file: string) => {
    files.push(file);
    for (const t of parseRegistriesConf(text, file)) byPrefix.set(t.prefix, t);
  };
  const systemText = await readIfThere(system);
  if (systemText !== undefined) add(systemText, system);
  const dropIns = join(dirname(system), 'registries.conf.d');
  let names: string[] = [];
  try {
    names = (await readdir(dropIns)).filter((n) => n.endsWith('.conf')).sort();
  } catch (e) {
    // No drop-in directory: none. One that cannot be read would hide its mirrors and blocks: said.
    if (!isNotFound(e))
      throw usageError(
        MirrorError.REGISTRIES_CONF_INVALID,
        `cannot read ${dropIns}: ${(e as Error).message}`,
        {
          hint: 'check the path and its permissions',
          cause: e,
        },
      );
  }
  for (const n of names) {
    const text = await readIfThere(join(dropIns, n));
    if (text !== undefined) add(text, join(dropIns, n));
  }
  return { tables: [...byPrefix.values()], files };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A `prefix` or `location`: host[:port][/path][(:tag|@digest)], or `*.host` for a prefix. */
const NAME = /^(\*\.)?[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?([:@][A-Za-z0-9_.:-]+)?$/;

/** The tables of one file's text; REGISTRIES_CONF_INVALID names the file, table and field. */
export function parseRegistriesConf(text: string, file: string): RegistryTable[] {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    const at = e instanceof TomlError ? `${file}:${e.line}:${e.column}` : file;
    throw invalid(
      at,
      'is not valid TOML',
      'fix the TOML syntax at that position (see containers-registries.conf(5))',
    );
  }
  if (isObject(doc.registries)) {
    throw invalid(
      file,
      'is in the version 1 format ([registries.search] and the like), which names no mirrors',
      'write [[registry]] tables (version 2), as containers-registries.conf(5) describes',
    );
  }
  const tables = doc.registry ?? [];
  if (!Array.isArray(tables)) {
    throw invalid(file, '"registry" is not an array of tables', 'write each one as [[registry]]');
  }
  return tables.map((t: unknown, i) => registryTable(t, `${file}: [[registry]] #${i + 1}`));
}

function text(v: unknown, where: string, field: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalid(where, `${field} is not a string`, `write ${field} = "…"`);
  return v;
}

function flag(v: unknown, where: string, field: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw invalid(where, `${field} is not true or false`, `write ${field} = true`);
  return v;
}

function checkName(v: string, where: string, field: string, wildcard: boolean): void {
  if (!NAME.test(v) || (!wildcard && v.startsWith('*.'))) {
    throw invalid(
      where,
      `${field} "${v}" is not host[:port][/namespace…]${wildcard ? ' or *.domain' : ''}`,
      'see the formats in containers-registries.conf(5), e.g. "mirror.example.com:5000/ocp"',
    );
  }
}

function registryTable(t: unknown, at: string): RegistryTable {
  if (!isObject(t)) throw invalid(at, 'is not a table', 'write it as [[registry]] with key = value lines');
  // A trailing slash (`quay.io/redhatgov/`, as oc-mirror v1 wrote them) names the same namespace.
  const location = (text(t.location, at, 'location') ?? '').replace(/\/+$/, '');
  // An empty prefix is a missing one: it is the location.
  const prefix = (text(t.prefix, at, 'prefix') || location).replace(/\/+$/, '');
  const where = prefix ? `${at} (prefix "${prefix}")` : at;
  if (!prefix) throw invalid(where, 'has neither prefix nor location', 'add location = "host[/namespace]"');
  checkName(prefix, where, 'prefix', true);
  const wildcard = prefix.startsWith('*.');
  if (wildcard && /[/:@]/.test(prefix)) {
    throw invalid(
      where,
      `prefix "${prefix}": a wildcard prefix is a domain only`,
      'write prefix = "*.example.com"',
    );
  }
  if (location) checkName(location, where, 'location', false);
  const digestOnly = flag(t['mirror-by-digest-only'], where, 'mirror-by-digest-only');
  const rawMirrors = t.mirror ?? [];
  if (!Array.isArray(rawMirrors))
    throw invalid(where, 'mirror is not an array', 'write each as [[registry.mirror]]');
  const mirrors = rawMirrors.map((m: unknown, j): SourceMirror => {
    const mw = `${where}, [[registry.mirror]] #${j + 1}`;
    if (!isObject(m)) throw invalid(mw, 'is not a table', 'write location = "host[/namespace]" in it');
    const loc = text(m.location, mw, 'location')?.replace(/\/+$/, '');
    if (!loc) throw invalid(mw, 'has no location', 'add location = "host[:port][/namespace]"');
    checkName(loc, mw, 'location', false);
    const pull = text(m['pull-from-mirror'], mw, 'pull-from-mirror') || undefined;
    if (pull !== undefined && !['all', 'digest-only', 'tag-only'].includes(pull)) {
      throw invalid(
        mw,
        `pull-from-mirror "${pull}" is not all, digest-only or tag-only`,
        'use one of those three',
      );
    }
    if (pull !== undefined && digestOnly) {
      throw invalid(
        mw,
        'pull-from-mirror is set while its [[registry]] sets mirror-by-digest-only',
        'use one of the two (containers-registries.conf(5) allows pull-from-mirror only without mirror-by-digest-only)',
      );
    }
    return {
      location: loc,
      insecure: flag(m.insecure, mw, 'insecure'),
      pullFromMirror: digestOnly ? 'digest-only' : ((pull as PullFromMirror | undefined) ?? 'all'),
    };
  });
  return {
    prefix,
    location: wildcard ? '' : location || prefix,
    blocked: flag(t.blocked, where, 'blocked'),
    insecure: flag(t.insecure, where, 'insecure'),
    mirrors,
    where,
  };
}
