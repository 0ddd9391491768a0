import { mkdir, readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import { join, resolve } from 'node:path';
import { AirgapError, usageError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';
import { lockDirectory } from '../util/lock.js';
import { noProgress, type ProgressSink } from '../util/progress.js';
import type { ArchiveManifest } from './archive/archive.js';
import { CopyEngine, type CopyPair, type CopySummary } from './copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint, type Endpoint } from './copy/endpoints.js';
import { Journal } from './copy/journal.js';
import type { PlanMeasure } from './copy/measure.js';
import { loadImageSetConfig, unsupportedFields } from './isc/index.js';
import type { ImageSetConfig } from './isc/types.js';
import type { MirroredImage } from './outputs/types.js';
import { OciLayout } from './layout/store.js';
import {
  BUILD_SOURCE,
  joinRepo,
  parsePlan,
  type BlockedImage,
  type MirrorPlan,
  type PlanCatalog,
  type PlanEntry,
} from './plan.js';
import { parseLocation, parseReference } from './reference.js';
import { configDigest, resolvePlan } from './resolve.js';
import { RegistryClient, type RegistryClientOptions } from './registry/client.js';

/** oc-mirror v2's three workflows, plus mirrorToLayout: into a plain OCI layout (`oci:<dir>`), no archive. */
/** Written into generated objects' annotations. */
const AIRGAP_VERSION = '0.1.0';

export type MirrorMode = 'mirrorToMirror' | 'mirrorToDisk' | 'diskToMirror' | 'mirrorToLayout';

export interface MirrorOptions {
  /** Path of the ImageSetConfiguration (-c). Optional with `plan`, and for disk → mirror (the archive carries the plan). */
  config?: string;
  /** A plan file written by `airgap mirror plan`, run instead of resolving the configuration. */
  plan?: string;
  /** `docker://host[:port][/prefix]` or `file://dir`. */
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
  /** Largest archive part in bytes (default: the config's archiveSize GiB, else 500 GiB). */
  archiveSize?: number;
  dryRun?: boolean;
  retry?: RegistryClientOptions['retry'];
  /** Update service endpoint (`--graph-url`); default UPDATE_URL_OVERRIDE, else api.openshift.com. */
  graphUrl?: string;
  /** Base image of the graph-data image (default ubi9). */
  graphBaseImage?: string;
  progress?: ProgressSink;
}

/** One line of the report's plan: a pair, what it is and what brought it in. */
export interface ReportPair {
  source: string;
  destination: string;
  kind: PlanEntry['kind'];
  context: string;
  /** Dry runs: the image's blob bytes, whether it is already at the destination, why it could not be read. */
  bytes?: number;
  present?: boolean;
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
  }[];
  warnings: string[];
  plan: ReportPair[];
  /** Dry runs: bytes to move and what the destination already holds. */
  measure?: PlanMeasure;
  summary?: CopySummary;
  archive?: { dir: string; parts: ArchiveManifest['parts']; previouslyArchived: number };
  /** Files written to `<workspace>/cluster-resources/` (runs that end in a registry). */
  clusterResources?: string[];
}

const GiB = 1024 ** 3;

function fileDir(flag: string, value: string): string {
  if (!value.startsWith('file://')) {
    throw usageError('FLAG_INVALID', `${flag} must be a file:// path, got "${value}"`, {
      hint: `write it as ${flag} file:///path/to/dir or ${flag} file://relative/dir`,
    });
  }
  const p = value.slice('file://'.length);
  if (!p) throw usageError('FLAG_INVALID', `${flag} names no directory`);
  return resolve(p);
}

/** oc-mirror v2's workflow rules: which mode the flags describe, or a usage error saying why none. */
export function workflowOf(o: Pick<MirrorOptions, 'destination' | 'from' | 'workspace'>): MirrorMode {
  const dest = o.destination;
  if (dest.startsWith('oci:')) {
    if (o.from || o.workspace) {
      throw usageError('FLAG_CONFLICT', 'an oci: destination cannot be combined with --from or --workspace', {
        hint: 'an OCI layout keeps its own state: airgap mirror -c isc.yaml oci:/path/to/layout',
      });
    }
    return 'mirrorToLayout';
  }
  if (dest.startsWith('file://')) {
    if (o.from || o.workspace) {
      throw usageError(
        'FLAG_CONFLICT',
        'a file:// destination cannot be combined with --from or --workspace',
        {
          hint: 'mirror to disk: airgap mirror -c isc.yaml file://<dir>; disk to registry: airgap mirror -c isc.yaml --from file://<dir> docker://<registry>',
        },
      );
    }
    return 'mirrorToDisk';
  }
  if (o.from && o.workspace) {
    throw usageError('FLAG_CONFLICT', '--from and --workspace cannot be used together', {
      hint: 'use --from file://<archive dir> to push an archive, or --workspace file://<dir> to mirror registry to registry',
    });
  }
  if (!o.from && !o.workspace) {
    throw usageError(
      'FLAG_MISSING',
      'a docker:// destination needs --workspace (registry to registry) or --from (disk to registry)',
      {
        hint: 'e.g. airgap mirror -c isc.yaml --workspace file://./ws docker://mirror.example.com:8443/ocp',
      },
    );
  }
  return o.from ? 'diskToMirror' : 'mirrorToMirror';
}

/** Load the ImageSetConfiguration and refuse, with its position, any content this release cannot mirror yet. */
export async function loadMirrorConfig(path: string): Promise<ImageSetConfig> {
  const cfg = await loadImageSetConfig(path);
  if (cfg.kind !== 'ImageSetConfiguration') {
    throw usageError('ISC_KIND', `${path} is a ${cfg.kind}; mirroring needs an ImageSetConfiguration`, {
      hint: 'deleting mirrored images is not supported yet',
    });
  }
  const unsupported = unsupportedFields(cfg, [
    'mirror.platform',
    '!mirror.platform.platforms',
    'mirror.operators',
    '!mirror.operators[].platforms',
    'mirror.additionalImages',
    '!mirror.additionalImages[].platforms',
    'mirror.blockedImages',
    'archiveSize',
  ]);
  if (unsupported.length > 0) {
    const lines = unsupported.map((u) => `${u.path} (${u.where}) is not supported yet`);
    throw usageError('ISC_UNSUPPORTED', lines.join('\n'), {
      where: unsupported[0]!.where,
      hint: 'remove these fields: helm charts and sparse platform filtering (platforms) are not mirrored yet; use architectures for releases and --arch for images',
    });
  }
  return cfg;
}

class ClientPool {
  private readonly clients = new Map<string, RegistryEndpoint>();

  constructor(
    private readonly base: RegistryClientOptions,
    private readonly journal?: Journal,
  ) {}

  get(registry: string, role: 'source' | 'destination', insecure: boolean): RegistryEndpoint {
    const key = `${role}|${registry}`;
    let ep = this.clients.get(key);
    if (!ep) {
      ep = new RegistryEndpoint(
        new RegistryClient(registry, { ...this.base, insecureSkipVerify: insecure }),
        this.journal,
      );
      this.clients.set(key, ep);
    }
    return ep;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}

/** The cluster resource category of a plan entry. */
function categoryOf(kind: PlanEntry['kind']): MirroredImage['category'] {
  switch (kind) {
    case 'release':
    case 'release-component':
      return 'release';
    case 'bundle':
    case 'related':
      return 'operator';
    case 'catalog':
      return 'catalog';
    case 'graph':
      return 'graph';
    default:
      return 'generic';
  }
}

async function catalogTemplate(path: string): Promise<MirroredImage['catalogSourceTemplate']> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(
      'CATALOG_TEMPLATE_UNREADABLE',
      `cannot read targetCatalogSourceTemplate ${path}: ${(e as Error).message}`,
      {
        hint: 'give the path of a CatalogSource YAML file (sourceType: grpc)',
      },
    );
  }
  return { object: yaml.load(text), where: path };
}

