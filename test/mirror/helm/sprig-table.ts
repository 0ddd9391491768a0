/** Shared by the Sprig conformance tables: render as Helm would, and a table of template → output. */
import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { helmFunctions } from '../../../src/mirror/helm/template/helm-funcs.js';

/** Render `text` as Helm would (its functions; "<no value>" left as Go prints it). */
export function run(text: string, data: unknown = {}): string {
  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  set.parse('t', text);
  return set.execute('t', data);
}

/** A table: template → what it renders. */
export type Table = [template: string, want: string][];

export function table(name: string, cases: Table, data: unknown = {}): void {
  describe(name, () => {
    it.each(cases)('%s', (tpl, want) => {
      expect(run(tpl, data)).toBe(want);
    });
  });
}

/** A Go time: 13 Jun 19 20:39:39 GMT, sprig's date tests' instant. */
export const JUNE13 = new Date(Date.UTC(2019, 5, 13, 20, 39, 39));
