/**
 * `airgap mirror init`: an ImageSetConfiguration (mirror.openshift.io/v2alpha1) from a few choices,
 * written the way a person writes one (defaults and empty fields left out, oc-mirror's key order).
 * Every value is checked here, so a file this writes always reads back with `parseImageSetConfig` (parse.ts).
 */
import { stat } from 'node:fs/promises';
import { AirgapError, usageError } from '../../util/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { toYaml } from '../../util/yaml.js';
import { parseReference } from '../reference.js';
import { compareSemver, parseSemver, semverHint, type SemVer } from './semver.js';
import { ARCHITECTURES, ISC_API_VERSION, ISC_KIND, type Architecture } from './types.js';

/** Ready-made image sets. */
export const PRESETS = ['hosted-agent'] as const;
export type Preset = (typeof PRESETS)[number];

/** What to put in the image set; each field is one `airgap mirror init` flag. */
export interface InitOptions {
  preset?: Preset;
  /** OpenShift `x.y` or `x.y.z`: the release channel (stable-x.y, pinned to x.y.z) and the catalog tag. */
  version?: string;
  /** Release channels, `<word>-<major>.<minor>` (stable-4.18, eus-4.18, fast-4.18, candidate-4.18). */
  channels?: string[];
  minVersion?: string;
  maxVersion?: string;
  full?: boolean;
  shortestPath?: boolean;
  /** A release image reference, instead of channels. */
  release?: string;
  arches?: string[];
  /** Undefined: the preset's choice (on for hosted-agent), else off. */
  graph?: boolean;
  kubeVirtContainer?: boolean;
  /** Operator catalog; default redhat-operator-index:v<major.minor> when packages are asked for. */
  catalog?: string;
  /** `name` or `name:channel`. */
  packages?: string[];
  /** Additional images, mirrored as they are. */
  images?: string[];
  /** GiB per archive part, a whole number. */
  archiveSize?: number | string;
  /** Add the OpenShift Data Foundation packages of the catalog's minor. */
  withOdf?: boolean;
}

/** A release channel as written (defaults left out). */
export interface InitChannel {
  name: string;
  minVersion?: string;
  maxVersion?: string;
  shortestPath?: boolean;
  full?: boolean;
}

export interface InitPlatform {
  architectures?: Architecture[];
  channels?: InitChannel[];
  release?: string;
  graph?: boolean;
  kubeVirtContainer?: boolean;
}

export interface InitPackage {
  name: string;
  channels?: { name: string }[];
}

export interface InitOperator {
  catalog: string;
  packages?: InitPackage[];
}

/** The ImageSetConfiguration as written: only the fields that say something. */
export interface InitImageSetConfig {
  kind: typeof ISC_KIND;
  apiVersion: typeof ISC_API_VERSION;
  archiveSize?: number;
  mirror: {
    platform?: InitPlatform;
    operators?: InitOperator[];
    additionalImages?: { name: string }[];
  };
}

/** The configuration, and things the person should check that are not errors. */
export interface InitResult {
  config: InitImageSetConfig;
  notes: string[];
}

/** Red Hat's operator catalog for an OpenShift minor. */
export function redHatOperatorIndex(major: number, minor: number): string {
  return `registry.redhat.io/redhat/redhat-operator-index:v${major}.${minor}`;
}

/**
 * The `hosted-agent` preset's operator packages, all from the redhat-operator-index of the
 * cluster's minor: what an agent-based hosted cluster (HyperShift on bare metal) needs from OLM.
 */
export const HOSTED_AGENT_PACKAGES: readonly { name: string; purpose: string }[] = [
  // The seed runbook: "mirror the latest multicluster engine Operator images"; MCE runs HyperShift
  // and the agent (assisted-installer) services on the hub.
  { name: 'multicluster-engine', purpose: 'HyperShift, the agent and assisted-installer services' },
  // The seed runbook's operator list for hosted control planes on bare metal.
  { name: 'lvms-operator', purpose: "storage for the hosted control planes' etcd" },
  { name: 'local-storage-operator', purpose: 'local disks as persistent volumes' },
  { name: 'metallb-operator', purpose: 'load balancer addresses for the hosted API and ingress' },
];

