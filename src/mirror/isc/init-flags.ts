/**
 * The flags of `airgap mirror init`, checked before anything is built: each flag on its own (a
 * version, a channel name, an image reference), then the ones that exclude or need each other.
 * A bad flag is a usage error (exit 2) naming it, with how to fix it.
 */
import { AirgapError, usageError, CommonError } from '../../util/errors.js';
import { suggest } from '../../config/suggest.js';
import { parseReference } from '../reference.js';
import { PRESETS } from './init-presets.js';
import type { InitOptions } from './init-types.js';
import { compareSemver, parseSemver, semverHint, type SemVer } from './semver.js';
import { ARCHITECTURES, type Architecture } from './types.js';

const CHANNEL = /^([a-z][a-z0-9]*)-(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
/** The channels the OpenShift update service publishes (stable, fast, eus, candidate). */
const CHANNEL_KINDS = ['stable', 'fast', 'eus', 'candidate'];
const PACKAGE_NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;
const PACKAGE_CHANNEL = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const MINOR_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
/** A release image tag that starts with its version: `4.18.3-x86_64`, `4.19.0-0.nightly-…`. */
const RELEASE_TAG = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.\d+/;
/** An operator index tag: `v4.18`. */
const CATALOG_TAG = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

function flagInvalid(flag: string, message: string, hint: string): AirgapError {
  return usageError(CommonError.FLAG_INVALID, message, { where: `--${flag}`, hint });
}

function flagConflict(flags: string[], message: string, hint: string): AirgapError {
  return usageError(CommonError.FLAG_CONFLICT, message, {
    where: flags.map((f) => `--${f}`).join(', '),
    hint,
  });
}

export function flagMissing(flag: string, message: string, hint: string): AirgapError {
  return usageError(CommonError.FLAG_MISSING, message, { where: `--${flag}`, hint });
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
  if (!CHANNEL_KINDS.includes(m[1]!)) {
    const [near] = suggest(m[1]!, CHANNEL_KINDS);
    throw flagInvalid(
      'channel',
      `--channel "${raw}": ${m[1]} is not a kind of OpenShift release channel`,
      near
        ? `did you mean ${near}-${m[2]}.${m[3]}? (the kinds are ${CHANNEL_KINDS.join(', ')})`
        : `the kinds are ${CHANNEL_KINDS.join(', ')}: e.g. stable-${m[2]}.${m[3]}`,
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

/** The OpenShift minor the tag of `ref` names (by `pattern`), if it has a tag that names one. */
function minorOfTag(ref: string, pattern: RegExp): { major: number; minor: number } | undefined {
  if (ref.includes('@')) return undefined;
  const lastPart = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  if (colon < 0) return undefined;
  const m = pattern.exec(lastPart.slice(colon + 1));
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/** The OpenShift minor a release image's tag starts with (`4.18.3-x86_64`), if any. */
export function minorOfRelease(ref: string): { major: number; minor: number } | undefined {
  return minorOfTag(ref, RELEASE_TAG);
}

/** The OpenShift minor an operator index's tag names (`v4.18`), if any. */
export function minorOfCatalog(ref: string): { major: number; minor: number } | undefined {
  return minorOfTag(ref, CATALOG_TAG);
}

const dedupe = <T>(xs: T[]): T[] => [...new Set(xs)];

/** `major.minor`, for messages. */
export const label = (m: { major: number; minor: number }) => `${m.major}.${m.minor}`;

/** Every flag checked on its own: the values the builder works from. */
export interface InitFlags {
  /** `--version`: the minor, and the release when a full version pins one. */
  target?: { semver?: SemVer; major: number; minor: number };
  /** `--channel`, each once, with the minor its name carries. */
  channels: { name: string; major: number; minor: number }[];
  min?: SemVer;
  max?: SemVer;
  release?: string;
  arches: Architecture[];
  catalog?: string;
  packages: { name: string; channel?: string }[];
  images: string[];
  archiveSize?: number;
}

/** Check each flag on its own, in flag order; the first bad one is thrown. */
export function parseInitFlags(opts: InitOptions): InitFlags {
  if (opts.preset !== undefined && !(PRESETS as readonly string[]).includes(opts.preset)) {
    throw flagInvalid(
      'preset',
      `--preset "${String(opts.preset)}" is not a preset`,
      `use ${PRESETS.join(', ')}`,
    );
  }
  const target = opts.version !== undefined ? parseTargetVersion(opts.version) : undefined;
  const channels = dedupe((opts.channels ?? []).map((c) => c.trim()).filter((c) => c !== '')).map(
    parseChannel,
  );
  const min = parseBound('min-version', opts.minVersion);
  const max = parseBound('max-version', opts.maxVersion);
  const release = opts.release !== undefined ? parseRelease(opts.release) : undefined;
  const arches = dedupe((opts.arches ?? []).map(parseArch));
  const catalog = opts.catalog !== undefined ? parseCatalog(opts.catalog) : undefined;
  const packages = (opts.packages ?? []).map(parsePackage);
  const images = dedupe(
    (opts.images ?? []).map((i) => imageRef('image', i, 'registry.redhat.io/ubi9/ubi:latest')),
  );
  const archiveSize = opts.archiveSize !== undefined ? parseArchiveSize(opts.archiveSize) : undefined;
  return { target, channels, min, max, release, arches, catalog, packages, images, archiveSize };
}

/**
 * The flags that say which releases to mirror agree: one release image or channels, bounds and
 * options only with a channel, a pinned version without bounds, the minimum not above the
 * maximum, and every channel of the `--version` minor.
 */
export function checkReleaseFlags(opts: InitOptions, flags: InitFlags): void {
  const { target, channels, min, max, release } = flags;
  if (release !== undefined && channels.length > 0) {
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
    if (channels.length === 0 && target === undefined) {
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
    const other = channels.find((c) => c.major !== target.major || c.minor !== target.minor);
    if (other) {
      throw flagConflict(
        ['version', 'channel'],
        `--channel ${other.name} is not a channel of OpenShift ${label(target)} (--version ${opts.version?.trim()})`,
        `use --channel <name>-${label(target)}, or drop --version and select versions with --min-version/--max-version`,
      );
    }
  }
}

/** The flags about the OpenShift release (and the hosted-agent preset) need a release selected. */
export function checkPlatformFlags(opts: InitOptions, flags: InitFlags, hasPlatform: boolean): void {
  for (const [flag, given] of [
    ['arch', flags.arches.length > 0],
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
}
