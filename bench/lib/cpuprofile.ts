/**
 * Hot spots of a V8 CPU profile (what `node --cpu-prof` writes): the functions that took the most
 * time themselves (self time), and the source files that did, so a benchmark that misses its goal
 * can say where the time went without a profiler's UI.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface HotSpot {
  /** `function (file:line)`, the file relative to `root`; V8's own work as `(garbage collector)` etc. */
  name: string;
  selfMs: number;
  /** Share of the profile's sampled time. */
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  functions: HotSpot[];
  files: HotSpot[];
}

function fileOf(url: string, root: string): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith('/') ? relative(root, path) : path;
}

/** The `top` functions and files by self time of the profile at `path` (file names relative to `root`). */
export async function summarizeProfile(path: string, root: string, top = 15): Promise<ProfileSummary> {
  const p = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const file = fileOf(f.url, root);
    const name = file ? `${f.functionName || '(anonymous)'} (${file}:${f.lineNumber + 1})` : f.functionName;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const where = file || f.functionName;
    files.set(where, (files.get(where) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): HotSpot[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: total ? us / total : 0 }));
  return { totalMs: total / 1000, functions: rank(fns), files: rank(files) };
}

/** The summary as lines: share, self time, name. */
export function renderProfile(s: ProfileSummary): string {
  const line = (h: HotSpot) =>
    `  ${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(6)} ms  ${h.name}`;
  return [
    `sampled ${s.totalMs.toFixed(0)} ms; by function (self time):`,
    ...s.functions.map(line),
    'by file (self time):',
    ...s.files.map(line),
  ].join('\n');
}
