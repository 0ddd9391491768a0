/**
 * One mirror run, in any of oc-mirror v2's workflows (workflow.ts), as named steps: check the
 * arguments and read what to mirror; take the workspace; open the destination; get the plan
 * (unpacked from an archive, given, or resolved from the configuration) and record it; pair each
 * plan entry with where its bytes come from; then either measure the pairs (a dry run) or copy
 * them, and finish with what the workflow leaves behind: cluster resources for a registry, archive
 * parts for a disk.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { AirgapError, CommonError, isAirgapError, usageError } from '../util/errors.js';
import { findUnsafeEntries, writeFileAtomic } from '../util/fs.js';
import { lockDirectory } from '../util/lock.js';
import { noProgress, type ProgressSink } from '../util/progress.js';
import { writeRunClusterResources } from './cluster-resources.js';
import { CopyEngine, type CopyPair, type CopySummary } from './copy/engine.js';
import { LayoutEndpoint, type Endpoint, type RegistryEndpoint } from './copy/endpoints.js';
import { Journal } from './copy/journal.js';
import { ClientPool } from './copy/pool.js';
import type { CheckReport } from './check.js';
import type { DeleteOutcome, DeletePlan } from './delete.js';
import { ReadRedirect } from './registry/redirect.js';
import { loadRegistriesConf } from './registry/registries-conf.js';
import {
  DISC_KIND,
  ISC_API_VERSION,
  ISC_KIND,
  loadImageSetConfig,
  type ImageSetConfig,
} from './isc/index.js';
import { parseLocation } from './location.js';
import { readPlanFile, readRunInputs, type RunInputs } from './inputs.js';
import { OciLayout } from './layout/store.js';
import { BUILD_SOURCE, flattenRepo, joinRepo, type MirrorPlan, type PlanEntry } from './plan.js';
import { parseReference } from './reference.js';
import type { RegistryClientOptions } from './registry/client.js';
import { reportOf, type MirrorReport } from './report.js';
import { resolvePlan } from './resolve.js';
import { resolveWorkflow, type Workflow } from './workflow.js';
import { MirrorError } from './errors.js';

export type { MirrorReport, ReportPair } from './report.js';
export type { MirrorMode } from './workflow.js';

export interface MirrorOptions {
  /** Path of the ImageSetConfiguration (-c). Optional with `plan`, and for disk → mirror (the archive carries the plan). */
  config?: string;
  /** A plan file written by `airgap mirror plan`, run instead of resolving the configuration. */
  plan?: string;
  /** `docker://host[:port][/prefix]`, `file://dir` or `oci:dir` (see location.ts). */
  destination: string;
  /** `file://dir` holding an archive (disk → mirror). */
  from?: string;
  /** `file://dir` for journal and outputs (mirror → mirror). */
  workspace?: string;
  authFile?: string;
  caFiles?: string[];
  certDir?: string;
  srcTlsVerify?: boolean;
  destTlsVerify?: boolean;
  arches?: string[];
  parallel?: number;
  /**
   * Most path components of a destination repository (--max-nested-paths, for Quay): deeper
   * names are flattened (flattenRepo) and the mirror sets become repository-scoped.
   */
  maxNestedPaths?: number;
  /** Mirror → disk: what earlier archives carried from this time on is carried again (--since). */
  since?: Date;
  /** Largest archive part in bytes (default: the config's archiveSize GiB, else 500 GiB). */
  archiveSize?: number;
  dryRun?: boolean;
  retry?: RegistryClientOptions['retry'];
  /**
   * How long a registry may send nothing (no connection, no response, no next bytes) before the
   * request stalls; three stalls in a row and it is given up for the run (--stall-timeout). A blob
   * read below 1 KiB/s over this long stalls too. Default 60 s.
   */
  stallTimeoutMs?: number;
  /** The version a hosted cluster runs (--from-version): its recommended update path is mirrored too. */
  fromVersion?: string;
  /** Update service endpoint (`--graph-url`); default UPDATE_URL_OVERRIDE, else api.openshift.com. */
  graphUrl?: string;
  /** Base image of the graph-data image (default ubi9). */
  graphBaseImage?: string;
  /** --remove-signatures: Sigstore signatures are neither looked up nor copied. */
  removeSignatures?: boolean;
  /** The release signature store (--signature-url); default OCP_SIGNATURE_URL, else oc-mirror's. */
  signatureUrl?: string;
  /** OpenPGP keyring files for release signatures (--release-keyring); default the shipped Red Hat key. */
  releaseKeyring?: string[];
  /** --secure-policy: refuse images containers-policy.json (--policy) does not accept. */
  securePolicy?: boolean;
  policy?: string;
  /** --registries.d: the lookaside of images the policy wants signedBy. */
  registriesD?: string;
  /**
   * containers-registries.conf(5) redirecting source reads (--registries-conf); default
   * CONTAINERS_REGISTRIES_CONF, else the user's or the system's, as podman reads them.
   */
  registriesConf?: string;
  /** Follow operator dependencies in catalogs (default true; --no-dependencies turns it off). */
  dependencies?: boolean;
  progress?: ProgressSink;
  /** The airgap release running: recorded in archives and cluster resources. */
  version?: string;
}