interface OdfPackage {
  name: string;
  /** The first OpenShift/ODF minor (4.x) whose redhat-operator-index has the package. */
  since: number;
}

/**
 * The OpenShift Data Foundation packages for `--with-odf`, by the first 4.x minor that has them.
 *
 * oc-mirror v2 (and airgap, which filters catalogs the same way) does not follow OLM dependencies
 * (`olm.package.required`), while odf-operator subscribes to all of these at install time: a
 * disconnected catalog missing one leaves ODF half installed. And a package that is not in the
 * catalog is an error when mirroring, so the list depends on the minor. Sources:
 *
 * - odf-operator, ocs-operator, mcg-operator, odf-csi-addons-operator: the seed runbook's
 *   ImageSetConfiguration for hosted control planes (4.17 and 4.18 editions).
 * - ocs-client-operator, odf-prometheus-operator, recipe, rook-ceph-operator: the CSVs an ODF
 *   4.16.1 install creates, and again on 4.18.8 and 4.19.5 (public install logs).
 * - odf-dependencies: `oc-mirror list operators` on redhat-operator-index:v4.17 lists it
 *   (stable-4.17); odf-operator 4.17+ requires it, and it pulls the component operators in.
 * - cephcsi-operator: in the 4.18.8 and 4.19.5 CSV lists, not in the 4.16.1 one; 4.17 is not
 *   confirmed, so it starts at 4.18 (a 4.17 user adds it with --package if the catalog has it).
 * - odf-external-snapshotter-operator: in the ODF 4.20 CSV lists, not in the 4.19.5 one.
 *
 * Left out: ocs-tls-profiles, which only later lists show and no source ties to a minor.
 */
export const ODF_PACKAGES: readonly OdfPackage[] = [
  { name: 'odf-operator', since: 0 },
  { name: 'odf-dependencies', since: 17 },
  { name: 'ocs-operator', since: 0 },
  { name: 'ocs-client-operator', since: 16 },
  { name: 'mcg-operator', since: 0 },
  { name: 'odf-csi-addons-operator', since: 0 },
  { name: 'odf-prometheus-operator', since: 16 },
  { name: 'recipe', since: 16 },
  { name: 'rook-ceph-operator', since: 16 },
  { name: 'cephcsi-operator', since: 18 },
  { name: 'odf-external-snapshotter-operator', since: 20 },
];

/** The minors for which {@link ODF_PACKAGES} is confirmed complete by the sources above. */
const ODF_CONFIRMED = { from: 16, to: 20 };

/** The ODF packages the redhat-operator-index of OpenShift `major.minor` has. */
export function odfPackages(major: number, minor: number): string[] {
  return ODF_PACKAGES.filter((p) => major > 4 || (major === 4 && minor >= p.since)).map((p) => p.name);
}

