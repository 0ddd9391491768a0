/**
 * Helm charts loaded as Helm's loader loads them, from a directory, a `.tgz` file or archive bytes:
 * Chart.yaml (apiVersion v1 and v2), values.yaml, templates/**, charts/ (subcharts as directories
 * or archives, recursively), requirements.yaml (v1 dependencies), every other file for `.Files`.
 * Archives are read with the limits of archive.ts; a directory may hold no links, and counts
 * against the same 100 MiB; its `.helmignore` (ignore.ts) drops files as Helm's loader does.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as jsyaml from 'js-yaml';
import { isYamlLimitError, parseYaml, YamlBudget, type YamlReadOptions } from '../../config/yaml-load.js';
import { AirgapError } from '../../util/errors.js';
import { isNotFound } from '../../util/fs.js';
import { MirrorError } from '../errors.js';
import { MAX_CHART_BYTES, readChartArchive, unsafe, type Budget, type ChartFile } from './archive.js';
import { MAX_HELMIGNORE_BYTES, parseHelmignore, type IgnoreRules } from './ignore.js';
import { isMap, type GoMap } from './template/values.js';
import { loadYaml } from './yaml.js';

export { renderChart } from './render.js';
export type { ChartFile } from './archive.js';

/** A dependency as Chart.yaml (v2) or requirements.yaml (v1) declares it. */
export interface ChartDependency {
  name: string;
  version: string;
  repository: string;
  condition: string;
  tags: string[];
  alias: string;
  /** `enabled: false` in the declaration (Helm 3 sets every dependency enabled before its tags and conditions). */
  enabled?: boolean;
  /**
   * `import-values`: each a name (the child's `exports.<name>` into the parent's root) or a
   * `{child, parent}` mapping (values.ts imports them as Helm does); other entries are ignored.
   */
  importValues: (string | GoMap)[];
}

export interface Chart {
  /** Chart.yaml's name. */
  name: string;
  version: string;
  /** Chart.yaml as written (every scalar a string; `deprecated` a boolean). */
  metadata: GoMap;
  /** values.yaml (empty if there is none). */
  values: GoMap;
  /** templates/… files, named from the chart's root (`templates/deployment.yaml`). */
  templates: { name: string; data: string }[];
  /**
   * Every other file, as Helm's `.Files` holds them: not Chart.yaml, Chart.lock, values.yaml,
   * values.schema.json, templates/, charts/ (but charts/*.prov); requirements.yaml and .lock only
   * in an apiVersion v1 chart.
   */
  files: ChartFile[];
  dependencies: ChartDependency[];
  /** The subcharts under charts/. */
  subcharts: Chart[];
  /** Where it was read from, for messages. */
  source: string;
}

function invalid(where: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError(MirrorError.HELM_CHART_INVALID, `${where}: ${why}`, { where, exitCode: 2, cause });
}

/**
 * What is left of a chart's bytes (archive.ts), and of the YAML nodes its files (values.yaml,
 * Chart.yaml, requirements.yaml), subcharts included, may load to.
 */
interface ChartBudget extends Budget {
  yaml?: YamlBudget;
}

/** The YAML nodes one chart may load to, subcharts included (a large real values.yaml is ~10,000). */
const MAX_CHART_YAML_NODES = 4_000_000;

/** Load a chart: a directory, a `.tgz` file, or the bytes of an archive. */
export async function loadChart(from: string | Buffer, where?: string): Promise<Chart> {
  const budget: ChartBudget = {
    left: MAX_CHART_BYTES,
    yaml: new YamlBudget(
      `the chart ${Buffer.isBuffer(from) ? (where ?? 'archive') : from}`,
      { bytes: MAX_CHART_BYTES, nodes: MAX_CHART_YAML_NODES },
      2,
    ),
  };
  if (Buffer.isBuffer(from))
    return chartFromFiles(
      readChartArchive(from, where ?? 'chart archive', budget),
      where ?? 'chart archive',
      budget,
    );
  let info;
  try {
    info = await lstat(from);
  } catch (e) {
    throw new AirgapError(
      MirrorError.HELM_CHART_UNREADABLE,
      `cannot read the chart at ${from}: ${(e as Error).message}`,
      {
        where: from,
        exitCode: 2,
        cause: e,
      },
    );
  }
  if (info.isDirectory()) return chartFromFiles(await filesOfDirectory(from, budget), from, budget);
  if (!info.isFile()) throw unsafe(from, 'is not a regular file or a directory');
  if (info.size > MAX_CHART_BYTES) throw unsafe(from, `is over ${MAX_CHART_BYTES / 1024 / 1024} MiB`);
  return chartFromFiles(readChartArchive(await readFile(from), from, budget), from, budget);
}

/** The chart directory's `.helmignore` rules (Helm's default alone when there is none). */
async function ignoreOf(root: string): Promise<IgnoreRules> {
  const path = join(root, '.helmignore');
  let info;
  try {
    info = await lstat(path);
  } catch (e) {
    if (isNotFound(e)) return parseHelmignore('', root);
    throw e;
  }
  if (!info.isFile()) throw unsafe(root, 'has a .helmignore that is not a regular file');
  if (info.size > MAX_HELMIGNORE_BYTES)
    throw unsafe(root, `has a .helmignore over ${MAX_HELMIGNORE_BYTES / 1024} KiB`);
  return parseHelmignore((await readFile(path)).toString('utf8'), root);
}

