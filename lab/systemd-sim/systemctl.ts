/**
 * `systemctl` as systemd 252 answers it, for the verbs a service installer uses: same output
 * (stdout and stderr) and exit codes (0; 1 failure; 3 not active; 5 no such unit).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  described,
  isEnabled,
  loadUnit,
  needsReload,
  pidAlive,
  readJournal,
  readState,
  reloadAll,
  setEnabled,
  unitName,
  unitsDir,
  writeState,
} from './state.js';
import { parseUnitFile, setting, settings, timeSpanMs, timeoutStopMs } from './unit.js';

export interface Options {
  now: boolean;
  quiet: boolean;
  value: boolean;
  noBlock: boolean;
  properties: string[] | undefined;
}

const out = (s: string) => process.stdout.write(`${s}\n`);
const err = (s: string) => process.stderr.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function unitFileText(name: string): string | undefined {
  try {
    return readFileSync(join(unitsDir(), name), 'utf8');
  } catch {
    return undefined;
  }
}

function warnIfChanged(dir: string, name: string): void {
  if (needsReload(dir, name))
    err(
      `Warning: The unit file, source configuration file or drop-ins of ${name} changed on disk. Run 'systemctl daemon-reload' to reload units.`,
    );
}

function running(dir: string, name: string): boolean {
  const s = readState(dir, name);
  return pidAlive(s.supervisorPid) && s.activeState !== 'inactive' && s.activeState !== 'failed';
}

/** Start one unit and wait for its start job, as `systemctl start` does; the exit code. */
async function startOne(dir: string, name: string, verb: string, opts: Options): Promise<number> {
  const loaded = loadUnit(dir, name);
  if (!loaded) {
    err(`Failed to ${verb} ${name}: Unit ${name} not found.`);
    return 5;
  }
  warnIfChanged(dir, name);
  if (running(dir, name)) return 0;
  const id = `${process.pid}-${Date.now()}`;
  const previous = readState(dir, name);
  writeState(dir, name, { ...previous, nRestarts: 0, supervisorPid: 0, job: { id } });
  const main = join(fileURLToPath(new URL('.', import.meta.url)), 'main.ts');
  const child = spawn(process.execPath, [...process.execArgv, main, 'supervise', name], {
    detached: true,
    stdio: 'ignore',
    env: process.env,
  });
  let exited = false;
  child.on('exit', () => (exited = true));
  child.unref();
  if (opts.noBlock) return 0;
  const deadline =
    Date.now() + timeSpanMs(setting(loaded.unit, 'Service', 'TimeoutStartSec'), 90_000) + 5_000;
  for (;;) {
    const s = readState(dir, name);
    if (s.job?.id === id && s.job.result === 'done') return 0;
    // A supervisor that ended without finishing the job failed it (it could not even start).
    if (s.job?.id === id && (s.job.result === 'failed' || (exited && !s.job.result))) {
      err(`Job for ${name} failed because the control process exited with error code.`);
      err(`See "systemctl status ${name}" and "journalctl -xeu ${name}" for details.`);
      return 1;
    }
    if (Date.now() > deadline) {
      err(`Job for ${name} failed because a timeout was exceeded.`);
      return 1;
    }
    await sleep(50);
  }
}

/** Stop one unit and wait for it to be down; the exit code. */
async function stopOne(dir: string, name: string, verb = 'stop'): Promise<number> {
  const loaded = loadUnit(dir, name);
  const state = readState(dir, name);
  if (!loaded && !pidAlive(state.supervisorPid)) {
    err(`Failed to ${verb} ${name}: Unit ${name} not loaded.`);
    return 5;
  }
  if (loaded) warnIfChanged(dir, name);
  if (!pidAlive(state.supervisorPid)) return 0;
  process.kill(state.supervisorPid, 'SIGTERM');
  const timeout = timeoutStopMs(loaded?.unit);
  const deadline = Date.now() + 2 * timeout + 10_000;
  while (pidAlive(state.supervisorPid)) {
    if (Date.now() > deadline) {
      err(`Job for ${name} failed because a timeout was exceeded.`);
      return 1;
    }
    await sleep(50);
  }
  return 0;
}

