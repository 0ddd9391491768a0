/**
 * Thin execa wrappers around skopeo 1.9, the independent checker: tests use it to read back what our
 * tool wrote (and to seed registries). Every call passes an explicit `--authfile` and `--cert-dir`
 * (never the user's ~/.docker or /etc/containers/certs.d) and an accept-anything signature policy.
 * skopeo 1.9 cannot name bracketed IPv6 hosts; use `TestRegistry.skopeoHost` for those.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

/** How skopeo reaches one registry. */
export interface SkopeoOptions {
  /** A containers auth.json. */
  authFile?: string;
  /** A directory holding the CA (`*.crt`) to trust, e.g. `<certsDir>/<host:port>`. */
  certDir?: string;
  /** Default true; false for plain-HTTP registries. */
  tlsVerify?: boolean;
  /** Default 60 s. */
  timeoutMs?: number;
  /** A containers-registries.conf for this call (`--registries-conf`): mirrors, blocked registries. */
  registriesConf?: string;
  /** Choose this architecture's child of a multi-arch index (`--override-arch`). */
  overrideArch?: string;
}

export interface SkopeoCopyOptions extends SkopeoOptions {
  /** `--all`: copy every image of a manifest list / index. */
  all?: boolean;
  /** More arguments placed before the image names, e.g. `['--preserve-digests']`. */
  extraArgs?: string[];
  /** Override the shared options for the source only. */
  src?: SkopeoOptions;
  /** Override the shared options for the destination only. */
  dest?: SkopeoOptions;
}

/** The JSON `skopeo inspect` prints (fields we use; skopeo prints a few more). */
export interface SkopeoInspectResult {
  Name: string;
  Digest: string;
  RepoTags: string[];
  Created: string | null;
  Architecture: string;
  Os: string;
  Layers: string[];
  Labels: Record<string, string> | null;
  Env: string[] | null;
  [key: string]: unknown;
}

const POLICY = `${JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] })}\n`;
let policyFile: string | undefined;

/**
 * An accept-anything signature policy, so the host's /etc/containers/policy.json never matters. One
 * fixed file in the temp dir, shared by all test processes (same content; written atomically).
 */
function policy(): string {
  if (!policyFile) {
    const path = join(tmpdir(), 'airgap-test-skopeo-policy.json');
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // not there yet
    }
    if (current !== POLICY) {
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, POLICY);
      renameSync(tmp, path);
    }
    policyFile = path;
  }
  return policyFile;
}

function isDocker(ref: string): boolean {
  return ref.startsWith('docker://');
}

/** Flags that go before the subcommand. */
function globalFlags(opts: SkopeoOptions): string[] {
  return [
    ...(opts.registriesConf ? ['--registries-conf', opts.registriesConf] : []),
    ...(opts.overrideArch ? ['--override-arch', opts.overrideArch] : []),
  ];
}

/** Flags for one side; `prefix` is '' (inspect, list-tags), 'src-' or 'dest-' (copy). */
function sideFlags(prefix: '' | 'src-' | 'dest-', opts: SkopeoOptions): string[] {
  const args: string[] = [];
  if (opts.authFile) args.push(`--${prefix}authfile`, opts.authFile);
  if (opts.certDir) args.push(`--${prefix}cert-dir`, opts.certDir);
  if (opts.tlsVerify !== undefined) args.push(`--${prefix}tls-verify=${opts.tlsVerify}`);
  return args;
}

/** Run skopeo; stdout as bytes. Throws with skopeo's stderr. */
async function run(args: string[], timeoutMs = 60_000): Promise<Uint8Array> {
  const full = ['--policy', policy(), ...args];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== 'REGISTRY_AUTH_FILE' && k !== 'CONTAINERS_REGISTRIES_CONF') env[k] = v;
  }
  const result = await execa('skopeo', full, {
    encoding: 'buffer',
    stripFinalNewline: false,
    reject: false,
    timeout: timeoutMs,
    stdin: 'ignore',
    env,
    extendEnv: false,
  });
  if (result.failed) {
    const stderr = Buffer.from(result.stderr).toString('utf8').trim();
    const why = result.timedOut
      ? `timed out after ${timeoutMs} ms`
      : `exit ${result.exitCode ?? result.signal}`;
    throw new Error(`skopeo ${args.join(' ')} failed (${why}): ${stderr || result.shortMessage}`);
  }
  return result.stdout;
}

/** `skopeo inspect`: the parsed JSON summary, or with `raw: true` the manifest exactly as served. */
export function skopeoInspect(ref: string, opts: SkopeoOptions & { raw: true }): Promise<string>;
export function skopeoInspect(
  ref: string,
  opts?: SkopeoOptions & { raw?: false },
): Promise<SkopeoInspectResult>;
export async function skopeoInspect(
  ref: string,
  opts: SkopeoOptions & { raw?: boolean } = {},
): Promise<string | SkopeoInspectResult> {
  const out = await run(
    [...globalFlags(opts), 'inspect', ...sideFlags('', opts), ...(opts.raw ? ['--raw'] : []), ref],
    opts.timeoutMs,
  );
  const text = Buffer.from(out).toString('utf8');
  return opts.raw ? text : (JSON.parse(text) as SkopeoInspectResult);
}

/** The raw manifest bytes of `ref`, exactly as the registry serves them. */
export async function skopeoRawManifest(ref: string, opts: SkopeoOptions = {}): Promise<Buffer> {
  return Buffer.from(
    await run([...globalFlags(opts), 'inspect', ...sideFlags('', opts), '--raw', ref], opts.timeoutMs),
  );
}

/** `sha256:<hex>` of the raw manifest bytes of `ref` (its content digest). */
export async function skopeoDigest(ref: string, opts: SkopeoOptions = {}): Promise<string> {
  const bytes = await skopeoRawManifest(ref, opts);
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `skopeo copy src dst`. Registry flags go only to the docker:// side(s). */
export async function skopeoCopy(src: string, dst: string, opts: SkopeoCopyOptions = {}): Promise<void> {
  const shared: SkopeoOptions = { authFile: opts.authFile, certDir: opts.certDir, tlsVerify: opts.tlsVerify };
  const args = [...globalFlags(opts), 'copy', '--quiet'];
  if (isDocker(src)) args.push(...sideFlags('src-', { ...shared, ...opts.src }));
  if (isDocker(dst)) args.push(...sideFlags('dest-', { ...shared, ...opts.dest }));
  if (opts.all) args.push('--all');
  args.push(...(opts.extraArgs ?? []), src, dst);
  await run(args, opts.timeoutMs ?? 120_000);
}

/** `skopeo list-tags` of a repository (`docker://host/repo`), sorted. */
export async function skopeoListTags(repoRef: string, opts: SkopeoOptions = {}): Promise<string[]> {
  const out = await run(['list-tags', ...sideFlags('', opts), repoRef], opts.timeoutMs);
  const parsed = JSON.parse(Buffer.from(out).toString('utf8')) as { Tags?: string[] };
  return [...(parsed.Tags ?? [])].sort();
}

/** `skopeo delete` of an image (a tag or digest reference). */
export async function skopeoDelete(ref: string, opts: SkopeoOptions = {}): Promise<void> {
  await run([...globalFlags(opts), 'delete', ...sideFlags('', opts), ref], opts.timeoutMs);
}
