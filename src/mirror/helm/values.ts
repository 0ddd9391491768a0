/**
 * Values and dependencies as Helm coalesces them (chartutil's coalesce and dependencies):
 *
 * - the user's values over the chart's values.yaml; a null in the user's values removes the
 *   chart's default for that key;
 * - a subchart's values are the parent's values under its name (or alias) over the subchart's own
 *   values.yaml, written back under that key, so the parent sees them too;
 * - `global` is passed down: the parent's globals over the subchart's;
 * - a dependency is enabled unless its `condition` (the first of its comma-separated paths that
 *   holds a boolean, read in the parent's values) is false, or, without one, all its `tags` that are
 *   set (under the root's `tags`) are false. An alias renames the subchart: its `.Chart.Name`,
 *   its values key and its templates' path.
 */
import type { Chart, ChartDependency } from './chart.js';
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
}

/** `dst` over `src`: dst wins, maps merge deeply, a null in dst removes the key. Returns dst. */
function coalesce(dst: GoMap, src: GoMap): GoMap {
  for (const [k, sv] of Object.entries(src)) {
    if (!Object.hasOwn(dst, k)) {
      dst[k] = deepCopy(sv);
      continue;
    }
    const dv = dst[k];
    if (dv === null || dv === undefined) delete dst[k];
    else if (isMap(dv) && isMap(sv)) coalesce(dv, sv);
  }
  return dst;
}

/** The parent's globals over the child's (maps merged, the parent winning). */
function passGlobals(child: GoMap, parent: GoMap): void {
  const pg = isMap(parent['global']) ? parent['global'] : {};
  const cg = isMap(child['global']) ? child['global'] : {};
  const merged = coalesce(deepCopy(pg), cg);
  child['global'] = merged;
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

function enabled(dep: ChartDependency, values: GoMap, tags: GoMap): boolean {
  let on = dep.enabled ?? true;
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

function scope(chart: Chart, name: string, path: string, values: GoMap, tags: GoMap): ScopedChart {
  // Subcharts listed in Chart.yaml (aliases make copies), then those in charts/ it does not list.
  const listed = new Set<Chart>();
  const candidates: { chart: Chart; dep?: ChartDependency; name: string }[] = [];
  for (const dep of chart.dependencies) {
    const sub = subchartFor(chart, dep);
    if (!sub) continue;
    listed.add(sub);
    const as = dep.alias || dep.name;
    candidates.push({ chart: dep.alias ? aliased(sub, dep.alias) : sub, dep, name: as });
  }
  for (const sub of chart.subcharts) if (!listed.has(sub)) candidates.push({ chart: sub, name: sub.name });

  // Every candidate's values first (conditions may read a subchart's own defaults), then conditions.
  for (const c of candidates) {
    const own = isMap(values[c.name]) ? (values[c.name] as GoMap) : {};
    const sub = coalesce(own, c.chart.values);
    passGlobals(sub, values);
    values[c.name] = sub;
  }
  const children: ScopedChart[] = [];
  for (const c of candidates) {
    if (c.dep && !enabled(c.dep, values, tags)) continue;
    children.push(scope(c.chart, c.name, `${path}/charts/${c.name}`, values[c.name] as GoMap, tags));
  }
  return { chart, name, path, values, children };
}

/** The root chart with the user's values coalesced, and its enabled subcharts, recursively. */
export function scopeChart(chart: Chart, userValues: GoMap = {}): ScopedChart {
  const values = coalesce(deepCopy(userValues), chart.values);
  const tags = isMap(values['tags']) ? values['tags'] : {};
  return scope(chart, chart.name, chart.name, values, tags);
}
