/**
 * Podman for tests, isolated from the machine's own: private containers.conf, storage.conf and
 * registries.conf under a temp dir, handed to podman (and to anything that runs it, such as the
 * airgap CLI or the systemd simulator) only through environment variables. Nothing is ever pulled:
 * no search registries, short names refused, and the images the tests need are built here from
 * programs already on the machine.
 *
 * Settings that work on these machines (Debian 12, podman 4.3.1, root, inside a container whose
 * cgroups are in hybrid mode and where systemd is not PID 1): runtime runc (crun refuses hybrid
 * cgroups), cgroup manager cgroupfs (no systemd to ask), events logged to a file (no journald),
 * explicit ulimits (the container's own limits are not inherited well), file locks under the temp
 * dir (so separate instances never share /dev/shm/libpod_lock), and the overlay driver unless the
 * temp dir itself lives on overlayfs (then vfs).
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

/** The environment variables that point podman at a private configuration. */
export interface PodmanEnv extends Record<string, string> {
  CONTAINERS_CONF: string;
  CONTAINERS_STORAGE_CONF: string;
  CONTAINERS_REGISTRIES_CONF: string;
}

const OVERLAYFS_MAGIC = 0x794c7630;
const REGISTRY_BIN = '/usr/bin/docker-registry';
/** The reference the lab's registry image is built under unless told otherwise. */
export const LAB_REGISTRY_REF = 'localhost/airgap-lab/registry:2';

function toml(s: string): string {
  return JSON.stringify(s);
}

/** overlay, unless `dir` is on overlayfs (overlay cannot stack on it): then vfs. */
function storageDriver(dir: string): string {
  const forced = process.env.AIRGAP_TEST_PODMAN_DRIVER;
  if (forced) return forced;
  return statfsSync(dir).type === OVERLAYFS_MAGIC ? 'vfs' : 'overlay';
}

const PUBLIC_REGISTRIES = [
  'docker.io',
  'quay.io',
  'gcr.io',
  'ghcr.io',
  'registry.k8s.io',
  'registry.redhat.io',
];

/**
 * The public registries to block: the well-known ones, and every host the machine's short-name
 * aliases point at (registries.conf.d drop-ins are read whatever CONTAINERS_REGISTRIES_CONF says,
 * so `podman pull registry` would otherwise resolve to docker.io/library/registry and go there).
 */
function publicRegistries(): string[] {
  const hosts = new Set(PUBLIC_REGISTRIES);
  const dropIns = '/etc/containers/registries.conf.d';
  let names: string[] = [];
  try {
    names = readdirSync(dropIns).filter((f) => f.endsWith('.conf'));
  } catch {
    // no drop-ins
  }
  for (const name of names) {
    for (const m of readFileSync(join(dropIns, name), 'utf8').matchAll(
      /"([a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?)\//g,
    ))
      hosts.add(m[1]!);
  }
  return [...hosts].sort();
}

/**
 * Write containers.conf, storage.conf and registries.conf into `dir` (created if missing), with
 * storage, run state and locks under `dir` too; returns the variables to add to a child's
 * environment.
 */
export function podmanEnv(dir: string): PodmanEnv {
  mkdirSync(dir, { recursive: true });
  // Run state (conmon's attach socket and exit files among it) at a short path: a socket path over
  // 108 bytes makes every `podman run` wait 20 s for conmon ("Exceeded conmon timeout"), and test
  // directories under TMPDIR are long. podmanCleanup removes it.
  const run = mkdtempSync('/tmp/agp-');
  const containersConf = join(dir, 'containers.conf');
  const storageConf = join(dir, 'storage.conf');
  const registriesConf = join(dir, 'registries.conf');
  writeFileSync(
    containersConf,
    [
      '[containers]',
      'default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]',
      '',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `tmp_dir = ${toml(join(run, 'libpod'))}`,
      'lock_type = "file"',
      '',
    ].join('\n'),
  );
  writeFileSync(
    storageConf,
    [
      '[storage]',
      `driver = ${toml(storageDriver(dir))}`,
      `graphroot = ${toml(join(dir, 'storage'))}`,
      `runroot = ${toml(join(run, 'run'))}`,
      '',
    ].join('\n'),
  );
  const blocked = publicRegistries().map(
    (host) => `[[registry]]\nlocation = ${toml(host)}\nblocked = true\n`,
  );
  const registries = ['unqualified-search-registries = []', 'short-name-mode = "enforcing"', '', ...blocked];
  writeFileSync(registriesConf, registries.join('\n'));
  return {
    CONTAINERS_CONF: containersConf,
    CONTAINERS_STORAGE_CONF: storageConf,
    CONTAINERS_REGISTRIES_CONF: registriesConf,
  };
}

