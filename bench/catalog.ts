/**
 * Catalog planning benchmark: load, validate and filter a file-based operator catalog the size of
 * Red Hat's (300 packages, about 5,000 bundles), then the same catalog with twice and four times the
 * bundles, and check the two targets of the issue:
 *   - peak RSS under 300 MB (10^6 bytes) at 1×;
 *   - filtering linear in catalog size: the filter time may grow by at most 2.6× per doubling.
 *
 * The catalogs come from lab/catalog.ts buildSyntheticCatalog (Red Hat's shape: one
 * `<package>/catalog.json` of 4-space indented objects, three channels per package with replaces,
 * skips and skipRange, three relatedImages per bundle). Bundles are spread unevenly over channels
 * (a few large packages, many small ones, as in the real index); 2× and 4× double every channel,
 * so the package count stays 300.
 *
 * Each size runs in a fresh child process under GNU time, so its peak RSS is its own:
 *   1. loadFbcDir (streamed parse of every catalog.json);
 *   2. validateCatalog of the source (opm's model rules);
 *   3. the filter of a realistic ImageSetConfiguration: one operators[] entry listing a dozen
 *      packages (channel ranges on one or two channels, a package-level range, a default channel
 *      override with a heads-only channel) and one entry for the same catalog with no packages
 *      (the heads of every channel of every package); each filterCatalog validates its result, and
 *      the images to mirror are collected. The filter runs twice to warm up, then `--repeat` times;
 *      the best run is what the linearity target judges (the median is reported beside it).
 *
 * Usage: node build/bench/catalog.js [--json] [--sizes 1,2,4] [--packages 300] [--bundles 5000] [--repeat 9]
 */
