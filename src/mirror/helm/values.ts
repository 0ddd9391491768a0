/**
 * Values and dependencies as Helm 3 (3.13.1 and later, as 3.16 and Helm 4) processes them before
 * rendering (chartutil's ProcessDependenciesWithMerge, then CoalesceValues):
 *
 * 1. Which dependencies are enabled, with the user's values over every chart's values.yaml: a
 *    dependency is enabled unless its `condition` (the first of its comma-separated paths that holds
 *    a boolean, read in the parent's values) is false, or, without one, all its `tags` that are set
 *    (under `tags`, the root's over each subchart's own) are false. An alias renames the subchart:
 *    its `.Chart.Name`, its values key and its templates' path. Disabled subcharts are gone from
 *    here on: their values.yaml is not coalesced, nor imported.
 * 2. `import-values` (import.ts), from the deepest chart up, with the charts' values alone (not the
 *    user's): the parent's values.yaml wins over what it imports.
 * 3. The user's values over the root's values (as step 2 left them); a null in the user's values
 *    removes the chart's default for that key. A subchart's values are the parent's values under its
 *    name (or alias) over the subchart's own, written back under that key, so the parent sees them
 *    too; `global` is passed down, the parent's globals over the subchart's.
 */
import type { Chart, ChartDependency } from './chart.js';
import { importedValues } from './import.js';
import { deepCopy, isMap, type GoMap } from './template/values.js';
import { satisfies, parseVersion } from './template/semver.js';

/** A chart ready to render: its name (an alias if it has one), path, values and enabled subcharts. */
export interface ScopedChart {
  chart: Chart;
  /** The name it renders under: its alias, else its own. */
  name: string;
  /** `podinfo`, `podinfo/charts/cache`: the prefix of its templates' names. */
  path: string;
  values: GoMap;
  children: ScopedChart[];
  /** Its enabled dependencies as Helm leaves them in `.Chart.Dependencies`: named by alias. */
  dependencies: ChartDependency[];
}

/**
 * Helm's coalesceTablesFullKey: `dst` over `src`, maps merged deeply; a null in dst removes the
 * key src has, unless merging (then the null stays, to remove a subchart's default later).
 */
function coalesceTables(dst: GoMap, src: GoMap, merge = false): GoMap {
  for (const [k, sv] of Object.entries(src)) {
    if (!Object.hasOwn(dst, k)) {
      dst[k] = deepCopy(sv);
      continue;
    }
    const dv = dst[k];
    if ((dv === null || dv === undefined) && !merge) delete dst[k];
    else if (isMap(dv) && isMap(sv)) coalesceTables(dv, sv, merge);
  }
  return dst;
}

/**
 * Helm's coalesceValues: `dst` over a chart's values; the section of one of its subcharts is
 * merged (a null kept, for the subchart's own coalescing to remove its default).
 */
function coalesceChart(dst: GoMap, defaults: GoMap, children: Set<string>, merge: boolean): void {
  for (const [k, sv] of Object.entries(defaults)) {
    if (!Object.hasOwn(dst, k)) {
      dst[k] = deepCopy(sv);
      continue;
    }
    const dv = dst[k];
    if ((dv === null || dv === undefined) && !merge) delete dst[k];
    else if (isMap(dv) && isMap(sv)) coalesceTables(dv, sv, merge || children.has(k));
  }
}

/** Helm's coalesceGlobals: the parent's globals over those in the subchart's section. */
function passGlobals(child: GoMap, parent: GoMap): void {
  const pg = parent['global'] ?? {};
  const cg = child['global'] ?? {};
  if (!isMap(pg) || !isMap(cg)) return;
  for (const [k, v] of Object.entries(pg)) {
    if (isMap(v)) {
      if (!Object.hasOwn(cg, k)) cg[k] = deepCopy(v);
      else if (isMap(cg[k])) cg[k] = coalesceTables(deepCopy(v), cg[k], true);
    } else if (!isMap(cg[k])) cg[k] = v;
  }
  child['global'] = cg;
}

