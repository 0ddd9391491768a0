/**
 * What systemd does for one running service: the detached process `systemctl start` leaves behind.
 * It runs ExecStartPre, then ExecStart as the main process (its output into the journal), honours
 * Restart=/RestartSec=/StartLimitBurst=, and on SIGTERM (`systemctl stop`) runs ExecStop, sends
 * SIGTERM to the main process's group (SIGKILL after TimeoutStopSec=), runs ExecStopPost and exits.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import {
  described,
  journal,
  loadUnit,
  logSystemd,
  readState,
  writeState,
  type Loaded,
  type RunState,
} from './state.js';
import {
  expandSpecifiers,
  parseEnvironmentFile,
  parseExec,
  setting,
  settings,
  timeSpanMs,
  timeoutStopMs,
  unitEnvironment,
  type ExecCommand,
} from './unit.js';

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin';
const STATUS_NAMES: Record<number, string> = {
  0: 'SUCCESS',
  1: 'FAILURE',
  2: 'INVALIDARGUMENT',
  3: 'NOTIMPLEMENTED',
  203: 'EXEC',
};
/** Signals after which systemd counts a service's end as clean. */
const CLEAN_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGPIPE'];

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exists(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The environment a unit's commands see: the caller's, systemd's PATH, then the unit's own. */
function unitEnv(loaded: Loaded): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, PATH: DEFAULT_PATH };
  for (const file of settings(loaded.unit, 'Service', 'EnvironmentFile')) {
    const optional = file.startsWith('-');
    try {
      Object.assign(env, parseEnvironmentFile(readFileSync(optional ? file.slice(1) : file, 'utf8')));
    } catch (e) {
      if (!optional) throw e;
    }
  }
  const values = settings(loaded.unit, 'Service', 'Environment').map((v) => expandSpecifiers(v, loaded.name));
  return Object.assign(env, unitEnvironment(values));
}

function commands(loaded: Loaded, key: string, env: Record<string, string | undefined>): ExecCommand[] {
  return settings(loaded.unit, 'Service', key).map((v) =>
    parseExec(expandSpecifiers(v, loaded.name), env, exists),
  );
}

function exitText(exit: Exit): string {
  if (exit.signal) return `code=killed, status=${exit.signal.replace(/^SIG/, '')}`;
  return `code=exited, status=${exit.code}/${STATUS_NAMES[exit.code ?? 0] ?? 'n/a'}`;
}

/** Whether an exit counts as success (exit 0, SuccessExitStatus=, or a clean signal). */
function clean(loaded: Loaded, exit: Exit): boolean {
  const extra = settings(loaded.unit, 'Service', 'SuccessExitStatus').join(' ').split(/\s+/);
  if (exit.signal)
    return CLEAN_SIGNALS.includes(exit.signal) || extra.includes(exit.signal.replace(/^SIG/, ''));
  return exit.code === 0 || extra.includes(String(exit.code));
}

interface Running {
  pid: number;
  exited: Promise<Exit>;
}

