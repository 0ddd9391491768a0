/**
 * Running another program (a credential helper, podman, systemctl): bounded in time and in what it
 * may print, never through a shell, its output decoded, and how it ended said in words a person can
 * read. One mechanism for every program airgap starts.
 */
import { execFile, type ExecFileException } from 'node:child_process';

/** How much a program may print on stdout or on stderr by default. */
const OUTPUT_LIMIT = 1024 * 1024;

export interface ProgramOptions {
  /** Killed (SIGKILL) after this long; default 30 s. */
  timeoutMs?: number;
  /** Written to its stdin, which is then closed. */
  input?: string;
  /** Killed once it prints more than this on stdout or stderr; default 1 MiB. */
  maxOutput?: number;
  /** Its environment; default the caller's. */
  env?: NodeJS.ProcessEnv;
}

export interface ProgramRun {
  stdout: string;
  stderr: string;
  /** Its exit code; undefined when it did not exit by itself. */
  exitCode?: number;
  /** Why it did not finish well: not installed, timed out, too much output, exit N, a signal. */
  failure?: ProgramFailure;
}

export type ProgramFailure =
  | { kind: 'not-found' }
  | { kind: 'timeout'; ms: number }
  | { kind: 'output-limit'; bytes: number }
  | { kind: 'exit'; code: number }
  | { kind: 'signal'; signal: string }
  | { kind: 'spawn'; message: string };

/** Run `bin args…`; resolves with what it printed and how it ended (it never rejects). */
export function runProgram(bin: string, args: string[], o: ProgramOptions = {}): Promise<ProgramRun> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const maxOutput = o.maxOutput ?? OUTPUT_LIMIT;
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      args,
      {
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: maxOutput,
        encoding: 'utf8',
        ...(o.env ? { env: o.env } : {}),
      },
      (error, stdout, stderr) => {
        const failure = error ? failureOf(error, timeoutMs, maxOutput) : undefined;
        resolve({
          stdout,
          stderr,
          ...(error ? {} : { exitCode: 0 }),
          ...(failure?.kind === 'exit' ? { exitCode: failure.code } : {}),
          ...(failure ? { failure } : {}),
        });
      },
    );
    // A program that exits without reading its input (or cannot start) breaks this pipe (EPIPE):
    // ignored here, since its exit, or the spawn error, is what the callback reports.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.input ?? '');
  });
}

function failureOf(e: ExecFileException, timeoutMs: number, maxOutput: number): ProgramFailure {
  if (e.code === 'ENOENT') return { kind: 'not-found' };
  if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return { kind: 'output-limit', bytes: maxOutput };
  if (e.killed) return { kind: 'timeout', ms: timeoutMs };
  if (typeof e.code === 'number') return { kind: 'exit', code: e.code };
  if (e.signal) return { kind: 'signal', signal: e.signal };
  return { kind: 'spawn', message: e.message };
}

/** `not installed (not on PATH)`, `exit 3`, `did not finish within 30 s (stopped)`, … */
export function describeFailure(f: ProgramFailure): string {
  switch (f.kind) {
    case 'not-found':
      return 'it is not installed (not on PATH)';
    case 'timeout':
      return `it did not finish within ${f.ms / 1000} s (stopped)`;
    case 'output-limit':
      return `it printed more than ${f.bytes / 1024 / 1024} MiB (stopped)`;
    case 'exit':
      return `exit ${f.code}`;
    case 'signal':
      return `killed by ${f.signal}`;
    case 'spawn':
      return f.message;
  }
}

/**
 * The last line of what a program wrote on stderr (control characters replaced, at most 300
 * characters), for an error message; '' when it wrote nothing.
 */
export function lastLine(text: string): string {
  const line = text
    .split('\n')
    .map((l) => l.replace(/\p{Cc}/gu, ' ').trim())
    .filter(Boolean)
    .at(-1);
  if (!line) return '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
