/**
 * `airgap registry uninstall` on a bastion made of real parts (podman runs the registry under the
 * systemd stand-in): the unit, its container and the trust install wrote are gone and the port is
 * closed, the registry directory and the images are kept; a second run has nothing to do; the data
 * goes only when confirmed, and never when the data directory may not be a registry store.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { useBastion } from '../helpers/bastion.js';
import { airgap } from '../helpers/cli.js';

/** Whether something accepts a TCP connection on the port (127.0.0.1). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('airgap registry uninstall', () => {
  const bastion = useBastion();
  const uninstall = (extra: string[] = []) =>
    bastion().airgap(['registry', 'uninstall', '--dir', bastion().dir, '--name', bastion().name, ...extra]);
  const data = () => join(bastion().root, 'data');
  const unitFile = () => `/etc/systemd/system/${bastion().name}.service`;
  let trustFiles: string[];

  beforeAll(async () => {
    const r = await bastion().install();
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    trustFiles = (
      JSON.parse(await readFile(join(bastion().dir, 'installed.json'), 'utf8')) as { trustFiles: string[] }
    ).trustFiles;
    expect(trustFiles.length).toBeGreaterThan(1);
  }, 300_000);

  it('stops before changing anything where systemd is not PID 1, and --dry-run says what it would do', async () => {
    const b = bastion();
    const { PATH: _path, ...noSim } = b.env;
    const r = await airgap(['registry', 'uninstall', '--dir', b.dir, '--name', b.name], { env: noSim });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error [REGISTRY_NO_SYSTEMD]');
    expect(r.stderr).toContain(`systemctl disable --now ${b.name}.service`);
    expect(r.stderr).not.toContain('    at ');

    const dry = await uninstall(['--dry-run', '--delete-data']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`$ systemctl disable --now ${b.name}.service`);
    expect(dry.stdout).toContain(`[data] would: delete the data directory ${data()}`);
    expect(dry.stdout).toContain('nothing was changed (--dry-run)');
    for (const f of [unitFile(), ...trustFiles, join(b.dir, 'installed.json')])
      expect(existsSync(f)).toBe(true);
    expect(await listening(b.port)).toBe(true);
  }, 120_000);

  it('refuses to delete a data directory that may not be a registry store', async () => {
    const b = bastion();
    const file = join(b.dir, 'registry.json');
    const saved = await readFile(file, 'utf8');
    try {
      // dataDir set to the directory holding the registry directory.
      await writeFile(file, JSON.stringify({ ...JSON.parse(saved), dataDir: b.root }));
      const r = await uninstall(['--delete-data', '--yes']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        `error [REGISTRY_DATA_DIR_UNSAFE]: refusing to delete the data directory ${b.root}: it holds the registry directory`,
      );
      // dataDir set to a directory of other things.
      await writeFile(file, JSON.stringify({ ...JSON.parse(saved), dataDir: join(b.root, 'carried') }));
      const other = await uninstall(['--delete-data', '--yes']);
      expect(other.exitCode).toBe(2);
      expect(other.stderr).toContain('it may not be a registry store');
    } finally {
      await writeFile(file, saved);
    }
    expect(existsSync(unitFile())).toBe(true);
    expect(await listening(b.port)).toBe(true);
  }, 120_000);

  it('removes the unit, container and trust, keeps the files and the data; a second run has nothing to do', async () => {
    const b = bastion();
    const r = await uninstall();
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`[unit] removed: stop and remove ${b.name}.service`);
    expect(r.stdout).toContain(
      `the registry ${b.address} is uninstalled; kept: ${b.dir} and the data in ${data()}`,
    );
    expect(existsSync(unitFile())).toBe(false);
    const active = await execa('systemctl', ['is-active', `${b.name}.service`], {
      env: { ...process.env, ...b.env },
      reject: false,
    });
    // Stopped as a stop, not killed as a failure: the journal says why when it is not so.
    const journal = await execa('journalctl', ['-u', `${b.name}.service`, '-n', '30', '-o', 'cat'], {
      env: { ...process.env, ...b.env },
      reject: false,
    });
    expect(active.stdout.trim(), journal.stdout).toBe('inactive');
    expect(await listening(b.port)).toBe(false);
    for (const f of trustFiles) expect(existsSync(f)).toBe(false);
    expect(existsSync(`/etc/containers/certs.d/${b.address}`)).toBe(false);
    const ps = await execa('podman', ['ps', '-a', '--format', '{{.Names}}'], {
      env: { ...process.env, ...b.env },
    });
    expect(ps.stdout.split('\n')).not.toContain(b.name);
    expect(existsSync(join(b.dir, 'installed.json'))).toBe(false);
    expect(existsSync(join(b.dir, 'registry.json'))).toBe(true);
    expect(existsSync(join(data(), 'docker', 'registry', 'v2', 'repositories'))).toBe(true);

    const again = await uninstall(['--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ nothingInstalled: true, steps: [], dataKept: true });
  }, 120_000);

  it('deletes the data only when confirmed', async () => {
    const b = bastion();
    const refused = await uninstall(['--delete-data']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('error [REGISTRY_CONFIRM_REQUIRED]');
    expect(refused.stderr).toContain('nothing was changed');
    expect(refused.stderr).toContain('--yes');
    expect(existsSync(join(data(), 'docker', 'registry', 'v2'))).toBe(true);

    const r = await uninstall(['--delete-data', '--yes']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`[data] removed: delete the data directory ${data()}`);
    expect(existsSync(data())).toBe(false);
    expect(existsSync(join(b.dir, 'registry.json'))).toBe(true);
  }, 120_000);
});