/** Start one command in its own process group, its output to the unit's journal. */
function run(
  dir: string,
  loaded: Loaded,
  cmd: ExecCommand,
  env: Record<string, string | undefined>,
): Running {
  const cwd = setting(loaded.unit, 'Service', 'WorkingDirectory')?.replace(/^-/, '') || '/';
  const child = spawn(cmd.path, cmd.argv.slice(1), {
    argv0: cmd.argv[0],
    env,
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ident = basename(cmd.argv[0] ?? cmd.path);
  const pid = child.pid ?? 0;
  const streams = [child.stdout, child.stderr].map(
    (s) =>
      new Promise<void>((resolve) => {
        const rl = createInterface({ input: s });
        rl.on('line', (line) => journal(dir, loaded.name, ident, pid, line));
        rl.on('close', resolve);
      }),
  );
  const exited = new Promise<Exit>((resolve) => {
    child.on('error', (e) => {
      logSystemd(dir, loaded.name, `${loaded.name}: Failed to execute ${cmd.path}: ${e.message}`);
      resolve({ code: 203, signal: null });
    });
    child.on('exit', (code, signal) => {
      // Output still buffered in the pipes belongs before what is logged about the exit.
      void Promise.race([Promise.all(streams), sleep(500)]).then(() => resolve({ code, signal }));
    });
  });
  return { pid, exited };
}

/** Signal a process group, ignoring one that is gone. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export class Supervisor {
  private stopping = false;
  private wake: () => void = () => {};
  private current: Running | undefined;
  private state: RunState;
  private readonly dir: string;
  private readonly name: string;

  constructor(dir: string, name: string) {
    this.dir = dir;
    this.name = name;
    this.state = readState(dir, name);
    process.on('SIGTERM', () => {
      this.stopping = true;
      if (this.current) killGroup(this.current.pid, 'SIGTERM'); // a control command in progress
      this.wake();
    });
  }

  private save(patch: Partial<RunState>): void {
    this.state = { ...this.state, ...patch, supervisorPid: process.pid };
    writeState(this.dir, this.name, this.state);
  }

  private log(message: string): void {
    logSystemd(this.dir, this.name, message);
  }

  /** Run control commands (ExecStartPre, ExecStop...) in order; the first failure that counts. */
  private async control(
    loaded: Loaded,
    key: string,
    env: Record<string, string | undefined>,
    subState: string,
  ): Promise<Exit | undefined> {
    for (const cmd of commands(loaded, key, env)) {
      this.save({ subState });
      this.current = run(this.dir, loaded, cmd, env);
      const exit = await this.current.exited;
      this.current = undefined;
      if (!clean(loaded, exit) && !cmd.ignoreFailure) {
        this.log(`${this.name}: Control process exited, ${exitText(exit)}`);
        return exit;
      }
    }
    return undefined;
  }

  /** Wait for the main process; on a stop request, stop it the way systemd does. */
  private async waitMain(
    loaded: Loaded,
    main: Running,
    env: Record<string, string | undefined>,
  ): Promise<Exit> {
    const stopRequested = new Promise<void>((r) => {
      this.wake = r;
      if (this.stopping) r();
    });
    const first = await Promise.race([main.exited, stopRequested.then(() => undefined)]);
    if (first) return first;
    this.save({ activeState: 'deactivating', subState: 'stop' });
    this.log(`Stopping ${described(loaded)}...`);
    await this.control(loaded, 'ExecStop', { ...env, MAINPID: String(main.pid) }, 'stop');
    const timeout = timeoutStopMs(loaded.unit);
    killGroup(main.pid, 'SIGTERM');
    this.save({ subState: 'stop-sigterm' });
    const exit = await Promise.race([main.exited, sleep(timeout).then(() => undefined)]);
    if (exit) return exit;
    this.log(`${this.name}: State 'stop-sigterm' timed out. Killing.`);
    killGroup(main.pid, 'SIGKILL');
    return main.exited;
  }

  /** One start: the pre commands and the main process, until it ends or is stopped; its result. */
  private async once(loaded: Loaded, env: Record<string, string | undefined>): Promise<string> {
    this.save({ activeState: 'activating', subState: 'start-pre', mainPid: 0 });
    this.log(`Starting ${described(loaded)}...`);
    if (await this.control(loaded, 'ExecStartPre', env, 'start-pre')) return 'exit-code';
    if (this.stopping) return 'success';
    const [main] = commands(loaded, 'ExecStart', env);
    if (!main) return 'exit-code';
    const running = run(this.dir, loaded, main, env);
    const oneshot = setting(loaded.unit, 'Service', 'Type') === 'oneshot';
    this.save({ mainPid: running.pid, execMainPid: running.pid, execMainCode: 0, execMainStatus: 0 });
    if (!oneshot) {
      this.save({ activeState: 'active', subState: 'running', result: 'success' });
      this.log(`Started ${described(loaded)}.`);
      this.finishJob('done');
    }
    const exit = await this.waitMain(loaded, running, env);
    const status = exit.signal ? osConstants.signals[exit.signal] : (exit.code ?? 0);
    this.save({ mainPid: 0, execMainCode: exit.signal ? 2 : 1, execMainStatus: status });
    if (!this.stopping || !clean(loaded, exit))
      this.log(`${this.name}: Main process exited, ${exitText(exit)}`);
    if (!clean(loaded, exit)) return exit.signal ? 'signal' : 'exit-code';
    if (oneshot) {
      const remain = /^(yes|true|1|on)$/.test(setting(loaded.unit, 'Service', 'RemainAfterExit') ?? '');
      this.log(`Finished ${described(loaded)}.`);
      this.finishJob('done');
      if (remain && !this.stopping) {
        this.save({ activeState: 'active', subState: 'exited', result: 'success' });
        await new Promise<void>((r) => (this.wake = r));
      }
    }
    return 'success';
  }

  private finishJob(result: 'done' | 'failed'): void {
    if (this.state.job && !this.state.job.result) this.save({ job: { ...this.state.job, result } });
  }

  private restartWanted(loaded: Loaded, result: string): boolean {
    const restart = setting(loaded.unit, 'Service', 'Restart') ?? 'no';
    if (restart === 'always') return true;
    if (restart === 'on-failure') return result !== 'success';
    if (restart === 'on-abnormal') return result === 'signal';
    return false;
  }

  /** Start attempts within StartLimitIntervalSec beyond StartLimitBurst make systemd give up. */
  private startLimitHit(loaded: Loaded): boolean {
    const interval = timeSpanMs(setting(loaded.unit, 'Unit', 'StartLimitIntervalSec'), 10_000);
    const burst = Number(setting(loaded.unit, 'Unit', 'StartLimitBurst') ?? 5);
    const now = Date.now();
    const starts = [...this.state.starts.filter((t) => now - t < interval), now];
    this.save({ starts });
    return interval > 0 && starts.length > burst;
  }

  async main(): Promise<void> {
    for (;;) {
      const loaded = loadUnit(this.dir, this.name);
      if (!loaded) return;
      if (this.startLimitHit(loaded)) {
        this.log(`${this.name}: Start request repeated too quickly.`);
        return this.end(loaded, 'start-limit-hit');
      }
      let result: string;
      try {
        result = await this.once(loaded, unitEnv(loaded));
      } catch (e) {
        this.log(`${this.name}: ${(e as Error).message}`);
        result = 'resources';
      }
      const env = unitEnv(loaded);
      await this.control(loaded, 'ExecStopPost', env, 'stop-post');
      if (this.stopping || !this.restartWanted(loaded, result)) return this.end(loaded, result);
      this.save({ activeState: 'activating', subState: 'auto-restart', result, mainPid: 0 });
      if (result !== 'success') this.log(`${this.name}: Failed with result '${result}'.`);
      this.finishJob('failed');
      await Promise.race([
        sleep(timeSpanMs(setting(loaded.unit, 'Service', 'RestartSec'), 100)),
        new Promise<void>((r) => (this.wake = r)),
      ]);
      if (this.stopping) return this.end(loaded, result);
      this.save({ nRestarts: this.state.nRestarts + 1 });
      this.log(`${this.name}: Scheduled restart job, restart counter is at ${this.state.nRestarts}.`);
    }
  }

  private end(loaded: Loaded, result: string): void {
    const ok = result === 'success';
    if (ok) this.log(`${this.name}: Deactivated successfully.`);
    else this.log(`${this.name}: Failed with result '${result}'.`);
    if (this.stopping) this.log(`Stopped ${described(loaded)}.`);
    else if (!ok && this.state.job && !this.state.job.result)
      this.log(`Failed to start ${described(loaded)}.`);
    this.finishJob(ok ? 'done' : 'failed');
    this.state = {
      ...this.state,
      activeState: ok ? 'inactive' : 'failed',
      subState: ok ? 'dead' : 'failed',
      result,
      mainPid: 0,
    };
    writeState(this.dir, this.name, { ...this.state, supervisorPid: 0 });
  }
}
