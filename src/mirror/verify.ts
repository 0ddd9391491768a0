/**
 * `airgap mirror verify` below the command: check the archive its argument names (`file://<dir>`
 * or a plain path) before it is carried across the air gap, every part present, sized and
 * checksummed, every blob its images need carried, and say what was found in a form people read.
 */
import type { ProgressSink } from '../util/progress.js';
import { verifyArchive, type VerifyReport } from './archive/archive.js';
import { parseLocation } from './location.js';

/** Verify the archive `argument` names; FLAG_INVALID when it names none. */
export function verifyArchiveAt(argument: string, progress?: ProgressSink): Promise<VerifyReport> {
  return verifyArchive(parseLocation(argument, 'archive').path, progress);
}

/** One line per part (ok or BROKEN with why), problems no part explains, and the verdict. */
export function renderVerifyReport(report: VerifyReport): string {
  const lines: string[] = [];
  for (const p of report.parts)
    lines.push(`${p.ok ? 'ok     ' : 'BROKEN '} ${p.file}${p.problem ? `: ${p.problem}` : ''}`);
  for (const p of report.problems.filter((x) => !report.parts.some((q) => q.problem === x)))
    lines.push(`BROKEN  ${p}`);
  const broken = report.problems.length - report.missing.length;
  lines.push(
    report.ok
      ? `archive is complete: ${report.parts.length} part(s), ${report.blobs} blob(s), ${report.images} image(s)`
      : broken > 0
        ? `archive is damaged: ${report.problems.length} problem(s); copy the broken parts again`
        : `archive is incomplete: ${new Set(report.missing.map((m) => m.image)).size} image(s) lack ${report.missing.length} blob(s) no part carries; make the archive again on the connected side (those images would fail to push)`,
  );
  const d = report.delta;
  if (d)
    lines.push(
      d.inventory
        ? `a delta: cut against the inventory ${d.inventory.sha256} of ${d.inventory.destination} (taken ${d.inventory.takenAt}${d.inventory.complete ? '' : ', an incomplete one'}); ${d.previouslyArchived} blob(s) are left out and must be at the destination, which \`airgap mirror --from\` checks before it pushes`
        : `a delta: ${d.previouslyArchived} blob(s) earlier archives carried are left out and must be at the destination, which \`airgap mirror --from\` checks before it pushes`,
    );
  return `${lines.join('\n')}\n`;
}