/** Check that an archive carries a plan, made from the given configuration when one is given. */
async function checkArchivePlan(archiveDir: string, configPath: string | undefined): Promise<void> {
  const { readArchiveManifest } = await import('./archive/archive.js');
  const manifest = await readArchiveManifest(archiveDir);
  if (!manifest.plan) {
    throw usageError('ARCHIVE_NO_PLAN', `the archive in ${archiveDir} carries no plan`, {
      hint: 'it was written by an older airgap; write it again with `airgap mirror -c <isc> file://<dir>`',
    });
  }
  if (configPath) {
    const cfg = await loadMirrorConfig(configPath);
    if (configDigest(cfg) !== manifest.plan.config) {
      throw usageError(
        'ARCHIVE_PLAN_MISMATCH',
        `the archive in ${archiveDir} was made from a different ImageSetConfiguration than ${configPath}`,
        {
          hint: 'give the configuration the archive was made with (or leave out -c: the archive carries its plan), or make a new archive from this configuration',
        },
      );
    }
  }
}

function reportOf(
  mode: MirrorMode,
  o: MirrorOptions,
  workspace: string,
  plan: MirrorPlan,
  display: (e: PlanEntry) => string,
): MirrorReport {
  return {
    mode,
    destination: o.destination,
    workspace,
    dryRun: Boolean(o.dryRun),
    planFile: join(workspace, 'plan.json'),
    blocked: plan.blocked,
    releases: plan.releases,
    releaseWhy: plan.releaseWhy,
    catalogs: plan.catalogs.map((c) => ({
      catalog: c.catalog,
      destination: `${c.destRepo}:${c.destTag}`,
      rebuilt: c.rebuilt,
      bundles: c.packages.reduce((a, p) => a + p.bundles.length, 0),
      packages: c.packages,
    })),
    warnings: plan.warnings,
    plan: plan.images.map((e) => ({
      source: e.source.startsWith(BUILD_SOURCE) ? `${e.origin} (built)` : e.source,
      destination: display(e),
      kind: e.kind,
      context: e.context,
    })),
  };
}

