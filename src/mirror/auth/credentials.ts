import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describeFailure, lastLine, runProgram, type ProgramRun } from '../../util/program.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** What we can authenticate with. Never printed; `source` says where it came from. */
export interface Credential {
  username?: string;
  password?: string;
  /** An OAuth2 refresh token (docker config `identitytoken`, or a helper's `<token>` user). */
  identityToken?: string;
  /** `~/.docker/config.json (auths["quay.io/org"])` — safe to show. */
  source: string;
}

export interface CredentialOptions {
  /** --authfile: replaces the containers auth.json lookup (docker's config is still consulted after it). */
  authFile?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** How long a credential helper may take to answer (default 30 s). */
  helperTimeoutMs?: number;
  /** A credential given directly (airgap's own checks of a registry it installed): no file is read. */
  credential?: Credential;
}

interface AuthFileDoc {
  auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
}

/**
 * The files consulted, in order: the user-specified file (--authfile, else REGISTRY_AUTH_FILE), else
 * `$XDG_RUNTIME_DIR/containers/auth.json` and `~/.config/containers/auth.json`; then docker's
 * `$DOCKER_CONFIG/config.json` (or `~/.docker/config.json`), which containers/image also reads.
 */
export function authFileChain(opts: CredentialOptions = {}): string[] {
  const env = opts.env ?? process.env;
  // An empty variable counts as unset (containers/image does the same); `??` would make relative paths.
  const home = opts.home || env.HOME || homedir();
  const chain: string[] = [];
  const userSpecified = opts.authFile || env.REGISTRY_AUTH_FILE;
  if (userSpecified) chain.push(userSpecified);
  else if (env.XDG_RUNTIME_DIR) chain.push(join(env.XDG_RUNTIME_DIR, 'containers', 'auth.json'));
  if (!userSpecified)
    chain.push(join(env.XDG_CONFIG_HOME || join(home, '.config'), 'containers', 'auth.json'));
  chain.push(join(env.DOCKER_CONFIG || join(home, '.docker'), 'config.json'));
  return chain;
}

/** `https://index.docker.io/v1/` → `docker.io`; `http://host:5000/` → `host:5000`. */
export function normalizeAuthKey(key: string): string {
  let k = key.replace(/^https?:\/\//, '').replace(/\/+$/, '');
  if (k.endsWith('/v1') || k.endsWith('/v2')) k = k.slice(0, -3);
  if (k === 'index.docker.io' || k === 'registry-1.docker.io') k = 'docker.io';
  return k;
}

/** `reg/ns/repo` → [`reg/ns/repo`, `reg/ns`, `reg`]: most specific first. */
function candidateKeys(registry: string, repository: string): string[] {
  const parts = repository.split('/');
  const keys: string[] = [];
  for (let i = parts.length; i > 0; i--) keys.push(`${registry}/${parts.slice(0, i).join('/')}`);
  keys.push(registry);
  return keys;
}

async function readAuthFile(path: string, required: boolean): Promise<AuthFileDoc | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (!required && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw usageError(
      MirrorError.AUTH_FILE_UNREADABLE,
      `cannot read the auth file ${path}: ${(e as Error).message}`,
      {
        hint: 'check the path given with --authfile or REGISTRY_AUTH_FILE',
      },
    );
  }
  try {
    return JSON.parse(text) as AuthFileDoc;
  } catch (e) {
    // V8's message can quote the text around the error, which may be a secret: give only the position.
    throw usageError(
      MirrorError.AUTH_FILE_INVALID,
      `the auth file ${path} is not valid JSON${jsonErrorPosition(text, e)}`,
      {
        hint: 'it should look like {"auths": {"host:port": {"auth": "<base64 user:password>"}}}',
      },
    );
  }
}

/** ` at line L column C` from a JSON.parse error, without any of the text. */
function jsonErrorPosition(text: string, e: unknown): string {
  const message = (e as Error).message;
  const m = /at position (\d+)/.exec(message);
  if (!m && !/Unexpected end of JSON/.test(message)) return '';
  const pos = m ? Number(m[1]) : text.length;
  const before = text.slice(0, pos).split('\n');
  return ` at line ${before.length} column ${before[before.length - 1]!.length + 1}`;
}

/** Standard base64 with padding, as docker and containers/image decode `auth` (Node's decoder skips junk). */
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeEntry(
  entry: NonNullable<AuthFileDoc['auths']>[string],
  source: string,
): Credential | undefined {
  if (entry.identitytoken) return { identityToken: entry.identitytoken, username: entry.username, source };
  if (entry.auth) {
    if (!BASE64_RE.test(entry.auth.replace(/[\r\n]/g, ''))) {
      throw usageError(MirrorError.AUTH_ENTRY_INVALID, `the "auth" value of ${source} is not valid base64`, {
        hint: 'regenerate it with `podman login` or `echo -n user:password | base64`',
      });
    }
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw usageError(
        MirrorError.AUTH_ENTRY_INVALID,
        `the "auth" value of ${source} does not decode to user:password`,
        {
          hint: 'regenerate it with `podman login` or `echo -n user:password | base64`',
        },
      );
    }
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), source };
  }
  if (entry.username && entry.password) return { username: entry.username, password: entry.password, source };
  return undefined;
}

