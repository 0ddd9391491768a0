/**
 * Pieces every registry benchmark needs around the measurement itself: progress lines, registry CPU
 * around a run, digests read back with skopeo, spot-check samples, the skopeo version and the
 * results file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { Limiter } from '../../src/util/limit.js';
import { cpuSeconds } from './proc.js';
import type { DigestCheck, RunMeasure, ToolRun } from './report.js';
import type { BenchRegistry } from './setup.js';
import { rawDigest } from './skopeo.js';

/** A progress line on stderr. */
export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/**
 * Run `fn` and add the CPU the registries spent meanwhile: `sources` (every registry the tool reads
 * from, summed) and `dest`.
 */
export async function measuredAcross(
  sources: BenchRegistry[],
  dest: BenchRegistry,
  fn: () => Promise<ToolRun>,
): Promise<RunMeasure> {
  const cpu = async () => {
    const [d, ...s] = await Promise.all([dest, ...sources].map((r) => cpuSeconds(r.pid)));
    return { source: s.reduce((a, b) => a + b, 0), dest: d! };
  };
  const before = await cpu();
  const r = await fn();
  const after = await cpu();
  return {
    ...r,
    registryCpuS: { source: after.source - before.source, dest: after.dest - before.dest },
  };
}

/**
 * Read back the manifest digests of `images` (`docker://` ref → expected digest) from `dst` with
 * `skopeo inspect --raw`, a few at a time.
 */
export async function checkDigestsWithSkopeo(
  s: { policy: string; authFile: string },
  dst: BenchRegistry,
  images: [string, string][],
): Promise<DigestCheck> {
  const limit = new Limiter(4);
  const mismatches: string[] = [];
  await Promise.all(
    images.map(([ref, expected]) =>
      limit.run(async () => {
        const got = await rawDigest(s, dst.reg.skopeo.certDir, ref).catch((e: Error) => e.message);
        if (got !== expected) mismatches.push(`${ref}: expected ${expected}, got ${got}`);
      }),
    ),
  );
  return { checked: images.length, mismatches };
}

/** `n` items spread evenly over `items` (first and last included), for spot checks. */
export function spread<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  if (n <= 1) return items.slice(0, n);
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / (n - 1))]!);
}

export async function skopeoVersion(): Promise<string> {
  const { stdout } = await execa('skopeo', ['--version']);
  return stdout.replace(/^skopeo version /, '').trim();
}

/** Write `res` to `<root>/bench/results/<name>-<date>.json` (the directory is gitignored). */
export async function writeResults(root: string, name: string, date: string, res: unknown): Promise<string> {
  const dir = join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}-${date.replace(/[:.]/g, '-')}.json`);
  await writeFile(path, `${JSON.stringify(res, null, 2)}\n`);
  return path;
}