/**
 * One mirror run, in any of oc-mirror v2's three workflows. The ImageSetConfiguration (or a plan)
 * decides what; the destination and --from/--workspace decide where. Returns the report; throws only
 * for usage errors and failures that stop the whole run (a failed image is a result, not an exception).
 */
export async function runMirror(o: MirrorOptions): Promise<MirrorReport> {
  const mode = workflowOf(o);
  const progress = o.progress ?? noProgress;
  if (!o.config && !o.plan && mode !== 'diskToMirror') {
    throw usageError('FLAG_MISSING', 'say what to mirror: -c <ImageSetConfiguration> or --plan <plan.json>', {
      hint: 'write a configuration with `airgap mirror init`, or plan one with `airgap mirror plan -c isc.yaml`',
    });
  }
  if (o.config && o.plan) {
    throw usageError('FLAG_CONFLICT', '-c and --plan cannot be used together', {
      hint: 'a plan already holds what its configuration resolved to; give one of them',
    });
  }
  const dest = parseLocation(o.destination, 'destination');
  const workspace =
    dest.transport === 'oci'
      ? join(resolve(dest.path), '.airgap')
      : mode === 'mirrorToDisk'
        ? join(resolve((dest as { path: string }).path), 'working-dir')
        : mode === 'diskToMirror'
          ? join(fileDir('--from', o.from!), 'working-dir')
          : fileDir('--workspace', o.workspace!);
  // Check an archive against the configuration before anything is unpacked or pushed.
  if (mode === 'diskToMirror') await checkArchivePlan(fileDir('--from', o.from!), o.config);
  const cfg = o.config && mode !== 'diskToMirror' ? await loadMirrorConfig(o.config) : undefined;
  const givenPlan = o.plan ? parsePlan(await readText(o.plan), o.plan) : undefined;

  await mkdir(workspace, { recursive: true });
  const unlock = await lockDirectory(workspace);
  const journal = o.dryRun ? undefined : new Journal(join(workspace, 'journal.jsonl'));
  const pool = new ClientPool(
    {
      credentials: { authFile: o.authFile },
      caFiles: o.caFiles,
      ...(o.certDir ? { certDirs: [o.certDir] } : {}),
      connections: Math.max(8, (o.parallel ?? 10) + 4),
      retry: o.retry,
    },
    journal,
  );
  const srcInsecure = o.srcTlsVerify === false;
  const engine = new CopyEngine({ parallel: o.parallel, arches: o.arches, journal, progress });

  const destPrefix = dest.transport === 'docker-prefix' ? dest.prefix : '';
  let destEndpoint: Endpoint;
  let layout: OciLayout | undefined;
  if (mode === 'mirrorToDisk') {
    layout = await OciLayout.open(join(workspace, 'layout'));
    destEndpoint = new LayoutEndpoint(layout);
  } else if (dest.transport === 'oci') {
    destEndpoint = new LayoutEndpoint(await OciLayout.open(resolve(dest.path)));
  } else {
    if (dest.transport !== 'docker-prefix')
      throw usageError('LOCATION_INVALID', `unsupported destination ${o.destination}`);
    destEndpoint = pool.get(dest.registry, 'destination', o.destTlsVerify === false);
  }
  const destRepo = (e: PlanEntry) => joinRepo(destPrefix, e.destRepo);

  try {
    let plan: MirrorPlan;
    let sourceLayout: OciLayout | undefined;
    if (mode === 'diskToMirror') {
      const { unpackArchive, ARCHIVE_PLAN } = await import('./archive/archive.js'); // tar loads only for archives
      const archiveDir = fileDir('--from', o.from!);
      sourceLayout = await OciLayout.open(join(workspace, 'layout'));
      progress({ type: 'phase', name: 'unpack', detail: archiveDir });
      await unpackArchive(archiveDir, sourceLayout, progress);
      const planPath = join(sourceLayout.dir, ARCHIVE_PLAN);
      plan = parsePlan(await readText(planPath), planPath);
    } else if (givenPlan) {
      plan = givenPlan;
    } else {
      plan = await resolvePlan({
        configPath: resolve(o.config!),
        config: cfg!,
        workspace,
        client: (registry) => pool.get(registry, 'source', srcInsecure).client,
        endpoint: (registry) => pool.get(registry, 'source', srcInsecure),
        copy: (pairs) => engine.run(pairs),
        graphUrl: o.graphUrl,
        graphTls: {
          caFiles: o.caFiles,
          ...(o.certDir ? { certDirs: [o.certDir] } : {}),
          insecureSkipVerify: srcInsecure,
        },
        ...(o.graphBaseImage ? { graphBaseImage: o.graphBaseImage } : {}),
        progress,
      });
    }
    for (const b of plan.blocked)
      progress({ type: 'warning', message: `${b.origin} is blocked by "${b.pattern}"; not mirrored` });
    for (const w of plan.warnings) progress({ type: 'warning', message: w });
    const planText = JSON.stringify(plan, null, 2);
    await writeFileAtomic(join(workspace, 'plan.json'), planText);

    const report = reportOf(mode, o, workspace, plan, (e) => destEndpoint.display(destRepo(e), e.destTag));
    const build =
      plan.buildLayout && mode !== 'diskToMirror' ? await OciLayout.open(plan.buildLayout) : undefined;
    const pairs: CopyPair[] = plan.images.map((e) => {
      let source: CopyPair['source'];
      if (sourceLayout) {
        source = { endpoint: new LayoutEndpoint(sourceLayout), repo: e.destRepo, ref: e.digest || e.destTag };
      } else if (e.source.startsWith(BUILD_SOURCE)) {
        if (!build)
          throw new AirgapError('PLAN_INVALID', `${e.origin} was built, but the plan names no build layout`);
        source = {
          endpoint: new LayoutEndpoint(build),
          repo: e.source.slice(BUILD_SOURCE.length),
          ref: e.digest,
        };
      } else {
        // An entry the plan could not pin is tried by its tag: it fails (or, if the registry is
        // back, copies) like any other image, on its own.
        const r = parseReference(e.source);
        source = {
          endpoint: pool.get(r.registry, 'source', srcInsecure),
          repo: r.repository,
          ref: e.digest || (r.tag ?? 'latest'),
        };
      }
      return {
        source,
        dest: { endpoint: destEndpoint, repo: destRepo(e), ref: e.destTag },
        ...(e.digest ? { digest: e.digest } : {}),
      };
    });
    if (o.dryRun) {
      // A plan to inspect: the pairs, what they weigh, and what the destination already holds.
      progress({ type: 'phase', name: 'measure', detail: `${pairs.length} images` });
      const { measurePairs } = await import('./copy/measure.js');
      report.measure = await measurePairs(pairs, { arches: o.arches });
      report.measure.images.forEach((m, i) => {
        const entry = report.plan[i]!;
        entry.bytes = m.bytes;
        entry.present = m.present;
        if (m.error) entry.error = m.error;
      });
      await writeFileAtomic(
        join(workspace, 'dry-run', 'mapping.txt'),
        report.plan.map((p) => `${p.source}=${p.destination}`).join('\n') + '\n',
      );
      await writeFileAtomic(join(workspace, 'dry-run', 'plan-report.json'), JSON.stringify(report, null, 2));
      return report;
    }
    progress({ type: 'phase', name: 'copy', detail: `${pairs.length} images` });
    report.summary = await engine.run(pairs);

    if (dest.transport === 'docker-prefix') {
      // What the cluster needs to pull through the mirror: IDMS/ITMS, catalogs, UpdateService, registries.conf.
      const templates = new Map<string, PlanCatalog>();
      for (const c of plan.catalogs) templates.set(`${c.destRepo}:${c.destTag}`, c);
      const mirrored: MirroredImage[] = [];
      for (const [n, r] of report.summary.images.entries()) {
        const e = plan.images[n]!;
        if (r.status === 'failed' || !r.digest) continue;
        const template = templates.get(`${e.destRepo}:${e.destTag}`)?.catalogSourceTemplate;
        mirrored.push({
          source:
            e.kind === 'graph'
              ? parseReference(`${dest.registry}/${destRepo(e)}:latest`)
              : parseReference(e.origin),
          destination: {
            registry: dest.registry,
            repository: destRepo(e),
            tag: e.destTag,
            // Catalogs are published by tag (CatalogSource/ClusterCatalog follow the tag's updates).
            ...(e.kind === 'catalog' ? {} : { digest: r.digest }),
          },
          category: categoryOf(e.kind),
          byDigest: e.byDigest,
          byTag: e.byTag,
          ...(e.kind === 'catalog' && template
            ? { catalogSourceTemplate: await catalogTemplate(template) }
            : {}),
        });
      }
      const { writeClusterResources } = await import('./outputs/index.js');
      report.clusterResources = await writeClusterResources(join(workspace, 'cluster-resources'), mirrored, {
        version: AIRGAP_VERSION,
      });
    }

    if (mode === 'mirrorToDisk' && layout) {
      const { packArchive, readHistory, writeHistory } = await import('./archive/archive.js');
      const outDir = resolve((dest as { path: string }).path);
      const historyPath = join(workspace, 'archive-history.txt');
      const history = await readHistory(historyPath);
      const maxPart = o.archiveSize ?? (cfg?.archiveSize ?? 500) * GiB;
      const archive = await packArchive(layout, outDir, {
        maxPartBytes: maxPart,
        history,
        progress,
        plan: { text: planText, config: plan.config.sha256 },
      });
      await writeHistory(
        historyPath,
        history,
        archive.parts.flatMap((p) => p.blobs),
      );
      report.archive = {
        dir: outDir,
        parts: archive.parts,
        previouslyArchived: archive.previouslyArchived.length,
      };
    }
    await writeFileAtomic(join(workspace, 'last-run.json'), JSON.stringify(report, null, 2));
    return report;
  } finally {
    await pool.close();
    await unlock();
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw usageError('FILE_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`, {
      hint: 'check the path',
    });
  }
}
