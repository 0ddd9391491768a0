/**
 * The lint rule airgap/no-silent-catch (eslint.config.js), run through the project's own ESLint
 * configuration on snippets placed in src/ (where it applies) and elsewhere (where it does not).
 */
import { describe, expect, it } from 'vitest';
import { ruleFlags } from '../helpers/lint.js';

const flagged = ruleFlags('airgap/no-silent-catch');

describe('airgap/no-silent-catch', () => {
  it('flags a catch clause with no parameter, or one it never reads, and says what to do', async () => {
    const found = await flagged(
      [
        'export async function a(p: Promise<number>) {',
        '  try {',
        '    return await p;',
        '  } catch {',
        '    return 0;',
        '  }',
        '}',
        'export async function b(p: Promise<number>) {',
        '  try {',
        '    return await p;',
        '  } catch (e) {',
        '    return 0;',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    expect(found.map((f) => f.line)).toEqual([4, 11]);
    expect(found[0]!.message).toContain('catch only the error that means "not there"');
    expect(found[0]!.message).toContain('ENOENT');
    expect(found[0]!.message).toContain('status 404');
    expect(found[0]!.message).toContain('comment inside the catch block');
  });

  it('flags .catch( and the rejection handler of .then( whose callback takes no parameter or ignores it', async () => {
    const found = await flagged(
      [
        'export const a = (p: Promise<number>) => p.catch(() => 0);',
        'export const b = (p: Promise<number>) => p.catch((_e: unknown) => 0);',
        'export const c = (p: Promise<number>) =>',
        '  p.then(',
        '    (x) => x,',
        '    () => 0,',
        '  );',
        '',
      ].join('\n'),
    );
    expect(found.map((f) => f.line)).toEqual([1, 2, 4]);
    expect(found[0]!.message).toContain('.catch(');
    expect(found[2]!.message).toContain('.then(');
  });

  it('lets through a catch that reads its error, and one that says why any error is safe to ignore', async () => {
    const found = await flagged(
      [
        "import { stat } from 'node:fs/promises';",
        'export async function a(path: string) {',
        '  try {',
        '    return await stat(path);',
        '  } catch (e) {',
        "    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;",
        '    throw e;',
        '  }',
        '}',
        'export function b(s: string) {',
        '  try {',
        '    return JSON.parse(s) as unknown;',
        '  } catch {',
        '    // not JSON: the caller asks again',
        '    return undefined;',
        '  }',
        '}',
        'export const c = (p: Promise<void>) => p.catch(() => undefined); // best effort: a temp file',
        'export const d = (p: Promise<void>) =>',
        '  // a listener that must not throw',
        '  p.catch(() => undefined);',
        'export const e = (p: Promise<number>) => p.catch((err: unknown) => (err instanceof RangeError ? 0 : Promise.reject(err)));',
        'export const f = (p: Promise<number>) => p.then((x) => x + 1);',
        '',
      ].join('\n'),
    );
    expect(found).toEqual([]);
  });

  it('applies to product code only: not to tests, the lab or the benchmarks', async () => {
    const code = 'export const a = (p: Promise<number>) => p.catch(() => 0);\n';
    expect(await flagged(code, 'src/util/snippet.ts')).toHaveLength(1);
    expect(await flagged(code, 'test/util/snippet.ts')).toEqual([]);
    expect(await flagged(code, 'lab/snippet.ts')).toEqual([]);
  });
});