const CHANNEL = /^([a-z][a-z0-9]*)-(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const PACKAGE_NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;
const PACKAGE_CHANNEL = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const MINOR_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
/** A release image tag that starts with its version: `4.18.3-x86_64`, `4.19.0-0.nightly-…`. */
const RELEASE_TAG = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.\d+/;
/** An operator index tag: `v4.18`. */
const CATALOG_TAG = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

interface Minor {
  major: number;
  minor: number;
  /** Which flag it came from, for messages. */
  from: string;
}

function flagInvalid(flag: string, message: string, hint: string): AirgapError {
  return usageError('FLAG_INVALID', message, { where: `--${flag}`, hint });
}

function flagConflict(flags: string[], message: string, hint: string): AirgapError {
  return usageError('FLAG_CONFLICT', message, { where: flags.map((f) => `--${f}`).join(', '), hint });
}

function flagMissing(flag: string, message: string, hint: string): AirgapError {
  return usageError('FLAG_MISSING', message, { where: `--${flag}`, hint });
}

/** `--version`: `x.y` or a full semantic version `x.y.z[-pre]`. */
function parseTargetVersion(raw: string): { semver?: SemVer; major: number; minor: number } {
  const v = raw.trim();
  const short = MINOR_VERSION.exec(v);
  if (short) return { major: Number(short[1]), minor: Number(short[2]) };
  const semver = parseSemver(v);
  if (!semver) {
    const hint = /^[vV]\d/.test(v)
      ? `drop the "v": ${v.slice(1)}`
      : 'write the OpenShift minor (4.18) or a full release version (4.18.3, 4.19.0-rc.2)';
    throw flagInvalid('version', `--version "${raw}" is not an OpenShift version`, hint);
  }
  return { semver, major: semver.major, minor: semver.minor };
}

/** `--min-version`/`--max-version`: strict semver, as oc-mirror's release selection needs. */
function parseBound(flag: 'min-version' | 'max-version', raw: string | undefined): SemVer | undefined {
  if (raw === undefined) return undefined;
  const v = parseSemver(raw.trim());
  if (!v) {
    throw flagInvalid(flag, `--${flag} "${raw}" is not a semantic version`, semverHint(raw.trim()));
  }
  return v;
}

function parseChannel(raw: string): { name: string; major: number; minor: number } {
  const name = raw.trim();
  const m = CHANNEL.exec(name);
  if (!m) {
    throw flagInvalid(
      'channel',
      `--channel "${raw}" is not a release channel name`,
      'write <channel>-<major>.<minor>, e.g. stable-4.18, fast-4.18, eus-4.18 or candidate-4.19',
    );
  }
  return { name, major: Number(m[2]), minor: Number(m[3]) };
}

/** A reference with an explicit tag or digest (`latest` is never a release or a catalog). */
function imageRef(flag: string, raw: string, example: string): string {
  const ref = raw.trim();
  try {
    parseReference(ref);
  } catch (e) {
    const why =
      e instanceof AirgapError ? e.message.replace(/^invalid image reference "[^"]*": /, '') : String(e);
    throw flagInvalid(
      flag,
      `--${flag} "${raw}" is not an image reference: ${why}`,
      `write it like ${example}`,
    );
  }
  return ref;
}

function hasTagOrDigest(ref: string): boolean {
  const lastPart = ref.slice(ref.lastIndexOf('/') + 1);
  return ref.includes('@') || lastPart.includes(':');
}

function parseCatalog(raw: string): string {
  const ref = raw.trim();
  if (ref.startsWith('oci://')) {
    if (ref.length === 'oci://'.length) {
      throw flagInvalid('catalog', `--catalog "${raw}" names no directory`, 'write oci:///path/to/layout');
    }
    return ref;
  }
  const example = 'registry.redhat.io/redhat/redhat-operator-index:v4.18';
  imageRef('catalog', ref, example);
  if (!hasTagOrDigest(ref)) {
    throw flagInvalid(
      'catalog',
      `--catalog "${raw}" has no tag`,
      `catalogs are tagged by OpenShift minor: ${ref}:v4.18, for example`,
    );
  }
  return ref;
}

function parseRelease(raw: string): string {
  const example = 'quay.io/openshift-release-dev/ocp-release:4.18.3-x86_64';
  const ref = imageRef('release', raw, example);
  if (!hasTagOrDigest(ref)) {
    throw flagInvalid('release', `--release "${raw}" has no tag or digest`, `write it like ${example}`);
  }
  return ref;
}

function parsePackage(raw: string): { name: string; channel?: string } {
  const spec = raw.trim();
  const parts = spec.split(':');
  const [name, channel] = parts;
  const hint =
    'write name or name:channel with an OLM package name, e.g. lvms-operator or multicluster-engine:stable-2.8';
  if (parts.length > 2 || !PACKAGE_NAME.test(name ?? '')) {
    throw flagInvalid('package', `--package "${raw}" is not a package (name[:channel])`, hint);
  }
  if (channel !== undefined && !PACKAGE_CHANNEL.test(channel)) {
    throw flagInvalid('package', `--package "${raw}": "${channel}" is not a channel name`, hint);
  }
  return channel === undefined ? { name } : { name, channel };
}

function parseArch(raw: string): Architecture {
  const arch = raw.trim();
  if ((ARCHITECTURES as readonly string[]).includes(arch)) return arch as Architecture;
  const aliases: Record<string, Architecture> = { x86_64: 'amd64', aarch64: 'arm64', ppc64: 'ppc64le' };
  const alias = aliases[arch];
  throw flagInvalid(
    'arch',
    `--arch "${raw}" is not a release architecture`,
    alias ? `use ${alias} (the Go name of ${arch})` : `use one of ${ARCHITECTURES.join(', ')}`,
  );
}

function parseArchiveSize(raw: number | string): number {
  const text = String(raw).trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw flagInvalid(
      'archive-size',
      `--archive-size "${raw}" is not a whole number of GiB above 0`,
      "give GiB per archive part, e.g. 4 for a FAT32 stick or 500 (oc-mirror's default)",
    );
  }
  return n;
}

