/**
 * Memory and CPU of server processes while a benchmark runs: resident set size sampled from
 * /proc every 100 ms (a process and its children, for nginx's workers), and CPU seconds read
 * around each run.
 */
import { readFile } from 'node:fs/promises';
import { cpuSeconds } from './proc.js';

/** The children of `pid` (nginx's workers), from /proc. */
async function childrenOf(pid: number): Promise<number[]> {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The process and its children. */
async function processTree(pid: number): Promise<number[]> {
  return [pid, ...(await childrenOf(pid))];
}

/** Resident set size in bytes of one process (0 when it is gone). */
export async function rssBytes(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kib ? Number(kib) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** RSS of a process tree, summed. */
export async function treeRss(pid: number): Promise<number> {
  const pids = await processTree(pid);
  return (await Promise.all(pids.map(rssBytes))).reduce((a, b) => a + b, 0);
}

/** CPU seconds (user + system) of a process tree so far. */
async function treeCpu(pid: number): Promise<number> {
  const pids = await processTree(pid);
  return (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
}

/** RSS samples of a process tree, every `intervalMs` until stopped. */
export interface RssTrace {
  /** [ms since start, bytes] */
  samples: [number, number][];
  peak: number;
  first: number;
  last: number;
}

function sampleRss(pid: number, intervalMs = 100): { stop: () => Promise<RssTrace> } {
  const samples: [number, number][] = [];
  const started = Date.now();
  let busy: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    busy = treeRss(pid).then((b) => {
      if (b > 0) samples.push([Date.now() - started, b]);
    });
  }, intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await busy;
      const bytes = samples.map((s) => s[1]);
      return {
        samples,
        peak: bytes.length ? Math.max(...bytes) : 0,
        first: bytes[0] ?? 0,
        last: bytes.at(-1) ?? 0,
      };
    },
  };
}

/** Run `fn` while sampling the RSS and measuring the CPU of the process tree of `pid`. */
export async function measured<T>(
  pid: number,
  fn: () => Promise<T>,
): Promise<{ result: T; rss: RssTrace; cpuS: number }> {
  const cpu0 = await treeCpu(pid);
  const sampler = sampleRss(pid);
  const result = await fn();
  const rss = await sampler.stop();
  const cpuS = (await treeCpu(pid)) - cpu0;
  return { result, rss, cpuS };
}
