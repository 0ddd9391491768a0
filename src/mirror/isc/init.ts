/**
 * `airgap mirror init`: an ImageSetConfiguration (mirror.openshift.io/v2alpha1) from a few choices,
 * written the way a person writes one (defaults and empty fields left out, oc-mirror's key order).
 * Every value is checked (init-flags.ts), so a file this writes always reads back with
 * `parseImageSetConfig` (parse.ts). The builder is here, in named steps: the release channels, the
 * platform, the operators; what it knows about Red Hat's content is in init-presets.ts, and the
 * YAML text, summary and file in init-output.ts.
 */
import {
  checkPlatformFlags,
  checkReleaseFlags,
  flagMissing,
  label,
  minorOfCatalog,
  minorOfRelease,
  parseInitFlags,
  type InitFlags,
} from './init-flags.js';
import { HOSTED_AGENT_PACKAGES, odfNote, odfPackages, redHatOperatorIndex } from './init-presets.js';
import type {
  InitChannel,
  InitImageSetConfig,
  InitOperator,
  InitOptions,
  InitPlatform,
  InitResult,
} from './init-types.js';
import type { SemVer } from './semver.js';
import { checkChannelsInGraph } from '../openshift/graph-channels.js';
import { ISC_API_VERSION, ISC_KIND } from './types.js';

export { HOSTED_AGENT_PACKAGES, PRESETS } from './init-presets.js';
export type * from './init-types.js';
export { renderImageSetConfig, summarizeImageSetConfig, writeImageSetConfigFile } from './init-output.js';

/** An OpenShift minor, and which flag it came from (for messages). */
interface Minor {
  major: number;
  minor: number;
  from: string;
}

/**
 * The release channels: --channel, else the one --version implies (stable, or candidate for a
 * prerelease such as 4.19.0-rc.2, which stable never carries), each with its version bounds.
 */
function releaseChannels(opts: InitOptions, flags: InitFlags): InitChannel[] {
  const { target, channels: channelArgs, min, max, release } = flags;
  let channelNames = channelArgs.map((c) => c.name);
  if (channelNames.length === 0 && target && release === undefined) {
    const kind = target.semver && target.semver.prerelease.length > 0 ? 'candidate' : 'stable';
    channelNames = [`${kind}-${label(target)}`];
  }
  const pinned = target?.semver?.raw;
  // With channels of several minors (an upgrade path, stable-4.17 + stable-4.18), each bound goes
  // on the channels of its own minor, as oc-mirror's examples write it: the minimum on the old
  // channel, the maximum on the new one, and oc-mirror adds the path between them. A bound whose
  // minor has no channel (or one minor for all) applies to every channel.
  const boundFor = (bound: SemVer | undefined, name: string): string | undefined => {
    if (!bound) return pinned;
    const own = channelArgs.filter((c) => c.major === bound.major && c.minor === bound.minor);
    return own.length === 0 || own.some((c) => c.name === name) ? bound.raw : undefined;
  };
  return channelNames.map((name) => ({
    name,
    minVersion: boundFor(min, name),
    maxVersion: boundFor(max, name),
    shortestPath: opts.shortestPath || undefined,
    full: opts.full || undefined,
  }));
}

/** `mirror.platform`: the releases, their architectures, graph and KubeVirt disk; none without a release. */
function platformOf(opts: InitOptions, flags: InitFlags): InitPlatform | undefined {
  const channels = releaseChannels(opts, flags);
  const { arches, release } = flags;
  const hasPlatform = channels.length > 0 || release !== undefined;
  const graph = opts.graph ?? opts.preset === 'hosted-agent';
  checkPlatformFlags(opts, flags, hasPlatform);
  if (!hasPlatform) return undefined;
  return {
    // oc-mirror's default is amd64 too; writing it says which payload this set carries.
    architectures: arches.length > 0 ? arches : channels.length > 0 ? ['amd64'] : undefined,
    channels: channels.length > 0 ? channels : undefined,
    release,
    graph: graph || undefined,
    kubeVirtContainer: opts.kubeVirtContainer || undefined,
  };
}

/** The OpenShift minor the operators are for: what the person said most directly, first. */
function operatorMinor(opts: InitOptions, flags: InitFlags): Minor | undefined {
  const { target, max, min, release, catalog } = flags;
  const highestChannel = [...flags.channels].sort((a, b) => b.major - a.major || b.minor - a.minor)[0];
  const releaseMinor = release !== undefined ? minorOfRelease(release) : undefined;
  const catalogMinor = catalog !== undefined ? minorOfCatalog(catalog) : undefined;
  const candidates: (Minor | undefined)[] = [
    target && { major: target.major, minor: target.minor, from: `--version ${opts.version?.trim()}` },
    max && { major: max.major, minor: max.minor, from: `--max-version ${max.raw}` },
    highestChannel && { ...highestChannel, from: `--channel ${highestChannel.name}` },
    min && { major: min.major, minor: min.minor, from: `--min-version ${min.raw}` },
    releaseMinor && { ...releaseMinor, from: `--release ${release}` },
    catalogMinor && { ...catalogMinor, from: `--catalog ${catalog}` },
  ];
  return candidates.find((c) => c !== undefined);
}

