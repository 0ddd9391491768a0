/**
 * The programs of the bastion airgap drives to run its registry (podman, systemctl, journalctl,
 * update-ca-trust), each found on PATH and run through util/program.ts: a failure is an error
 * naming the command and what it said, never read as "not there" unless the program said so.
 */
import { AirgapError } from '../util/errors.js';
import { describeFailure, lastLine, runProgram, type ProgramRun } from '../util/program.js';
import { BastionError } from './errors.js';

/** How long one step of podman or systemctl may take (a `podman load` of a large image, a stop). */
const STEP_TIMEOUT_MS = 10 * 60_000;

/** A command line (program first) as a person would type it. */
export function shellCommand(argv: string[]): string {
  return shellWords(argv[0] ?? '', argv.slice(1));
}

/** One host command as a person would type it (for --dry-run and for messages). */
export function shellWords(bin: string, args: string[]): string {
  return [bin, ...args]
    .map((a) => (/^[\w./:@%+=,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}

/**
 * Run a host program; a failure (not installed, non-zero exit unless `okCodes` has it, timeout) is an
 * AirgapError `code` that names the command and the last line it printed.
 */
export async function runHost(
  bin: string,
  args: string[],
  code: BastionError,
  o: { okCodes?: number[]; input?: string; timeoutMs?: number; hint?: string } = {},
): Promise<ProgramRun> {
  const r = await runProgram(bin, args, {
    timeoutMs: o.timeoutMs ?? STEP_TIMEOUT_MS,
    maxOutput: 16 * 1024 * 1024,
    ...(o.input !== undefined ? { input: o.input } : {}),
  });
  if (!r.failure || (r.exitCode !== undefined && (o.okCodes ?? []).includes(r.exitCode))) return r;
  const said = lastLine(r.stderr) || lastLine(r.stdout);
  throw new AirgapError(
    code,
    `${shellWords(bin, args)} failed (${describeFailure(r.failure)})${said ? `: ${said}` : ''}`,
    {
      hint:
        r.failure.kind === 'not-found'
          ? `install ${bin} (RHEL: dnf install ${bin === 'podman' ? 'podman' : 'systemd'}; Debian: apt-get install ${bin === 'podman' ? 'podman' : 'systemd'})`
          : (o.hint ?? `run ${shellWords(bin, args)} to see the whole output`),
    },
  );
}
