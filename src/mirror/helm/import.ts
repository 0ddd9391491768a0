/**
 * A dependency's `import-values`, as Helm 3 (chartutil's processImportValues, 3.13.1 and later)
 * reads them, into what the parent chart imports:
 *
 * - a name `x`: the table at `<dependency>.exports.x` in the parent's values, its keys merged
 *   into the parent's root;
 * - `{child: a.b, parent: c.d}`: the table at `<dependency>.a.b`, set at `c.d` (`.` is the root).
 *
 * `<dependency>` is the alias if there is one. What is imported must be a table (a mapping): a
 * path to anything else, or to nothing, imports nothing (Helm only logs a warning). The first import
 * of a key wins over later ones; the caller puts the parent's own values over the result (so a
 * parent's values.yaml wins over what it imports; in Helm 3.13.0 alone it was the other way round).
 */
import type { ChartDependency } from './chart.js';
import { deepCopy, isMap, type GoMap } from './template/values.js';

/** The table at a dotted path (Helm's Values.Table), or undefined if any step is not a table. */
function tableAt(values: GoMap, path: string): GoMap | undefined {
  let cur: GoMap = values;
  for (const part of path.split('.')) {
    const next = Object.hasOwn(cur, part) ? cur[part] : undefined;
    if (!isMap(next)) return undefined;
    cur = next;
  }
  return cur;
}

/** `data` nested under a dotted path (Helm's pathToMap); `.` is the root. */
function underPath(path: string, data: GoMap): GoMap {
  if (path === '.') return data;
  let out = data;
  for (const part of path.split('.').reverse()) out = { [part]: out };
  return out;
}

/** `src` under `dst`: keys dst lacks are added, maps merged, dst's values (nulls too) kept. */
function mergeUnder(dst: GoMap, src: GoMap): void {
  for (const [k, sv] of Object.entries(src)) {
    if (!Object.hasOwn(dst, k)) dst[k] = sv;
    else if (isMap(dst[k]) && isMap(sv)) mergeUnder(dst[k], sv);
  }
}

/** Go's %v of an `import-values` entry's child or parent (a missing one is `<nil>`). */
function pathOf(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** What a chart imports from its enabled dependencies, given its values with its subcharts'. */
export function importedValues(dependencies: readonly ChartDependency[], values: GoMap): GoMap {
  const out: GoMap = {};
  for (const dep of dependencies) {
    for (const iv of dep.importValues) {
      const child = typeof iv === 'string' ? `exports.${iv}` : pathOf(iv['child']);
      const parent = typeof iv === 'string' ? '.' : pathOf(iv['parent']);
      const table = tableAt(values, `${dep.name}.${child}`);
      if (table) mergeUnder(out, underPath(parent, deepCopy(table)));
    }
  }
  return out;
}