/** Run podman with `env` added to this process's environment; its stdout. */
export async function podman(env: PodmanEnv, args: string[], timeoutMs = 60_000): Promise<string> {
  const r = await execa('podman', args, { env: { ...process.env, ...env }, timeout: timeoutMs });
  return r.stdout;
}

/** The shared libraries `ldd` says `bin` needs (absolute paths as the loader finds them). */
function libraries(bin: string): string[] {
  const out = execFileSync('ldd', [bin], { encoding: 'utf8' });
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  return libs;
}

/** A rootfs tar holding distribution's registry as /usr/bin/registry and what it links. */
function registryRootfs(dir: string): string {
  const root = join(dir, 'rootfs');
  for (const d of ['usr/bin', 'etc/docker/registry', 'var/lib/registry', 'tmp'])
    mkdirSync(join(root, d), { recursive: true });
  copyFileSync(REGISTRY_BIN, join(root, 'usr/bin/registry'));
  for (const lib of libraries(REGISTRY_BIN)) {
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    copyFileSync(lib, join(root, lib)); // copyFile follows symlinks: the real file under the link's name
  }
  const tar = join(dir, 'rootfs.tar');
  execFileSync('tar', ['-C', root, '--owner=0', '--group=0', '-cf', tar, '.']);
  rmSync(root, { recursive: true, force: true });
  return tar;
}

export interface RegistryImageOptions {
  env: PodmanEnv;
  /** Where the archive (or layout) and the build's scratch files go. */
  dir: string;
  /** The image's name; default LAB_REGISTRY_REF. */
  ref?: string;
  /** 'oci-archive' (one tar file, default) or 'oci-dir' (an OCI image layout directory). */
  format?: 'oci-archive' | 'oci-dir';
}

/**
 * Build a registry image like registry:2 (ENTRYPOINT the registry, CMD `serve
 * /etc/docker/registry/config.yml`, storage in /var/lib/registry; `garbage-collect <config>` as
 * arguments runs GC) from Debian's distribution binary, save it as an OCI archive file (or an OCI
 * layout directory) named in its index as `ref`, and remove it from podman's storage again so
 * whoever uses the archive has to load it. Returns the archive's path.
 */
