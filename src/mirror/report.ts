/**
 * The report of a mirror run: what it holds (the --json output of `airgap mirror` and `airgap mirror
 * plan`, and `last-run.json` in the workspace), how a run starts one from its plan, and its text
 * form for people.
 */
import { join } from 'node:path';
import { formatBytes, formatDuration } from '../util/progress.js';
import type { ArchiveManifest } from './archive/archive.js';
import type { CopySummary } from './copy/engine.js';
import type { PlanMeasure } from './copy/measure.js';
import type { PreflightResult } from './archive/preflight.js';
import type { InventoryStamp, InventorySummary } from './inventory/format.js';
import {
  BUILD_SOURCE,
  type BlockedImage,
  type MirrorPlan,
  type PlanCatalog,
  type PlanChart,
  type PlanEntry,
} from './plan.js';
import type { MirrorMode, Workflow } from './workflow.js';

/** One line of the report's plan: a pair, what it is and what brought it in. */
export interface ReportPair {
  source: string;
  destination: string;
  kind: PlanEntry['kind'];
  context: string;
  /** Whether a Sigstore signature of the image was found at the source (absent: not looked up). */
  signed?: boolean;
  /** Dry runs: the image's blob bytes, whether it is already at the destination, why it could not be read. */
  bytes?: number;
  present?: boolean;
  /** Dry runs of an archive: bytes of its blobs the far side is known to hold (not carried). */
  covered?: number;
  error?: string;
}

export interface MirrorReport {
  mode: MirrorMode;
  destination: string;
  workspace: string;
  dryRun: boolean;
  /** The plan file of this run (`<workspace>/plan.json`). */
  planFile?: string;
  blocked: BlockedImage[];
  releases: MirrorPlan['releases'];
  /** One line per release decision (which channel, which bound, which path). */
  releaseWhy: string[];
  catalogs: {
    catalog: string;
    destination: string;
    rebuilt: boolean;
    bundles: number;
    packages: PlanCatalog['packages'];
    /** Bundles added as dependencies of kept bundles. */
    added?: PlanCatalog['added'];
  }[];
  /** The Helm charts: fetched and rendered for their images, or why not (the run then fails). */
  charts?: PlanChart[];
  warnings: string[];
  /** Sigstore signatures found, each release's GPG signatures, and the policy check (--secure-policy). */
  signatures?: MirrorPlan['signatures'];
  plan: ReportPair[];
  /** Dry runs: bytes to move and what the destination already holds. */
  measure?: PlanMeasure;
  summary?: CopySummary;
  archive?: {
    dir: string;
    parts: ArchiveManifest['parts'];
    previouslyArchived: number;
    /** The inventory the archive was cut against (--inventory). */
    inventory?: InventoryStamp;
  };
  /** Dry runs with --inventory: what the inventory given covers. */
  inventory?: InventorySummary;
  /** Disk → mirror: what the archive left out, checked at the destination before any push. */
  delta?: PreflightResult & { inventory?: InventoryStamp };
  /** Files written to `<workspace>/cluster-resources/` (runs that end in a registry). */
  clusterResources?: string[];
}

/**
 * The report of a run before anything is measured or copied: the plan's decisions and one line per
 * pair. `destination` is the argument as given; `display` names an entry at the destination.
 */
export function reportOf(
  flow: Workflow,
  destination: string,
  plan: MirrorPlan,
  display: (e: PlanEntry) => string,
): MirrorReport {
  return {
    mode: flow.mode,
    destination,
    workspace: flow.workspace,
    dryRun: flow.dryRun,
    planFile: join(flow.workspace, 'plan.json'),
    blocked: plan.blocked,
    releases: plan.releases,
    releaseWhy: plan.releaseWhy,
    catalogs: plan.catalogs.map((c) => ({
      catalog: c.catalog,
      destination: `${c.destRepo}:${c.destTag}`,
      rebuilt: c.rebuilt,
      bundles: c.packages.reduce((a, p) => a + p.bundles.length, 0),
      packages: c.packages,
      ...(c.added ? { added: c.added } : {}),
    })),
    ...(plan.charts ? { charts: plan.charts } : {}),
    warnings: plan.warnings,
    ...(plan.signatures ? { signatures: plan.signatures } : {}),
    plan: plan.images.map((e) => ({
      source: e.source.startsWith(BUILD_SOURCE) ? `${e.origin} (built)` : e.source,
      destination: display(e),
      kind: e.kind,
      context: e.context,
      ...(e.signed !== undefined ? { signed: e.signed } : {}),
    })),
  };
}

/** Whether the run failed at something: an image, or a Helm chart that could not be fetched or rendered. */
export function reportFailed(r: MirrorReport): boolean {
  return (r.summary?.failed ?? 0) > 0 || (r.charts ?? []).some((c) => c.error !== undefined);
}

