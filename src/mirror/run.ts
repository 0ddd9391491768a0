/**
 * One mirror run, in any of oc-mirror v2's workflows (workflow.ts), as named steps: check the
 * arguments and read what to mirror; take the workspace; open the destination; get the plan
 * (unpacked from an archive, given, or resolved from the configuration) and record it; pair each
 * plan entry with where its bytes come from; then either measure the pairs (a dry run) or copy
 * them, and finish with what the workflow leaves behind: cluster resources for a registry, archive
 * parts for a disk. What the steps share is in session.ts.
 */
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { AirgapError, CommonError, usageError } from '../util/errors.js';
import { findUnsafeEntries, isNotFound, writeFileAtomic } from '../util/fs.js';
import { lockDirectory } from '../util/lock.js';
import { noProgress } from '../util/progress.js';
import { writeRunClusterResources } from './cluster-resources.js';
import type { CopyPair, CopySummary } from './copy/engine.js';
import { readPlanFile, readRunInputs } from './inputs.js';
import { OciLayout } from './layout/store.js';
import type { MirrorPlan } from './plan.js';
import { reportOf, type MirrorReport } from './report.js';
import {
  openSession,
  openTarget,
  pairsOf,
  refuseFlattenedCollisions,
  resolveConfig,
  type MirrorOptions,
  type Session,
  type Target,
} from './session.js';
import { resolveWorkflow, type Workflow } from './workflow.js';
import { registryLocationText } from './location.js';
import type { ArchiveManifest } from './archive/archive.js';
import { preflightArchive } from './archive/preflight.js';
import { readInventory, type Inventory } from './inventory/format.js';
import { MirrorError } from './errors.js';

export type { MirrorReport } from './report.js';
export type { MirrorOptions } from './session.js';

const GiB = 1024 ** 3;

/**
 * One mirror run, in any of oc-mirror v2's workflows. The ImageSetConfiguration (or a plan)
 * decides what; the destination and --from/--workspace decide where. Returns the report; throws only
 * for usage errors and failures that stop the whole run (a failed image is a result, not an exception).
 */
export async function runMirror(o: MirrorOptions): Promise<MirrorReport> {
  const flow = resolveWorkflow(o);
  if (o.since && flow.destination.kind !== 'directory') {
    throw usageError(CommonError.FLAG_INVALID, '--since applies to archives: mirror → disk (file://<dir>)', {
      hint: 'drop --since, or give a file:// destination',
    });
  }
  if (o.inventory && (flow.destination.kind !== 'directory' || flow.mode === 'diskToMirror')) {
    throw usageError(
      CommonError.FLAG_INVALID,
      '--inventory applies to archives: mirror → disk (file://<dir>), and `mirror plan` of one',
      {
        hint: 'take the inventory on the disconnected side (airgap mirror inventory), carry it here, and give it with a file:// destination',
      },
    );
  }
  if (flow.archiveDir) await refuseUnsafeArchiveEntries(flow.archiveDir);
  // Read (and checked) before anything is taken or written: a bad file is a usage error.
  const inventory = o.inventory ? await readInventory(o.inventory) : undefined;
  const inputs = await readRunInputs(flow, {
    ...o,
    releaseKeys: {
      files: o.releaseKeyring,
      systemFiles: o.systemReleaseKeyring,
      progress: o.progress ?? noProgress,
    },
  });
  await mkdir(flow.workspace, { recursive: true });
  const unlock = await lockDirectory(flow.workspace);
  const run = openSession(o, flow, inputs);
  if (inventory && !inventory.doc.complete)
    run.progress({
      type: 'warning',
      message: `the inventory ${inventory.path} is incomplete (${inventory.doc.problems.length} read(s) failed when it was taken): what it lists is left out, and what it could not read is carried`,
    });
  try {
    const target = await openTarget(run);
    // After the preflight: a destination that could not even be reached claims nothing.
    await claimWorkspace(flow);
    const { plan, sourceLayout, archive } = await obtainPlan(run);
    const planText = await recordPlan(run, plan);
    const report = reportOf(flow, o.destination, plan, (e) =>
      target.endpoint.display(target.repo(e), e.destTag),
    );
    refuseFlattenedCollisions(plan, target, run.o.maxNestedPaths);
    const pairs = await pairsOf(run, plan, target, sourceLayout);
    if (flow.dryRun) return await measureDryRun(run, report, pairs, plan, target, inventory);
    if (archive && flow.destination.kind === 'registry')
      report.delta = await checkDelta(run, pairs, archive, flow.destination.registry);
    run.progress({
      type: 'phase',
      name: 'copy',
      detail: `${pairs.length} images`,
      moves: true,
      counting: true,
    });
    report.summary = await run.engine.run(pairs);
    if (flow.destination.kind === 'registry') {
      // What the cluster needs to pull through the mirror: IDMS/ITMS, catalogs, UpdateService, registries.conf.
      report.clusterResources = await writeRunClusterResources(
        join(flow.workspace, 'cluster-resources'),
        plan,
        report.summary,
        flow.destination.registry,
        target.repo,
        { forceRepositoryScope: !!run.o.maxNestedPaths, version: run.o.version },
      );
    }
    if (target.pack) report.archive = await writeArchive(run, target.pack, plan, planText, inventory);
    await writeFileAtomic(join(flow.workspace, 'last-run.json'), JSON.stringify(report, null, 2));
    return report;
  } finally {
    await run.pool.close();
    await unlock();
  }
}