const NO_INSTALL = `The unit files have no installation config (WantedBy=, RequiredBy=, Also=,
Alias= settings in the [Install] section, and DefaultInstance= for template
units). This means they are not meant to be enabled or disabled using systemctl.
 
Possible reasons for having this kind of units are:
• A unit may be statically enabled by being symlinked from another unit's
  .wants/ or .requires/ directory.
• A unit's purpose may be to act as a helper for some other unit which has
  a requirement dependency on it.
• A unit may be started when needed via activation (socket, path, timer,
  D-Bus, udev, scripted systemctl call, ...).
• In case of template units, the unit is meant to be enabled with some
  instance name specified.`;

/** The targets `enable` links the unit into: its [Install] WantedBy=/RequiredBy=. */
function installTargets(text: string): string[] {
  const unit = parseUnitFile(text);
  const targets = [...settings(unit, 'Install', 'WantedBy'), ...settings(unit, 'Install', 'RequiredBy')];
  return targets.flatMap((t) => t.split(/\s+/)).filter((t) => t !== '');
}

async function enableOne(dir: string, name: string, on: boolean, opts: Options): Promise<number> {
  const text = unitFileText(name);
  if (text === undefined) {
    err(`Failed to ${on ? 'enable' : 'disable'} unit: Unit file ${name} does not exist.`);
    return 1;
  }
  const targets = installTargets(text);
  if (targets.length === 0) {
    if (on) err(NO_INSTALL);
  } else if (isEnabled(dir, name) !== on) {
    const kind = (t: string) =>
      settings(parseUnitFile(text), 'Install', 'RequiredBy').join(' ').includes(t) ? 'requires' : 'wants';
    for (const t of targets) {
      const link = `/etc/systemd/system/${t}.${kind(t)}/${name}`;
      if (!opts.quiet)
        err(on ? `Created symlink ${link} → ${join(unitsDir(), name)}.` : `Removed "${link}".`);
    }
    setEnabled(dir, name, on);
  }
  if (!opts.now) return 0;
  return on ? startOne(dir, name, 'start', opts) : stopOne(dir, name);
}

function unitFileState(dir: string, name: string): string {
  const text = unitFileText(name);
  if (text === undefined) return '';
  if (installTargets(text).length === 0) return 'static';
  return isEnabled(dir, name) ? 'enabled' : 'disabled';
}

/** Every property `show` knows, in the order systemd prints them. */
function properties(dir: string, name: string): [string, string][] {
  const loaded = loadUnit(dir, name);
  const s = readState(dir, name);
  const svc = (k: string, d: string) => (loaded && setting(loaded.unit, 'Service', k)) || d;
  return [
    ['Type', svc('Type', 'simple')],
    ['Restart', svc('Restart', 'no')],
    ['MainPID', String(s.mainPid)],
    ['Result', s.result],
    ['NRestarts', String(s.nRestarts)],
    ['ExecMainPID', String(s.execMainPid)],
    ['ExecMainCode', String(s.execMainCode)],
    ['ExecMainStatus', String(s.execMainStatus)],
    ['Id', name],
    ['Names', name],
    ['Description', (loaded && setting(loaded.unit, 'Unit', 'Description')) || name],
    ['LoadState', loaded ? 'loaded' : 'not-found'],
    ['ActiveState', s.activeState],
    ['SubState', s.subState],
    ['FragmentPath', loaded ? loaded.path : ''],
    ['UnitFileState', unitFileState(dir, name)],
    ['NeedDaemonReload', needsReload(dir, name) ? 'yes' : 'no'],
  ];
}

function show(dir: string, names: string[], opts: Options): number {
  const blocks = names.map((name) => {
    const all = properties(dir, name);
    const wanted = opts.properties;
    const chosen = wanted ? all.filter(([k]) => wanted.includes(k)) : all.filter(([, v]) => v !== '');
    return chosen.map(([k, v]) => (opts.value ? v : `${k}=${v}`)).join('\n');
  });
  out(blocks.join('\n\n'));
  return 0;
}

