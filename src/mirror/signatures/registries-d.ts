/**
 * containers-registries.d(5): where containers/image finds an image's signatures. Each `*.yaml`
 * file of the directory may set `default-docker` and `docker: {<scope>: {...}}` namespaces with
 *
 * - `lookaside` (legacy name `sigstore`, which has nothing to do with Sigstore): the base URL of a
 *   GPG "simple signing" store, read at `<base>/<repository path>@sha256=<hex>/signature-<n>`;
 *   `lookaside-staging` (legacy `sigstore-staging`) is where signatures are written;
 * - `use-sigstore-attachments`: read (and copy) Sigstore signatures stored next to the image as
 *   `sha256-<hex>.sig` tags, which is what a node needs to verify what the mirror serves.
 *
 * Lookup is containers/image's: the most specific scope first (the same order as the policy's,
 * policy-evaluate.ts `dockerScopes`), and a scope that leaves a setting out passes to the next,
 * ending with `default-docker`. A scope defined in two files, or `default-docker` defined twice, is
 * an error, as it is for containers/image. Unknown fields are ignored as containers/image ignores
 * them, but reported as warnings (a misspelt field silently changes what is read).
 *
 * `registriesDSnippet` writes the file oc-mirror writes into `working-dir/containers/registries.d`
 * for every registry it mirrors from, so nodes and tools read the mirror's signature attachments.
 */
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { childPath, loadYamlWithPositions } from '../../config/positions.js';
import { isYamlLimitError } from '../../config/yaml-load.js';
import { Problems } from '../../config/problems.js';
import { didYouMean } from '../../config/suggest.js';
import { unreadableReason, usageError } from '../../util/errors.js';
import { toYaml } from '../../util/yaml.js';
import { isNotFound } from '../../util/fs.js';
import { MirrorError } from '../errors.js';
import { parseReference } from '../reference.js';
import { dockerScopes } from './policy-evaluate.js';

/** Where containers/image looks when no directory is named: the user's if it exists, else this. */
const SYSTEM_REGISTRIES_D = '/etc/containers/registries.d';

/** One namespace (`default-docker` or a `docker` scope) as the files set it. */
export interface RegistriesDNamespace {
  /** `lookaside`, else the legacy `sigstore`: the base URL signatures are read from. */
  lookaside?: string;
  /** `lookaside-staging`, else the legacy `sigstore-staging`: where signatures are written. */
  lookasideStaging?: string;
  useSigstoreAttachments?: boolean;
  /** file:line:column of the namespace. */
  where: string;
}

/** The lookaside store an image's GPG signatures are read from (or written to), and the scope that chose it. */
export interface Lookaside {
  url: string;
  /** The docker scope, or `default-docker`. */
  scope: string;
  where: string;
}

const NAMESPACE_FIELDS = [
  'lookaside',
  'lookaside-staging',
  'sigstore',
  'sigstore-staging',
  'use-sigstore-attachments',
];
const MAN = 'containers-registries.d(5)';
const INVALID = MirrorError.REGISTRIES_D_INVALID;

/** A registries.d directory, read: every `*.yaml` file merged. */
export class RegistriesD {
  constructor(
    /** The directory read (or that was missing, when that was allowed). */
    readonly dir: string,
    readonly defaultDocker: RegistriesDNamespace | undefined,
    readonly docker: ReadonlyMap<string, RegistriesDNamespace>,
    /** Fields ignored (unknown to containers/image), each with its place. */
    readonly warnings: readonly string[] = [],
  ) {}

  /** The namespaces that apply to `reference`, most specific first, `default-docker` last. */
  private namespacesFor(reference: string): { scope: string; ns: RegistriesDNamespace }[] {
    const out: { scope: string; ns: RegistriesDNamespace }[] = [];
    for (const scope of dockerScopes(reference)) {
      const ns = this.docker.get(scope);
      if (ns) out.push({ scope, ns });
    }
    if (this.defaultDocker) out.push({ scope: 'default-docker', ns: this.defaultDocker });
    return out;
  }

  /**
   * The lookaside store of `reference` (`host/repo[:tag|@digest]`): the most specific namespace
   * that sets one. With `write`, the staging location comes first, as containers/image writes there.
   */
  lookasideFor(reference: string, options: { write?: boolean } = {}): Lookaside | undefined {
    for (const { scope, ns } of this.namespacesFor(reference)) {
      const url = (options.write ? ns.lookasideStaging : undefined) ?? ns.lookaside;
      if (url !== undefined) return { url, scope, where: ns.where };
    }
    return undefined;
  }

