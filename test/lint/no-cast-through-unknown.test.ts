/**
 * The lint rule airgap/no-cast-through-unknown (eslint.config.js), run through the project's own
 * ESLint configuration on snippets placed in src/ (where it applies) and elsewhere (where it does not).
 */
import { describe, expect, it } from 'vitest';
import { ruleFlags } from '../helpers/lint.js';

const flagged = ruleFlags('airgap/no-cast-through-unknown');

describe('airgap/no-cast-through-unknown', () => {
  it('flags x as unknown as T and <T><unknown>x, in either mix, and says what to do instead', async () => {
    const found = await flagged(
      [
        'interface Foo {',
        '  a: string;',
        '}',
        'export const a = (x: number) => x as unknown as Foo;',
        'export const b = (x: number) => (x as unknown) as Foo;',
        'export const c = (x: number) => <Foo>(<unknown>x);',
        'export const d = (x: number) => <Foo>(x as unknown);',
        'export const e = (x: number) => (<unknown>x) as Foo;',
        '',
      ].join('\n'),
    );
    expect(found.map((f) => f.line)).toEqual([4, 5, 6, 7, 8]);
    expect(found[0]!.message).toContain('type guard');
    expect(found[0]!.message).toContain('`as T`');
  });

  it('lets through a cast to unknown, a cast from unknown, and a cast to an overlapping type', async () => {
    const found = await flagged(
      [
        'interface Foo {',
        '  a: string;',
        '}',
        'export const a = (x: Foo) => x as unknown;',
        'export const b = (s: string) => JSON.parse(s) as unknown;',
        'export const c = (x: unknown) => x as Foo;',
        'export const d = (x: { a: string; b?: number }) => x as Foo;',
        'export const e = (x: Foo) => x as unknown as unknown;',
        '',
      ].join('\n'),
    );
    expect(found).toEqual([]);
  });

  it('applies to product code only: not to tests, the lab or the benchmarks', async () => {
    const code = 'export const a = (x: number) => x as unknown as string;\n';
    expect(await flagged(code, 'src/util/snippet.ts')).toHaveLength(1);
    expect(await flagged(code, 'test/util/snippet.ts')).toEqual([]);
    expect(await flagged(code, 'lab/snippet.ts')).toEqual([]);
    expect(await flagged(code, 'bench/snippet.ts')).toEqual([]);
  });
});
