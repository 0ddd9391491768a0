/**
 * The flags `airgap mirror` and `airgap mirror plan` share, and turning them into MirrorOptions;
 * the progress display the mirror commands share. oclif-specific, so it lives beside the base
 * command rather than in src/mirror. The arguments themselves (destination, --from, --workspace)
 * are passed on as written: src/mirror/location.ts parses them, in the run's order of checks.
 */
import { Flags } from '@oclif/core';
import type { MirrorOptions } from '../mirror/index.js';
import { usageError, CommonError } from '../util/errors.js';
import { formatBytes, renderProgress, type ProgressSink } from '../util/progress.js';
import { REPEATABLE } from './command.js';

/** `4` (GiB, like archiveSize), `500M`, `2G`, `100K`. */
function parseSize(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B?)?$/i.exec(v.trim());
  if (!m) {
    throw usageError(CommonError.FLAG_INVALID, `--archive-size "${v}" is not a size`, {
      hint: 'give GiB as a number (4), or a number with K, M, G or T (500M)',
    });
  }
  const unit = (m[2] ?? 'G').toUpperCase()[0] as 'K' | 'M' | 'G' | 'T';
  const mult = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[unit];
  const n = Math.floor(Number(m[1]) * mult);
  if (n <= 0) throw usageError(CommonError.FLAG_INVALID, '--archive-size must be more than 0');
  return n;
}

/** `--inventory`, for `airgap mirror` and `mirror plan`: the far side's inventory. */
export const inventoryFlag = Flags.string({
  description:
    'Mirror → disk: an inventory of the disconnected registry (written there by `airgap mirror inventory`); the archive leaves out every blob it lists at the same size, and records which inventory it was cut against. Combines with the workspace history and --since.',
});

/** `--since`: a day (`2026-11-01`, midnight UTC) or an RFC 3339 time. */
function parseSince(v: string): Date {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v.trim());
  const time = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v.trim());
  const d = day
    ? new Date(Date.UTC(+day[1]!, +day[2]! - 1, +day[3]!))
    : time
      ? new Date(v.trim())
      : undefined;
  // A day that does not exist (2026-02-30) rolls over in Date.UTC: compare it back.
  const real = d && !Number.isNaN(d.getTime()) && (!day || d.toISOString().startsWith(v.trim()));
  if (!real) {
    throw usageError(CommonError.FLAG_INVALID, `--since "${v}" is not a date`, {
      hint: 'give a day as yyyy-mm-dd (2026-11-01), or an RFC 3339 time (2026-11-01T08:00:00Z)',
    });
  }
  return d!;
}

/**
 * A repeatable flag's default from the environment: a ":"-separated list, as PATH is (oclif's own
 * `env` gives a repeatable flag one string, not a list).
 */
export function listFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const list = (env[name] ?? '').split(':').filter(Boolean);
  return list.length > 0 ? list : undefined;
}

export function tlsFlag(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw usageError(CommonError.FLAG_INVALID, `--${name} takes true or false, got "${v}"`);
}