export async function buildRegistryImageArchive(opts: RegistryImageOptions): Promise<string> {
  const ref = opts.ref ?? LAB_REGISTRY_REF;
  const format = opts.format ?? 'oci-archive';
  mkdirSync(opts.dir, { recursive: true });
  const scratch = mkdtempSync(join(opts.dir, 'build-'));
  try {
    const tar = registryRootfs(scratch);
    await podman(opts.env, [
      'import',
      '--quiet',
      '--change',
      'ENTRYPOINT ["/usr/bin/registry"]',
      '--change',
      'CMD ["serve","/etc/docker/registry/config.yml"]',
      '--change',
      'EXPOSE 5000/tcp',
      '--change',
      'VOLUME /var/lib/registry',
      tar,
      ref,
    ]);
    const out = join(opts.dir, format === 'oci-dir' ? 'registry-oci' : 'registry.oci.tar');
    rmSync(out, { recursive: true, force: true });
    await podman(opts.env, ['save', '--quiet', '--format', format, '-o', out, ref]);
    await podman(opts.env, ['rmi', ref]);
    return out;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** What `airgap registry install` is given for a registry on this machine's loopback (the demo, the tests). */
export interface LoopbackInstall {
  dir: string;
  name: string;
  port: number;
  username: string;
  passwordFile: string;
  dataDir: string;
  image: string;
  imageArchive: string;
}

/** `registry install` for a loopback registry: named localhost, certified for 127.0.0.1 and ::1. */
export function loopbackInstallArgs(o: LoopbackInstall): string[] {
  return [
    'registry',
    'install',
    '--dir',
    o.dir,
    '--name',
    o.name,
    '--hostname',
    'localhost',
    '--san',
    '127.0.0.1',
    '--san',
    '::1',
    '--port',
    String(o.port),
    '--username',
    o.username,
    '--password-file',
    o.passwordFile,
    '--data-dir',
    o.dataDir,
    '--image',
    o.image,
    '--image-archive',
    o.imageArchive,
  ];
}

/**
 * A plain-HTTP config.yml for the lab's registry image listening on `addr` ("127.0.0.1:PORT"),
 * storage in /var/lib/registry (mount a directory there), deletes allowed, info-level logs.
 */
export function registryConfigYaml(addr: string): string {
  return [
    'version: 0.1',
    'log:',
    '  level: info',
    'storage:',
    '  filesystem:',
    '    rootdirectory: /var/lib/registry',
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${JSON.stringify(addr)}`,
    '',
  ].join('\n');
}

/** The mount points at or under `dir` in this mount namespace, deepest first. */
function mountsUnder(dir: string): string[] {
  const unescape = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/**
 * Stop and remove every container of this private podman, then unmount whatever it left mounted
 * under its storage (overlay layers, shm), so the directory holding it can be removed. Never
 * throws: it runs in afterAll, also after a failure.
 */
export async function podmanCleanup(env: PodmanEnv): Promise<void> {
  try {
    await podman(env, ['rm', '--all', '--force', '--time', '1'], 30_000);
  } catch {
    // Nothing to remove, or podman itself is broken: the unmounts below still run.
  }
  const dir = dirname(env.CONTAINERS_STORAGE_CONF);
  const runroot = /^runroot = "(.*)"$/m.exec(readFileSync(env.CONTAINERS_STORAGE_CONF, 'utf8'))?.[1];
  const run = runroot ? dirname(runroot) : undefined;
  for (const m of [...mountsUnder(dir), ...(run ? mountsUnder(run) : [])]) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // Already gone (a lazy unmount of a parent took it).
    }
  }
  if (run?.startsWith('/tmp/agp-')) rmSync(run, { recursive: true, force: true });
}

let usable: Promise<string | undefined> | undefined;

/**
 * Whether podman is usable here (podman and runc installed, podman accepts the private
 * configuration with runc as its runtime): undefined if so, else why not. Checked once per process.
 */
export function podmanUsable(): Promise<string | undefined> {
  usable ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'airgap-podman-check-'));
    const env = podmanEnv(dir);
    try {
      for (const prog of ['podman', 'runc']) {
        try {
          execFileSync('sh', ['-c', `command -v ${prog} || test -x /usr/sbin/${prog}`], { stdio: 'ignore' });
        } catch {
          return `${prog} is not installed (bash scripts/test-deps.sh installs it)`;
        }
      }
      // Not a container run: a short-lived `podman run` can take 20 s here (podman 4.3 waits that
      // long for an exit code its cleanup process should have recorded), and the tests run real
      // containers right after this anyway. podman's own view of its runtime and storage is enough.
      const info = await podman(
        env,
        ['info', '--format', '{{.Host.OCIRuntime.Path}} {{.Store.GraphDriverName}}'],
        30_000,
      );
      if (!/runc /.test(info)) return `podman does not use runc here: ${info}`;
      return undefined;
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      return `podman cannot run a container here: ${(err.stderr || err.message).trim().split('\n').slice(-3).join(' ')}`;
    } finally {
      await podmanCleanup(env);
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return usable;
}
