/**
 * lab/podman.ts with the real podman, and the registry it builds run the way `airgap registry
 * install` runs it: loaded from the archive, started by a systemd unit through the systemd
 * simulator (`podman run --rm --pull never --net host -v ...:z`), restarted, stopped, collected.
 */
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildRegistryImageArchive,
  LAB_REGISTRY_REF,
  podman,
  podmanCleanup,
  podmanEnv,
  podmanUsable,
  registryConfigYaml,
  type PodmanEnv,
} from '../../lab/podman.js';
import { freePort } from '../../lab/registry.js';
import { startSystemdSim, type SystemdSim } from '../../lab/systemd-sim/index.js';
import { tempDir } from '../helpers/fixtures.js';

let dir: string;
let env: PodmanEnv;
let archive: string;
let sim: SystemdSim;

beforeAll(async () => {
  const reason = await podmanUsable();
  if (reason) throw new Error(reason);
  dir = await tempDir('airgap-podman-');
  env = podmanEnv(join(dir, 'podman'));
  archive = await buildRegistryImageArchive({ env, dir: join(dir, 'carried') });
  sim = startSystemdSim(join(dir, 'sim'), { unitsDir: join(dir, 'units'), env });
});

afterAll(async () => {
  if (!dir) return;
  await sim?.stopAll();
  await podmanCleanup(env);
  await rm(dir, { recursive: true, force: true });
  // Nothing of this podman may be left mounted or running once its directory is gone.
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir);
});

async function images(): Promise<string[]> {
  return (await podman(env, ['images', '--format', '{{.Repository}}:{{.Tag}}'])).split('\n').filter((l) => l);
}

function get(url: string): Promise<number> {
  return fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.status);
}