export const mirrorFlags = {
  config: Flags.string({
    char: 'c',
    description:
      'ImageSetConfiguration file (mirror.openshift.io/v2alpha1). Write one with `airgap mirror init`.',
  }),
  from: Flags.string({ description: 'file://dir holding an archive written by a mirror-to-disk run.' }),
  workspace: Flags.string({
    description:
      'file://dir for the plan, journal, built catalogs and outputs of a registry-to-registry run.',
    env: 'AIRGAP_WORKSPACE',
  }),
  authfile: Flags.string({
    description:
      'Auth file (containers auth.json or docker config.json) to use first. Default: REGISTRY_AUTH_FILE, then the containers and docker files.',
  }),
  'ca-file': Flags.string({
    description:
      'PEM CA to trust for registries and the update service, besides the system store and certs.d (repeatable). Default: the files AIRGAP_CA_FILE lists, separated by ":".',
    ...REPEATABLE,
  }),
  'cert-dir': Flags.string({
    description: 'Directory laid out like /etc/containers/certs.d (<host:port>/ca.crt).',
    env: 'AIRGAP_CERT_DIR',
  }),
  'src-tls-verify': Flags.string({
    description: "Verify source registries' TLS certificates.",
    options: ['true', 'false'],
  }),
  'dest-tls-verify': Flags.string({
    description: "Verify the destination registry's TLS certificate.",
    options: ['true', 'false'],
  }),
  arch: Flags.string({
    description: 'Copy only these architectures of multi-arch images (repeatable).',
    ...REPEATABLE,
  }),
  parallel: Flags.integer({
    description: 'Blob transfers in flight at once, across all images (and source reads while planning).',
    default: 10,
    env: 'AIRGAP_PARALLEL',
    min: 1,
    max: 64,
  }),
  'registries-conf': Flags.string({
    description:
      "containers-registries.conf(5) file whose [[registry]] mirrors and locations source images are read through (an enclave reading from an intermediate registry). Default: $CONTAINERS_REGISTRIES_CONF, else ~/.config/containers/registries.conf, else /etc/containers/registries.conf and its registries.conf.d, as podman reads them. The plan and cluster resources keep the images' own names.",
  }),
  'max-nested-paths': Flags.integer({
    description:
      'Most path components a destination repository may have (Quay: 2 in an organization); deeper names are flattened as oc-mirror does (the last ones joined with -), and the IDMS/ITMS map each source repository to its flattened name. 0: no limit.',
    default: 0,
    min: 0,
    max: 64,
  }),
  'retry-times': Flags.integer({
    description: 'Retries per request after a network error, 5xx or 429.',
    default: 5,
    min: 0,
    max: 20,
  }),
  'stall-timeout': Flags.integer({
    description:
      'Seconds a registry may send nothing (no connection, no answer, no next bytes) before the request stalls; a blob read below 1 KiB/s over this long stalls too. Three stalls in a row and the registry is given up for the run (its images fail, the others go on).',
    default: 60,
    env: 'AIRGAP_STALL_TIMEOUT',
    min: 1,
    max: 3600,
  }),
  'graph-url': Flags.string({
    description:
      'OpenShift update service graph endpoint. Default: $UPDATE_URL_OVERRIDE, else https://api.openshift.com/api/upgrades_info/v1/graph.',
  }),
  'from-version': Flags.string({
    description:
      'The version the cluster to update runs (x.y.z), e.g. a hosted cluster: the releases on the update path the graph recommends from it to the newest release selected are mirrored too, and conditional updates on the way are shown with their risks.',
  }),
  'graph-base-image': Flags.string({
    description:
      'Base image of the update-graph data image (platform.graph). Default: registry.access.redhat.com/ubi9/ubi:latest.',
  }),
  'remove-signatures': Flags.boolean({
    description:
      'Do not look up or copy Sigstore signatures (sha256-<hex>.sig). Clusters of OpenShift 4.21 and later verify the release signature: keep them for those.',
  }),
  'signature-url': Flags.string({
    description:
      'Release signature store (<url>/sha256=<hex>/signature-<n>). Default: $OCP_SIGNATURE_URL, else https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release.',
  }),
  'release-keyring': Flags.string({
    description:
      'OpenPGP public keys that release signatures must verify with (repeatable; armored or binary). Default: the files AIRGAP_RELEASE_KEYRING lists (":"-separated), else the Red Hat keys the system installed (/etc/pki/rpm-gpg/RPM-GPG-KEY-redhat-release on RHEL, package redhat-release; AIRGAP_SYSTEM_RELEASE_KEYRING names other files). Without a key, release signatures are not verified and none are written.',
    ...REPEATABLE,
  }),
  'secure-policy': Flags.boolean({
    description:
      'Verify every image against containers-policy.json (--policy) before mirroring it; an image the policy refuses is not mirrored and is reported with why.',
  }),
  policy: Flags.string({
    description: 'containers-policy.json for --secure-policy. Default: /etc/containers/policy.json.',
    dependsOn: ['secure-policy'],
  }),
  'registries.d': Flags.string({
    description:
      "containers-registries.d(5) directory for --secure-policy: where images the policy wants signedBy have their GPG signatures (each namespace's lookaside, http(s) or file). Default: ~/.config/containers/registries.d, else /etc/containers/registries.d.",
    dependsOn: ['secure-policy'],
  }),
  dependencies: Flags.boolean({
    description:
      "Follow the kept operator bundles' dependencies (olm.package.required, olm.gvk.required) through the same catalog and mirror what they need, as OLM would install it. --no-dependencies mirrors only the listed packages, as oc-mirror v2 does.",
    default: true,
    allowNo: true,
  }),
  json: Flags.boolean({ description: 'Print the report as JSON on stdout (one entry per image).' }),
};

