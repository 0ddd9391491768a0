/**
 * A real registry for integration tests: Debian's CNCF distribution 2.8 (`/usr/bin/docker-registry`)
 * as a child process with its own temp storage, a free port, TLS from the test PKI and htpasswd
 * (bcrypt) auth. With auth on, `GET /v2/` answers 401 with `WWW-Authenticate: Basic realm="..."`
 * (no token server): clients send Basic credentials on every request. With `token`, the registry
 * instead trusts JWTs from a token server (`WWW-Authenticate: Bearer realm=...,service=...`).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import * as yaml from 'js-yaml';
import http from 'node:http';
import https from 'node:https';
import { processAlive } from '../src/util/lock.js';
import { testPki } from './pki.js';

const REGISTRY_BIN = '/usr/bin/docker-registry';
const START_TIMEOUT_MS = 10_000;
const MAX_LOG_CHARS = 2_000_000;

/** distribution's `auth.token` settings: where clients get tokens, and whom the registry trusts. */
export interface RegistryTokenAuth {
  /** The token endpoint clients are sent to (`https://127.0.0.1:PORT/token`). */
  realm: string;
  /** The service name: sent to the token server, and the `aud` the registry accepts. */
  service: string;
  /** The `iss` the registry accepts. */
  issuer: string;
  /** PEM file of the CA(s) the token's `x5c` signing certificate must chain to. */
  rootCertBundle: string;
}

export interface StartRegistryOptions {
  /** htpasswd (bcrypt) Basic auth; default true. Ignored when `token` is given. */
  auth?: boolean;
  /**
   * Token (Bearer) auth instead of htpasswd. The registry then checks no passwords itself, so the
   * returned `username`, `password` and `authFile` mean nothing to it: write an auth.json for the
   * token server's users instead.
   */
  token?: RegistryTokenAuth;
  /** HTTPS with the test PKI; default true. */
  tls?: boolean;
  /**
   * Address to listen on: any IPv4 or IPv6 literal of this host; default '127.0.0.1'. For an address
   * other than 127.0.0.1 and ::1 the server certificate also names that address.
   */
  host?: string;
  /**
   * Serve this certificate instead of the test PKI's (e.g. one issued by `airgap certs issue`); the
   * returned caFile and certs.d then hold `caFile`.
   */
  serverTls?: { certFile: string; keyFile: string; caFile: string };
  /**
   * Merged into the generated config.yml: objects merge recursively, anything else replaces,
   * `null` deletes the key (e.g. `{ log: { accesslog: { disabled: true } } }`).
   */
  extraConfig?: Record<string, unknown>;
}

/** Options for the skopeo helpers (test/helpers/skopeo.ts) that reach this registry. */
export interface RegistrySkopeoOptions {
  authFile: string;
  /** The per-host certs.d directory holding ca.crt, for `--cert-dir`. */
  certDir: string;
  tlsVerify: boolean;
}

export interface TestRegistry {
  /** host:port as clients name it: "127.0.0.1:34567" or "[::1]:34567". */
  host: string;
  /** "https://127.0.0.1:34567" (http:// without TLS). */
  url: string;
  username: string;
  password: string;
  /** PEM file of the test CA the registry's certificate chains to. */
  caFile: string;
  /** A containers certs.d-style root: `<certsDir>/<host>/ca.crt` (also for `skopeoHost`). */
  certsDir: string;
  /** A containers auth.json (0600) with the credentials for `host` (and `skopeoHost`). */
  authFile: string;
  /** The registry's filesystem storage root. */
  storageDir: string;
  /**
   * host:port skopeo 1.9 can name. skopeo 1.9 cannot parse bracketed IPv6 references
   * ("invalid reference format"), so for an IPv6 registry this is a plain TCP relay on 127.0.0.1
   * into [addr]:port (TLS still ends at the registry; its certificate covers 127.0.0.1).
   */
  skopeoHost: string;
  /** Ready-made options for skopeoInspect/skopeoCopy/... against `skopeoHost`. */
  skopeo: RegistrySkopeoOptions;
  /** Kill the registry and remove its temp dirs. Idempotent. */
  stop(): Promise<void>;
  /**
   * Run distribution's `garbage-collect` on its storage (never --delete-untagged: it deletes an
   * index's platform manifests); its output.
   */
  garbageCollect(): Promise<string>;
  /** The registry's stdout and stderr so far (access log and warnings/errors), truncated at the front. */
  logs(): string;
}

interface Live {
  child: ResultPromise;
  root: string;
  relay?: Relay;
}

const live = new Set<Live>();
let exitHookInstalled = false;

const ROOT_PREFIX = 'airgap-registry-';

