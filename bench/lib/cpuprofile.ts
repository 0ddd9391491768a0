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
  /** By self time. */
  functions: HotSpot[];
  files: HotSpot[];
  /** By total time (self and callees; a function counted once per sample however deep it recurses). */
  inclusive: HotSpot[];
}

function fileOf(url: string, root: string): string {
  if (!url) return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  return path.startsWith('/') ? relative(root, path) : path;
}

/** The `top` functions and files by self time, and functions by total time,  of the profile at `path` (file names relative to `root`). */
export async function summarizeProfile(path: string, root: string, top = 15): Promise<ProfileSummary> {
  const p = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nameOf = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const file = fileOf(f.url, root);
    return {
      name: file ? `${f.functionName || '(anonymous)'} (${file}:${f.lineNumber + 1})` : f.functionName,
      file,
    };
  };
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { name, file } = nameOf(id);
    fns.set(name, (fns.get(name) ?? 0) + us);
    const where = file || byId.get(id)!.callFrame.functionName;
    files.set(where, (files.get(where) ?? 0) + us);
    const onStack = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) onStack.add(nameOf(n).name);
    for (const f of onStack) inclusive.set(f, (inclusive.get(f) ?? 0) + us);
  }
  // The roots every sample is under say nothing.
  for (const root of ['(root)', '(program)', '(idle)']) inclusive.delete(root);
  const rank = (m: Map<string, number>): HotSpot[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: total ? us / total : 0 }));
  return { totalMs: total / 1000, functions: rank(fns), files: rank(files), inclusive: rank(inclusive) };
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
    'by function (total time: self and callees):',
    ...s.inclusive.map(line),
  ].join('\n');
}