/** Where a workspace records the destination its state (journal, cluster resources) belongs to. */
const WORKSPACE_DESTINATION = 'destination.json';

/**
 * A workspace belongs to one registry destination: its cluster resources (IDMS, ITMS, catalog
 * sources) name that destination's repositories, and a run to another prefix would silently
 * rewrite them. The first registry → registry run records it; a run to another is refused. Runs
 * that write no cluster resources (plans, layouts, archives) are not held to it.
 */
async function claimWorkspace(flow: Workflow): Promise<void> {
  const dest = flow.destination;
  // Disk → mirror keeps its state in the archive's working-dir, as oc-mirror does: one archive
  // may be unpacked into several registries, each run writing the cluster resources of its own.
  if (dest.kind !== 'registry' || flow.dryRun || flow.mode !== 'mirrorToMirror') return;
  const mine = registryLocationText(dest);
  const file = join(flow.workspace, WORKSPACE_DESTINATION);
  let recorded: string | undefined;
  try {
    recorded = (JSON.parse(await readFile(file, 'utf8')) as { destination?: string }).destination;
  } catch (e) {
    // A new workspace, or one from before destinations were recorded (or a file that is not JSON,
    // which the claim below replaces). One that cannot be read is not "unclaimed": said, with its path.
    if (!isNotFound(e) && !(e instanceof SyntaxError)) throw e;
    recorded = undefined;
  }
  if (recorded !== undefined && recorded !== mine) {
    throw usageError(
      MirrorError.WORKSPACE_OTHER_DESTINATION,
      `the workspace ${flow.workspace} holds the state of mirroring to ${recorded}, not ${mine}`,
      {
        hint: `give each destination its own --workspace (its cluster-resources name that destination's repositories), e.g. --workspace file://${flow.workspace}-${dest.prefix.replaceAll('/', '-') || 'root'}; if ${recorded} was a mistake, remove ${file}`,
      },
    );
  }
  if (recorded === undefined) await writeFileAtomic(file, `${JSON.stringify({ destination: mine })}\n`);
}

/**
 * An archive directory came from outside: a symbolic link in it (or in the working directory
 * inside it) would have airgap write, rename or read through it, outside the archive. Refused
 * before anything is read or written, naming each.
 */
async function refuseUnsafeArchiveEntries(archiveDir: string): Promise<void> {
  const unsafe = await findUnsafeEntries(archiveDir);
  if (unsafe.length === 0) return;
  throw new AirgapError(
    MirrorError.ARCHIVE_UNSAFE_ENTRY,
    `the archive directory ${archiveDir} holds what airgap never writes and will not follow:\n  ${unsafe
      .map((u) => `${u.path} is a ${u.kind}`)
      .join('\n  ')}`,
    {
      where: unsafe[0]!.path,
      hint: 'an archive holds only regular files: remove these, or copy the archive parts and archive manifest into a fresh directory (cp or rsync without -L/--copy-links)',
    },
  );
}

/**
 * The plan of the run: unpacked with the archive (disk → mirror; the images are then read from
 * the unpacked layout), the plan file given, or resolved from the configuration now.
 */
