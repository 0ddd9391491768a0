/**
 * wrk (Debian's 4.1) as the benchmark drives it: a fixed number of connections for a fixed time
 * against one URL, with exact totals from a Lua `done` hook (wrk's own Transfer/sec line has two
 * digits). The hook defines no per-request function, so wrk stays on its fast path.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';

/** What one wrk run measured. */
export interface WrkRun {
  connections: number;
  threads: number;
  /** Measured time, in seconds (wrk's own clock). */
  seconds: number;
  /** Complete responses. */
  requests: number;
  /** Bytes read (headers and bodies, partial responses included). */
  bytes: number;
  bytesPerSecond: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
}

const DONE_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK_TOTALS %d %d %d %d %d %d %d %d\\n", summary.duration, summary.requests,
    summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
end
`;

/** Write the Lua hook into `dir`; returns its path. */
export async function writeWrkScript(dir: string): Promise<string> {
  const path = join(dir, 'totals.lua');
  await writeFile(path, DONE_SCRIPT);
  return path;
}

/** `wrk -t<threads> -c<connections> -d<seconds>s` against `url`. */
export async function runWrk(opts: {
  url: string;
  connections: number;
  threads: number;
  seconds: number;
  script: string;
}): Promise<WrkRun> {
  const r = await execa(
    'wrk',
    [
      `-t${opts.threads}`,
      `-c${opts.connections}`,
      `-d${opts.seconds}s`,
      // A 1 GiB answer shared by 64 connections takes longer than wrk's default 2 s.
      '--timeout',
      '600s',
      '-s',
      opts.script,
      opts.url,
    ],
    { reject: false, timeout: (opts.seconds + 120) * 1000 },
  );
  const m = /WRK_TOTALS (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(String(r.stdout));
  if (r.exitCode !== 0 || !m)
    throw new Error(
      `wrk against ${opts.url} failed (exit ${r.exitCode}): ${String(r.stdout)}${String(r.stderr)}`,
    );
  const [duration, requests, bytes, connect, read, write, status, timeout] = m
    .slice(1)
    .map(Number) as number[];
  const seconds = duration! / 1e6;
  return {
    connections: opts.connections,
    threads: opts.threads,
    seconds,
    requests: requests!,
    bytes: bytes!,
    bytesPerSecond: bytes! / seconds,
    errors: { connect: connect!, read: read!, write: write!, status: status!, timeout: timeout! },
  };
}

export async function wrkVersion(): Promise<string> {
  const r = await execa('wrk', ['--version'], { reject: false });
  return /wrk (\S+)/.exec(`${String(r.stdout)}${String(r.stderr)}`)?.[1] ?? 'unknown';
}