  /** Whether Sigstore signatures of `reference` are read from `sha256-<hex>.sig` attachments (default false). */
  useSigstoreAttachments(reference: string): boolean {
    for (const { ns } of this.namespacesFor(reference)) {
      if (ns.useSigstoreAttachments !== undefined) return ns.useSigstoreAttachments;
    }
    return false;
  }
}

/** The directory containers/image would read: `~/.config/containers/registries.d` if it exists, else the system one. */
export async function defaultRegistriesDDir(): Promise<string> {
  const user = join(homedir(), '.config/containers/registries.d');
  try {
    await access(user);
    return user;
  } catch (e) {
    // There but not to be looked at: still the user's, and reading it says why.
    return isNotFound(e) ? SYSTEM_REGISTRIES_D : user;
  }
}

/**
 * Read a registries.d directory. A missing directory is an error unless `missingOk` (the default
 * directory may well not exist: then nothing is configured, as for containers/image).
 */
export async function loadRegistriesD(
  dir: string,
  options: { missingOk?: boolean } = {},
): Promise<RegistriesD> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.yaml')).sort();
  } catch (e) {
    if (options.missingOk && (e as NodeJS.ErrnoException).code === 'ENOENT')
      return new RegistriesD(dir, undefined, new Map());
    throw usageError(
      MirrorError.REGISTRIES_D_UNREADABLE,
      `cannot read the registries.d directory ${dir}: ${unreadableReason(e)}`,
      {
        hint: `name a directory of ${MAN} YAML files with --registries.d`,
        cause: e,
      },
    );
  }
  let defaultDocker: RegistriesDNamespace | undefined;
  const docker = new Map<string, RegistriesDNamespace>();
  const warnings: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      if (!(await stat(file)).isFile()) continue;
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw usageError(MirrorError.REGISTRIES_D_UNREADABLE, `cannot read ${file}: ${unreadableReason(e)}`, {
        cause: e,
      });
    }
    const parsed = parseRegistriesDFile(text, file);
    warnings.push(...parsed.warnings);
    if (parsed.defaultDocker) {
      if (defaultDocker) throw twice('"default-docker"', defaultDocker.where, parsed.defaultDocker.where);
      defaultDocker = parsed.defaultDocker;
    }
    for (const [scope, ns] of parsed.docker) {
      const earlier = docker.get(scope);
      if (earlier) throw twice(`docker scope "${scope}"`, earlier.where, ns.where);
      docker.set(scope, ns);
    }
  }
  return new RegistriesD(dir, defaultDocker, docker, warnings);
}

function twice(what: string, first: string, second: string) {
  return usageError(INVALID, `${what} is defined twice: at ${first} and at ${second}`, {
    where: second,
    hint: 'keep one definition: containers/image refuses a namespace defined in two files',
  });
}

/** One registries.d file's namespaces (`file` names it in messages). */
export function parseRegistriesDFile(
  text: string,
  file: string,
): { defaultDocker?: RegistriesDNamespace; docker: Map<string, RegistriesDNamespace>; warnings: string[] } {
  let loaded: ReturnType<typeof loadYamlWithPositions>;
  try {
    loaded = loadYamlWithPositions(text, { source: file, exitCode: 2 });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    const mark = (e as { mark?: { line: number; column: number } }).mark;
    const reason = (e as { reason?: string }).reason ?? (e as Error).message;
    throw usageError(INVALID, `${file} is not valid YAML: ${reason}`, {
      where: mark ? `${file}:${mark.line + 1}:${mark.column + 1}` : file,
      hint: `see ${MAN} for the format: docker: {<host/namespace>: {use-sigstore-attachments: true}}`,
    });
  }
  const p = new Problems<string>(file, loaded.positions);
  const warnings: string[] = [];
  const unknown = (obj: Record<string, unknown>, path: string, known: string[]) => {
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const hint = didYouMean(key, known);
      warnings.push(
        `${p.where(childPath(path, key), 'key').where}: ${file} sets "${key}", which containers/image ignores${hint ? ` (${hint})` : ''}`,
      );
    }
  };
  const doc = loaded.value ?? {};
  const docker = new Map<string, RegistriesDNamespace>();
  let defaultDocker: RegistriesDNamespace | undefined;
  if (!isObject(doc)) {
    p.add(INVALID, '', `${file} is not a mapping`, { hint: `see ${MAN}` });
  } else {
    unknown(doc, '', ['default-docker', 'docker']);
    if (doc['default-docker'] != null)
      defaultDocker = readNamespace(p, doc['default-docker'], 'default-docker', unknown);
    const scopes = doc.docker ?? {};
    if (!isObject(scopes)) p.add(INVALID, 'docker', 'docker must map scopes (host[/namespace…]) to settings');
    else
      for (const [scope, raw] of Object.entries(scopes)) {
        const ns = readNamespace(p, raw ?? {}, childPath('docker', scope), unknown);
        if (ns) docker.set(scope, ns);
      }
  }
  p.throwIfAny();
  return { ...(defaultDocker ? { defaultDocker } : {}), docker, warnings };
}

