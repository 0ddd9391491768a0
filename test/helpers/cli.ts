/** Run the real CLI (`node bin/run.js`, compiled by the vitest global setup) as a user would. */
import { resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { strayHintFlags } from './hint-flags.js';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
/** The CLI the tests run (the checkout's bin/run.js). */
export const BIN = resolve(REPO_ROOT, 'bin/run.js');

/**
 * The update service the CLI asks unless a test names one: a loopback port nothing listens on, so
 * no test reaches api.openshift.com (a command that asks the graph finds it refused at once).
 */
const NO_GRAPH_URL = 'http://127.0.0.1:9/api/upgrades_info/v1/graph';
const BASE_ENV = { NO_COLOR: '1', UPDATE_URL_OVERRIDE: NO_GRAPH_URL };

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
    env: { ...BASE_ENV, ...opts.env },
    timeout: opts.timeoutMs ?? 120_000,
    stdin: 'ignore',
  });
  const result = { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
  const stray = strayHintFlags(args, result.stderr);
  if (stray.length > 0) {
    throw new Error(`airgap ${args.join(' ')} advised flags the command does not have:\n${stray.join('\n')}`);
  }
  return result;
}

/** Start the CLI without waiting (to kill it mid-run). */
export function spawnAirgap(args: string[]): ResultPromise {
  return execa('node', [BIN, ...args], { reject: false, env: BASE_ENV, stdin: 'ignore' });
}