const GiB = 1024 ** 3;

/** What a run holds open while it works, shared by its steps. */
interface Session {
  o: MirrorOptions;
  flow: Workflow;
  inputs: RunInputs;
  progress: ProgressSink;
  pool: ClientPool;
  engine: CopyEngine;
  /** Source registries are reached without verifying TLS (--src-tls-verify=false). */
  srcInsecure: boolean;
}

/** Where a run writes. */
interface Target {
  endpoint: Endpoint;
  /** The repository of a plan entry at the destination (below the registry's prefix). */
  repo: (e: PlanEntry) => string;
  /** Mirror → disk: the layout the images are copied into, packed into archive parts in `dir` after. */
  pack?: { layout: OciLayout; dir: string };
}

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
  if (flow.archiveDir) await refuseUnsafeArchiveEntries(flow.archiveDir);
  const inputs = await readRunInputs(flow, o);
  await mkdir(flow.workspace, { recursive: true });
  const unlock = await lockDirectory(flow.workspace);
  const run = openSession(o, flow, inputs);
  try {
    const target = await openTarget(run);
    // After the preflight: a destination that could not even be reached claims nothing.
    await claimWorkspace(flow);
    const { plan, sourceLayout } = await obtainPlan(run);
    const planText = await recordPlan(run, plan);
    const report = reportOf(flow, o.destination, plan, (e) =>
      target.endpoint.display(target.repo(e), e.destTag),
    );
    refuseFlattenedCollisions(plan, target, run.o.maxNestedPaths);
    const pairs = await pairsOf(run, plan, target, sourceLayout);
    if (flow.dryRun) return await measureDryRun(run, report, pairs, plan, target);
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
    if (target.pack) report.archive = await writeArchive(run, target.pack, plan, planText);
    await writeFileAtomic(join(flow.workspace, 'last-run.json'), JSON.stringify(report, null, 2));
    return report;
  } finally {
    await run.pool.close();
    await unlock();
  }
}

/**
 * `airgap mirror check`: the plan (-c resolved now, --plan, else the workspace's plan.json) checked
 * at a registry destination, image by image, and the workspace's cluster resources against what
 * is there. Writes nothing.
 */