async function filesOfDirectory(root: string, budget: Budget): Promise<ChartFile[]> {
  const out: ChartFile[] = [];
  const ignored = await ignoreOf(root);
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const name = prefix ? `${prefix}/${e.name}` : e.name;
      const path = join(dir, e.name);
      if (e.isSymbolicLink()) throw unsafe(root, `holds a symbolic link: ${name}`);
      if (e.isDirectory()) {
        if (e.name === '.git' || ignored(name, true)) continue;
        await walk(path, name);
      } else if (e.isFile() && !ignored(name, false)) {
        const data = await readFile(path);
        budget.left -= data.length;
        if (budget.left < 0) throw unsafe(root, `holds more than ${MAX_CHART_BYTES / 1024 / 1024} MiB`);
        out.push({ name, data });
      }
    }
  };
  await walk(root, '');
  return out;
}

function readYamlFile(where: string, file: ChartFile, budget: ChartBudget, schema?: jsyaml.Schema): unknown {
  // The chart's files are counted against its bytes already (archive.ts): the budget counts nodes.
  const from: YamlReadOptions = {
    source: `${where}/${file.name}`,
    exitCode: 2,
    budget: budget.yaml,
    held: true,
  };
  try {
    return schema
      ? parseYaml(file.data.toString('utf8'), { ...from, schema })
      : loadYaml(file.data.toString('utf8'), from);
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw invalid(`${where}/${file.name}`, `not valid YAML: ${(e as Error).message}`, e);
  }
}

const strOf = (v: unknown): string => (typeof v === 'string' ? v : '');

function dependencyOf(where: string, v: unknown): ChartDependency {
  if (!isMap(v)) throw invalid(where, 'a dependency is not a mapping');
  const name = strOf(v['name']);
  if (!name) throw invalid(where, 'a dependency has no name');
  return {
    name,
    version: strOf(v['version']),
    repository: strOf(v['repository']),
    condition: strOf(v['condition']),
    tags: Array.isArray(v['tags']) ? v['tags'].map(strOf) : [],
    alias: strOf(v['alias']),
    ...(v['enabled'] === 'false' ? { enabled: false } : {}),
    importValues: Array.isArray(v['import-values'])
      ? v['import-values'].filter((i): i is string | GoMap => typeof i === 'string' || isMap(i))
      : [],
  };
}

/** A chart from its files (names relative to its root); subcharts are read from charts/. */
function chartFromFiles(files: ChartFile[], where: string, budget: ChartBudget): Chart {
  const byName = new Map(files.map((f) => [f.name, f]));
  const chartYaml = byName.get('Chart.yaml');
  if (!chartYaml) throw invalid(where, 'Chart.yaml file is missing');
  // Every scalar of Chart.yaml is a string to Helm (version: 1.10 is "1.10", not 1.1).
  const metadata = readYamlFile(where, chartYaml, budget, jsyaml.FAILSAFE_SCHEMA);
  if (!isMap(metadata)) throw invalid(`${where}/Chart.yaml`, 'it is not a mapping');
  const name = strOf(metadata['name']);
  const version = strOf(metadata['version']);
  if (!name) throw invalid(`${where}/Chart.yaml`, 'the chart has no name');
  if (!version) throw invalid(`${where}/Chart.yaml`, `chart "${name}" has no version`);
  if (metadata['deprecated'] !== undefined) metadata['deprecated'] = metadata['deprecated'] === 'true';

  const valuesFile = byName.get('values.yaml');
  const values = valuesFile ? (readYamlFile(where, valuesFile, budget) ?? {}) : {};
  if (!isMap(values)) throw invalid(`${where}/values.yaml`, 'it is not a mapping');

  let deps: unknown[] = Array.isArray(metadata['dependencies']) ? metadata['dependencies'] : [];
  const requirements = byName.get('requirements.yaml');
  if (requirements && strOf(metadata['apiVersion']) !== 'v2') {
    const req = readYamlFile(where, requirements, budget, jsyaml.FAILSAFE_SCHEMA);
    if (isMap(req) && Array.isArray(req['dependencies'])) deps = req['dependencies'];
  }

  const templates: Chart['templates'] = [];
  const other: ChartFile[] = [];
  const subFiles = new Map<string, ChartFile[]>();
  // Helm reads a Chart.yaml without apiVersion as v1.
  const v1 = (strOf(metadata['apiVersion']) || 'v1') === 'v1';
  const notFiles = new Set(['Chart.yaml', 'Chart.lock', 'values.yaml', 'values.schema.json']);
  if (!v1) for (const n of ['requirements.yaml', 'requirements.lock']) notFiles.add(n);
  for (const f of files) {
    if (notFiles.has(f.name)) continue;
    if (f.name.startsWith('templates/')) templates.push({ name: f.name, data: f.data.toString('utf8') });
    else if (f.name.startsWith('charts/') && !f.name.endsWith('.prov')) {
      const rest = f.name.slice('charts/'.length);
      const top = rest.split('/')[0]!;
      const list = subFiles.get(top) ?? [];
      list.push({ name: rest.slice(top.length + 1), data: f.data });
      subFiles.set(top, list);
    } else other.push(f);
  }

  const subcharts: Chart[] = [];
  for (const [top, list] of [...subFiles].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const subWhere = `${where}/charts/${top}`;
    if (top.endsWith('.tgz') || top.endsWith('.tar.gz')) {
      const archive = list.find((f) => f.name === '');
      if (archive)
        subcharts.push(chartFromFiles(readChartArchive(archive.data, subWhere, budget), subWhere, budget));
    } else if (list.some((f) => f.name === 'Chart.yaml')) {
      subcharts.push(chartFromFiles(list, subWhere, budget));
    }
  }

  return {
    name,
    version,
    metadata,
    values,
    templates,
    files: other,
    dependencies: deps.map((d) => dependencyOf(`${where}/Chart.yaml`, d)),
    subcharts,
    source: where,
  };
}
