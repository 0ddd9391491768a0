/** Run the real CLI (`node bin/run.js`, compiled by the vitest global setup) as a user would. */
import { resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
/** The CLI the tests run (the checkout's bin/run.js). */
export const BIN = resolve(REPO_ROOT, 'bin/run.js');

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export async function airgap(
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const r = await execa('node', [BIN, ...args], {
    reject: false,
    env: { NO_COLOR: '1', ...opts.env },
    timeout: opts.timeoutMs ?? 120_000,
    stdin: 'ignore',
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Start the CLI without waiting (to kill it mid-run). */
export function spawnAirgap(args: string[]): ResultPromise {
  return execa('node', [BIN, ...args], { reject: false, env: { NO_COLOR: '1' }, stdin: 'ignore' });
}
