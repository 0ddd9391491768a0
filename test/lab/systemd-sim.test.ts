/**
 * The systemd simulator (lab/systemd-sim) against what systemd 252 does for the same unit files:
 * its exit codes and messages, ExecStartPre/ExecStart/ExecStop order, Restart=, stop timeouts,
 * daemon-reload, enablement, the journal. Plain shell services, no podman: fast.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSystemdSim, type SystemdSim } from '../../lab/systemd-sim/index.js';
import { parseExec, parseUnitFile, settings, splitWords } from '../../lab/systemd-sim/unit.js';
import { tempDir } from '../helpers/fixtures.js';

let dir: string;
let units: string;
let sim: SystemdSim;

beforeAll(async () => {
  dir = await tempDir('airgap-systemd-sim-');
  units = join(dir, 'units');
  await mkdir(units);
  sim = startSystemdSim(join(dir, 'sim'), { unitsDir: units });
});

afterAll(async () => {
  await sim?.stopAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const systemctl = (...args: string[]) => sim.systemctl(...args);
const journal = async (unit: string, ...args: string[]) =>
  (
    await execa(join(dir, 'sim', 'bin', 'journalctl'), ['-u', unit, '--no-pager', ...args], {
      env: { ...process.env, ...sim.env },
    })
  ).stdout;
const prop = async (unit: string, p: string) =>
  (await systemctl('show', unit, '-p', p, '--value')).stdout.trim();

async function unit(name: string, service: string[], extra: string[] = []): Promise<string> {
  const file = join(units, `${name}.service`);
  await writeFile(
    file,
    ['[Unit]', `Description=Test ${name}`, '', '[Service]', ...service, '', ...extra, ''].join('\n'),
  );
  // The same file passes the real systemd's check (unknown keys and bad values are warnings there).
  const verify = await execa('systemd-analyze', ['verify', '--man=no', file], { reject: false });
  expect(verify.stderr).toBe('');
  expect(verify.exitCode).toBe(0);
  return file;
}

async function waitFor(what: string, f: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('unit files and Exec lines', () => {
  it('reads continuations, comments and resets as systemd does', () => {
    const u = parseUnitFile(
      [
        '[Service]',
        'ExecStartPre=/bin/a',
        'ExecStartPre=',
        'ExecStartPre=/bin/b \\',
        '# a comment inside',
        '  --flag',
        '; other',
        'Environment=A=1',
      ].join('\n'),
    );
    expect(settings(u, 'Service', 'ExecStartPre')).toEqual(['/bin/b --flag']);
  });

  it('splits words with quotes and escapes, expands $VAR and ${VAR}, honours - and @', () => {
    expect(splitWords(`/bin/sh -c 'echo "a b"' "x\\ty" z\\ w`)).toEqual([
      '/bin/sh',
      '-c',
      'echo "a b"',
      'x\ty',
      'z w',
    ]);
    const env = { LIST: 'one two', ONE: 'x y' };
    const cmd = parseExec('-@/bin/echo echo $LIST ${ONE}z', env, () => true);
    expect(cmd).toEqual({ ignoreFailure: true, path: '/bin/echo', argv: ['echo', 'one', 'two', 'x yz'] });
    // A bare name is looked up in systemd's fixed path, not the caller's PATH.
    expect(parseExec('true', {}, (p) => p === '/usr/bin/true').path).toBe('/usr/bin/true');
    expect(() => parseExec('./run', {}, () => true)).toThrow(
      /neither a valid executable name nor an absolute path/,
    );
  });
});

describe('systemctl and journalctl', () => {
  it('refuses to run without its state directory', async () => {
    const env = { ...process.env, ...sim.env, AIRGAP_SYSTEMD_SIM: '' };
    const r = await execa(join(dir, 'sim', 'bin', 'systemctl'), ['is-system-running'], {
      env,
      reject: false,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('AIRGAP_SYSTEMD_SIM is not set');
    expect((await systemctl('is-system-running')).stdout).toBe('running\n');
  });

  it('runs ExecStartPre in order, then ExecStart with Environment=, its output in the journal', async () => {
    await unit('hello', [
      'Environment="GREETING=hello world"',
      'ExecStartPre=-/bin/false',
      'ExecStartPre=/bin/echo first %n',
      "ExecStartPre=/bin/sh -c 'echo second'",
      'ExecStart=/bin/sh -c \'echo "$GREETING"; exec sleep 60\'',
    ]);
    expect((await systemctl('start', 'hello')).code).toBe(0);
    const active = await systemctl('is-active', 'hello');
    expect([active.stdout, active.code]).toEqual(['active\n', 0]);
    expect(Number(await prop('hello', 'MainPID'))).toBeGreaterThan(0);
    await waitFor('the greeting', async () => (await journal('hello', '-o', 'cat')).includes('hello world'));
    const lines = (await journal('hello', '-o', 'cat')).split('\n');
    expect(lines).toEqual([
      'Starting hello.service - Test hello...',
      'first hello.service',
      'second',
      'Started hello.service - Test hello.',
      'hello world',
    ]);
    expect(await journal('hello', '-n', '1')).toMatch(
      /^\w{3} \d\d \d\d:\d\d:\d\d \S+ sh\[\d+\]: hello world$/,
    );
  });

  it('stops with SIGTERM: inactive, exit 3, the process gone', async () => {
    const pid = Number(await prop('hello', 'MainPID'));
    expect((await systemctl('stop', 'hello')).code).toBe(0);
    const active = await systemctl('is-active', 'hello');
    expect([active.stdout, active.code]).toEqual(['inactive\n', 3]);
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await journal('hello', '-o', 'cat', '-n', '3')).split('\n')).toEqual([
      'Stopping hello.service - Test hello...',
      'hello.service: Deactivated successfully.',
      'Stopped hello.service - Test hello.',
    ]);
  });

  it('fails the start when an ExecStartPre fails, with systemd’s message', async () => {
    await unit('badpre', ["ExecStartPre=/bin/sh -c 'echo no way; exit 3'", 'ExecStart=/bin/sleep 60']);
    const r = await systemctl('start', 'badpre');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'Job for badpre.service failed because the control process exited with error code.\n' +
        'See "systemctl status badpre.service" and "journalctl -xeu badpre.service" for details.\n',
    );
    const active = await systemctl('is-active', 'badpre');
    expect([active.stdout, active.code]).toEqual(['failed\n', 3]);
    expect(await prop('badpre', 'Result')).toBe('exit-code');
    expect(await journal('badpre', '-o', 'cat')).toContain(
      'badpre.service: Control process exited, code=exited, status=3/NOTIMPLEMENTED',
    );
  });

  it('restarts a main process that exits (Restart=always), counting it in NRestarts', async () => {
    await unit('again', ['ExecStart=/bin/sleep 60', 'Restart=always', 'RestartSec=100ms']);
    expect((await systemctl('start', 'again')).code).toBe(0);
    const first = Number(await prop('again', 'MainPID'));
    process.kill(first, 'SIGKILL');
    await waitFor(
      'the restart',
      async () =>
        (await prop('again', 'NRestarts')) === '1' && (await prop('again', 'ActiveState')) === 'active',
    );
    expect(Number(await prop('again', 'MainPID'))).not.toBe(first);
    expect(await journal('again', '-o', 'cat')).toContain(
      'again.service: Scheduled restart job, restart counter is at 1.',
    );
    await systemctl('stop', 'again');
  });

  it('leaves a unit whose main process fails without Restart= failed, with its exit status', async () => {
    await unit('once', ["ExecStart=/bin/sh -c 'exit 7'"]);
    expect((await systemctl('start', 'once')).code).toBe(0); // Type=simple: the job is done once it runs
    await waitFor('the failure', async () => (await prop('once', 'ActiveState')) === 'failed');
    expect(await prop('once', 'ExecMainStatus')).toBe('7');
    expect(await journal('once', '-o', 'cat')).toContain("once.service: Failed with result 'exit-code'.");
  });

  it('kills a process that ignores SIGTERM after TimeoutStopSec=', async () => {
    await unit('stubborn', [
      'ExecStart=/bin/sh -c \'trap "" TERM; while :; do sleep 0.1; done\'',
      'TimeoutStopSec=1',
    ]);
    await systemctl('start', 'stubborn');
    const t = Date.now();
    expect((await systemctl('stop', 'stubborn')).code).toBe(0);
    expect(Date.now() - t).toBeGreaterThanOrEqual(900);
    expect(await journal('stubborn', '-o', 'cat')).toContain(
      "stubborn.service: State 'stop-sigterm' timed out. Killing.",
    );
    expect(await prop('stubborn', 'ActiveState')).toBe('failed'); // killed by SIGKILL: Result=signal
  });

  it('keeps the loaded definition until daemon-reload, and says a reload is needed', async () => {
    await unit('change', ["ExecStart=/bin/sh -c 'echo v1; exec sleep 60'"]);
    await systemctl('start', 'change');
    await systemctl('stop', 'change');
    await writeFile(
      join(units, 'change.service'),
      "[Service]\nExecStart=/bin/sh -c 'echo v2; exec sleep 60'\n",
    );
    expect(await prop('change', 'NeedDaemonReload')).toBe('yes');
    const started = await systemctl('start', 'change');
    expect(started.stderr).toContain("changed on disk. Run 'systemctl daemon-reload' to reload units.");
    await systemctl('stop', 'change');
    expect(await systemctl('daemon-reload')).toMatchObject({ code: 0 });
    expect(await prop('change', 'NeedDaemonReload')).toBe('no');
    await systemctl('start', 'change');
    await waitFor('v2', async () => (await journal('change', '-o', 'cat')).includes('v2'));
    expect((await journal('change', '-o', 'cat')).match(/^v\d$/gm)).toEqual(['v1', 'v1', 'v2']);
    await systemctl('stop', 'change');
  });

  it('enables and disables with [Install], and answers for units that do not exist', async () => {
    await unit('svc', ['ExecStart=/bin/sleep 60'], ['[Install]', 'WantedBy=multi-user.target']);
    const off = await systemctl('is-enabled', 'svc');
    expect([off.stdout, off.code]).toEqual(['disabled\n', 1]);
    const on = await systemctl('enable', '--now', 'svc');
    expect(on.stderr).toBe(
      `Created symlink /etc/systemd/system/multi-user.target.wants/svc.service → ${join(units, 'svc.service')}.\n`,
    );
    expect((await systemctl('is-enabled', 'svc')).stdout).toBe('enabled\n');
    expect(await prop('svc', 'UnitFileState')).toBe('enabled');
    expect((await systemctl('is-active', 'svc')).stdout).toBe('active\n');
    const disabled = await systemctl('disable', '--now', 'svc');
    expect(disabled.stderr).toBe('Removed "/etc/systemd/system/multi-user.target.wants/svc.service".\n');
    expect((await systemctl('is-active', 'svc')).stdout).toBe('inactive\n');

    expect(await systemctl('is-enabled', 'nope')).toMatchObject({
      code: 1,
      stderr: 'Failed to get unit file state for nope.service: No such file or directory\n',
    });
    expect(await systemctl('start', 'nope')).toMatchObject({
      code: 5,
      stderr: 'Failed to start nope.service: Unit nope.service not found.\n',
    });
    expect(await systemctl('stop', 'nope')).toMatchObject({
      code: 5,
      stderr: 'Failed to stop nope.service: Unit nope.service not loaded.\n',
    });
    expect(await systemctl('cat', 'nope')).toMatchObject({
      code: 1,
      stderr: 'No files found for nope.service.\n',
    });
    expect((await systemctl('show', 'nope', '-p', 'LoadState,ActiveState')).stdout).toBe(
      'LoadState=not-found\nActiveState=inactive\n',
    );
  });
});