/** The packages to mirror (name → channels): the preset's, ODF's for the minor, then --package. */
function operatorPackages(
  opts: InitOptions,
  flags: InitFlags,
  minor: Minor | undefined,
  notes: string[],
): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const addPackage = (name: string, channel?: string) => {
    const chs = packages.get(name) ?? [];
    if (channel !== undefined && !chs.includes(channel)) chs.push(channel);
    packages.set(name, chs);
  };
  if (opts.preset === 'hosted-agent') for (const p of HOSTED_AGENT_PACKAGES) addPackage(p.name);
  if (opts.withOdf) {
    if (!minor) {
      throw flagMissing(
        'version',
        '--with-odf needs the OpenShift minor, because the ODF packages differ between minors',
        'add --version 4.18 (or a --catalog tagged :v4.18)',
      );
    }
    for (const p of odfPackages(minor.major, minor.minor)) addPackage(p);
    const note = odfNote(minor.major, minor.minor);
    if (note !== undefined) notes.push(note);
  }
  for (const p of flags.packages) addPackage(p.name, p.channel);
  return packages;
}

/** `mirror.operators`: one catalog (--catalog, else Red Hat's of the minor) and its packages. */
function operatorsOf(opts: InitOptions, flags: InitFlags, notes: string[]): InitOperator[] | undefined {
  const minor = operatorMinor(opts, flags);
  const packages = operatorPackages(opts, flags, minor, notes);
  let catalog = flags.catalog;
  if (catalog === undefined && packages.size > 0) {
    if (!minor) {
      throw flagMissing(
        'catalog',
        'the operator packages need a catalog, and neither --catalog nor an OpenShift version is given',
        'add --catalog <image> or --version 4.18 (which picks registry.redhat.io/redhat/redhat-operator-index:v4.18)',
      );
    }
    catalog = redHatOperatorIndex(minor.major, minor.minor);
  }
  const catalogMinor = flags.catalog !== undefined ? minorOfCatalog(flags.catalog) : undefined;
  if (catalogMinor && minor && label(catalogMinor) !== label(minor)) {
    notes.push(
      `--catalog ${flags.catalog} is tagged for OpenShift ${label(catalogMinor)}, and ${minor.from} is ${label(minor)}; ` +
        "operators from another minor's catalog may not install",
    );
  }
  if (catalog === undefined) return undefined;
  if (packages.size === 0) {
    notes.push(
      `no --package given: every package of ${catalog} is mirrored (the head of every channel); that is a lot of data`,
    );
  }
  const list = [...packages].map(([name, chs]) => ({
    name,
    channels: chs.length > 0 ? chs.map((c) => ({ name: c })) : undefined,
  }));
  return [{ catalog, packages: list.length > 0 ? list : undefined }];
}

/**
 * Check the options and build the configuration. Throws a usage error (exit code 2) naming the
 * flag and how to fix it.
 */
export function initImageSetConfig(opts: InitOptions): InitResult {
  const flags = parseInitFlags(opts);
  checkReleaseFlags(opts, flags);
  const platform = platformOf(opts, flags);
  const notes: string[] = [];
  const operators = operatorsOf(opts, flags, notes);
  const { images } = flags;
  if (!platform && !operators && images.length === 0) {
    throw flagMissing(
      'version',
      'nothing to mirror: no release, operator or image is selected',
      'add --preset hosted-agent --version 4.18, or any of --version, --channel, --release, --package, --catalog, --image',
    );
  }
  const config: InitImageSetConfig = {
    kind: ISC_KIND,
    apiVersion: ISC_API_VERSION,
    archiveSize: flags.archiveSize,
    mirror: {
      platform,
      operators,
      additionalImages: images.length > 0 ? images.map((name) => ({ name })) : undefined,
    },
  };
  return { config: stripUndefined(config), notes };
}

/** Whether and where `init` asks the update graph about the channels it writes. */
export interface InitGraphCheck {
  /** Do not ask (no network on this side). */
  offline?: boolean;
  /** The graph endpoint; default UPDATE_URL_OVERRIDE, else api.openshift.com. */
  graphUrl?: string;
}

/**
 * {@link initImageSetConfig}, then each release channel it writes asked of the update graph (when
 * one answers): an unknown channel is an error that names the ones the graph has.
 */
export async function initImageSetConfigChecked(
  opts: InitOptions,
  check: InitGraphCheck = {},
): Promise<InitResult> {
  const result = initImageSetConfig(opts);
  const platform = result.config.mirror.platform;
  const channels = (platform?.channels ?? []).map((c) => c.name);
  if (check.offline || channels.length === 0) return result;
  const arches = platform?.architectures ?? ['amd64'];
  const notes = await checkChannelsInGraph(channels, arches, { graphUrl: check.graphUrl });
  return { ...result, notes: [...result.notes, ...notes] };
}

/** {@link initImageSetConfig} without the notes. */
export function buildImageSetConfig(opts: InitOptions): InitImageSetConfig {
  return initImageSetConfig(opts).config;
}

/** A copy without undefined fields, so JSON, YAML and deep equality all see the same object. */
function stripUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(stripUndefined) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = stripUndefined(v);
    return out as T;
  }
  return value;
}
