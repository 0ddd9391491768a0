/**
 * The simulator's state, all under the directory `$AIRGAP_SYSTEMD_SIM` names: the unit definitions
 * loaded (as systemd keeps them in memory until the next daemon-reload), which units are enabled,
 * each unit's runtime state (written by its supervisor), and the journal.
 */
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseUnitFile, setting, type UnitFile } from './unit.js';

export const SIM_ENV = 'AIRGAP_SYSTEMD_SIM';
export const UNITS_ENV = 'AIRGAP_SYSTEMD_SIM_UNITS';

/** The state directory; exits with a message when the variable is not set. */
export function simDir(): string {
  const dir = process.env[SIM_ENV];
  if (!dir) {
    process.stderr.write(`systemd simulator: ${SIM_ENV} is not set (the state directory); refusing to run\n`);
    process.exit(1);
  }
  for (const sub of ['loaded', 'enabled', 'run', 'journal']) mkdirSync(join(dir, sub), { recursive: true });
  return dir;
}

/** Where unit files are read from: /etc/systemd/system unless overridden for the sim's own tests. */
export function unitsDir(): string {
  return process.env[UNITS_ENV] || '/etc/systemd/system';
}

/** "foo" → "foo.service"; names with a known suffix are kept. */
export function unitName(name: string): string {
  return /\.(service|socket|target|timer|path|mount|slice|scope)$/.test(name) ? name : `${name}.service`;
}

export interface Loaded {
  name: string;
  path: string;
  text: string;
  unit: UnitFile;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function readUnitText(name: string): string | undefined {
  try {
    return readFileSync(join(unitsDir(), name), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The unit's loaded definition: the one kept since the last daemon-reload, or (never loaded yet)
 * read from disk now, as systemd loads units on demand. undefined: no such unit file.
 */
export function loadUnit(dir: string, name: string): Loaded | undefined {
  const file = join(dir, 'loaded', `${name}.json`);
  let text: string | undefined;
  if (existsSync(file)) text = (JSON.parse(readFileSync(file, 'utf8')) as { text: string }).text;
  else {
    text = readUnitText(name);
    if (text === undefined) return undefined;
    writeJson(file, { text });
  }
  return { name, path: join(unitsDir(), name), text, unit: parseUnitFile(text) };
}

/** Whether the file on disk differs from the loaded definition (systemd's NeedDaemonReload). */
export function needsReload(dir: string, name: string): boolean {
  const file = join(dir, 'loaded', `${name}.json`);
  if (!existsSync(file)) return false;
  const loaded = (JSON.parse(readFileSync(file, 'utf8')) as { text: string }).text;
  const now = readUnitText(name);
  return now === undefined || hash(now) !== hash(loaded);
}

/** daemon-reload: every loaded unit is read again; those whose file is gone are dropped. */
export function reloadAll(dir: string, names: string[]): void {
  for (const name of names) {
    const file = join(dir, 'loaded', `${name}.json`);
    const text = readUnitText(name);
    if (text === undefined) rmSync(file, { force: true });
    else writeJson(file, { text });
  }
}

function writeJson(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value));
  renameSync(tmp, file);
}

export interface RunState {
  activeState: 'active' | 'inactive' | 'failed' | 'activating' | 'deactivating';
  subState: string;
  result: string;
  mainPid: number;
  execMainPid: number;
  /** 0 never ran, 1 exited, 2 killed (CLD_EXITED / CLD_KILLED). */
  execMainCode: number;
  execMainStatus: number;
  nRestarts: number;
  supervisorPid: number;
  /** The start job systemctl waits for: its id and, once finished, how it ended. */
  job?: { id: string; result?: 'done' | 'failed' };
  /** When the recent starts happened (ms), for StartLimitBurst. */
  starts: number[];
}

const INACTIVE: RunState = {
  activeState: 'inactive',
  subState: 'dead',
  result: 'success',
  mainPid: 0,
  execMainPid: 0,
  execMainCode: 0,
  execMainStatus: 0,
  nRestarts: 0,
  supervisorPid: 0,
  starts: [],
};

export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (exited, not yet reaped by its parent) is not running.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The unit's runtime state; a supervisor that died without saying so leaves it failed. */
export function readState(dir: string, name: string): RunState {
  const file = join(dir, 'run', `${name}.json`);
  if (!existsSync(file)) return { ...INACTIVE };
  const state = { ...INACTIVE, ...(JSON.parse(readFileSync(file, 'utf8')) as Partial<RunState>) };
  if (
    state.supervisorPid &&
    !pidAlive(state.supervisorPid) &&
    ['active', 'activating', 'deactivating'].includes(state.activeState)
  )
    return {
      ...state,
      activeState: 'failed',
      subState: 'failed',
      result: 'resources',
      mainPid: 0,
      supervisorPid: 0,
    };
  return state;
}

export function writeState(dir: string, name: string, state: RunState): void {
  writeJson(join(dir, 'run', `${name}.json`), state);
}

export function isEnabled(dir: string, name: string): boolean {
  return existsSync(join(dir, 'enabled', name));
}

export function setEnabled(dir: string, name: string, on: boolean): void {
  const file = join(dir, 'enabled', name);
  if (on) writeFileSync(file, '');
  else rmSync(file, { force: true });
}

/** The name systemd logs a unit under: "foo.service - Description", or the name alone. */
export function described(loaded: Loaded): string {
  const description = setting(loaded.unit, 'Unit', 'Description');
  return description ? `${loaded.name} - ${description}` : loaded.name;
}

/** One journal entry per line: `<ms> <pid> <identifier>\t<message>`. */
export function journal(dir: string, name: string, ident: string, pid: number, message: string): void {
  const lines = message.replace(/\n$/, '').split('\n');
  appendFileSync(
    join(dir, 'journal', `${name}.log`),
    lines.map((l) => `${Date.now()} ${pid} ${ident}\t${l}\n`).join(''),
  );
}

/** What systemd itself logs about a unit (as "systemd[1]"). */
export function logSystemd(dir: string, name: string, message: string): void {
  journal(dir, name, 'systemd', 1, message);
}

export interface JournalEntry {
  ms: number;
  pid: number;
  ident: string;
  message: string;
}

export function readJournal(dir: string, name: string): JournalEntry[] {
  let text: string;
  try {
    text = readFileSync(join(dir, 'journal', `${name}.log`), 'utf8');
  } catch {
    return [];
  }
  const entries: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+) (\d+) (\S+)\t(.*)$/.exec(line);
    if (m) entries.push({ ms: Number(m[1]), pid: Number(m[2]), ident: m[3]!, message: m[4]! });
  }
  return entries;
}

export const HOST = hostname().split('.')[0]!;
