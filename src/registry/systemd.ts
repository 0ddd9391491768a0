/**
 * systemd, through `systemctl` and `journalctl` on PATH: is it PID 1 here, the unit's state, and the
 * verbs install, renew, gc and uninstall use. The unit file lives in /etc/systemd/system.
 */
import { join } from 'node:path';
import { AirgapError } from '../util/errors.js';
import { lastLine, runProgram } from '../util/program.js';
import { BastionError } from './errors.js';
import { runHost } from './host.js';

/** Where an administrator's own units go (systemd.unit(5)). */
const UNIT_DIR = '/etc/systemd/system';

export const unitFile = (name: string): string => join(UNIT_DIR, `${name}.service`);

/** The states `systemctl is-system-running` prints when systemd runs the system. */
const RUNNING = new Set(['initializing', 'starting', 'running', 'degraded', 'maintenance', 'stopping']);

/** Whether systemd is PID 1 here; when not, what systemctl said (or that it is missing). */
export async function systemdHere(): Promise<{ ok: true } | { ok: false; said: string }> {
  const r = await runProgram('systemctl', ['is-system-running'], { timeoutMs: 30_000 });
  if (r.failure?.kind === 'not-found') return { ok: false, said: 'systemctl is not installed' };
  const state = r.stdout.trim();
  if (RUNNING.has(state)) return { ok: true };
  return {
    ok: false,
    said:
      lastLine(r.stderr) ||
      (state ? `systemctl is-system-running says ${state}` : 'systemctl is-system-running printed nothing'),
  };
}

/** `systemctl <args>`, failing with SYSTEMCTL_FAILED. */
export async function systemctl(...args: string[]): Promise<void> {
  await runHost('systemctl', args, BastionError.SYSTEMCTL_FAILED, {
    hint: `see why: systemctl status ${args.at(-1) ?? ''} and journalctl -u ${args.at(-1) ?? ''}`,
  });
}

export interface UnitState {
  /** active, inactive, failed, activating, deactivating, … */
  active: string;
  sub: string;
  /** success, exit-code, signal, … */
  result: string;
  /** not-found when there is no such unit. */
  load: string;
  /** enabled, disabled, … ('' when not known). */
  enabled: string;
  mainPid: number;
  restarts: number;
}

/** The unit's state, as `systemctl show` gives it. */
export async function unitState(name: string): Promise<UnitState> {
  const r = await runHost(
    'systemctl',
    [
      'show',
      `${name}.service`,
      '-p',
      'ActiveState,SubState,Result,LoadState,UnitFileState,MainPID,NRestarts',
    ],
    BastionError.SYSTEMCTL_FAILED,
  );
  const v = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) v.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const state: UnitState = {
    active: v.get('ActiveState') ?? '',
    sub: v.get('SubState') ?? '',
    result: v.get('Result') ?? '',
    load: v.get('LoadState') ?? '',
    enabled: v.get('UnitFileState') ?? '',
    mainPid: Number(v.get('MainPID') ?? 0) || 0,
    restarts: Number(v.get('NRestarts') ?? 0) || 0,
  };
  if (!state.active)
    throw new AirgapError(
      BastionError.SYSTEMCTL_FAILED,
      `systemctl show ${name}.service printed no ActiveState`,
      { hint: `run systemctl status ${name}` },
    );
  return state;
}

/** The unit's last `n` log lines (journalctl); [] when journalctl cannot tell. */
export async function unitLog(name: string, n = 15): Promise<string[]> {
  const r = await runProgram(
    'journalctl',
    ['-u', `${name}.service`, '-n', String(n), '--no-pager', '-o', 'cat'],
    {
      timeoutMs: 30_000,
    },
  );
  if (r.failure) return [];
  return r.stdout
    .split('\n')
    .map((l) => l.replace(/\p{Cc}/gu, ' ').trimEnd())
    .filter(Boolean)
    .slice(-n);
}

/** Stop before changing the host when systemd does not run it: what it would have run instead. */
export function noSystemd(said: string, command: string): AirgapError {
  return new AirgapError(
    BastionError.NO_SYSTEMD,
    `systemd is not running as PID 1 on this host (${said}); nothing was changed`,
    {
      hint: `run airgap on the bastion itself (systemd as PID 1, e.g. RHEL 9), or start the registry by hand with the command the unit runs: ${command}`,
      details: { command },
    },
  );
}