async function obtainPlan(
  run: Session,
): Promise<{ plan: MirrorPlan; sourceLayout?: OciLayout; archive?: ArchiveManifest }> {
  if (run.flow.mode === 'diskToMirror') return unpackPlan(run);
  if (run.inputs.plan) return { plan: run.inputs.plan };
  return { plan: await resolveConfig(run) };
}

/** Disk → mirror: unpack the archive into the workspace's layout and read the plan it carries. */
async function unpackPlan(
  run: Session,
): Promise<{ plan: MirrorPlan; sourceLayout: OciLayout; archive: ArchiveManifest }> {
  const { unpackArchive, ARCHIVE_PLAN } = await import('./archive/archive.js'); // tar loads only for archives
  const archiveDir = run.flow.archiveDir!;
  const sourceLayout = await OciLayout.open(join(run.flow.workspace, 'layout'));
  run.progress({ type: 'phase', name: 'unpack', detail: archiveDir, moves: true });
  const archive = await unpackArchive(
    archiveDir,
    sourceLayout,
    run.progress,
    run.o.version,
    run.flow.workspace,
  );
  return { plan: await readPlanFile(join(sourceLayout.dir, ARCHIVE_PLAN)), sourceLayout, archive };
}

/**
 * Disk → mirror of a delta: before anything is pushed, every blob the archive left out must be at
 * the destination (preflight.ts); an image lacking one fails alone. Said in the report: which
 * inventory the archive expected, and what this registry lacks of it.
 */
async function checkDelta(
  run: Session,
  pairs: CopyPair[],
  archive: ArchiveManifest,
  registry: string,
): Promise<NonNullable<MirrorReport['delta']>> {
  run.progress({ type: 'phase', name: 'check', detail: 'what the archive left out is at the destination' });
  const r = await preflightArchive(pairs, archive, {
    arches: run.o.arches,
    parallel: run.o.parallel,
    destinationRegistry: registry,
  });
  if (r.missing.length > 0)
    run.progress({
      type: 'warning',
      message:
        `${registry} lacks ${r.missing.length} of the ${r.expected} blob(s) the archive left out` +
        (archive.inventory
          ? ` because the inventory ${archive.inventory.sha256} of ${archive.inventory.destination} (taken ${archive.inventory.takenAt}) listed them`
          : ' because an earlier archive carried them') +
        `: ${r.failed} image(s) are not pushed`,
    });
  return { ...r, ...(archive.inventory ? { inventory: archive.inventory } : {}) };
}

/** Say what the plan leaves out, and write it to `<workspace>/plan.json`; returns its text. */
async function recordPlan(run: Session, plan: MirrorPlan): Promise<string> {
  for (const b of plan.blocked)
    run.progress({ type: 'warning', message: `${b.origin} is blocked by "${b.pattern}"; not mirrored` });
  for (const w of plan.warnings) run.progress({ type: 'warning', message: w });
  const planText = JSON.stringify(plan, null, 2);
  await writeFileAtomic(join(run.flow.workspace, 'plan.json'), planText);
  return planText;
}

/**
 * A dry run's end: the pairs, what they weigh, and what the destination already holds, in the
 * report and in `<workspace>/dry-run/` (mapping.txt and plan-report.json); for a registry, the
 * cluster resources the run would write, as if every image that could be read arrived, in
 * `dry-run/cluster-resources/` (the real ones are left as they are).
 */
