/**
 * The read-only reference material beside the project (`../shared/realdata`): real samples and
 * CRDs that tests parse as they are, never copied into the repo.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AirgapError } from '../../src/util/errors.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A path under `../shared/realdata/`. */
export function realdata(...parts: string[]): string {
  return resolve(repoRoot, '..', 'shared', 'realdata', ...parts);
}

/** The AirgapError `f` throws (anything else, or no throw, fails the test). */
export function thrown(f: () => unknown): AirgapError {
  try {
    f();
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected an AirgapError');
}

/** The AirgapError a promise rejects with (anything else, or no rejection, fails the test). */
export async function rejection(p: Promise<unknown>): Promise<AirgapError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected an AirgapError');
}