/**
 * Clean up after this process on a normal exit, and once per process after earlier ones that died
 * without cleaning up (a test worker is ended with SIGTERM or SIGKILL, and 'exit' does not run then).
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const entry of live) {
      entry.child.kill('SIGKILL');
      rmSync(entry.root, { recursive: true, force: true });
    }
    live.clear();
  });
  sweepStale();
}

/**
 * Remove the temp dirs of registries whose owning process is gone (dirs are named
 * `airgap-registry-<owner pid>-XXXXXX`), killing such a registry first if it still runs: only the pid
 * recorded in that dir, and only if its command line names that dir's config.
 */
function sweepStale(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const owner = Number(new RegExp(`^${ROOT_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!owner || owner === process.pid || processAlive(owner)) continue;
    const root = join(tmpdir(), name);
    try {
      const pid = Number(readFileSync(join(root, 'registry.pid'), 'utf8'));
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (pid > 0 && cmdline.includes(join(root, 'config.yml'))) process.kill(pid, 'SIGKILL');
    } catch {
      // no pid file, or the registry is gone already
    }
    rmSync(root, { recursive: true, force: true });
  }
}

/** Bind port 0 on `host`, read the port the kernel chose, close. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** "127.0.0.1:5000" or "[::1]:5000". */
function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else if (isPlainObject(value) && isPlainObject(out[key])) out[key] = deepMerge(out[key], value);
    else out[key] = value;
  }
  return out;
}

async function htpasswdLine(username: string, password: string): Promise<string> {
  // bcrypt cost 4 (the minimum): the registry checks the hash on every request.
  const { stdout } = await execa('htpasswd', ['-nbB', '-C', '4', username, password]);
  return `${stdout.trim()}\n`;
}

interface Relay {
  port: number;
  close(): Promise<void>;
}

/** A TCP relay on 127.0.0.1 into [host]:port, for clients that cannot name IPv6 hosts. */
function startRelay(host: string, port: number): Promise<Relay> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port });
    sockets.add(client).add(upstream);
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', done).on('close', done);
    upstream.on('error', done).on('close', done);
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            sockets.forEach((s) => s.destroy());
          }),
      }),
    );
  });
}

function registryEnv(): Record<string, string> {
  // REGISTRY_* variables override config.yml in distribution; do not inherit any.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('REGISTRY_') && !k.startsWith('OTEL_')) env[k] = v;
  }
  return env;
}

/**
 * Start a registry and wait until `GET /v2/` answers (401 with auth, 200 without). Rejects with the
 * registry's output if it does not come up within ~10 s.
 */
export async function startRegistry(opts: StartRegistryOptions = {}): Promise<TestRegistry> {
  const tokenAuth = opts.token;
  const auth = !tokenAuth && (opts.auth ?? true);
  const tls = opts.tls ?? true;
  const bindHost = opts.host ?? '127.0.0.1';
  if (!net.isIP(bindHost))
    throw new Error(`startRegistry: host must be an IPv4 or IPv6 literal, got "${bindHost}"`);
  installExitHook();

  const root = await mkdtemp(join(tmpdir(), `${ROOT_PREFIX}${process.pid}-`));
  let started: Live | undefined;
  try {
    const test = await testPki(join(root, 'tls'), { ipAddresses: [bindHost] });
    const pki = opts.serverTls
      ? { ...opts.serverTls, caPem: await readFile(opts.serverTls.caFile, 'utf8') }
      : { certFile: test.certFile, keyFile: test.keyFile, caFile: test.caFile, caPem: test.ca.certPem };
    const storageDir = join(root, 'storage');
    await mkdir(storageDir, { recursive: true });
    const username = 'airgap';
    const password = randomBytes(12).toString('hex');
    const htpasswdFile = join(root, 'htpasswd');
    if (auth) await writeFile(htpasswdFile, await htpasswdLine(username, password), { mode: 0o600 });

    // The port found free may be taken before the registry binds it; retry a few times.
    let lastError: Error | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort(bindHost);
      const host = hostPort(bindHost, port);
      let config: Record<string, unknown> = {
        version: 0.1,
        log: { level: 'warn', formatter: 'text' },
        storage: {
          filesystem: { rootdirectory: storageDir },
          delete: { enabled: true },
          maintenance: { uploadpurging: { enabled: false } },
        },
        http: {
          addr: host,
          secret: randomBytes(16).toString('hex'),
          headers: { 'X-Content-Type-Options': ['nosniff'] },
          ...(tls ? { tls: { certificate: pki.certFile, key: pki.keyFile } } : {}),
        },
        ...(auth ? { auth: { htpasswd: { realm: 'airgap-test', path: htpasswdFile } } } : {}),
        ...(tokenAuth
          ? {
              auth: {
                token: {
                  realm: tokenAuth.realm,
                  service: tokenAuth.service,
                  issuer: tokenAuth.issuer,
                  rootcertbundle: tokenAuth.rootCertBundle,
                },
              },
            }
          : {}),
      };
      if (opts.extraConfig) config = deepMerge(config, opts.extraConfig);
      const configFile = join(root, 'config.yml');
      await writeFile(configFile, yaml.dump(config), { mode: 0o600 });

      let output = '';
      const append = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.length > MAX_LOG_CHARS) output = output.slice(-MAX_LOG_CHARS / 2);
      };
      const child = execa(REGISTRY_BIN, ['serve', configFile], {
        cwd: root,
        env: registryEnv(),
        extendEnv: false,
        stdin: 'ignore',
        buffer: false,
        reject: false,
        cleanup: true,
        forceKillAfterDelay: 3000,
      });
      child.stdout?.on('data', append);
      child.stderr?.on('data', append);
      const entry: Live = { child, root };
      live.add(entry);
      started = entry;
      if (child.pid) await writeFile(join(root, 'registry.pid'), String(child.pid));
      let exited = false;
      void child.then(() => {
        exited = true;
      });

      const url = `${tls ? 'https' : 'http'}://${host}`;
      const ready = await waitReady(url, pki.caFile, auth || tokenAuth ? 401 : 200, () => exited);
      if (ready !== true) {
        child.kill('SIGKILL');
        await child;
        live.delete(entry);
        started = undefined;
        lastError = new Error(
          `docker-registry on ${host} did not start: ${ready}\n--- registry output ---\n${output}`,
        );
        if (exited && /address already in use/.test(output)) continue;
        throw lastError;
      }

      // Credentials, certs.d, and (for IPv6) the relay skopeo 1.9 needs.
      let skopeoHost = host;
      if (net.isIPv6(bindHost)) {
        entry.relay = await startRelay(bindHost, port);
        skopeoHost = hostPort('127.0.0.1', entry.relay.port);
      }
      const certsDir = join(root, 'certs.d');
      const authFile = join(root, 'auth.json');
      const token = Buffer.from(`${username}:${password}`).toString('base64');
      const auths: Record<string, { auth: string }> = {};
      for (const h of new Set([host, skopeoHost])) {
        await mkdir(join(certsDir, h), { recursive: true });
        await writeFile(join(certsDir, h, 'ca.crt'), pki.caPem);
        auths[h] = { auth: token };
      }
      await writeFile(authFile, `${JSON.stringify({ auths }, null, 2)}\n`, { mode: 0o600 });

      const stop = () => stopEntry(entry);
      return {
        host,
        url,
        username,
        password,
        caFile: pki.caFile,
        certsDir,
        authFile,
        storageDir,
        skopeoHost,
        skopeo: { authFile, certDir: join(certsDir, skopeoHost), tlsVerify: tls },
        stop,
        garbageCollect: async () => {
          const gc = await execa(REGISTRY_BIN, ['garbage-collect', configFile], {
            env: registryEnv(),
            extendEnv: false,
            reject: false,
          });
          if (gc.exitCode !== 0) throw new Error(`garbage-collect failed: ${gc.stderr}`);
          return `${gc.stdout}${gc.stderr}`;
        },
        logs: () => output,
      };
    }
    throw lastError ?? new Error('docker-registry did not start');
  } catch (e) {
    if (started) await stopEntry(started);
    await rm(root, { recursive: true, force: true });
    throw e;
  }
}