function readNamespace(
  p: Problems<string>,
  raw: unknown,
  path: string,
  unknown: (obj: Record<string, unknown>, path: string, known: string[]) => void,
): RegistriesDNamespace | undefined {
  if (!isObject(raw)) {
    p.add(INVALID, path, `${path} must be a mapping of ${NAMESPACE_FIELDS.join(', ')}`);
    return undefined;
  }
  unknown(raw, path, NAMESPACE_FIELDS);
  const url = (field: string): string | undefined => {
    const v = raw[field];
    if (v === undefined || v === null || v === '') return undefined;
    const scheme =
      typeof v === 'string' ? /^([a-z][a-z0-9+.-]*):\/\//i.exec(v)?.[1]?.toLowerCase() : undefined;
    if (scheme === 'file' || scheme === 'http' || scheme === 'https') return v as string;
    p.add(
      INVALID,
      childPath(path, field),
      `${path} ${field} ${JSON.stringify(v)} is not a file://, http:// or https:// URL`,
      {
        hint: 'e.g. lookaside: https://signatures.example.com/sigstore or file:///var/lib/containers/sigstore',
      },
    );
    return undefined;
  };
  const attachments = raw['use-sigstore-attachments'];
  if (attachments !== undefined && attachments !== null && typeof attachments !== 'boolean')
    p.add(
      INVALID,
      childPath(path, 'use-sigstore-attachments'),
      `${path} use-sigstore-attachments must be true or false`,
    );
  const lookaside = url('lookaside') ?? url('sigstore');
  const lookasideStaging = url('lookaside-staging') ?? url('sigstore-staging');
  return {
    ...(lookaside !== undefined ? { lookaside } : {}),
    ...(lookasideStaging !== undefined ? { lookasideStaging } : {}),
    ...(typeof attachments === 'boolean' ? { useSigstoreAttachments: attachments } : {}),
    where: p.where(path, 'key').where,
  };
}

/**
 * Where signature number `index` (from 1) of `digest` lives under a lookaside base, as containers/image
 * builds it: `<base>/<repository path without the host>@<algorithm>=<hex>/signature-<index>`.
 */
export function lookasideSignatureUrl(
  base: string,
  reference: string,
  digest: string,
  index: number,
): string {
  const { repository } = parseReference(reference);
  const [algorithm, hex] = digest.split(':');
  return `${base}/${repository}@${algorithm}=${hex}/signature-${index}`;
}

/** The registries.d file name oc-mirror gives a registry's snippet: `<host[:port]>.yaml`. */
export function registriesDFileName(host: string): string {
  return `${checkedHost(host)}.yaml`;
}

/** The registries.d YAML that makes containers/image (CRI-O on the nodes, podman, skopeo) read `host`'s Sigstore attachments. */
export function registriesDSnippet(host: string): string {
  return toYaml({ docker: { [checkedHost(host)]: { 'use-sigstore-attachments': true } } });
}

function checkedHost(host: string): string {
  let ok: boolean;
  try {
    ok = parseReference(`${host}/x`).registry === host;
  } catch {
    ok = false; // parseReference refuses it: not a host, refused below
  }
  if (!ok)
    throw usageError(MirrorError.REF_INVALID, `"${host}" is not a registry host[:port]`, {
      hint: 'name the registry as images name it, e.g. mirror.example.com:8443',
    });
  return host;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