async function waitFor<T>(what: string, f: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | Error = new Error('never tried');
  while (Date.now() < deadline) {
    try {
      last = await f();
      if (ok(last)) return last;
    } catch (e) {
      last = e as Error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `timed out waiting for ${what}; last: ${last instanceof Error ? last.message : String(last)}`,
  );
}

function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

describe('lab/podman.ts', () => {
  it('keeps podman to its own storage and configuration, and never reaches for a registry', async () => {
    const info = await podman(env, ['info', '--format', '{{.Store.GraphRoot}} {{.Host.OCIRuntime.Name}}']);
    expect(info).toBe(`${join(dir, 'podman', 'storage')} runc`);
    // The machine's short-name alias (registries.conf.d) points at docker.io, which is blocked.
    const pulled = await execa('podman', ['pull', 'registry'], {
      env: { ...process.env, ...env },
      reject: false,
    });
    expect(pulled.exitCode).not.toBe(0);
    expect(pulled.stderr).toContain('registry docker.io is blocked');
  });

  it('carries the registry image as an OCI archive the image store does not hold until loaded', async () => {
    expect(await images()).not.toContain(LAB_REGISTRY_REF);
    const loaded = await podman(env, ['load', '-i', archive]);
    expect(loaded).toContain(`Loaded image: ${LAB_REGISTRY_REF}`);
    expect(await images()).toContain(LAB_REGISTRY_REF);
    // Started like registry:2: `podman run IMAGE` serves the config at the standard path.
    const config = await podman(env, [
      'image',
      'inspect',
      '--format',
      '{{json .Config.Entrypoint}} {{json .Config.Cmd}}',
      LAB_REGISTRY_REF,
    ]);
    expect(config).toBe('["/usr/bin/registry"] ["serve","/etc/docker/registry/config.yml"]');
  });

  it('writes an OCI layout directory too, naming the image in its index', async () => {
    const layout = await buildRegistryImageArchive({
      env,
      dir: join(dir, 'layout'),
      ref: 'localhost/lab/other:1',
      format: 'oci-dir',
    });
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as {
      manifests: { annotations?: Record<string, string> }[];
    };
    expect(index.manifests.map((m) => m.annotations?.['org.opencontainers.image.ref.name'])).toEqual([
      'localhost/lab/other:1',
    ]);
    expect(await images()).not.toContain('localhost/lab/other:1');
    // (podman 4.3's `load -i <layout dir>` names the image after the directory, not the index.)
    await execa(
      'skopeo',
      ['copy', '--quiet', `oci:${layout}:localhost/lab/other:1`, 'containers-storage:localhost/lab/other:1'],
      {
        env: { ...process.env, ...env },
      },
    );
    expect(await images()).toContain('localhost/lab/other:1');
  });
});

describe('the registry as a systemd unit (through the simulator)', () => {
  const name = 'lab-registry';
  let port: number;

  beforeAll(async () => {
    if (!(await images()).includes(LAB_REGISTRY_REF)) await podman(env, ['load', '-i', archive]);
    port = await freePort();
    const conf = join(dir, 'reg', 'config.yml');
    await mkdir(join(dir, 'reg', 'data'), { recursive: true });
    await writeFile(conf, registryConfigYaml(`127.0.0.1:${port}`));
    await mkdir(join(dir, 'units'), { recursive: true });
    await writeFile(
      join(dir, 'units', `${name}.service`),
      [
        '[Unit]',
        'Description=Lab mirror registry',
        '[Service]',
        `ExecStartPre=-/usr/bin/podman rm --force --ignore ${name}`,
        `ExecStart=/usr/bin/podman run --rm --pull never --name ${name} --net host \\`,
        `  -v ${conf}:/etc/docker/registry/config.yml:ro,z \\`,
        `  -v ${join(dir, 'reg', 'data')}:/var/lib/registry:z \\`,
        `  ${LAB_REGISTRY_REF}`,
        `ExecStop=/usr/bin/podman stop --ignore --time 5 ${name}`,
        `ExecStopPost=-/usr/bin/podman rm --force --ignore ${name}`,
        // podman stop's SIGTERM ends the registry (PID 1 in its container, no handler) with exit 2;
        // podman run passes that on, or exits 143 when systemd's own SIGTERM reaches it first.
        // Either would leave the unit failed instead of inactive after a stop.
        'SuccessExitStatus=2 143',
        'Restart=always',
        'RestartSec=200ms',
        '[Install]',
        'WantedBy=multi-user.target',
        '',
      ].join('\n'),
    );
    // The unit passes the real systemd's own check.
    const verify = await execa(
      'systemd-analyze',
      ['verify', '--man=no', join(dir, 'units', `${name}.service`)],
      { reject: false },
    );
    expect(verify.stderr).toBe('');
    expect(verify.exitCode).toBe(0);
  });

  const systemctl = (...args: string[]) => sim.systemctl(...args);
  const mainPid = async () =>
    Number((await systemctl('show', name, '-p', 'MainPID', '--value')).stdout.trim());

  it('serves /v2/ once started, and says so in is-active and the journal', async () => {
    const started = await systemctl('enable', '--now', name);
    expect(started.code).toBe(0);
    expect((await systemctl('is-active', name)).stdout).toBe('active\n');
    expect(
      await waitFor(
        'GET /v2/',
        () => get(`http://127.0.0.1:${port}/v2/`),
        (s) => s === 200,
      ),
    ).toBe(200);
    const journal = await execa('journalctl', ['-u', name, '--no-pager', '-o', 'cat'], {
      env: { ...process.env, ...sim.env },
    });
    expect(journal.stdout).toContain('"GET /v2/ HTTP/1.1" 200');
    expect(journal.stdout).toMatch(/msg="listening on 127\.0\.0\.1:\d+"/);
  });

  it('keeps answering after a restart, and is started again when podman exits', async () => {
    const before = await mainPid();
    expect((await systemctl('restart', name)).code).toBe(0);
    expect(await mainPid()).not.toBe(before);
    expect(
      await waitFor(
        'GET /v2/',
        () => get(`http://127.0.0.1:${port}/v2/`),
        (s) => s === 200,
      ),
    ).toBe(200);
    // podman dies (as if OOM-killed), its container left running: Restart=always starts the unit
    // again, and its ExecStartPre removes the orphan that still holds the port.
    process.kill(await mainPid(), 'SIGKILL');
    await waitFor(
      'a restart',
      () => systemctl('show', name, '-p', 'NRestarts', '--value'),
      (r) => r.stdout.trim() === '1',
    );
    expect(
      await waitFor(
        'GET /v2/',
        () => get(`http://127.0.0.1:${port}/v2/`),
        (s) => s === 200,
      ),
    ).toBe(200);
    expect((await systemctl('is-active', name)).stdout).toBe('active\n');
  });

  it('accepts `garbage-collect <config>` as arguments, as registry:2 does', async () => {
    const carried = join(dir, 'carried', 'registry.oci.tar');
    await execa('skopeo', [
      'copy',
      '--quiet',
      '--dest-tls-verify=false',
      `oci-archive:${carried}`,
      `docker://127.0.0.1:${port}/lab/registry:2`,
    ]);
    const gc = await podman(env, [
      'run',
      '--rm',
      '--pull',
      'never',
      '--net',
      'none',
      '-v',
      `${join(dir, 'reg', 'config.yml')}:/etc/docker/registry/config.yml:ro,z`,
      '-v',
      `${join(dir, 'reg', 'data')}:/var/lib/registry:z`,
      LAB_REGISTRY_REF,
      'garbage-collect',
      '/etc/docker/registry/config.yml',
    ]);
    expect(gc).toMatch(/blobs marked, \d+ blobs and \d+ manifests eligible for deletion/);
  });

  it('stops: inactive, the port closed, the container gone', async () => {
    expect((await systemctl('stop', name)).code).toBe(0);
    const active = await systemctl('is-active', name);
    const journal = await execa('journalctl', ['-u', name, '-n', '8', '-o', 'cat'], {
      env: { ...process.env, ...sim.env },
    });
    expect(active.stdout, journal.stdout).toBe('inactive\n');
    expect(active.code).toBe(3);
    expect(await portClosed(port)).toBe(true);
    expect(await podman(env, ['ps', '--all', '--format', '{{.Names}}'])).not.toContain(name);
  });
});
