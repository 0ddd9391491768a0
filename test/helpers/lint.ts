/**
 * The project's own lint rules, run through its ESLint configuration on a snippet placed at a
 * path (where a rule applies, or where it does not).
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { expect } from 'vitest';
import { REPO_ROOT } from './cli.js';

const eslint = new ESLint({ cwd: REPO_ROOT });

/** What `rule` flags in a snippet linted as the file `path` (relative to the repository): line and message. */
export function ruleFlags(rule: string) {
  return async (
    code: string,
    path = 'src/mirror/snippet.ts',
  ): Promise<{ line: number; message: string }[]> => {
    const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, path) });
    expect(result!.messages.filter((m) => m.fatal)).toEqual([]);
    return result!.messages
      .filter((m) => m.ruleId === rule)
      .map((m) => ({ line: m.line, message: m.message }));
  };
}