/** What the plan chose: releases, catalogs and their bundle counts, blocked images and warnings. */
function renderPlanSummary(r: MirrorReport, detail = false): string[] {
  const lines: string[] = [];
  for (const rel of r.releases) {
    lines.push(
      `  release  ${rel.version} (${rel.arch}) ${rel.digest.slice(0, 19)}… ${rel.components} components` +
        (rel.channels.length > 0 ? ` [${rel.channels.join(', ')}]` : ''),
    );
  }
  if (detail) for (const w of r.releaseWhy) lines.push(`           why: ${w}`);
  lines.push(...renderSignatures(r));
  for (const c of r.catalogs) {
    lines.push(
      `  catalog  ${c.catalog} → ${c.destination} (${c.bundles} bundle(s)${c.rebuilt ? ', filtered and rebuilt' : ', as is'})`,
    );
    for (const a of c.added ?? [])
      lines.push(
        `           ${a.package} ${a.version} added: required by ${a.requiredBy} (${a.requirement})`,
      );
    if (!detail) continue;
    for (const p of c.packages) {
      lines.push(
        `           ${p.name} (default channel ${p.defaultChannel ?? '?'}; channels ${p.channels.join(', ')})`,
      );
      for (const b of p.bundles) lines.push(`             ${b.name} ${b.version}: ${b.why.join('; ')}`);
    }
  }
  for (const c of r.charts ?? []) lines.push(...renderChart(c));
  for (const b of r.blocked) lines.push(`  blocked  ${b.origin} (matches "${b.pattern}")`);
  for (const w of r.warnings) lines.push(`  warning  ${indentMore(w)}`);
  return lines;
}

/** A message's later lines (a hint) indented under its first, past the report's label column. */
const indentMore = (text: string) => text.replace(/\n(?=[^\n])/g, '\n           ');

/**
 * A chart of the plan: its image count, or why it failed; then each image found only outside
 * `image:` fields (args, command, env values, imagePaths) or only in hooks or test pods, with
 * where, so a person can tell what they would drop with blockedImages.
 */
function renderChart(c: PlanChart): string[] {
  const name = `${c.name}${c.version ? ` ${c.version}` : ''}${c.repository ? ` (${c.repository})` : ''}`;
  if (c.error) return [`  chart    ${name}: FAILED, ${indentMore(c.error)}`];
  // A plan written before images carried their sources lists bare strings.
  const images = (c.images ?? []).map((i) =>
    typeof i === 'string' ? { image: i, sources: [], where: '' } : i,
  );
  const lines = [`  chart    ${name}: ${images.length} image(s)${c.file ? `, kept at ${c.file}` : ''}`];
  let noted = false;
  for (const i of images) {
    const why: string[] = [];
    if (i.sources.length > 0 && !i.sources.includes('image'))
      why.push(
        `not in an image: field, from ${i.sources.filter((s) => s !== 'hook' && s !== 'test').join(', ')}`,
      );
    if (i.onlyIn)
      why.push(
        `only in ${i.onlyIn.map((x) => (x === 'hook' ? 'hooks' : 'test pods (helm test)')).join(' and ')}`,
      );
    if (why.length === 0) continue;
    lines.push(`           ${i.image}: ${why.join('; ')}${i.where ? ` (${i.where})` : ''}`);
    noted = true;
  }
  if (noted)
    lines.push(
      '           (mirrored; to leave one out, list it in mirror.blockedImages of the ImageSetConfiguration)',
    );
  return lines;
}

/**
 * The trust chain in a line or two: each release's signatures (GPG from the signature store, and
 * whether its Sigstore signature was found), then how many images are signed.
 */
function renderSignatures(r: MirrorReport): string[] {
  const sig = r.signatures;
  if (!sig) return [];
  const lines: string[] = [];
  const sigstoreOf = new Map<string, boolean | undefined>();
  for (const p of r.plan) if (p.kind === 'release') sigstoreOf.set(p.source, p.signed);
  for (const rel of r.releases) {
    const gpg = sig.releases.find((s) => s.digest === rel.digest);
    const gpgText = !gpg
      ? 'GPG not checked'
      : gpg.signatures.length > 0
        ? `GPG: ${gpg.signatures.length} signature(s) verified (key ${gpg.verifiedBy.map((f) => f.slice(-16)).join(', ')})`
        : 'GPG: NOT verified';
    const sigstore = sigstoreOf.get(rel.payload);
    const sigstoreText = sig.removed
      ? 'Sigstore: not copied (--remove-signatures)'
      : sigstore
        ? 'Sigstore: signed'
        : 'Sigstore: NOT signed';
    lines.push(`  signed   ${rel.version} (${rel.arch}): ${gpgText}; ${sigstoreText}`);
  }
  if (!sig.removed) {
    const n = r.plan.filter((p) => p.kind === 'signature').length;
    lines.push(
      `  signed   ${sig.sigstore.signed} of ${sig.sigstore.signed + sig.sigstore.unsigned} image(s) have a Sigstore signature at the source; ${n} signature(s) copied next to them`,
    );
  }
  if (sig.policy) lines.push(`  policy   ${sig.policy.path}: ${sig.policy.rejected} image(s) refused`);
  return lines;
}