/** The OpenShift minor a release image's tag names (`4.18.3-x86_64`), if it names one. */
function minorOfTag(ref: string, pattern: RegExp): { major: number; minor: number } | undefined {
  if (ref.includes('@')) return undefined;
  const lastPart = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  if (colon < 0) return undefined;
  const m = pattern.exec(lastPart.slice(colon + 1));
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

const dedupe = <T>(xs: T[]): T[] => [...new Set(xs)];
const label = (m: { major: number; minor: number }) => `${m.major}.${m.minor}`;

/**
 * Check the options and build the configuration. Throws a usage error (exit code 2) naming the
 * flag and how to fix it.
 */
export function initImageSetConfig(opts: InitOptions): InitResult {
  const notes: string[] = [];
  if (opts.preset !== undefined && !(PRESETS as readonly string[]).includes(opts.preset)) {
    throw flagInvalid(
      'preset',
      `--preset "${String(opts.preset)}" is not a preset`,
      `use ${PRESETS.join(', ')}`,
    );
  }
  const target = opts.version !== undefined ? parseTargetVersion(opts.version) : undefined;
  const channelArgs = dedupe((opts.channels ?? []).map((c) => c.trim()).filter((c) => c !== '')).map(
    parseChannel,
  );
  const min = parseBound('min-version', opts.minVersion);
  const max = parseBound('max-version', opts.maxVersion);
  const release = opts.release !== undefined ? parseRelease(opts.release) : undefined;
  const arches = dedupe((opts.arches ?? []).map(parseArch));
  const catalogArg = opts.catalog !== undefined ? parseCatalog(opts.catalog) : undefined;
  const packageArgs = (opts.packages ?? []).map(parsePackage);
  const images = dedupe(
    (opts.images ?? []).map((i) => imageRef('image', i, 'registry.redhat.io/ubi9/ubi:latest')),
  );
  const archiveSize = opts.archiveSize !== undefined ? parseArchiveSize(opts.archiveSize) : undefined;

  // --- which releases ---------------------------------------------------------------------------
  if (release !== undefined && channelArgs.length > 0) {
    throw flagConflict(
      ['release', 'channel'],
      '--release and --channel both say which release to mirror',
      'give --channel (releases from the update graph) or --release (one release image), not both',
    );
  }
  for (const [flag, given] of [
    ['min-version', min],
    ['max-version', max],
    ['full', opts.full],
    ['shortest-path', opts.shortestPath],
  ] as const) {
    if (!given) continue;
    if (release !== undefined) {
      throw flagConflict(
        ['release', flag],
        `--${flag} selects releases from a channel, and --release names one release image`,
        `drop --${flag}, or use --channel instead of --release`,
      );
    }
    if (channelArgs.length === 0 && target === undefined) {
      throw flagMissing(
        'channel',
        `--${flag} selects releases from a channel, and no channel is given`,
        'add --channel stable-4.18 (or --version 4.18)',
      );
    }
  }
  if (target?.semver && (min || max)) {
    throw flagConflict(
      ['version', min ? 'min-version' : 'max-version'],
      `--version ${target.semver.raw} already pins the release, so --min-version/--max-version have nothing to add`,
      `give --version ${target.major}.${target.minor} with --min-version/--max-version, or --version ${target.semver.raw} alone`,
    );
  }
  if (min && max && compareSemver(min, max) > 0) {
    throw flagInvalid(
      'min-version',
      `--min-version ${min.raw} is above --max-version ${max.raw}`,
      'swap them, or give the same version to both to select exactly one release',
    );
  }
  if (target) {
    const other = channelArgs.find((c) => c.major !== target.major || c.minor !== target.minor);
    if (other) {
      throw flagConflict(
        ['version', 'channel'],
        `--channel ${other.name} is not a channel of OpenShift ${label(target)} (--version ${opts.version?.trim()})`,
        `use --channel <name>-${label(target)}, or drop --version and select versions with --min-version/--max-version`,
      );
    }
  }

  // The release channels: --channel, else the one --version implies (stable, or candidate for a
  // prerelease such as 4.19.0-rc.2, which stable never carries).
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
  const channels: InitChannel[] = channelNames.map((name) => ({
    name,
    minVersion: boundFor(min, name),
    maxVersion: boundFor(max, name),
    shortestPath: opts.shortestPath || undefined,
    full: opts.full || undefined,
  }));

  const hasPlatform = channels.length > 0 || release !== undefined;
  const graph = opts.graph ?? opts.preset === 'hosted-agent';
  for (const [flag, given] of [
    ['arch', arches.length > 0],
    ['graph', opts.graph === true],
    ['kubevirt-container', opts.kubeVirtContainer === true],
  ] as const) {
    if (given && !hasPlatform) {
      throw flagMissing(
        'channel',
        `--${flag} is about the OpenShift release, and no release is selected`,
        'add --version 4.18 (or --channel stable-4.18, or --release <image>)',
      );
    }
  }
  if (opts.preset === 'hosted-agent' && !hasPlatform) {
    throw flagMissing(
      'version',
      'the hosted-agent preset needs the OpenShift release of the hosted cluster',
      'add --version 4.18 (the latest 4.18) or --version 4.18.3 (exactly that release)',
    );
  }
  const platform: InitPlatform | undefined = hasPlatform
    ? {
        // oc-mirror's default is amd64 too; writing it says which payload this set carries.
        architectures: arches.length > 0 ? arches : channels.length > 0 ? ['amd64'] : undefined,
        channels: channels.length > 0 ? channels : undefined,
        release,
        graph: graph || undefined,
        kubeVirtContainer: opts.kubeVirtContainer || undefined,
      }
    : undefined;

  // --- operators --------------------------------------------------------------------------------
  // The catalog's minor: what the person said most directly, first.
  const highestChannel = [...channelArgs].sort((a, b) => b.major - a.major || b.minor - a.minor)[0];
  const releaseMinor = release !== undefined ? minorOfTag(release, RELEASE_TAG) : undefined;
  const catalogMinor = catalogArg !== undefined ? minorOfTag(catalogArg, CATALOG_TAG) : undefined;
  const candidates: (Minor | undefined)[] = [
    target && { major: target.major, minor: target.minor, from: `--version ${opts.version?.trim()}` },
    max && { major: max.major, minor: max.minor, from: `--max-version ${max.raw}` },
    highestChannel && { ...highestChannel, from: `--channel ${highestChannel.name}` },
    min && { major: min.major, minor: min.minor, from: `--min-version ${min.raw}` },
    releaseMinor && { ...releaseMinor, from: `--release ${release}` },
    catalogMinor && { ...catalogMinor, from: `--catalog ${catalogArg}` },
  ];
  const minor = candidates.find((c) => c !== undefined);

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
    if (minor.major === 4 && minor.minor < ODF_CONFIRMED.from) {
      notes.push(
        `the ODF package list for ${label(minor)} is the seed runbook's (odf-operator, ocs-operator, mcg-operator, ` +
          'odf-csi-addons-operator); compare it with `oc-mirror list operators --catalog <catalog> --package odf-operator`',
      );
    } else if (minor.major === 4 && minor.minor === 17) {
      notes.push(
        'ODF 4.17 may also need cephcsi-operator; if `oc-mirror list operators --catalog <catalog>` shows it, add --package cephcsi-operator',
      );
    } else if (minor.major > 4 || minor.minor > ODF_CONFIRMED.to) {
      notes.push(
        `the ODF package list is confirmed up to 4.${ODF_CONFIRMED.to}; ODF ${label(minor)} may add packages ` +
          '(check `oc-mirror list operators --catalog <catalog>` for odf-, ocs- and ceph packages)',
      );
    }
  }
  for (const p of packageArgs) addPackage(p.name, p.channel);

  let catalog = catalogArg;
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
  if (catalogMinor && minor && label(catalogMinor) !== label(minor)) {
    notes.push(
      `--catalog ${catalogArg} is tagged for OpenShift ${label(catalogMinor)}, and ${minor.from} is ${label(minor)}; ` +
        "operators from another minor's catalog may not install",
    );
  }
  const operators: InitOperator[] | undefined =
    catalog !== undefined
      ? [
          {
            catalog,
            packages:
              packages.size > 0
                ? [...packages].map(([name, chs]) => ({
                    name,
                    channels: chs.length > 0 ? chs.map((c) => ({ name: c })) : undefined,
                  }))
                : undefined,
          },
        ]
      : undefined;
  if (catalog !== undefined && packages.size === 0) {
    notes.push(
      `no --package given: every package of ${catalog} is mirrored (the head of every channel); that is a lot of data`,
    );
  }

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
    archiveSize,
    mirror: {
      platform,
      operators,
      additionalImages: images.length > 0 ? images.map((name) => ({ name })) : undefined,
    },
  };
  return { config: stripUndefined(config), notes };
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

