/**
 * What a mirror run mirrors, read and checked before anything is locked, unpacked or copied: the
 * ImageSetConfiguration (refused, with its position, where this release cannot mirror it yet), a
 * plan file written by `airgap mirror plan`, or, for disk → mirror, the plan an archive carries
 * (checked against the configuration when one is given); and, for a configuration with releases,
 * the keys their signatures are verified with.
 */
import { readFile } from 'node:fs/promises';
import { usageError, CommonError } from '../util/errors.js';
import type { ProgressSink } from '../util/progress.js';
import { describeUnsupported, IscErrorCode, ISC_KIND, loadImageSetConfig } from './isc/index.js';
import type { ImageSetConfig } from './isc/index.js';
import { parsePlan, type MirrorPlan } from './plan.js';
import { configDigest } from './resolve.js';
import type { Workflow } from './workflow.js';
import { MirrorError } from './errors.js';
import { loadRegistriesConf, type RegistriesConf } from './registry/registries-conf.js';
import { findReleaseKeyring, NO_RELEASE_KEY, type Keyring } from './signatures/keys.js';

/** What a run was told to mirror: a configuration to resolve, or a plan to replay. */
export interface RunInputs {
  config?: ImageSetConfig;
  plan?: MirrorPlan;
  /** Where source images are really read from (registries.conf), for runs that read registries. */
  registries?: RegistriesConf;
  /**
   * The keys release signatures are verified with, when the configuration is resolved and names
   * releases; `none` when there are none (said then). See SignatureOptions.releaseKeyring.
   */
  releaseKeyring?: Keyring | 'none';
}

/** Where a run's release keys come from (findReleaseKeyring), and where it says it has none. */
export interface ReleaseKeyOptions {
  /** --release-keyring (else AIRGAP_RELEASE_KEYRING): files that must each hold a key. */
  files?: string[];
  /** Where the system's keys are looked for (default SYSTEM_RELEASE_KEYRINGS). */
  systemFiles?: string[];
  progress: ProgressSink;
}

/**
 * Read -c and --plan for a run. A disk → mirror run reads its plan from the archive later, and
 * only checks here that the archive carries one made from -c (when -c is given). With
 * `releaseKeys`, a configuration that will be resolved and names releases has its release keys
 * found here, before anything is fetched: a keyring given but unreadable stops the run (exit 2),
 * and a run with none says so once.
 */
export async function readRunInputs(
  flow: Workflow,
  o: { config?: string; plan?: string; registriesConf?: string; releaseKeys?: ReleaseKeyOptions },
): Promise<RunInputs> {
  // Check an archive against the configuration before anything is unpacked or pushed.
  if (flow.mode === 'diskToMirror') await checkArchivePlan(flow.archiveDir!, o.config);
  const config = o.config && flow.mode !== 'diskToMirror' ? await loadMirrorConfig(o.config) : undefined;
  const plan = o.plan ? await readPlanFile(o.plan) : undefined;
  // Disk → mirror reads the archive, not a registry: no redirect applies.
  const registries =
    flow.mode === 'diskToMirror' ? undefined : await loadRegistriesConf({ path: o.registriesConf });
  // A plan (given, or an archive's) carries its verified signatures: only a resolve needs keys.
  const releaseKeyring =
    config && !plan && o.releaseKeys && namesReleases(config)
      ? await releaseKeysOf(o.releaseKeys)
      : undefined;
  return {
    ...(config ? { config } : {}),
    ...(plan ? { plan } : {}),
    ...(registries && registries.tables.length > 0 ? { registries } : {}),
    ...(releaseKeyring ? { releaseKeyring } : {}),
  };
}

function namesReleases(config: ImageSetConfig): boolean {
  const platform = config.mirror.platform;
  return !!platform && (platform.channels.length > 0 || !!platform.release);
}

async function releaseKeysOf(o: ReleaseKeyOptions): Promise<Keyring | 'none'> {
  const keyring = await findReleaseKeyring({ files: o.files, systemFiles: o.systemFiles });
  if (keyring) return keyring;
  o.progress({ type: 'warning', message: NO_RELEASE_KEY });
  return 'none';
}

/** Load the ImageSetConfiguration and refuse, with its position, any content this release cannot mirror yet. */
async function loadMirrorConfig(path: string): Promise<ImageSetConfig> {
  // The kind is checked before any field: a DeleteImageSetConfiguration is named as such, not
  // reported for a problem inside it.
  const cfg = await loadImageSetConfig(path, { kind: ISC_KIND });
  const unsupported = describeUnsupported(cfg, [
    'mirror.platform',
    'mirror.operators',
    'mirror.additionalImages',
    'mirror.blockedImages',
    'mirror.helm',
    'archiveSize',
  ]);
  if (unsupported.length > 0) {
    // One field: its place is the error's `where`. Several: each line names its own.
    const lines = unsupported.map((u) =>
      unsupported.length === 1
        ? `${u.path} is not supported yet`
        : `${u.path} (${u.where}) is not supported yet`,
    );
    throw usageError(IscErrorCode.Unsupported, lines.join('\n'), {
      // Each position once: several lines name their own.
      ...(unsupported.length === 1 ? { where: unsupported[0]!.where } : {}),
      hint: 'remove these fields: samples are not mirrored (oc-mirror v2 does not mirror them either)',
    });
  }
  return cfg;
}

/** Check that an archive carries a plan, made from the given configuration when one is given. */
async function checkArchivePlan(archiveDir: string, configPath: string | undefined): Promise<void> {
  const { readArchiveManifest } = await import('./archive/archive.js');
  const manifest = await readArchiveManifest(archiveDir);
  if (!manifest.plan) {
    throw usageError(MirrorError.ARCHIVE_NO_PLAN, `the archive in ${archiveDir} carries no plan`, {
      hint: 'it was written by an older airgap; write it again with `airgap mirror -c <isc> file://<dir>`',
    });
  }
  if (configPath) {
    const cfg = await loadMirrorConfig(configPath);
    if (configDigest(cfg) !== manifest.plan.config) {
      throw usageError(
        MirrorError.ARCHIVE_PLAN_MISMATCH,
        `the archive in ${archiveDir} was made from a different ImageSetConfiguration than ${configPath}`,
        {
          hint: 'give the configuration the archive was made with (or leave out -c: the archive carries its plan), or make a new archive from this configuration',
        },
      );
    }
  }
}

/** A plan file: FILE_UNREADABLE if it cannot be read, PLAN_INVALID if it is not a plan. */
export async function readPlanFile(path: string): Promise<MirrorPlan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(CommonError.FILE_UNREADABLE, `cannot read ${path}: ${(e as Error).message}`, {
      hint: 'check the path',
    });
  }
  return parsePlan(text, path);
}