export async function runCheck(o: MirrorOptions): Promise<CheckReport> {
  const placeholder = o.plan ?? (o.config ? undefined : 'plan.json');
  const flow = resolveWorkflow({ ...o, plan: placeholder, dryRun: true });
  if (flow.destination.kind !== 'registry') {
    throw usageError(CommonError.FLAG_INVALID, 'airgap mirror check checks a registry', {
      hint: 'give the mirror as docker://host[:port][/prefix]; to check an archive, use airgap mirror verify',
    });
  }
  const planFile = o.plan ?? (o.config ? undefined : join(flow.workspace, 'plan.json'));
  if (planFile && !o.plan && !existsSync(planFile)) {
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
    const { checkPairs } = await import('./check.js');
    const fix =
      flow.mode === 'diskToMirror'
        ? `airgap mirror --from file://${flow.archiveDir} ${o.destination}`
        : `airgap mirror ${o.config ? `-c ${o.config}` : `--plan ${planFile}`} --workspace file://${flow.workspace} ${o.destination}`;
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

/** Options of {@link runDelete}: the mirror options, and which of oc-mirror's two phases. */
export interface DeleteRunOptions extends MirrorOptions {
  /** Write `<workspace>/delete/delete-images.yaml` from the DeleteImageSetConfiguration (-c). */
  generate?: boolean;
  /** Delete what this delete-images.yaml lists. */
  deleteYamlFile?: string;
  /** Release images hosted clusters run (read from the hub by the command): never listed. */
  inUse?: { cluster: string; image: string; digest?: string }[];
}

/**
 * `airgap mirror delete`: `--generate` resolves the DeleteImageSetConfiguration like a mirror plan
 * and lists what the destination holds of it (keeping what the workspace's last plan still uses);
 * `--delete-yaml-file` deletes that list. See delete.ts.
 */
export async function runDelete(o: DeleteRunOptions): Promise<DeletePlan | DeleteOutcome> {
  const { planDeletion, readDeleteList, executeDeletion } = await import('./delete.js');
  if (Boolean(o.generate) === Boolean(o.deleteYamlFile)) {
    throw usageError(CommonError.FLAG_MISSING, 'say which phase: --generate, or --delete-yaml-file <file>', {
      hint: 'first `airgap mirror delete -c delete-isc.yaml --workspace file://ws --generate docker://<mirror>`, review the list, then `airgap mirror delete --delete-yaml-file <list> docker://<mirror>`',
    });
  }
  const destination = parseLocation(o.destination, 'destination');
  if (destination.kind !== 'registry') {
    throw usageError(CommonError.FLAG_INVALID, 'airgap mirror delete deletes from a registry', {
      hint: 'give the mirror as docker://host[:port][/prefix]',
    });
  }
  if (o.deleteYamlFile) {
    const items = await readDeleteList(o.deleteYamlFile, destination.registry);
    const pool = new ClientPool({
      credentials: { authFile: o.authFile },
      caFiles: o.caFiles,
      ...(o.certDir ? { certDirs: [o.certDir] } : {}),
      retry: o.retry,
      stallTimeoutMs: o.stallTimeoutMs,
      onNotice: (message) => (o.progress ?? noProgress)({ type: 'warning', message }),
    });
    try {
      const endpoint = pool.get(destination.registry, 'destination', o.destTlsVerify === false);
      await endpoint.client.ping(joinRepo(destination.prefix, 'airgap-preflight'), 'pull,push');
      return await executeDeletion(endpoint.client, items, {
        parallel: o.parallel,
        progress: o.progress ?? noProgress,
      });
    } finally {
      await pool.close();
    }
  }
  if (!o.config) {
    throw usageError(
      CommonError.FLAG_MISSING,
      '--generate needs the DeleteImageSetConfiguration: -c <file>',
      {
        hint: 'write one with kind: DeleteImageSetConfiguration and a delete: section shaped like mirror:',
      },
    );
  }
  const flow = resolveWorkflow({ ...o, dryRun: true });
  const disc = await loadImageSetConfig(o.config, { kind: DISC_KIND });
  const config: ImageSetConfig = {
    ...disc,
    kind: ISC_KIND,
    apiVersion: ISC_API_VERSION,
    mirror: disc.delete,
  };
  const registries = await loadRegistriesConf({ path: o.registriesConf });
  await mkdir(flow.workspace, { recursive: true });
  const run = openSession(o, flow, { config, ...(registries.tables.length > 0 ? { registries } : {}) });
  try {
    const target = await openTarget(run);
    const plan = await resolveConfig(run);
    const keepFile = join(flow.workspace, 'plan.json');
    const keep = existsSync(keepFile) ? await readPlanFile(keepFile) : undefined;
    return await planDeletion(
      plan,
      keep,
      {
        client: (target.endpoint as RegistryEndpoint).client,
        registry: destination.registry,
        repo: target.repo,
      },
      {
        file: join(flow.workspace, 'delete', 'delete-images.yaml'),
        parallel: o.parallel,
        progress: run.progress,
        ...(o.inUse ? { inUse: o.inUse } : {}),
      },
    );
  } finally {
    await run.pool.close();
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
  const mine = `docker://${dest.registry}${dest.prefix ? `/${dest.prefix}` : ''}`;
  const file = join(flow.workspace, WORKSPACE_DESTINATION);
  let recorded: string | undefined;
  try {
    recorded = (JSON.parse(await readFile(file, 'utf8')) as { destination?: string }).destination;
  } catch {
    recorded = undefined; // a new workspace, or one from before destinations were recorded
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

/** The journal (not for dry runs), the registry connections and the copy engine of a run. */
function openSession(o: MirrorOptions, flow: Workflow, inputs: RunInputs): Session {
  const progress = o.progress ?? noProgress;
  const journal = flow.dryRun ? undefined : new Journal(join(flow.workspace, 'journal.jsonl'));
  const pool = new ClientPool(
    {
      credentials: { authFile: o.authFile },
      caFiles: o.caFiles,
      ...(o.certDir ? { certDirs: [o.certDir] } : {}),
      connections: Math.max(8, (o.parallel ?? 10) + 4),
      retry: o.retry,
      stallTimeoutMs: o.stallTimeoutMs,
      onNotice: (message) => progress({ type: 'warning', message }),
    },
    journal,
    inputs.registries
      ? { redirect: new ReadRedirect(inputs.registries), sourceInsecure: o.srcTlsVerify === false }
      : undefined,
  );
  const engine = new CopyEngine({
    parallel: o.parallel,
    arches: o.arches,
    journal,
    progress,
    stallTimeoutMs: o.stallTimeoutMs,
  });
  return { o, flow, inputs, progress, pool, engine, srcInsecure: o.srcTlsVerify === false };
}

/**
 * One request to the destination registry before anything else: a cause that affects every image
 * (unreachable, a CA not trusted, credentials refused) is reported once, with its fix, instead of
 * once per image after the plan; and a plan never says "0 B to move" about a destination it could
 * not read. A copy asks for push, a dry run or plan for pull.
 */
async function preflight(run: Session, endpoint: RegistryEndpoint, repo: string): Promise<void> {
  run.progress({ type: 'phase', name: 'preflight', detail: endpoint.client.registry });
  try {
    await endpoint.client.ping(repo, run.flow.dryRun ? 'pull' : 'pull,push');
  } catch (e) {
    if (!isAirgapError(e)) throw e;
    throw new AirgapError(
      e.code,
      `the destination ${endpoint.client.registry} cannot be used: ${e.message}`,
      {
        ...(e.hint ? { hint: e.hint } : {}),
        cause: e,
      },
    );
  }
}

/**
 * With --max-nested-paths, two source repositories may flatten into one name (`a/b/c` and `a/b-c`
 * with 2): their tags would overwrite each other. Refused before anything is copied.
 */
function refuseFlattenedCollisions(plan: MirrorPlan, target: Target, max: number | undefined): void {
  if (!max) return;
  const seen = new Map<string, string>();
  for (const e of plan.images) {
    const flat = target.repo(e);
    const first = seen.get(flat);
    if (first !== undefined && first !== e.destRepo) {
      throw usageError(
        MirrorError.NESTED_PATHS_COLLISION,
        `--max-nested-paths ${max} flattens both ${first} and ${e.destRepo} into ${flat}`,
        {
          hint: 'raise --max-nested-paths, or give one of the images a targetRepo of its own in the ImageSetConfiguration',
        },
      );
    }
    seen.set(flat, e.destRepo);
  }
}

/** The destination endpoint: a registry, the workspace's layout (mirror → disk), or an OCI layout. */
async function openTarget(run: Session): Promise<Target> {
  const dest = run.flow.destination;
  switch (dest.kind) {
    case 'registry': {
      const endpoint = run.pool.get(dest.registry, 'destination', run.o.destTlsVerify === false);
      await preflight(run, endpoint, joinRepo(dest.prefix, 'airgap-preflight'));
      const max = run.o.maxNestedPaths;
      return { endpoint, repo: (e) => flattenRepo(joinRepo(dest.prefix, e.destRepo), max) };
    }
    case 'directory': {
      const layout = await OciLayout.open(join(run.flow.workspace, 'layout'));
      return {
        endpoint: new LayoutEndpoint(layout),
        repo: (e) => e.destRepo,
        pack: { layout, dir: resolve(dest.path) },
      };
    }
    case 'layout':
      return {
        endpoint: new LayoutEndpoint(await OciLayout.open(resolve(dest.path))),
        repo: (e) => e.destRepo,
      };
  }
}

/**
 * The plan of the run: unpacked with the archive (disk → mirror; the images are then read from
 * the unpacked layout), the plan file given, or resolved from the configuration now.
 */
async function obtainPlan(run: Session): Promise<{ plan: MirrorPlan; sourceLayout?: OciLayout }> {
  if (run.flow.mode === 'diskToMirror') return unpackPlan(run);
  if (run.inputs.plan) return { plan: run.inputs.plan };
  return { plan: await resolveConfig(run) };
}

/** Disk → mirror: unpack the archive into the workspace's layout and read the plan it carries. */
async function unpackPlan(run: Session): Promise<{ plan: MirrorPlan; sourceLayout: OciLayout }> {
  const { unpackArchive, ARCHIVE_PLAN } = await import('./archive/archive.js'); // tar loads only for archives
  const archiveDir = run.flow.archiveDir!;
  const sourceLayout = await OciLayout.open(join(run.flow.workspace, 'layout'));
  run.progress({ type: 'phase', name: 'unpack', detail: archiveDir, moves: true });
  await unpackArchive(archiveDir, sourceLayout, run.progress, run.o.version, run.flow.workspace);
  return { plan: await readPlanFile(join(sourceLayout.dir, ARCHIVE_PLAN)), sourceLayout };
}

/** Resolve the ImageSetConfiguration into a plan, reading the sources it names. */
function resolveConfig(run: Session): Promise<MirrorPlan> {
  const { o, pool, srcInsecure } = run;
  return resolvePlan({
    configPath: resolve(o.config!),
    config: run.inputs.config!,
    workspace: run.flow.workspace,
    client: (registry) => pool.get(registry, 'source', srcInsecure).client,
    endpoint: (registry) => pool.get(registry, 'source', srcInsecure),
    copy: (pairs) => run.engine.run(pairs),
    parallel: o.parallel,
    dependencies: o.dependencies,
    graphUrl: o.graphUrl,
    fromVersion: o.fromVersion,
    graphTls: {
      caFiles: o.caFiles,
      ...(o.certDir ? { certDirs: [o.certDir] } : {}),
      insecureSkipVerify: srcInsecure,
    },
    ...(o.graphBaseImage ? { graphBaseImage: o.graphBaseImage } : {}),
    signatures: {
      remove: o.removeSignatures,
      storeUrl: o.signatureUrl,
      keyringFiles: o.releaseKeyring,
      tls: {
        caFiles: o.caFiles,
        ...(o.certDir ? { certDirs: [o.certDir] } : {}),
        insecureSkipVerify: srcInsecure,
      },
      securePolicy: o.securePolicy,
      policyPath: o.policy,
      registriesDDir: o.registriesD,
    },
    progress: run.progress,
  });
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

/** One copy pair per plan entry, in plan order (the report and the summary follow it). */
async function pairsOf(
  run: Session,
  plan: MirrorPlan,
  target: Target,
  sourceLayout: OciLayout | undefined,
): Promise<CopyPair[]> {
  const build =
    plan.buildLayout && run.flow.mode !== 'diskToMirror' ? await OciLayout.open(plan.buildLayout) : undefined;
  // A signature follows the image it signs (same destination repository).
  const imageAt = new Map<string, number>();
  plan.images.forEach((e, i) => {
    if (e.kind !== 'signature' && e.digest) imageAt.set(`${e.destRepo}@${e.digest}`, i);
  });
  return plan.images.map((e) => {
    const after = e.kind === 'signature' && e.signs ? imageAt.get(`${e.destRepo}@${e.signs}`) : undefined;
    return {
      source: sourceOf(run, e, sourceLayout, build),
      dest: { endpoint: target.endpoint, repo: target.repo(e), ref: e.destTag },
      ...(e.digest ? { digest: e.digest } : {}),
      ...(e.refused ? { refused: e.refused } : {}),
      ...(after !== undefined ? { after } : {}),
      ...(e.platforms ? { platforms: e.platforms } : {}),
    };
  });
}

/**
 * Where an entry's bytes come from: the unpacked archive (by its destination name), the build
 * layout (catalogs and the graph image airgap built), or the source registry.
 */
function sourceOf(
  run: Session,
  e: PlanEntry,
  sourceLayout: OciLayout | undefined,
  build: OciLayout | undefined,
): CopyPair['source'] {
  if (sourceLayout) {
    return { endpoint: new LayoutEndpoint(sourceLayout), repo: e.destRepo, ref: e.digest || e.destTag };
  }
  if (e.source.startsWith(BUILD_SOURCE)) {
    if (!build)
      throw new AirgapError(
        MirrorError.PLAN_INVALID,
        `${e.origin} was built, but the plan names no build layout`,
      );
    return { endpoint: new LayoutEndpoint(build), repo: e.source.slice(BUILD_SOURCE.length), ref: e.digest };
  }
  // An entry the plan could not pin is tried by its tag: it fails (or, if the registry is
  // back, copies) like any other image, on its own.
  const r = parseReference(e.source);
  return {
    endpoint: run.pool.get(r.registry, 'source', run.srcInsecure),
    repo: r.repository,
    ref: e.digest || (r.tag ?? 'latest'),
  };
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
): Promise<MirrorReport> {
  run.progress({ type: 'phase', name: 'measure', detail: `${pairs.length} images` });
  const { measurePairs } = await import('./copy/measure.js');
  report.measure = await measurePairs(pairs, {
    arches: run.o.arches,
    parallel: run.o.parallel,
    progress: run.progress,
  });
  report.measure.images.forEach((m, i) => {
    const entry = report.plan[i]!;
    entry.bytes = m.bytes;
    entry.present = m.present;
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
): Promise<NonNullable<MirrorReport['archive']>> {
  const { packArchive, readHistory, writeHistory } = await import('./archive/archive.js');
  const historyPath = join(run.flow.workspace, 'archive-history.txt');
  const history = await readHistory(historyPath);
  // What earlier archives carried before --since is at the destination; the rest is carried again.
  const carried = new Set(
    [...history].filter(([, at]) => !run.o.since || at === undefined || at < run.o.since).map(([d]) => d),
  );
  const maxPart = run.o.archiveSize ?? (run.inputs.config?.archiveSize ?? 500) * GiB;
  const archive = await packArchive(pack.layout, pack.dir, {
    maxPartBytes: maxPart,
    history: carried,
    progress: run.progress,
    plan: { text: planText, config: plan.config.sha256 },
    version: run.o.version,
    files: await carriedHelmFiles(run.flow.workspace, pack.layout.dir, plan),
  });
  await writeHistory(
    historyPath,
    history,
    archive.parts.flatMap((p) => p.blobs),
  );
  return { dir: pack.dir, parts: archive.parts, previouslyArchived: archive.previouslyArchived.length };
}