async function measureDryRun(
  run: Session,
  report: MirrorReport,
  pairs: CopyPair[],
  plan: MirrorPlan,
  target: Target,
  inventory: Inventory | undefined,
): Promise<MirrorReport> {
  run.progress({ type: 'phase', name: 'measure', detail: `${pairs.length} images` });
  const { measurePairs } = await import('./copy/measure.js');
  // An archive's plan: what the far side is known to hold would be left out of it.
  const farSide = target.pack ? await knownAtFarSide(run, inventory) : undefined;
  report.measure = await measurePairs(pairs, {
    arches: run.o.arches,
    parallel: run.o.parallel,
    progress: run.progress,
    ...(farSide ? { covered: farSide.covers } : {}),
  });
  if (inventory) report.inventory = inventory.summary();
  report.measure.images.forEach((m, i) => {
    const entry = report.plan[i]!;
    entry.bytes = m.bytes;
    entry.present = m.present;
    if (m.covered !== undefined) entry.covered = m.covered;
    if (m.error) entry.error = m.error;
  });
  const dir = join(run.flow.workspace, 'dry-run');
  await writeFileAtomic(
    join(dir, 'mapping.txt'),
    report.plan.map((p) => `${p.source}=${p.destination}`).join('\n') + '\n',
  );
  const dest = run.flow.destination;
  if (dest.kind === 'registry') {
    const images = report.measure.images;
    const expected: CopySummary = {
      images: plan.images.map((e, i) => ({
        source: report.plan[i]!.source,
        destination: report.plan[i]!.destination,
        status: images[i]?.error ? 'failed' : 'copied',
        ...(e.digest ? { digest: e.digest } : {}),
        bytes: 0,
        blobs: { transferred: 0, mounted: 0, present: 0 },
      })),
      copied: 0,
      present: 0,
      failed: 0,
      bytes: 0,
      durationMs: 0,
      blobs: { transferred: 0, mounted: 0, present: 0 },
    };
    report.clusterResources = await writeRunClusterResources(
      join(dir, 'cluster-resources'),
      plan,
      expected,
      dest.registry,
      target.repo,
      { forceRepositoryScope: !!run.o.maxNestedPaths, version: run.o.version },
    );
  }
  await writeFileAtomic(join(dir, 'plan-report.json'), JSON.stringify(report, null, 2));
  return report;
}

/**
 * The chart archives and repository indexes of the plan's charts, copied beside the layout's
 * files so the archive carries them (as `helm/…`); their names relative to the layout.
 */
async function carriedHelmFiles(workspace: string, layoutDir: string, plan: MirrorPlan): Promise<string[]> {
  if (!plan.charts?.some((c) => c.file)) return [];
  const from = join(workspace, 'helm');
  await cp(from, join(layoutDir, 'helm'), { recursive: true, force: true });
  const names = await readdir(from, { recursive: true, withFileTypes: true });
  return names
    .filter((d) => d.isFile())
    .map((d) =>
      join('helm', relative(from, join(d.parentPath, d.name)))
        .split(sep)
        .join('/'),
    )
    .sort();
}

/**
 * Mirror → disk's end: pack the layout into archive parts (with the plan inside), leaving out the
 * blobs an earlier archive of this workspace already carried.
 */
async function writeArchive(
  run: Session,
  pack: NonNullable<Target['pack']>,
  plan: MirrorPlan,
  planText: string,
  inventory: Inventory | undefined,
): Promise<NonNullable<MirrorReport['archive']>> {
  const { packArchive, writeHistory } = await import('./archive/archive.js');
  const farSide = await knownAtFarSide(run, inventory);
  const maxPart = run.o.archiveSize ?? (run.inputs.config?.archiveSize ?? 500) * GiB;
  const archive = await packArchive(pack.layout, pack.dir, {
    maxPartBytes: maxPart,
    history: farSide.carried,
    ...(inventory ? { inventory } : {}),
    progress: run.progress,
    plan: { text: planText, config: plan.config.sha256 },
    version: run.o.version,
    files: await carriedHelmFiles(run.flow.workspace, pack.layout.dir, plan),
  });
  await writeHistory(
    farSide.historyPath,
    farSide.history,
    archive.parts.flatMap((p) => p.blobs),
  );
  return {
    dir: pack.dir,
    parts: archive.parts,
    previouslyArchived: archive.previouslyArchived.length,
    ...(archive.inventory ? { inventory: archive.inventory } : {}),
  };
}

/**
 * What the far side is known to hold, for mirror → disk: the blobs earlier archives of this
 * workspace carried (before --since, if given), and those the inventory lists at the same size.
 * The union: both are checked again on the far side before anything is pushed.
 */
async function knownAtFarSide(
  run: Session,
  inventory: Inventory | undefined,
): Promise<{
  historyPath: string;
  history: Map<string, Date | undefined>;
  carried: Set<string>;
  covers: (digest: string, size: number) => boolean;
}> {
  const { readHistory } = await import('./archive/archive.js');
  const historyPath = join(run.flow.workspace, 'archive-history.txt');
  const history = await readHistory(historyPath);
  // What earlier archives carried before --since is at the destination; the rest is carried again.
  const carried = new Set(
    [...history].filter(([, at]) => !run.o.since || at === undefined || at < run.o.since).map(([d]) => d),
  );
  return {
    historyPath,
    history,
    carried,
    covers: (digest, size) => carried.has(digest) || (inventory?.holdsBlob(digest, size) ?? false),
  };
}
