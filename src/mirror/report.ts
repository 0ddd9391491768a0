import { formatBytes, formatDuration } from '../util/progress.js';
import type { MirrorReport } from './run.js';

/** The text summary of a mirror run, for people (the --json report carries the same facts). */
export function renderReport(r: MirrorReport): string {
  const lines: string[] = [];
  const s = r.summary;
  lines.push(`${r.mode}: ${r.plan.length} image(s) → ${r.destination}${r.dryRun ? ' (dry run)' : ''}`);
  for (const b of r.blocked) lines.push(`  blocked  ${b.origin} (matches "${b.pattern}")`);
  if (r.dryRun) {
    for (const p of r.plan) lines.push(`  ${p.source} → ${p.destination}`);
    lines.push(`mapping written to ${r.workspace}/dry-run/mapping.txt`);
    return lines.join('\n');
  }
  if (s) {
    for (const i of s.images.filter((x) => x.status === 'failed')) {
      lines.push(`  FAILED   ${i.source} → ${i.destination}`);
      lines.push(`           [${i.error?.code}] ${i.error?.message}`);
      if (i.error?.hint) lines.push(`           hint: ${i.error.hint}`);
    }
    const rate = s.durationMs > 0 ? (s.bytes / s.durationMs) * 1000 : 0;
    lines.push(
      `copied ${s.copied} · already present ${s.present} · failed ${s.failed} · ${formatBytes(s.bytes)} in ${formatDuration(s.durationMs)} (${formatBytes(rate)}/s)`,
    );
    lines.push(
      `blobs: ${s.blobs.transferred} transferred, ${s.blobs.mounted} mounted, ${s.blobs.present} already there`,
    );
  }
  if (r.archive) {
    for (const p of r.archive.parts)
      lines.push(`archive part ${r.archive.dir}/${p.file} (${formatBytes(p.size)}) ${p.sha256}`);
    if (r.archive.previouslyArchived > 0) {
      lines.push(
        `${r.archive.previouslyArchived} blob(s) were carried by an earlier archive and are not repeated`,
      );
    }
  }
  if (r.clusterResources && r.clusterResources.length > 0) {
    lines.push(`cluster resources (apply on the cluster, or use registries.conf on hosts):`);
    for (const f of r.clusterResources) lines.push(`  ${f}`);
  }
  return lines.join('\n');
}
