/**
 * `airgap mirror check`: is the mirror complete for what a plan names? Each image is asked for
 * at its destination tag (one manifest read, no blob), and must be there at the plan's digest;
 * signatures are plan entries too, so a signature the source had and the mirror lacks is found
 * the same way. Then the cluster resources the run wrote are checked against the registry: each
 * image's original name, sent through the generated registries.conf as a node sends it, must land
 * on that image. Releases name what an install pulls besides the payload (the KubeVirt disk, the
 * graph image) and say whether those are there. Nothing is written.
 *
 * Only the registry's "not there" (404) counts as missing. A question it does not answer (a
 * refusal, a TLS failure, a 5xx) leaves that image or resource "unreadable": could not be checked,
 * named with the cause, never counted as missing. Either way the mirror is not reported complete.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statIfExists } from '../util/fs.js';
import { Limiter } from '../util/limit.js';
import { CommonError, usageError } from '../util/errors.js';
import { readRunInputs } from './inputs.js';
import {
  openSession,
  openTarget,
  refuseFlattenedCollisions,
  resolveConfig,
  type MirrorOptions,
} from './session.js';
import { resolveWorkflow } from './workflow.js';
import { messageOf } from '../util/errors.js';
import type { ProgressSink } from '../util/progress.js';
import type { ImageSide } from './copy/engine.js';
import type { MirrorPlan, PlanEntry } from './plan.js';
import { parseReference } from './reference.js';
import { parseRegistriesConf } from './registry/registries-conf.js';
import { ReadRedirect } from './registry/redirect.js';

/**
 * Payload components a hosted cluster's install pulls by name besides the payload itself: the
 * HyperShift control-plane-operator (`hypershift`), and the KubeVirt disk when it was asked for.
 */
const INSTALL_EXTRAS = ['hypershift', 'kube-virt-container'];

/** What was found for one plan entry. */
export interface CheckedImage {
  /** At the destination: `host/prefix/repo:tag`. */
  destination: string;
  kind: PlanEntry['kind'];
  context: string;
  expected: string;
  /**
   * present: there at its digest; other-digest: the tag names another image; missing: the registry
   * says it is not there (404); unreadable: could not be checked (`problem` says why); unplanned:
   * the plan could not pin it.
   */
  status: 'present' | 'missing' | 'other-digest' | 'unreadable' | 'unplanned';
  found?: string;
  problem?: string;
}

/** A cluster resource that does not lead to the image it stands for, or that could not be checked. */
export interface ResourceProblem {
  original: string;
  /** Where registries.conf sends the original (or nothing). */
  mirror?: string;
  problem: string;
  /** True when the registry could not be asked (the cause is in `problem`): not known to be wrong. */
  unreadable?: boolean;
}

export interface CheckReport {
  destination: string;
  complete: boolean;
  images: CheckedImage[];
  counts: Record<CheckedImage['status'], number>;
  /** The generated registries.conf checked, when the workspace has one. */
  registriesConf?: string;
  resources: ResourceProblem[];
  /** What an install pulls besides each release's payload components, and whether it is there. */
  releaseExtras: { release: string; image: string; present: boolean; status: CheckedImage['status'] }[];
  /** Images and cluster resources that could not be checked (each names its cause). */
  unreadable: number;
  /** The command that would fetch what is missing (the run again resumes and fills the gaps). */
  fix?: string;
}

/** One pair to check: what the plan says and where it should be. */
export interface CheckPair {
  entry: PlanEntry;
  dest: ImageSide;
  display: string;
}

