/**
 * The pull secret with the mirror registry's credentials added, as the seed runbook does by hand
 * (`auths["<registry>:5000"] = {auth: base64(user:pass), email}` in a copy of the pull secret).
 * The original file is never changed; the copy is written 0600, atomically. Nothing here prints or
 * returns a secret: results name registries only.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { usageError, CommonError } from '../util/errors.js';
import { isNotFound, statIfExists, writeFileAtomic } from '../util/fs.js';
import { parseHostPort } from './names.js';
import { readInputFile } from './inspect.js';
import { checkUsername, readPasswordFile } from './registry/htpasswd.js';
import { CertsError } from './errors.js';

/**
 * Check a registry as pull secrets and image references name it: `host` or `host:port`, the host
 * an RFC 1123 name or an IP address, IPv6 in brackets (`[fd00::5]:5000`). Returns it unchanged.
 */
export function checkRegistryHost(input: string, flag = '--registry'): string {
  const bad = (
    why: string,
    hint = 'write it as host or host:port, e.g. registry.example.com:5000 or [fd00::5]:5000',
  ): never => {
    throw usageError(CommonError.FLAG_INVALID, `${flag} "${input}" is not a registry host: ${why}`, { hint });
  };
  if (input === '') bad('it is empty');
  if (/[/\s@]/.test(input) || input.includes('://'))
    bad('give only the host and port, without a scheme, path, user or spaces');
  const parsed = parseHostPort(input);
  if ('error' in parsed)
    bad(
      parsed.error,
      /brackets/.test(parsed.error) ? 'write it as [address]:port, e.g. [fd00::5]:5000' : undefined,
    );
  return input;
}

/** The pull secret's shape: `auths` and anything else, kept as it is. */
interface PullSecretDoc {
  auths: Record<string, unknown>;
  [key: string]: unknown;
}

/** Where a JSON.parse error is, as `line L, column C`; never the text itself (it holds secrets). */
function jsonErrorPosition(text: string, e: unknown): string {
  const pos = /at position (\d+)/.exec((e as Error).message)?.[1];
  if (pos === undefined)
    return /end of JSON/i.test((e as Error).message) ? 'it ends early' : 'it is not JSON';
  const before = text.slice(0, Number(pos));
  const line = before.split('\n').length;
  const column = Number(pos) - before.lastIndexOf('\n');
  return `not valid JSON at line ${line}, column ${column}`;
}

/** Parse a pull secret: JSON with an `auths` object. Errors name the file, never its content. */
export function parsePullSecret(text: string, path: string): PullSecretDoc {
  const hint =
    'give the pull secret file from console.redhat.com/openshift/install/pull-secret (JSON with an "auths" object)';
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw usageError(
      CertsError.PULL_SECRET_INVALID,
      `the pull secret ${path} is ${jsonErrorPosition(text, e)}`,
      {
        where: path,
        hint,
      },
    );
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(doc))
    throw usageError(CertsError.PULL_SECRET_INVALID, `the pull secret ${path} is not a JSON object`, {
      where: path,
      hint,
    });
  if (!isObject(doc.auths)) {
    throw usageError(
      CertsError.PULL_SECRET_INVALID,
      `the pull secret ${path} has no "auths" object${'auths' in doc ? ' ("auths" is not an object)' : ''}`,
      { where: path, hint },
    );
  }
  return doc as PullSecretDoc;
}

/** `{auth: base64(user:password)[, email]}`, the entry containers, podman and OpenShift read. */
function pullSecretEntry(username: string, password: string, email?: string): Record<string, string> {
  return {
    auth: Buffer.from(`${username}:${password}`, 'utf8').toString('base64'),
    ...(email !== undefined ? { email } : {}),
  };
}

/**
 * A copy of `doc` with `auths[registry]` set (added at the end, or replaced where it was). Every
 * other field and entry stays as it was, in its order.
 */
export function withRegistryAuth(
  doc: PullSecretDoc,
  registry: string,
  entry: Record<string, string>,
): { doc: PullSecretDoc; action: 'added' | 'replaced' } {
  const action = Object.hasOwn(doc.auths, registry) ? 'replaced' : 'added';
  return { doc: { ...doc, auths: { ...doc.auths, [registry]: entry } }, action };
}

export interface PullSecretOptions {
  /** The pull secret to start from; never written. */
  pullSecretFile: string;
  /** `host[:port]` of the mirror registry, as image references name it. */
  registry: string;
  username: string;
  passwordFile: string;
  email?: string;
  /** Where the new pull secret goes (0600); must not be the input file. */
  outFile: string;
  force?: boolean;
}

export interface PullSecretResult {
  input: string;
  out: string;
  registry: string;
  action: 'added' | 'replaced';
  /** Every registry the new pull secret has credentials for, in file order. */
  registries: string[];
}

/**
 * The real path of `path`, following symlinks of the file and its directory; undefined if neither
 * exists. Any other failure (a directory this user cannot search) is thrown with its path.
 */
async function realPathOf(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  try {
    return join(await realpath(dirname(path)), basename(path));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** True when `a` and `b` are the same file (the same path after symlinks, or the same inode). */
async function sameFile(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  const [ra, rb] = await Promise.all([realPathOf(a), realPathOf(b)]);
  if (ra !== undefined && ra === rb) return true;
  const [sa, sb] = await Promise.all([statIfExists(a), statIfExists(b)]);
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** Read the pull secret, add the registry's credentials, write the copy (0600, atomically). */
export async function writePullSecret(options: PullSecretOptions): Promise<PullSecretResult> {
  const registry = checkRegistryHost(options.registry);
  const username = checkUsername(options.username);
  if (options.email !== undefined && (options.email.trim() === '' || /[\s"]/.test(options.email))) {
    throw usageError(CommonError.FLAG_INVALID, `--email "${options.email}" is not an e-mail address`, {
      hint: 'give an address like admin@example.com, or leave --email out',
    });
  }
  const input = resolve(options.pullSecretFile);
  const out = resolve(options.outFile);
  if (await sameFile(input, out)) {
    throw usageError(
      CommonError.FLAG_CONFLICT,
      `--out ${options.outFile} is the input pull secret ${options.pullSecretFile}`,
      {
        where: out,
        hint: 'write the result to a new file, e.g. --out pull-secret-mirror.json; the original stays as it is',
      },
    );
  }
  const text = (await readInputFile(input, '--pull-secret', 'pull secret')).toString('utf8');
  const doc = parsePullSecret(text, input);
  const password = await readPasswordFile(options.passwordFile);

  const outStat = await statIfExists(out);
  if (outStat?.isDirectory()) {
    throw usageError(CommonError.FLAG_INVALID, `--out ${out} is a directory`, {
      where: out,
      hint: `name a file in it, e.g. --out ${join(out, 'pull-secret-mirror.json')}`,
    });
  }
  if (outStat && !options.force) {
    throw usageError(CommonError.OUTPUT_EXISTS, `${out} already exists; not replacing it`, {
      where: out,
      hint: 'pass --force to replace it, or choose another --out',
    });
  }

  const merged = withRegistryAuth(doc, registry, pullSecretEntry(username, password, options.email));
  // One line, as console.redhat.com serves it and as install-config.yaml's pullSecret takes it.
  await writeFileAtomic(out, `${JSON.stringify(merged.doc)}\n`, { mode: 0o600 });
  return { input, out, registry, action: merged.action, registries: Object.keys(merged.doc.auths) };
}