import { rmSync } from 'node:fs';
import { access, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { buildSyntheticCatalog } from '../lab/catalog.js';
import type { IncludePackage, Operator } from '../src/mirror/isc/types.js';
import { filterCatalog, validateCatalog } from '../src/mirror/openshift/catalog-filter.js';
import { loadFbcDir, type FbcModel } from '../src/mirror/openshift/fbc.js';
import { timed } from './lib/proc.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const MB = 1e6;
const CHANNELS = 3;
const LISTED = 12;
const CATALOG_TARGETS = { rssMB: 300, ratioPerDoubling: 2.6 } as const;

interface Options {
  json: boolean;
  sizes: number[];
  packages: number;
  bundles: number;
  repeat: number;
}

/** What one child process measured for one catalog size. */
interface ChildResult {
  packages: number;
  bundles: number;
  loadMs: number;
  validateMs: number;
  /**
   * Best of the timed filter runs (both operators[] entries, their validation, the image list): noise
   * (GC, other processes on the machine) only ever adds time, so the best run is the filter's cost.
   */
  filterMs: number;
  filterMedianMs: number;
  filterRuns: number[];
  keptBundles: number;
  images: number;
  warnings: number;
  /** process.resourceUsage().maxRSS at the end, in KiB. */
  selfMaxRssKiB: number;
}

interface SizeResult extends ChildResult {
  scale: number;
  totalMs: number;
  /** Peak RSS of the child (GNU time %M), in MB of 10^6 bytes. */
  peakRssMB: number;
  wallMs: number;
  /** filterMs ÷ filterMs of the previous size (undefined for the first). */
  filterRatio?: number;
  totalRatio?: number;
}

interface CatalogBenchResult {
  date: string;
  machine: { cpus: number; node: string };
  options: Omit<Options, 'json'>;
  sizes: SizeResult[];
  targets: { name: string; measured: number; goal: string; pass: boolean }[];
  pass: boolean;
}

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function parseOptions(argv: string[]): Options & { child?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      sizes: { type: 'string', default: '1,2,4' },
      packages: { type: 'string', default: '300' },
      bundles: { type: 'string', default: '5000' },
      repeat: { type: 'string', default: '9' },
      child: { type: 'string' },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  const packages = Number(values.packages);
  const bundles = Number(values.bundles);
  const repeat = Number(values.repeat);
  if (!sizes.every((s) => Number.isInteger(s) && s >= 1))
    throw new Error(`--sizes: whole multiples, got ${values.sizes}`);
  if (!(Number.isInteger(packages) && packages >= LISTED))
    throw new Error(`--packages must be at least ${LISTED}`);
  if (!(Number.isInteger(bundles) && bundles >= packages * CHANNELS))
    throw new Error(`--bundles must be at least ${packages * CHANNELS} (one per channel)`);
  if (!(Number.isInteger(repeat) && repeat >= 1)) throw new Error('--repeat must be at least 1');
  return {
    json: values.json,
    sizes,
    packages,
    bundles,
    repeat,
    ...(values.child ? { child: values.child } : {}),
  };
}

// ---------------------------------------------------------------- the catalog

/**
 * Bundles per channel at 1×: `total` spread over packages × channels with uneven, deterministic
 * weights (1 to 23), every channel at least one bundle, summing exactly to `total`.
 */
function channelSizes(packages: number, channels: number, total: number): number[][] {
  const weight = (p: number, c: number) => 1 + ((p * 37 + c * 11) % 23);
  let sum = 0;
  for (let p = 0; p < packages; p++) for (let c = 0; c < channels; c++) sum += weight(p, c);
  const exact = Array.from({ length: packages }, (_, p) =>
    Array.from({ length: channels }, (_, c) => (total * weight(p, c)) / sum),
  );
  const sizes = exact.map((row) => row.map((x) => Math.max(1, Math.floor(x))));
  let left = total - sizes.flat().reduce((a, b) => a + b, 0);
  const byFraction = exact
    .flatMap((row, p) => row.map((x, c) => ({ p, c, f: x - Math.floor(x) })))
    .sort((a, b) => b.f - a.f || a.p - b.p || a.c - b.c);
  for (let i = 0; left !== 0; i = (i + 1) % byFraction.length) {
    const { p, c } = byFraction[i]!;
    if (left > 0) {
      sizes[p]![c]!++;
      left--;
    } else if (sizes[p]![c]! > 1) {
      sizes[p]![c]!--;
      left++;
    }
  }
  return sizes;
}

// ---------------------------------------------------------------- the filter

const major = (channel: string): number => Number(/(\d+)$/.exec(channel)?.[1] ?? 1);

/**
 * The ImageSetConfiguration a user would write for this catalog, as two operators[] entries: a dozen
 * packages (the largest ones) with version ranges, and the same catalog with no packages (heads of
 * everything). Ranges cover the middle half of a channel, so they grow with the catalog.
 */
function realisticFilter(model: FbcModel, catalog: string): Operator[] {
  const base = { catalog, full: false, skipDependencies: false, platforms: [] };
  const largest = [...model.packages.values()]
    .map((p) => ({ p, n: p.channels.get(p.defaultChannel ?? '')?.entries.length ?? 0 }))
    .sort((a, b) => b.n - a.n || (a.p.name < b.p.name ? -1 : 1))
    .slice(0, LISTED)
    .map(({ p }) => p)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const range = (channel: string, n: number) => {
    const m = major(channel);
    return { minVersion: `${m}.${Math.floor(n / 4)}.0`, maxVersion: `${m}.${Math.floor((3 * n) / 4)}.0` };
  };
  const packages: IncludePackage[] = largest.map((p, i) => {
    const names = [...p.channels.keys()];
    const dflt = p.defaultChannel ?? names[names.length - 1]!;
    const other = names.find((n) => n !== dflt) ?? dflt;
    const size = (ch: string) => p.channels.get(ch)?.entries.length ?? 1;
    switch (i % 4) {
      case 0: // one channel, a range
        return { name: p.name, channels: [{ name: dflt, ...range(dflt, size(dflt)) }] };
      case 1: // two channels, a range each
        return {
          name: p.name,
          channels: [
            { name: other, ...range(other, size(other)) },
            { name: dflt, ...range(dflt, size(dflt)) },
          ],
        };
      case 2: // a package-level range: the other channels fall out of it (with a warning each)
        return { name: p.name, ...range(dflt, size(dflt)), channels: [] };
      default: // a default channel override: its head, plus everything above a version of another
        return {
          name: p.name,
          defaultChannel: other,
          channels: [{ name: other }, { name: dflt, minVersion: range(dflt, size(dflt)).minVersion }],
        };
    }
  });
  return [
    { ...base, packages },
    { ...base, packages: [] },
  ];
}

/** One full filter: every operators[] entry (each validated by filterCatalog) and the image list. */
function filterOnce(model: FbcModel, ops: Operator[]): { kept: number; images: number; warnings: number } {
  const images = new Set<string>();
  let kept = 0;
  let warnings = 0;
  for (const op of ops) {
    const r = filterCatalog(model, op);
    kept += r.kept.length;
    warnings += r.warnings.length;
    for (const i of r.images) images.add(i);
  }
  return { kept, images: images.size, warnings };
}

const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The child: measure one catalog directory and print one JSON line. */
async function child(dir: string, repeat: number): Promise<void> {
  let t = now();
  const model = await loadFbcDir(dir);
  const loadMs = now() - t;
  t = now();
  validateCatalog(model);
  const validateMs = now() - t;
  const ops = realisticFilter(model, 'registry.example.com/lab/catalog:v1');
  let last = filterOnce(model, ops);
  filterOnce(model, ops);
  const runs: number[] = [];
  for (let i = 0; i < repeat; i++) {
    t = now();
    last = filterOnce(model, ops);
    runs.push(now() - t);
  }
  let bundles = 0;
  for (const p of model.packages.values()) bundles += p.bundles.size;
  const out: ChildResult = {
    packages: model.packages.size,
    bundles,
    loadMs,
    validateMs,
    filterMs: Math.min(...runs),
    filterMedianMs: median(runs),
    filterRuns: runs,
    keptBundles: last.kept,
    images: last.images,
    warnings: last.warnings,
    selfMaxRssKiB: process.resourceUsage().maxRSS,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// ---------------------------------------------------------------- the parent

async function hasGnuTime(): Promise<boolean> {
  try {
    await access('/usr/bin/time');
    return true;
  } catch {
    return false;
  }
}

/** Run the child for one directory, under GNU time when it is there. */
async function measure(
  dir: string,
  work: string,
  repeat: number,
): Promise<ChildResult & { peakRssMB: number; wallMs: number }> {
  const args = [SELF, '--child', dir, '--repeat', String(repeat)];
  let stdout: string;
  let peakKiB: number | undefined;
  let wallMs: number;
  if (await hasGnuTime()) {
    const r = await timed(process.execPath, args, { timeFile: join(work, 'time.txt'), cwd: ROOT });
    if (r.exitCode !== 0) throw new Error(`the child failed (exit ${r.exitCode}):\n${r.stderr.slice(-3000)}`);
    stdout = r.stdout;
    peakKiB = r.peakRssKiB;
    wallMs = r.wallMs;
  } else {
    const started = now();
    const r = await execa(process.execPath, args, { cwd: ROOT, stdin: 'ignore' });
    stdout = String(r.stdout);
    wallMs = now() - started;
  }
  const res = JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildResult;
  return { ...res, peakRssMB: ((peakKiB ?? res.selfMaxRssKiB) * 1024) / MB, wallMs };
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}

function renderCatalog(res: CatalogBenchResult): string {
  const ms = (x: number) => x.toFixed(1);
  const ratio = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(2)}×`);
  const rows = [
    [
      'size',
      'packages',
      'bundles',
      'load ms',
      'validate ms',
      'filter ms',
      'filter median',
      'total ms',
      'peak RSS MB',
      'filter ratio',
      'total ratio',
    ],
  ];
  for (const s of res.sizes) {
    rows.push([
      `${s.scale}×`,
      String(s.packages),
      String(s.bundles),
      ms(s.loadMs),
      ms(s.validateMs),
      ms(s.filterMs),
      ms(s.filterMedianMs),
      ms(s.totalMs),
      s.peakRssMB.toFixed(0),
      ratio(s.filterRatio),
      ratio(s.totalRatio),
    ]);
  }
  const out = [
    `catalog planning: ${res.options.packages} packages, ${res.options.bundles} bundles at 1×, ${res.machine.cpus} CPUs, node ${res.machine.node}`,
    'filter: 12 packages with ranges + heads of every channel, each result validated; best (and median) of ' +
      `${res.options.repeat} runs after 2 warm-ups. total = load + validate + filter.`,
    'ratios: per doubling, against the previous size. Peak RSS: the child process (GNU time), MB = 10^6 bytes.',
    '',
    table(rows),
    '',
  ];
  for (const t of res.targets)
    out.push(`${t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.measured.toFixed(2)} (goal ${t.goal})`);
  return out.join('\n');
}

async function run(opts: Options, work: string): Promise<CatalogBenchResult> {
  const base = channelSizes(opts.packages, CHANNELS, opts.bundles);
  const sizes: SizeResult[] = [];
  for (const scale of opts.sizes) {
    const dir = join(work, `catalog-${scale}x`);
    await mkdir(dir, { recursive: true });
    const cat = await buildSyntheticCatalog({
      dir,
      packages: opts.packages,
      channelsPerPackage: CHANNELS,
      bundlesPerChannel: (p, c) => base[p]![c]! * scale,
      registry: 'registry.example.com/lab',
    });
    log(`${scale}×: ${cat.bundles} bundles in ${cat.packages.length} packages; measuring in a fresh process`);
    const r = await measure(dir, work, opts.repeat);
    await rm(dir, { recursive: true, force: true });
    const prev = sizes.at(-1);
    const totalMs = r.loadMs + r.validateMs + r.filterMs;
    // Ratios are per doubling: a jump of 4× counts as two doublings.
    const perDoubling = (now: number, before: number, from: number) =>
      (now / before) ** (1 / Math.log2(scale / from));
    sizes.push({
      ...r,
      scale,
      totalMs,
      ...(prev
        ? {
            filterRatio: perDoubling(r.filterMs, prev.filterMs, prev.scale),
            totalRatio: perDoubling(totalMs, prev.totalMs, prev.scale),
          }
        : {}),
    });
    log(
      `${scale}×: load ${r.loadMs.toFixed(0)} ms, filter ${r.filterMs.toFixed(1)} ms, peak RSS ${r.peakRssMB.toFixed(0)} MB`,
    );
  }
  const one = sizes.find((s) => s.scale === 1) ?? sizes[0]!;
  const worst = Math.max(...sizes.map((s) => s.filterRatio ?? 0));
  const targets = [
    {
      name: `peak RSS at ${one.scale}× (MB)`,
      measured: one.peakRssMB,
      goal: `< ${CATALOG_TARGETS.rssMB}`,
      pass: one.peakRssMB < CATALOG_TARGETS.rssMB,
    },
    {
      name: 'filter time growth per doubling (worst)',
      measured: worst,
      goal: `≤ ${CATALOG_TARGETS.ratioPerDoubling}`,
      pass: sizes.length < 2 || worst <= CATALOG_TARGETS.ratioPerDoubling,
    },
  ];
  return {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    options: { sizes: opts.sizes, packages: opts.packages, bundles: opts.bundles, repeat: opts.repeat },
    sizes,
    targets,
    pass: targets.every((t) => t.pass),
  };
}

async function writeResults(res: CatalogBenchResult): Promise<string> {
  const dir = join(ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `catalog-${res.date.replace(/[:.]/g, '-')}.json`);
  await writeFile(path, `${JSON.stringify(res, null, 2)}\n`);
  return path;
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  if (opts.child) {
    await child(opts.child, opts.repeat);
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'airgap-bench-catalog-'));
  process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  try {
    const res = await run(opts, work);
    process.stdout.write(opts.json ? `${JSON.stringify(res, null, 2)}\n` : `\n${renderCatalog(res)}\n`);
    log(`results written to ${await writeResults(res)}`);
    if (!res.pass) process.exitCode = 1;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