/** Kinds listed one per line in a plan; the rest are counted per release or catalog. */
const LISTED = new Set(['additional', 'graph', 'catalog', 'release']);

/** The text summary of a mirror run, for people (the --json report carries the same facts). */
export function renderReport(r: MirrorReport): string {
  const lines: string[] = [];
  const s = r.summary;
  lines.push(`${r.mode}: ${r.plan.length} image(s) → ${r.destination}${r.dryRun ? ' (dry run)' : ''}`);
  lines.push(...renderPlanSummary(r, r.dryRun));
  if (r.dryRun) {
    const counted = new Map<string, { n: number }>();
    for (const p of r.plan) {
      if (!LISTED.has(p.kind) && !p.error) {
        counted.set(p.kind, { n: (counted.get(p.kind)?.n ?? 0) + 1 });
        continue;
      }
      const state = p.error
        ? `  (cannot read: ${p.error})`
        : p.present
          ? '  (already there)'
          : p.bytes !== undefined
            ? `  (${formatBytes(p.bytes)}${p.covered ? `, ${formatBytes(p.covered)} of it already on the far side, ${formatBytes(p.bytes - p.covered)} to carry` : ''})`
            : '';
      lines.push(`  ${p.source} → ${p.destination}${state}`);
    }
    const names: Record<string, string> = {
      'release-component': 'release components',
      bundle: 'bundle images',
      related: 'related images',
    };
    for (const [kind, c] of counted)
      lines.push(`  ${c.n} ${names[kind] ?? kind} (each pair is in the mapping file)`);
    const m = r.measure;
    if (m) {
      lines.push(
        `${formatBytes(m.bytesToMove)} to move: ${m.blobs} unique blobs (${formatBytes(m.bytes)}), ` +
          `${m.presentBlobs} already at the destination (${formatBytes(m.presentBytes)}), ${m.presentImages} image(s) complete there` +
          (m.unmeasured ? `; ${m.unmeasured} image(s) could not be measured and are not counted` : ''),
      );
      if (m.coveredBytes !== undefined)
        lines.push(
          `  of which ${m.coveredBlobs} blob(s) (${formatBytes(m.coveredBytes)}) the far side holds` +
            (r.inventory
              ? ` (the inventory ${r.inventory.sha256} of ${r.inventory.destination}, taken ${r.inventory.takenAt}${r.inventory.complete ? '' : ', incomplete'}, or earlier archives)`
              : ' (earlier archives of this workspace)') +
            `: the archive leaves them out`,
        );
    }
    lines.push(`plan written to ${r.planFile}; mapping to ${r.workspace}/dry-run/mapping.txt`);
    return lines.join('\n');
  }
  if (s) {
    s.images.forEach((i, n) => {
      if (i.status !== 'failed') return;
      lines.push(`  FAILED   ${i.source} → ${i.destination}`);
      const context = r.plan[n]?.context;
      if (context) lines.push(`           needed by ${context}`);
      lines.push(`           [${i.error?.code}] ${i.error?.message}`);
      if (i.error?.hint) lines.push(`           hint: ${i.error.hint}`);
    });
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
        r.archive.inventory
          ? `a delta: ${r.archive.previouslyArchived} blob(s) the inventory ${r.archive.inventory.sha256} of ${r.archive.inventory.destination} (taken ${r.archive.inventory.takenAt}) lists, or an earlier archive carried, are left out`
          : `${r.archive.previouslyArchived} blob(s) were carried by an earlier archive and are not repeated`,
      );
    }
  }
  if (r.delta && r.delta.expected > 0)
    lines.push(
      `delta: the archive left out ${r.delta.expected} blob(s) the destination was to hold` +
        (r.delta.inventory
          ? ` (inventory ${r.delta.inventory.sha256} of ${r.delta.inventory.destination}, taken ${r.delta.inventory.takenAt})`
          : '') +
        (r.delta.missing.length > 0
          ? `; it lacks ${r.delta.missing.length} of them: ${r.delta.failed} image(s) not pushed`
          : '; it holds them all') +
        (r.delta.mounted > 0 ? `; ${r.delta.mounted} mounted from where the inventory placed them` : ''),
    );
  if (r.clusterResources && r.clusterResources.length > 0) {
    lines.push(`cluster resources (apply on the cluster, or use registries.conf on hosts):`);
    for (const f of r.clusterResources) lines.push(`  ${f}`);
  }
  return lines.join('\n');
}
