/**
 * What every run over a workspace and a destination shares (`airgap mirror`, `mirror plan`,
 * `mirror check`, `mirror delete`): the options, the session (journal, registry clients with the
 * registries.conf redirect, copy engine), the destination opened after one preflight request, the
 * plan resolved from the configuration, and each plan entry paired with where its bytes are.
 */
import { join, resolve } from 'node:path';
import { AirgapError, isAirgapError, usageError } from '../util/errors.js';
import { noProgress, type ProgressSink } from '../util/progress.js';
import { CopyEngine, type CopyPair } from './copy/engine.js';
import { LayoutEndpoint, type Endpoint, type RegistryEndpoint } from './copy/endpoints.js';
import { Journal } from './copy/journal.js';
import { ClientPool } from './copy/pool.js';
import type { RunInputs } from './inputs.js';
import { OciLayout } from './layout/store.js';
import { BUILD_SOURCE, flattenRepo, joinRepo, type MirrorPlan, type PlanEntry } from './plan.js';
import { parseReference } from './reference.js';
import type { RegistryClientOptions } from './registry/client.js';
import { ReadRedirect } from './registry/redirect.js';
import { resolvePlan } from './resolve.js';
import type { Workflow } from './workflow.js';
import { MirrorError } from './errors.js';

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
  /**
   * Mirror → disk: an inventory of the far side (`airgap mirror inventory`); the blobs it lists are
   * left out of the archive (--inventory).
   */
  inventory?: string;
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
  /**
   * OpenPGP keyring files for release signatures (--release-keyring, else AIRGAP_RELEASE_KEYRING);
   * each must hold a key. Default: the keys installed on the system (systemReleaseKeyring).
   */
  releaseKeyring?: string[];
  /**
   * Where the system's release keys are looked for when no keyring is given; a file that does not
   * exist is skipped. Default SYSTEM_RELEASE_KEYRINGS (RHEL's); the CLI reads
   * AIRGAP_SYSTEM_RELEASE_KEYRING. Without a key, release signatures are neither verified nor written.
   */
  systemReleaseKeyring?: string[];
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

/** What a run holds open while it works, shared by its steps. */
export interface Session {
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
export interface Target {
  endpoint: Endpoint;
  /** The repository of a plan entry at the destination (below the registry's prefix). */
  repo: (e: PlanEntry) => string;
  /** Mirror → disk: the layout the images are copied into, packed into archive parts in `dir` after. */
  pack?: { layout: OciLayout; dir: string };
}

/** How a run's registry clients reach registries: credentials, trust, retries, stall limit, notices. */
export function clientOptions(o: MirrorOptions): RegistryClientOptions {
  const progress = o.progress ?? noProgress;
  return {
    credentials: { authFile: o.authFile },
    caFiles: o.caFiles,
    ...(o.certDir ? { certDirs: [o.certDir] } : {}),
    connections: Math.max(8, (o.parallel ?? 10) + 4),
    retry: o.retry,
    stallTimeoutMs: o.stallTimeoutMs,
    onNotice: (message) => progress({ type: 'warning', message }),
  };
}

/** The journal (not for dry runs), the registry connections and the copy engine of a run. */
export function openSession(o: MirrorOptions, flow: Workflow, inputs: RunInputs): Session {
  const progress = o.progress ?? noProgress;
  const journal = flow.dryRun ? undefined : new Journal(join(flow.workspace, 'journal.jsonl'));
  const pool = new ClientPool(
    clientOptions(o),
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
export function refuseFlattenedCollisions(plan: MirrorPlan, target: Target, max: number | undefined): void {
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
export async function openTarget(run: Session): Promise<Target> {
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

/** Resolve the ImageSetConfiguration into a plan, reading the sources it names. */
export function resolveConfig(run: Session): Promise<MirrorPlan> {
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
    credentials: { authFile: o.authFile },
    graphTls: {
      caFiles: o.caFiles,
      ...(o.certDir ? { certDirs: [o.certDir] } : {}),
      insecureSkipVerify: srcInsecure,
    },
    ...(o.graphBaseImage ? { graphBaseImage: o.graphBaseImage } : {}),
    signatures: {
      remove: o.removeSignatures,
      storeUrl: o.signatureUrl,
      ...(run.inputs.releaseKeyring ? { releaseKeyring: run.inputs.releaseKeyring } : {}),
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

/** One copy pair per plan entry, in plan order (the report and the summary follow it). */
export async function pairsOf(
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
