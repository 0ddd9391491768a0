/**
 * registry.json and installed.json, edited by hand or by someone hostile: uninstall removes the
 * files installed.json lists and runs its trust store's command, and the unit runs what
 * registry.json names. Each is held to what airgap writes, or refused before anything acts on it.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { readInstall, readSetup, writeInstall, type InstallRecord } from '../../src/registry/state.js';
import { HOST_TRUST_STORES, trustFiles } from '../../src/registry/trust.js';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const SETUP = {
  apiVersion: 'airgap/v1',
  kind: 'MirrorRegistry',
  address: 'registry.example.com:5000',
  hostname: 'registry.example.com',
  port: 5000,
  username: 'admin',
  dataDir: '/var/lib/registry',
  image: 'docker.io/library/registry:2',
};

describe('the registry directory’s own files, as input', () => {
  let dir: string;
  let victim: string;
  const store = HOST_TRUST_STORES[1]!;
  const record = (): InstallRecord => ({
    apiVersion: 'airgap/v1',
    kind: 'InstalledRegistry',
    name: 'registry',
    unitFile: '/etc/systemd/system/registry.service',
    addresses: ['registry.example.com:5000', '[fd00::5]:5000'],
    trustFiles: trustFiles(
      store,
      'registry',
      ['registry.example.com:5000', '[fd00::5]:5000'],
      ['a', 'b'],
    ).map((f) => f.path),
    hostStore: { dir: store.dir, update: [...store.update] },
  });
  beforeEach(async () => {
    dir = await tempDir('airgap-state-');
    victim = join(dir, 'precious.txt');
    await writeFile(victim, 'keep me');
    await writeFile(join(dir, 'registry.json'), JSON.stringify(SETUP));
  });

  it('reads back what install writes', async () => {
    await writeInstall(dir, record());
    expect(await readInstall(dir)).toEqual(record());
    expect(await readSetup(dir)).toMatchObject({ address: SETUP.address, dataDir: SETUP.dataDir });
  });

  it.each([
    ['a file outside the trust stores', { trustFiles: ['/etc/passwd'] }, 'trustFiles holds "/etc/passwd"'],
    [
      'a path climbing out of certs.d',
      { trustFiles: ['/etc/containers/certs.d/../../passwd'] },
      'trustFiles',
    ],
    ['another name’s file in the store', { trustFiles: [`${store.dir}/other.crt`] }, 'trustFiles'],
    [
      'a command of its own to run',
      { hostStore: { dir: store.dir, update: ['sh', '-c', 'id'] } },
      'hostStore',
    ],
    [
      'another unit file',
      { unitFile: '/etc/fstab' },
      'unitFile /etc/fstab is not /etc/systemd/system/registry.service',
    ],
  ])('refuses installed.json with %s', async (_what, patch, said) => {
    await writeFile(join(dir, 'installed.json'), JSON.stringify({ ...record(), ...patch }));
    await expect(readInstall(dir)).rejects.toMatchObject({
      code: 'REGISTRY_STATE_INVALID',
      message: expect.stringContaining(said) as unknown,
    });
  });

  it('uninstall acts on none of a hostile installed.json: the file it names stays, the command never runs', async () => {
    const marker = join(dir, 'ran');
    await writeFile(
      join(dir, 'installed.json'),
      JSON.stringify({
        ...record(),
        trustFiles: [victim],
        hostStore: { dir: store.dir, update: ['touch', marker] },
      }),
    );
    const r = await airgap(['registry', 'uninstall', '--dir', dir, '--yes']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error [REGISTRY_STATE_INVALID]');
    expect(r.stderr).not.toContain('    at ');
    expect(existsSync(victim)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it.each([
    [
      'a data directory the unit line would split',
      { dataDir: '/var/lib/reg istry' },
      'cannot go into the systemd unit',
    ],
    ['an image that is not a reference', { image: 'registry:2 --privileged' }, 'image'],
    [
      'an image not written canonically',
      { image: 'registry:2' },
      'is not written as docker.io/library/registry:2',
    ],
    ['an address that is not the hostname', { address: 'evil.example.com:5000' }, 'is not hostname:port'],
  ])('refuses registry.json with %s', async (_what, patch, said) => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'registry.json'), JSON.stringify({ ...SETUP, ...patch }));
    await expect(readSetup(dir)).rejects.toMatchObject({
      code: 'REGISTRY_STATE_INVALID',
      message: expect.stringContaining(said) as unknown,
    });
  });
});