function status(dir: string, name: string): number {
  const loaded = loadUnit(dir, name);
  if (!loaded) {
    err(`Unit ${name} could not be found.`);
    return 4;
  }
  const s = readState(dir, name);
  const dot = s.activeState === 'active' ? '●' : s.activeState === 'failed' ? '×' : '○';
  out(`${dot} ${described(loaded)}`);
  const fileState = unitFileState(dir, name);
  out(`     Loaded: loaded (${loaded.path}; ${fileState}; preset: enabled)`);
  out(`     Active: ${s.activeState} (${s.subState})`);
  if (s.mainPid) out(`   Main PID: ${s.mainPid}`);
  const entries = readJournal(dir, name).slice(-10);
  if (entries.length > 0) out('');
  for (const e of entries) out(`${e.ident}[${e.pid}]: ${e.message}`);
  return s.activeState === 'active' ? 0 : 3;
}

function cat(name: string): number {
  const text = unitFileText(name);
  if (text === undefined) {
    err(`No files found for ${name}.`);
    return 1;
  }
  out(`# ${join(unitsDir(), name)}`);
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}

function loadedNames(dir: string): string[] {
  return readdirSync(join(dir, 'loaded'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length));
}

/** Run one verb on its units; the exit code. */
export async function systemctl(dir: string, verb: string, args: string[], opts: Options): Promise<number> {
  const names = args.map(unitName);
  const each = async (f: (n: string) => Promise<number> | number) => {
    let rc = 0;
    for (const n of names) rc = (await f(n)) || rc;
    return rc;
  };
  const needUnits = !['is-system-running', 'daemon-reload', 'daemon-reexec'].includes(verb);
  if (needUnits && names.length === 0) {
    err(`Too few arguments.`);
    return 1;
  }
  switch (verb) {
    case 'is-system-running':
      if (!opts.quiet) out('running');
      return 0;
    case 'daemon-reload':
    case 'daemon-reexec':
      reloadAll(dir, loadedNames(dir));
      return 0;
    case 'start':
      return each((n) => startOne(dir, n, 'start', opts));
    case 'stop':
      return each((n) => stopOne(dir, n));
    case 'restart':
    case 'try-restart':
    case 'reload-or-restart':
      return each(async (n) => {
        if (!loadUnit(dir, n)) return startOne(dir, n, 'restart', opts);
        if (verb === 'try-restart' && !running(dir, n)) return 0;
        return (await stopOne(dir, n)) || startOne(dir, n, 'restart', opts);
      });
    case 'enable':
    case 'disable':
      return each((n) => enableOne(dir, n, verb === 'enable', opts));
    case 'reset-failed':
      return each((n) => {
        const s = readState(dir, n);
        if (s.activeState === 'failed')
          writeState(dir, n, {
            ...s,
            activeState: 'inactive',
            subState: 'dead',
            result: 'success',
            starts: [],
          });
        return 0;
      });
    default:
      return query(dir, verb, names, opts);
  }
}

function query(dir: string, verb: string, names: string[], opts: Options): number {
  switch (verb) {
    case 'is-active':
    case 'is-failed': {
      const states = names.map((n) => readState(dir, n).activeState);
      if (!opts.quiet) for (const s of states) out(s);
      const want = verb === 'is-active' ? 'active' : 'failed';
      return states.includes(want) ? 0 : verb === 'is-active' ? 3 : 1;
    }
    case 'is-enabled': {
      let rc = 1;
      for (const n of names) {
        const state = unitFileState(dir, n);
        if (state === '') {
          err(`Failed to get unit file state for ${n}: No such file or directory`);
          continue;
        }
        if (!opts.quiet) out(state);
        if (state !== 'disabled') rc = 0;
      }
      return rc;
    }
    case 'show':
      return show(dir, names, opts);
    case 'cat':
      return names.map(cat).reduce((a, b) => a || b, 0);
    case 'status':
      return names.map((n) => status(dir, n)).reduce((a, b) => a || b, 0);
    default:
      err(`Unknown command verb ${verb}.`);
      return 1;
  }
}