/** The flags above (and `airgap mirror`'s own: --plan, --archive-size, --dry-run) as MirrorOptions. */
export function mirrorOptions(
  flags: {
    config?: string;
    from?: string;
    workspace?: string;
    authfile?: string;
    'ca-file'?: string[];
    'cert-dir'?: string;
    'src-tls-verify'?: string;
    'dest-tls-verify'?: string;
    arch?: string[];
    parallel: number;
    'max-nested-paths'?: number;
    'retry-times': number;
    'stall-timeout': number;
    'graph-url'?: string;
    'from-version'?: string;
    'graph-base-image'?: string;
    plan?: string;
    'archive-size'?: string;
    since?: string;
    inventory?: string;
    'dry-run'?: boolean;
    'remove-signatures'?: boolean;
    'signature-url'?: string;
    'release-keyring'?: string[];
    'secure-policy'?: boolean;
    policy?: string;
    'registries.d'?: string;
    'registries-conf'?: string;
    dependencies?: boolean;
  },
  destination: string,
): MirrorOptions {
  return {
    config: flags.config,
    destination,
    from: flags.from,
    workspace: flags.workspace,
    authFile: flags.authfile,
    caFiles: flags['ca-file'] ?? listFromEnv('AIRGAP_CA_FILE'),
    certDir: flags['cert-dir'],
    srcTlsVerify: tlsFlag('src-tls-verify', flags['src-tls-verify']),
    destTlsVerify: tlsFlag('dest-tls-verify', flags['dest-tls-verify']),
    arches: flags.arch,
    parallel: flags.parallel,
    maxNestedPaths: flags['max-nested-paths'] || undefined,
    retry: { attempts: flags['retry-times'] + 1 },
    stallTimeoutMs: flags['stall-timeout'] * 1000,
    graphUrl: flags['graph-url'],
    fromVersion: flags['from-version'],
    graphBaseImage: flags['graph-base-image'],
    plan: flags.plan,
    archiveSize: flags['archive-size'] ? parseSize(flags['archive-size']) : undefined,
    since: flags.since ? parseSince(flags.since) : undefined,
    inventory: flags.inventory,
    dryRun: flags['dry-run'],
    removeSignatures: flags['remove-signatures'],
    signatureUrl: flags['signature-url'],
    releaseKeyring: flags['release-keyring'] ?? listFromEnv('AIRGAP_RELEASE_KEYRING'),
    systemReleaseKeyring: listFromEnv('AIRGAP_SYSTEM_RELEASE_KEYRING'),
    securePolicy: flags['secure-policy'],
    policy: flags.policy,
    registriesD: flags['registries.d'],
    registriesConf: flags['registries-conf'],
    dependencies: flags.dependencies,
  };
}

/**
 * Run `fn` with progress drawn on stderr, stopped when it ends. With --json it is a plain line
 * every 10 s: stdout stays one JSON document. Ctrl-C (or SIGTERM) ends the run with one line: what
 * was done, and what running the command again does (`again`); exit code 130.
 */
export async function withProgress<T>(
  json: boolean | undefined,
  fn: (progress: ProgressSink) => Promise<T>,
  again = 'run the same command again: it resumes where this one stopped',
): Promise<T> {
  const progress = renderProgress(process.stderr, json ? { tty: false, intervalMs: 10_000 } : {});
  const interrupted = (signal: NodeJS.Signals) => {
    progress.stop();
    const s = progress.state;
    const images = s.itemsTotal > 0 ? `${s.itemsDone} of ${s.itemsTotal} images done, ` : '';
    process.stderr.write(`interrupted (${signal}): ${images}${formatBytes(s.bytesDone)} moved; ${again}\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return await fn(progress.sink);
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    progress.stop();
  }
}
