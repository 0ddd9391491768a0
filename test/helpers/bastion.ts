/**
 * A bastion for the `airgap registry` tests: a private podman (lab/podman.ts), the systemd stand-in
 * first on PATH (lab/systemd-sim), the registry image carried as an OCI archive, a free port, a
 * password file, and a unique unit name. After the file's tests: every unit stopped, the unit files
 * and the trust files install wrote removed (the host bundle rebuilt once), podman cleaned.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import {
  buildRegistryImageArchive,
  loopbackInstallArgs,
  podmanCleanup,
  podmanEnv,
  type PodmanEnv,
} from '../../lab/podman.js';
import { startSystemdSim, type SystemdSim } from '../../lab/systemd-sim/index.js';
import { HOST_TRUST_STORES, withTrustLock } from '../../src/registry/trust.js';
import { airgap, type CliResult } from './cli.js';
import { tempDir } from './fixtures.js';

export interface Bastion {
  /** PATH (systemd stand-in first), CONTAINERS_*, AIRGAP_SYSTEMD_SIM: give it to every child. */
  env: Record<string, string>;
  root: string;
  /** The registry directory (--dir). */
  dir: string;
  /** A unique unit and container name (--name). */
  name: string;
  port: number;
  /** `localhost:<port>`. */
  address: string;
  /** The registry image (--image) and its OCI archive (--image-archive). */
  image: string;
  imageArchive: string;
  passwordFile: string;
  username: string;
  password: string;
  /** <dir>/certs/ca.crt (after install). */
  caFile: string;
  podman: PodmanEnv;
  systemd: SystemdSim;
  /** The CLI with `env`. */
  airgap(args: string[], opts?: { timeoutMs?: number }): Promise<CliResult>;
  /** `registry install` of this bastion's registry (names localhost, 127.0.0.1, ::1). */
  install(extra?: string[]): Promise<CliResult>;
}

/** A port nothing listens on now, on both loopbacks. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '::', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * Remove what `registry install` (and renew) put on the host for this bastion, found by its unit
 * name and port, not only from installed.json (an install that failed midway never wrote it):
 * the unit file, the certs.d directories of the port, the host store's files of the name.
 */
async function removeInstalled(b: Bastion): Promise<void> {
  rmSync(`/etc/systemd/system/${b.name}.service`, { force: true });
  const certsD = '/etc/containers/certs.d';
  for (const d of existsSync(certsD) ? readdirSync(certsD) : [])
    if (d.endsWith(`:${b.port}`)) rmSync(join(certsD, d), { recursive: true, force: true });
  // In the product's trust lock: a file removed while another file's install rebuilds the store
  // leaves a dangling link there, and that rebuild fails.
  await withTrustLock(async () => {
    for (const store of HOST_TRUST_STORES) {
      if (!existsSync(store.dir)) continue;
      const mine = readdirSync(store.dir).filter((f) => f.startsWith(`airgap-${b.name}`));
      for (const f of mine) rmSync(join(store.dir, f), { force: true });
      if (mine.length) await execa(store.update[0], store.update.slice(1), { reject: false });
    }
  });
}

/** A fresh bastion for the describe/file: set up in beforeAll, torn down in afterAll. */
export function useBastion(): () => Bastion {
  let b: Bastion | undefined;
  beforeAll(async () => {
    const root = await tempDir('airgap-bastion-');
    const podman = podmanEnv(join(root, 'podman'));
    // Its own systemctl (tests' checks, stopAll) starts units with this podman too.
    const systemd = startSystemdSim(join(root, 'systemd'), { env: podman });
    const image = 'localhost/airgap-lab/registry:2';
    const imageArchive = await buildRegistryImageArchive({
      env: podman,
      dir: join(root, 'carried'),
      ref: image,
    });
    const port = await freePort();
    const password = randomBytes(12).toString('base64url');
    const passwordFile = join(root, 'registry.pass');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    const name = `airgap-test-${port}`;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...podman, ...systemd.env })) if (v !== undefined) env[k] = v;
    const dir = join(root, 'registry');
    const run = (args: string[], opts: { timeoutMs?: number } = {}) =>
      airgap(args, { env, timeoutMs: opts.timeoutMs ?? 180_000 });
    b = {
      env,
      root,
      dir,
      name,
      port,
      address: `localhost:${port}`,
      image,
      imageArchive,
      passwordFile,
      username: 'admin',
      password,
      caFile: join(dir, 'certs', 'ca.crt'),
      podman,
      systemd,
      airgap: run,
      install: (extra = []) =>
        run([
          ...loopbackInstallArgs({
            dir,
            name,
            port,
            username: 'admin',
            passwordFile,
            dataDir: join(root, 'data'),
            image,
            imageArchive,
          }),
          ...extra,
        ]),
    };
  }, 180_000);
  afterAll(async () => {
    if (!b) return;
    await b.systemd.stopAll();
    await removeInstalled(b);
    await podmanCleanup(b.podman);
    rmSync(b.root, { recursive: true, force: true });
  }, 120_000);
  return () => {
    if (!b) throw new Error('useBastion: the bastion is set up in beforeAll');
    return b;
  };
}
