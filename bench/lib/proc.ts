/**
 * Process measurement for the benchmark: run a command under GNU time (wall clock, peak RSS, CPU)
 * and read the CPU a running process (a registry) has used so far from /proc.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { execa } from 'execa';

const GNU_TIME = '/usr/bin/time';

/** What one process cost. */
export interface ProcStats {
  wallMs: number;
  /** Peak resident set size in KiB (GNU time %M). */
  peakRssKiB: number;
  userS: number;
  sysS: number;
}

export interface TimedResult extends ProcStats {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Environment without variables that would make a tool read credentials or config we did not give it. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === 'REGISTRY_AUTH_FILE' || k === 'CONTAINERS_REGISTRIES_CONF') continue;
    env[k] = v;
  }
  return env;
}

function parseTimeOutput(text: string): Omit<ProcStats, 'wallMs'> {
  // GNU time writes "Command exited with non-zero status N" first when the command fails.
  const last = text.trim().split('\n').at(-1) ?? '';
  const [rss, user, sys] = last.trim().split(/\s+/).map(Number);
  if (![rss, user, sys].every((n) => Number.isFinite(n)))
    throw new Error(`cannot parse GNU time output: ${text}`);
  return { peakRssKiB: rss!, userS: user!, sysS: sys! };
}

/**
 * Run `cmd args` under `/usr/bin/time -f "%M %U %S"`. Never rejects for a non-zero exit; the caller
 * decides what a failure means. `timeFile` is scratch space for GNU time's report.
 */
export async function timed(
  cmd: string,
  args: string[],
  opts: { timeFile: string; timeoutMs?: number; cwd?: string; env?: Record<string, string> },
): Promise<TimedResult> {
  const started = process.hrtime.bigint();
  const r = await execa(GNU_TIME, ['-f', '%M %U %S', '-o', opts.timeFile, cmd, ...args], {
    reject: false,
    timeout: opts.timeoutMs ?? 30 * 60_000,
    stdin: 'ignore',
    env: { ...cleanEnv(), ...opts.env },
    extendEnv: false,
    cwd: opts.cwd,
    maxBuffer: 256 * 1024 * 1024,
  });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.timedOut) throw new Error(`${cmd} ${args.join(' ')} timed out`);
  const stats = parseTimeOutput(await readFile(opts.timeFile, 'utf8'));
  await rm(opts.timeFile, { force: true });
  return { ...stats, wallMs, exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Only the measurements of a result (no output), for reports. */
export function statsOf(r: ProcStats): ProcStats {
  return { wallMs: r.wallMs, peakRssKiB: r.peakRssKiB, userS: r.userS, sysS: r.sysS };
}

/** Sum of many processes' stats (a loop of commands): wall and CPU add up, RSS is the largest. */
export function addStats(a: ProcStats, b: ProcStats): ProcStats {
  return {
    wallMs: a.wallMs + b.wallMs,
    peakRssKiB: Math.max(a.peakRssKiB, b.peakRssKiB),
    userS: a.userS + b.userS,
    sysS: a.sysS + b.sysS,
  };
}

export const zeroStats: ProcStats = { wallMs: 0, peakRssKiB: 0, userS: 0, sysS: 0 };

let clockTicks: number | undefined;

async function ticksPerSecond(): Promise<number> {
  if (clockTicks === undefined) {
    const { stdout } = await execa('getconf', ['CLK_TCK']);
    clockTicks = Number(stdout.trim()) || 100;
  }
  return clockTicks;
}

/** The pid of the live process whose command line contains every one of `needles`. */
export async function findPid(needles: string[]): Promise<number | undefined> {
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0').join(' ');
      if (needles.every((n) => cmdline.includes(n))) return Number(name);
    } catch {
      // exited while we looked
    }
  }
  return undefined;
}

/** CPU seconds (user + system) process `pid` has used so far; 0 when it is gone. */
export async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / (await ticksPerSecond());
  } catch {
    return 0;
  }
}

/**
 * How to run the airgap at `cli`: a script (bin/run.js, the tarball's bin/airgap) on this Node,
 * anything else as the single executable it is.
 */
export function airgapCommand(cli: string): [cmd: string, pre: string[]] {
  return /\.js$|\/bin\/airgap$/.test(cli) ? [process.execPath, [cli]] : [cli, []];
}