/** Check every pair at its destination, `parallel` at a time. */
async function checkPairs(
  plan: MirrorPlan,
  pairs: readonly CheckPair[],
  opts: {
    destination: string;
    registry: string;
    workspace: string;
    parallel?: number;
    progress: ProgressSink;
    fix: string;
  },
): Promise<CheckReport> {
  const limit = new Limiter(opts.parallel ?? 16);
  opts.progress({ type: 'items-total', total: pairs.length });
  const images = await Promise.all(
    pairs.map(({ entry, dest, display }) =>
      limit.run(async (): Promise<CheckedImage> => {
        const base = {
          destination: display,
          kind: entry.kind,
          context: entry.context,
          expected: entry.digest,
        };
        if (!entry.digest) {
          opts.progress({ type: 'item-done', ok: false, name: display });
          return {
            ...base,
            status: 'unplanned',
            problem: entry.unresolved?.message ?? 'the plan could not pin it',
          };
        }
        try {
          const found = await dest.endpoint.headManifest(dest.repo, dest.ref, true);
          const status =
            found === undefined ? 'missing' : found === entry.digest ? 'present' : 'other-digest';
          opts.progress({ type: 'item-done', ok: status === 'present', name: display });
          return { ...base, status, ...(found && found !== entry.digest ? { found } : {}) };
        } catch (e) {
          opts.progress({ type: 'item-done', ok: false, name: display });
          return { ...base, status: 'unreadable', problem: messageOf(e).split('\n')[0] };
        }
      }),
    ),
  );
  const counts = { present: 0, missing: 0, 'other-digest': 0, unreadable: 0, unplanned: 0 };
  for (const i of images) counts[i.status]++;

  const resources = await checkResources(pairs, images, opts.workspace, opts.registry, limit);
  const releaseExtras = plan.images
    .map((e, n) => ({ e, i: images[n]! }))
    .filter(
      ({ e }) =>
        e.kind === 'graph' ||
        (e.kind === 'release-component' && INSTALL_EXTRAS.some((c) => e.context.endsWith(`: ${c}`))),
    )
    .map(({ e, i }) => ({
      release: e.kind === 'graph' ? 'update graph' : e.context,
      image: i.destination,
      present: i.status === 'present',
      status: i.status,
    }));
  const complete = counts.present === images.length && resources.problems.length === 0;
  const unreadable = counts.unreadable + resources.problems.filter((p) => p.unreadable).length;
  // Something to fetch: the run again fills it. What could not be checked needs its cause fixed first.
  const toFetch =
    counts.missing + counts['other-digest'] + counts.unplanned > 0 ||
    resources.problems.some((p) => !p.unreadable);
  return {
    destination: opts.destination,
    complete,
    images,
    counts,
    ...(resources.file ? { registriesConf: resources.file } : {}),
    resources: resources.problems,
    releaseExtras,
    unreadable,
    ...(toFetch ? { fix: opts.fix } : {}),
  };
}

/**
 * Each image's original name (by digest), through the workspace's generated registries.conf as a
 * node reads it, must reach the image at the destination; only images found present are asked.
 */
async function checkResources(
  pairs: readonly CheckPair[],
  images: readonly CheckedImage[],
  workspace: string,
  registry: string,
  limit: Limiter,
): Promise<{ file?: string; problems: ResourceProblem[] }> {
  const file = join(workspace, 'cluster-resources', 'registries.conf');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { problems: [] }; // no cluster resources yet
    throw e;
  }
  const redirect = new ReadRedirect({ files: [file], tables: parseRegistriesConf(text, file) });
  const problems: ResourceProblem[] = [];
  await Promise.all(
    pairs.map(({ entry, dest }, n) =>
      limit.run(async () => {
        if (images[n]!.status !== 'present' || entry.kind === 'signature' || entry.kind === 'graph') return;
        if (!entry.digest || entry.source.startsWith('build:')) return;
        // As a node pulls it: by the tag or the digest the original names.
        const original = parseReference(entry.origin);
        const byTag = original.digest === undefined && original.tag !== undefined;
        const ref = byTag ? original.tag! : entry.digest;
        const route = redirect.plan(original.registry, original.repository, !byTag);
        const at = route && 'candidates' in route ? route.candidates.find((c) => c.mirror) : undefined;
        const name = `${original.registry}/${original.repository}${byTag ? `:${ref}` : `@${ref}`}`;
        if (!at) {
          problems.push({ original: name, problem: 'registries.conf names no mirror for it' });
          return;
        }
        const mirror = `${at.registry}/${at.repository}`;
        if (at.registry !== registry) {
          problems.push({
            original: name,
            mirror,
            problem: `registries.conf sends it to another registry than ${registry}`,
          });
          return;
        }
        let found: string | undefined;
        try {
          found = await dest.endpoint.headManifest(at.repository, entry.digest, false); // undefined: 404
        } catch (e) {
          problems.push({
            original: name,
            mirror,
            problem: `could not check whether ${mirror} holds it: ${messageOf(e).split('\n')[0]}`,
            unreadable: true,
          });
          return;
        }
        if (found !== entry.digest)
          problems.push({
            original: name,
            mirror,
            problem: `registries.conf sends it to ${mirror}, which does not hold it`,
          });
      }),
    ),
  );
  return { file, problems };
}

