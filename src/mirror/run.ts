import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { usageError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';
import { lockDirectory } from '../util/lock.js';
import { noProgress, type ProgressSink } from '../util/progress.js';
import type { ArchiveManifest } from './archive/archive.js';
import { CopyEngine, type CopyPair, type CopySummary } from './copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint, type Endpoint } from './copy/endpoints.js';
import { Journal } from './copy/journal.js';
import { loadImageSetConfig, unsupportedFields } from './isc/index.js';
import type { ImageSetConfig } from './isc/types.js';
import type { MirroredImage } from './outputs/types.js';
import { OciLayout } from './layout/store.js';
import { joinRepo, planAdditionalImages, type BlockedImage, type PlannedImage } from './plan.js';
import { formatReference, parseLocation } from './reference.js';
import { RegistryClient, type RegistryClientOptions } from './registry/client.js';

/** oc-mirror v2's three workflows, plus mirrorToLayout: into a plain OCI layout (`oci:<dir>`), no archive. */
/** Written into generated objects' annotations. */
const AIRGAP_VERSION = '0.1.0';

export type MirrorMode = 'mirrorToMirror' | 'mirrorToDisk' | 'diskToMirror' | 'mirrorToLayout';

export interface MirrorOptions {
  /** Path of the ImageSetConfiguration (-c). */
  config: string;
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
  progress?: ProgressSink;
}

export interface MirrorReport {
  mode: MirrorMode;
  destination: string;
  workspace: string;
  dryRun: boolean;
  blocked: BlockedImage[];
  plan: { source: string; destination: string }[];
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
    'mirror.additionalImages',
    'mirror.blockedImages',
    'archiveSize',
  ]);
  if (unsupported.length > 0) {
    const lines = unsupported.map((u) => `${u.path} (${u.where}) is not supported yet`);
    throw usageError('ISC_UNSUPPORTED', lines.join('\n'), {
      where: unsupported[0]!.where,
      hint: 'this release mirrors mirror.additionalImages (with blockedImages); move releases and operators to a later run',
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

/**
 * One mirror run, in any of oc-mirror v2's three workflows. The ImageSetConfiguration decides what;
 * the destination and --from/--workspace decide where. Returns the report; throws only for usage
 * errors and failures that stop the whole run (a failed image is a result, not an exception).
 */
export async function runMirror(o: MirrorOptions): Promise<MirrorReport> {
  const mode = workflowOf(o);
  const progress = o.progress ?? noProgress;
  const cfg = await loadMirrorConfig(o.config);
  const { images, blocked } = planAdditionalImages(
    cfg.mirror.additionalImages.map((a) => ({
      name: a.name,
      targetRepo: a.targetRepo,
      targetTag: a.targetTag,
    })),
    cfg.mirror.blockedImages,
  );
  for (const b of blocked)
    progress({ type: 'warning', message: `${b.origin} is blocked by "${b.pattern}"; not mirrored` });

  const dest = parseLocation(o.destination, 'destination');
  const workspace =
    dest.transport === 'oci'
      ? join(resolve(dest.path), '.airgap')
      : mode === 'mirrorToDisk'
        ? join(resolve((dest as { path: string }).path), 'working-dir')
        : mode === 'diskToMirror'
          ? join(fileDir('--from', o.from!), 'working-dir')
          : fileDir('--workspace', o.workspace!);
  await mkdir(workspace, { recursive: true });
  const unlock = o.dryRun ? async () => undefined : await lockDirectory(workspace);
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

  const report: MirrorReport = {
    mode,
    destination: o.destination,
    workspace,
    dryRun: Boolean(o.dryRun),
    blocked,
    plan: images.map((i) => ({
      source: formatReference(i.source),
      destination: destEndpoint.display(joinRepo(destPrefix, i.destRepo), i.destTag),
    })),
  };
  try {
    if (o.dryRun) {
      await writeFileAtomic(
        join(workspace, 'dry-run', 'mapping.txt'),
        report.plan.map((p) => `${p.source}=${p.destination}`).join('\n') + '\n',
      );
      return report;
    }
    let pairs: CopyPair[];
    let sourceLayout: OciLayout | undefined;
    if (mode === 'diskToMirror') {
      const { unpackArchive } = await import('./archive/archive.js'); // tar loads only for archives
      const archiveDir = fileDir('--from', o.from!);
      sourceLayout = await OciLayout.open(join(workspace, 'layout'));
      progress({ type: 'phase', name: 'unpack', detail: archiveDir });
      await unpackArchive(archiveDir, sourceLayout, progress);
      const src = new LayoutEndpoint(sourceLayout);
      pairs = images.map((i) => ({
        source: { endpoint: src, repo: i.destRepo, ref: i.destTag },
        dest: { endpoint: destEndpoint, repo: joinRepo(destPrefix, i.destRepo), ref: i.destTag },
        ...(i.source.digest ? { digest: i.source.digest } : {}),
      }));
    } else {
      pairs = images.map((i: PlannedImage) => ({
        source: {
          endpoint: pool.get(i.source.registry, 'source', o.srcTlsVerify === false),
          repo: i.source.repository,
          ref: i.source.digest ?? i.source.tag ?? 'latest',
        },
        dest: { endpoint: destEndpoint, repo: joinRepo(destPrefix, i.destRepo), ref: i.destTag },
        ...(i.source.digest ? { digest: i.source.digest } : {}),
      }));
    }
    progress({ type: 'phase', name: 'copy', detail: `${pairs.length} images` });
    const engine = new CopyEngine({ parallel: o.parallel, arches: o.arches, journal, progress });
    report.summary = await engine.run(pairs);

    if (dest.transport === 'docker-prefix') {
      // What the cluster needs to pull through the mirror: IDMS/ITMS, registries.conf, mapping.
      const mirrored: MirroredImage[] = [];
      report.summary.images.forEach((r, n) => {
        const i = images[n]!;
        if (r.status === 'failed' || !r.digest) return;
        mirrored.push({
          source: i.source,
          destination: {
            registry: dest.registry,
            repository: joinRepo(destPrefix, i.destRepo),
            tag: i.destTag,
            digest: r.digest,
          },
          category: 'generic',
          byDigest: i.source.digest !== undefined,
          byTag: i.source.tag !== undefined,
        });
      });
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
      const maxPart = o.archiveSize ?? (cfg.archiveSize ?? 500) * GiB;
      const archive = await packArchive(layout, outDir, { maxPartBytes: maxPart, history, progress });
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