/** A value at a dotted path (`redis.enabled`), or undefined. */
function pathValue(values: GoMap, path: string): unknown {
  let cur: unknown = values;
  for (const part of path.split('.')) {
    if (!isMap(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** The subchart a dependency names: by name, and by version when several match. */
function subchartFor(chart: Chart, dep: ChartDependency): Chart | undefined {
  const named = chart.subcharts.filter((c) => c.name === dep.name);
  if (named.length <= 1 || !dep.version) return named[0];
  return (
    named.find((c) => {
      const v = parseVersion(c.version);
      try {
        return v !== undefined && satisfies(dep.version, v);
      } catch {
        // Not a constraint satisfies can read: then only the exact version matches.
        return c.version === dep.version;
      }
    }) ?? named[0]
  );
}

/** Helm's processDependencyTags and processDependencyConditions (`enabled:` in Chart.yaml is reset to true). */
function enabled(dep: ChartDependency, values: GoMap, tags: GoMap): boolean {
  let on = true;
  const set = dep.tags.map((t) => tags[t]).filter((v): v is boolean => typeof v === 'boolean');
  if (set.length > 0) on = set.some((v) => v);
  if (dep.condition) {
    for (const c of dep.condition.split(',')) {
      const v = pathValue(values, c.trim());
      if (typeof v === 'boolean') {
        on = v;
        break;
      }
    }
  }
  return on;
}

/** A copy of a chart renamed to its alias (Helm sets the alias as the subchart's name). */
function aliased(chart: Chart, alias: string): Chart {
  return { ...chart, name: alias, metadata: { ...chart.metadata, name: alias } };
}

/** An enabled chart, before its values are final. */
interface Node {
  chart: Chart;
  name: string;
  path: string;
  children: Node[];
  dependencies: ChartDependency[];
  /** Its values.yaml with its subcharts' and what it imports (step 2). */
  defaults: GoMap;
}

/** Subcharts listed in Chart.yaml (aliases make copies), then those in charts/ it does not list. */
function candidatesOf(chart: Chart): { chart: Chart; dep?: ChartDependency; name: string }[] {
  const listed = new Set<Chart>();
  const out: { chart: Chart; dep?: ChartDependency; name: string }[] = [];
  for (const dep of chart.dependencies) {
    const sub = subchartFor(chart, dep);
    if (!sub) continue;
    listed.add(sub);
    const as = dep.alias || dep.name;
    out.push({ chart: dep.alias ? aliased(sub, dep.alias) : sub, dep, name: as });
  }
  for (const sub of chart.subcharts) if (!listed.has(sub)) out.push({ chart: sub, name: sub.name });
  return out;
}

/** Step 1: the enabled subcharts, recursively; `values` are the user's over every chart's. */
function enabledTree(chart: Chart, name: string, path: string, values: GoMap, tags: GoMap): Node {
  const candidates = candidatesOf(chart);
  // Every candidate's values first (conditions may read a subchart's own defaults), then conditions.
  for (const c of candidates) {
    const own = isMap(values[c.name]) ? (values[c.name] as GoMap) : {};
    const sub = coalesceTables(own, c.chart.values);
    passGlobals(sub, values);
    values[c.name] = sub;
  }
  const children: Node[] = [];
  const off = new Set<string>();
  for (const c of candidates) {
    if (c.dep && !enabled(c.dep, values, tags)) {
      off.add(c.name);
      continue;
    }
    // A subchart's own `tags` count for its dependencies, under those set above it.
    const own = isMap(c.chart.values['tags']) ? c.chart.values['tags'] : {};
    const subTags = coalesceTables(deepCopy(tags), own);
    children.push(enabledTree(c.chart, c.name, `${path}/charts/${c.name}`, values[c.name] as GoMap, subTags));
  }
  const dependencies = chart.dependencies
    .filter((d) => !off.has(d.alias || d.name))
    .map((d) => ({ ...d, name: d.alias || d.name, enabled: true }));
  return { chart, name, path, children, dependencies, defaults: {} };
}

/** Step 2, from the deepest chart up: each chart's values with its subcharts' and its imports. */
function processImports(node: Node): void {
  const cvals = deepCopy(node.chart.values);
  for (const c of node.children) {
    processImports(c);
    const section = isMap(cvals[c.name]) ? (cvals[c.name] as GoMap) : {};
    passGlobals(section, cvals);
    cvals[c.name] = section;
    coalesceChart(section, c.defaults, new Set(c.children.map((g) => g.name)), true);
  }
  node.defaults = coalesceTables(cvals, importedValues(node.dependencies, cvals), true);
}

/** Step 3: the user's values (`dst`, changed in place) over the charts' processed values. */
function finalValues(node: Node, dst: GoMap): ScopedChart {
  coalesceChart(dst, node.defaults, new Set(node.children.map((c) => c.name)), false);
  const children: ScopedChart[] = [];
  for (const c of node.children) {
    const section = isMap(dst[c.name]) ? (dst[c.name] as GoMap) : {};
    dst[c.name] = section;
    passGlobals(section, dst);
    children.push(finalValues(c, section));
  }
  return {
    chart: node.chart,
    name: node.name,
    path: node.path,
    values: dst,
    children,
    dependencies: node.dependencies,
  };
}

/** The root chart with the user's values coalesced, and its enabled subcharts, recursively. */
export function scopeChart(chart: Chart, userValues: GoMap = {}): ScopedChart {
  const all = coalesceTables(deepCopy(userValues), chart.values);
  const tags = isMap(all['tags']) ? all['tags'] : {};
  const tree = enabledTree(chart, chart.name, chart.name, all, tags);
  processImports(tree);
  return finalValues(tree, deepCopy(userValues));
}