/** The check in lines: what is missing or wrong, then the verdict and the command that fixes it. */
export function renderCheckReport(r: CheckReport): string {
  const lines: string[] = [];
  for (const i of r.images) {
    if (i.status === 'present') continue;
    const why =
      i.status === 'other-digest'
        ? `the tag names ${i.found}, the plan ${i.expected}`
        : i.status === 'missing'
          ? 'not there'
          : i.status === 'unreadable'
            ? `could not be checked: ${i.problem ?? 'no answer'}`
            : (i.problem ?? i.status);
    lines.push(`${i.status.toUpperCase().padEnd(12)} ${i.destination} (${i.context}): ${why}`);
  }
  for (const p of r.resources)
    lines.push(
      `${p.unreadable ? 'UNREADABLE  ' : 'RESOURCE    '} ${p.original}${p.mirror ? ` → ${p.mirror}` : ''}: ${p.problem}`,
    );
  for (const x of r.releaseExtras) {
    const state = x.present ? 'ok' : x.status === 'unreadable' ? 'UNREADABLE' : 'MISSING';
    lines.push(`${state.padEnd(12)} ${x.release}: ${x.image}`);
  }
  const c = r.counts;
  const wrong = r.resources.length - r.resources.filter((p) => p.unreadable).length;
  lines.push(
    r.complete
      ? `${r.destination} is complete: ${c.present} image(s) at their digests${r.registriesConf ? ', and the cluster resources lead to them' : ''}`
      : `${r.destination} is incomplete: ${c.present} of ${r.images.length} image(s) present, ${c.missing} missing, ${c['other-digest']} at another digest${c.unplanned ? `, ${c.unplanned} not pinned by the plan` : ''}${wrong ? `, ${wrong} cluster resource problem(s)` : ''}${r.unreadable ? `; ${r.unreadable} could not be checked (not counted as missing)` : ''}`,
  );
  if (r.fix) lines.push(`to fetch what is missing: ${r.fix}`);
  if (r.unreadable)
    lines.push(
      `to finish the check: fix the cause named on each UNREADABLE line (credentials, CA, the registry's health), then check again`,
    );
  return `${lines.join('\n')}\n`;
}

/**
 * `airgap mirror check`: the plan (-c resolved now, --plan, else the workspace's plan.json) checked
 * at a registry destination, image by image, and the workspace's cluster resources against what
 * is there. Writes nothing.
 */
export async function runCheck(o: MirrorOptions): Promise<CheckReport> {
  // With -c and neither --workspace nor --from, the configuration is resolved as `mirror plan`
  // resolves it, in a workspace of its own that is removed afterwards: checking writes nothing.
  if (o.config && !o.workspace && !o.from) {
    const scratch = await mkdtemp(join(tmpdir(), 'airgap-check-'));
    try {
      return await runCheckIn({ ...o, workspace: `file://${scratch}` }, true);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
  return runCheckIn(o, false);
}

async function runCheckIn(o: MirrorOptions, scratch: boolean): Promise<CheckReport> {
  const placeholder = o.plan ?? (o.config ? undefined : 'plan.json');
  const flow = resolveWorkflow({ ...o, plan: placeholder, dryRun: true });
  if (flow.destination.kind !== 'registry') {
    throw usageError(CommonError.FLAG_INVALID, 'airgap mirror check checks a registry', {
      hint: 'give the mirror as docker://host[:port][/prefix]; to check an archive, use airgap mirror verify',
    });
  }
  const planFile = o.plan ?? (o.config ? undefined : join(flow.workspace, 'plan.json'));
  if (planFile && !o.plan && !(await statIfExists(planFile))) {
    throw usageError(CommonError.FLAG_MISSING, `${flow.workspace} holds no plan.json`, {
      hint: 'give -c <ImageSetConfiguration> or --plan <plan.json>, or the --workspace (or --from) of an earlier airgap mirror run',
    });
  }
  const inputs = await readRunInputs(flow, {
    config: o.config,
    plan: planFile,
    registriesConf: o.registriesConf,
  });
  const run = openSession(o, flow, inputs);
  try {
    const target = await openTarget(run);
    const plan = inputs.plan ?? (await resolveConfig(run));
    refuseFlattenedCollisions(plan, target, o.maxNestedPaths);
    const fix =
      flow.mode === 'diskToMirror'
        ? `airgap mirror --from file://${flow.archiveDir} ${o.destination}`
        : `airgap mirror ${o.config ? `-c ${o.config}` : `--plan ${planFile}`} --workspace file://${scratch ? '<dir>' : flow.workspace} ${o.destination}`;
    return await checkPairs(
      plan,
      plan.images.map((e) => ({
        entry: e,
        dest: { endpoint: target.endpoint, repo: target.repo(e), ref: e.destTag },
        display: target.endpoint.display(target.repo(e), e.destTag),
      })),
      {
        destination: o.destination,
        registry: (flow.destination as { registry: string }).registry,
        workspace: flow.workspace,
        parallel: o.parallel,
        progress: run.progress,
        fix,
      },
    );
  } finally {
    await run.pool.close();
  }
}