/** How long a credential helper may take by default. */
const HELPER_TIMEOUT_MS = 30_000;

/** Why a helper run did not give an answer, as an AUTH_HELPER_FAILED error; undefined when it did. */
function helperFailure(
  r: ProgramRun,
  bin: string,
  registry: string,
  source: string,
): AirgapError | undefined {
  const f = r.failure;
  if (!f) return undefined;
  const fail = (message: string, hint = `run \`echo ${registry} | ${bin} get\` to see why`) =>
    new AirgapError(MirrorError.AUTH_HELPER_FAILED, message, { where: source, hint });
  // Never its stdout, which is where the protocol puts the secret: only its diagnostics.
  const said = lastLine(r.stderr) ? `: ${lastLine(r.stderr)}` : '';
  if (f.kind === 'not-found')
    return fail(
      `credential helper ${bin} failed for ${registry}: it is not installed (not on PATH)`,
      `install ${bin} or remove it from the config`,
    );
  if (f.kind === 'timeout')
    return fail(
      `credential helper ${bin} did not answer for ${registry} within ${f.ms / 1000} s (stopped)${said}`,
      `run \`echo ${registry} | ${bin} get\`: it may be waiting for a locked keychain or a prompt`,
    );
  if (f.kind === 'output-limit')
    return fail(
      `credential helper ${bin} printed more than ${f.bytes / 1024 / 1024} MiB for ${registry} (stopped)`,
    );
  return fail(`credential helper ${bin} failed for ${registry} (${describeFailure(f)})${said}`);
}

/** Run `docker-credential-<helper> get` for a host (the docker credential-helper protocol). */
async function fromHelper(
  helper: string,
  registry: string,
  source: string,
  timeoutMs = HELPER_TIMEOUT_MS,
): Promise<Credential | undefined> {
  const bin = `docker-credential-${helper}`;
  const r = await runProgram(bin, ['get'], { timeoutMs, input: registry });
  // The protocol's "no credential for this host" (exit 1, "credentials not found in native keychain").
  if (r.failure?.kind === 'exit' && /not found/i.test(`${r.stdout}${r.stderr}`)) return undefined;
  const failed = helperFailure(r, bin, registry, source);
  if (failed) throw failed;
  let out: { Username?: string; Secret?: string };
  try {
    out = JSON.parse(r.stdout) as { Username?: string; Secret?: string };
  } catch {
    // Never echo the output: it is meant to hold a secret.
    throw new AirgapError(
      MirrorError.AUTH_HELPER_FAILED,
      `credential helper ${bin} printed something that is not JSON for ${registry}`,
      {
        where: source,
        hint: `run \`echo ${registry} | ${bin} get\` to see why`,
      },
    );
  }
  if (out.Username === '<token>') return { identityToken: out.Secret, source: `${source} via ${bin}` };
  return { username: out.Username, password: out.Secret, source: `${source} via ${bin}` };
}

/**
 * Find the credential for `registry/repository` the way podman does: each file in the chain in turn;
 * within a file, a credential helper for the host, then `auths` keys from the most specific
 * (`reg/ns/repo`) to the least (`reg`), then the file's `credsStore`.
 */
export async function findCredential(
  registry: string,
  repository: string,
  opts: CredentialOptions = {},
): Promise<Credential | undefined> {
  if (opts.credential) return opts.credential;
  const env = opts.env ?? process.env;
  const userSpecified = opts.authFile || env.REGISTRY_AUTH_FILE;
  const keys = candidateKeys(registry, repository);
  for (const file of authFileChain(opts)) {
    const doc = await readAuthFile(file, file === userSpecified);
    if (!doc) continue;
    const helper = doc.credHelpers?.[registry];
    if (helper) {
      const c = await fromHelper(
        helper,
        registry,
        `${file} (credHelpers["${registry}"])`,
        opts.helperTimeoutMs,
      );
      if (c) return c;
    }
    // An exact key wins over one that only normalizes to it (`docker.io` over `https://index.docker.io/v1/`).
    const auths = new Map<string, NonNullable<AuthFileDoc['auths']>[string]>();
    const entries = Object.entries(doc.auths ?? {});
    for (const [k, v] of entries) if (!auths.has(normalizeAuthKey(k))) auths.set(normalizeAuthKey(k), v);
    for (const [k, v] of entries) auths.set(k, v);
    for (const key of keys) {
      const entry = auths.get(key);
      if (!entry) continue;
      const c = decodeEntry(entry, `${file} (auths["${key}"])`);
      if (c) return c;
    }
    if (doc.credsStore) {
      const c = await fromHelper(doc.credsStore, registry, `${file} (credsStore)`, opts.helperTimeoutMs);
      if (c) return c;
    }
  }
  return undefined;
}