/** Poll `GET /v2/` until it answers `expected`. Returns true, or why not. */
/** GET /v2/ once with node's own client (the lab does not depend on the code it tests). */
function probe(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(`${url}/v2/`, { ca, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
    req.on('error', reject);
  });
}

async function waitReady(
  url: string,
  caFile: string,
  expected: number,
  hasExited: () => boolean,
): Promise<true | string> {
  const ca = await readFile(caFile, 'utf8');
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (hasExited()) return 'the process exited';
    try {
      const status = await probe(url, ca);
      if (status === expected) return true;
      last = `GET /v2/ answered ${status}, expected ${expected}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return `timed out after ${START_TIMEOUT_MS} ms (${last})`;
}

const stopping = new WeakMap<Live, Promise<void>>();

function stopEntry(entry: Live): Promise<void> {
  let pending = stopping.get(entry);
  if (!pending) {
    pending = (async () => {
      await entry.relay?.close();
      entry.child.kill('SIGTERM');
      await entry.child;
      live.delete(entry);
      await rm(entry.root, { recursive: true, force: true });
    })();
    stopping.set(entry, pending);
  }
  return pending;
}

/** Stop every registry this process started. */
export async function stopAllRegistries(): Promise<void> {
  await Promise.all([...live].map(stopEntry));
}
