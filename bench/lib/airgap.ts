/**
 * One `airgap mirror … --json` through the real CLI (node + oclif start included), under GNU time,
 * with the engine's own summary of the run.
 */
import { join } from 'node:path';
import { airgapCommand, statsOf, timed } from './proc.js';
import type { EngineSummary, ToolRun } from './report.js';

interface AirgapJson {
  summary?: EngineSummary & { failed: number };
}

/**
 * Run `<cli> mirror <args> --json` in `cwd` (a script on this Node, or the single executable); throws unless it exits 0 with no failed image (a
 * correctness failure, not a slow run).
 */
export async function airgapMirror(
  cli: string,
  args: string[],
  opts: { scratch: string; cwd: string },
): Promise<ToolRun> {
  const [cmd, pre] = airgapCommand(cli);
  const r = await timed(cmd, [...pre, 'mirror', ...args, '--json'], {
    timeFile: join(opts.scratch, 'time.txt'),
    cwd: opts.cwd,
  });
  let report: AirgapJson = {};
  try {
    report = JSON.parse(r.stdout) as AirgapJson;
  } catch {
    // reported below
  }
  const s = report.summary;
  if (r.exitCode !== 0 || !s || s.failed > 0) {
    throw new Error(
      `airgap mirror failed (exit ${r.exitCode}, ${s?.failed ?? '?'} images failed):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`,
    );
  }
  const engine: EngineSummary = {
    durationMs: s.durationMs,
    copied: s.copied,
    present: s.present,
    bytes: s.bytes,
    blobs: s.blobs,
  };
  return { ...statsOf(r), processes: 1, engine };
}