/** The YAML file: optional `#` comment lines, then the document. */
export function renderImageSetConfig(
  config: InitImageSetConfig,
  options: { comment?: string[] } = {},
): string {
  const comment = (options.comment ?? []).map((line) => `# ${line}`.trimEnd()).join('\n');
  return `${comment ? `${comment}\n` : ''}${toYaml(config)}`;
}

/** One line per part of the set, for a person reading the terminal. */
export function summarizeImageSetConfig(config: InitImageSetConfig): string[] {
  const lines: string[] = [];
  const p = config.mirror.platform;
  if (p) {
    const arches = p.architectures ? `, ${p.architectures.join(', ')}` : '';
    const extras = [p.graph ? 'update graph' : '', p.kubeVirtContainer ? 'KubeVirt container disk' : '']
      .filter(Boolean)
      .join(', ');
    const releases = p.release
      ? `release ${p.release}`
      : (p.channels ?? [])
          .map((c) => {
            const range =
              c.minVersion && c.minVersion === c.maxVersion
                ? ` at ${c.minVersion}`
                : c.minVersion || c.maxVersion
                  ? ` from ${c.minVersion ?? 'the first'} to ${c.maxVersion ?? 'the latest'}`
                  : c.full
                    ? ' (every release)'
                    : ' (latest release)';
            return `${c.name}${range}`;
          })
          .join(', ');
    lines.push(`OpenShift: ${releases}${arches}${extras ? `, with the ${extras}` : ''}`);
  }
  for (const op of config.mirror.operators ?? []) {
    const names = op.packages?.map((pkg) =>
      pkg.channels ? `${pkg.name} (${pkg.channels.map((c) => c.name).join(', ')})` : pkg.name,
    );
    lines.push(`operators from ${op.catalog}: ${names ? names.join(', ') : 'every package'}`);
  }
  const images = config.mirror.additionalImages ?? [];
  if (images.length > 0)
    lines.push(`${images.length} additional image(s): ${images.map((i) => i.name).join(', ')}`);
  if (config.archiveSize !== undefined) lines.push(`archive parts of at most ${config.archiveSize} GiB`);
  return lines;
}

/**
 * Write the file atomically. An existing file is replaced only with `force`; a directory never.
 */
export async function writeImageSetConfigFile(path: string, text: string, options: { force?: boolean } = {}) {
  let existing: Awaited<ReturnType<typeof stat>> | undefined;
  try {
    existing = await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (existing?.isDirectory()) {
    throw usageError('FLAG_INVALID', `--output ${path} is a directory`, {
      where: path,
      hint: `name a file in it, e.g. --output ${path.replace(/\/+$/, '')}/imageset-config.yaml`,
    });
  }
  if (existing && !options.force) {
    throw usageError('OUTPUT_EXISTS', `${path} already exists; not replacing it`, {
      where: path,
      hint: 'pass --force to replace it, or choose another --output',
    });
  }
  await writeFileAtomic(path, text);
}
