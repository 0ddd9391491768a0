/**
 * oc-mirror's checks on a decoded configuration (internal/pkg/config/validate.go, and the catalog
 * filter's rules), with a few more that oc-mirror only hits later (tags, target paths, min > max).
 */
import { hasUrlCredentials, shownUrl, urlCredentialsHint } from '../../net/url.js';
import { itemPath } from '../../config/positions.js';
import { isAirgapError } from '../../util/errors.js';
import { parseReference } from '../reference.js';
import { IscErrorCode, type IscProblems } from './errors.js';
import { compileGoRegexp } from './regexp.js';
import { compareSemver, parseVersion, semverHint, type SemVer } from './semver.js';
import type { ImageSetContent, IncludeChannel, IncludePackage, Operator, Platform } from './types.js';

/** oc-mirror's IsValidPathComponent: `ns/name`, lowercase alphanumerics joined by `.`, `_`, `__` or dashes. */
const PATH_COMPONENTS =
  /^([a-z0-9]+((?:[._]|__|[-]*)[a-z0-9]+)*)(\/([a-z0-9]+((?:[._]|__|[-]*)[a-z0-9]+)*))*$/;

/** A Docker tag. */
const TAG = /^[\w][\w.-]{0,127}$/;

/** Check the content under `base` (`mirror` or `delete`). */
export function validateContent(content: ImageSetContent, base: string, problems: IscProblems): void {
  if (content.platform) validatePlatform(content.platform, `${base}.platform`, problems);
  validateOperators(content.operators, `${base}.operators`, problems);
  content.additionalImages.forEach((img, i) => {
    const p = itemPath(`${base}.additionalImages`, i);
    checkImageRef(img.name, `${p}.name`, problems);
    checkTargetPath(img.targetRepo, `${p}.targetRepo`, problems);
    checkTag(img.targetTag, `${p}.targetTag`, problems);
  });
  content.blockedImages.forEach((img, i) => {
    const p = `${itemPath(`${base}.blockedImages`, i)}.name`;
    const compiled = compileGoRegexp(img.name);
    if (!compiled.ok) {
      problems.add(
        IscErrorCode.Invalid,
        p,
        `blocked image ${JSON.stringify(img.name)} is not a valid regular expression: ${compiled.error}`,
        {
          hint: 'blockedImages names are Go (RE2) regular expressions: escape ( ) [ ] * + ? with \\, use .* as a wildcard',
        },
      );
    }
  });
  content.helm?.repositories.forEach((repo, i) => {
    const p = `${itemPath(`${base}.helm.repositories`, i)}.url`;
    if (!URL.canParse(repo.url)) {
      problems.add(IscErrorCode.Invalid, p, `${p} ${JSON.stringify(shownUrl(repo.url))} is not a URL`, {
        hint: 'write the repository URL in full, e.g. https://charts.example.com/stable',
      });
    } else if (hasUrlCredentials(repo.url)) {
      problems.add(
        IscErrorCode.Invalid,
        p,
        `${p} ${shownUrl(repo.url)} is written with a user name and password`,
        { hint: urlCredentialsHint(new URL(repo.url).host) },
      );
    }
  });
}

/** `archiveSize`: GiB per archive segment, a whole number above zero. */
export function validateArchiveSize(size: number | undefined, problems: IscProblems): void {
  if (size !== undefined && size <= 0) {
    problems.add(
      IscErrorCode.Invalid,
      'archiveSize',
      `archiveSize must be a number of GiB above 0, not ${size}`,
      {
        hint: 'remove archiveSize to use the default of 500 GiB per archive',
      },
    );
  }
}

function validatePlatform(platform: Platform, base: string, problems: IscProblems): void {
  if (platform.release) checkImageRef(platform.release, `${base}.release`, problems);
  const seen = new Map<string, string>();
  platform.channels.forEach((ch, i) => {
    const p = itemPath(`${base}.channels`, i);
    duplicate(seen, ch.name, `${p}.name`, `release channel ${JSON.stringify(ch.name)}`, problems);
    checkRange(ch.minVersion, ch.maxVersion, p, problems);
  });
  if (platform.platforms.length > 0 && platform.architectures.length > 0) {
    problems.add(
      IscErrorCode.Conflict,
      `${base}.platforms`,
      `${base}.platforms and ${base}.architectures cannot be used together`,
      {
        part: 'key',
        hint:
          'use platforms for sparse manifest filtering (the registry must accept sparse manifest lists), ' +
          'or the deprecated architectures for single-arch or multi payloads',
      },
    );
  }
}

function validateOperators(operators: Operator[], base: string, problems: IscProblems): void {
  const catalogs = new Map<string, string>();
  operators.forEach((op, i) => {
    const p = itemPath(base, i);
    const unique = [op.catalog, op.targetCatalog ?? '', op.targetTag ?? ''].join('\u0000');
    const label = `catalog ${JSON.stringify(op.catalog)}${op.targetCatalog || op.targetTag ? ' with the same target' : ''}`;
    duplicate(catalogs, unique, `${p}.catalog`, label, problems);
    // A catalog on disk (oci:// or file://) is a path, not a reference.
    if (!/^(oci|file):/.test(op.catalog)) checkImageRef(op.catalog, `${p}.catalog`, problems);
    checkTargetPath(op.targetCatalog, `${p}.targetCatalog`, problems);
    checkTag(op.targetTag, `${p}.targetTag`, problems);
    const packages = new Map<string, string>();
    op.packages.forEach((pkg, j) => {
      const pp = itemPath(`${p}.packages`, j);
      duplicate(
        packages,
        pkg.name,
        `${pp}.name`,
        `package ${JSON.stringify(pkg.name)} of catalog ${JSON.stringify(op.catalog)}`,
        problems,
      );
      validatePackage(op, pkg, pp, problems);
    });
  });
}

function validatePackage(op: Operator, pkg: IncludePackage, base: string, problems: IscProblems): void {
  const pkgRange = pkg.minVersion !== undefined || pkg.maxVersion !== undefined;
  checkRange(pkg.minVersion, pkg.maxVersion, base, problems);
  if (op.full && pkgRange) fullWithRange(pkg, base, problems);
  const channels = new Map<string, string>();
  pkg.channels.forEach((ch: IncludeChannel, k) => {
    const cp = itemPath(`${base}.channels`, k);
    duplicate(
      channels,
      ch.name,
      `${cp}.name`,
      `channel ${JSON.stringify(ch.name)} of package ${JSON.stringify(pkg.name)}`,
      problems,
    );
    checkRange(ch.minVersion, ch.maxVersion, cp, problems);
    const chRange = ch.minVersion !== undefined || ch.maxVersion !== undefined;
    if (chRange && pkgRange) {
      problems.add(
        IscErrorCode.Conflict,
        `${cp}.${ch.minVersion !== undefined ? 'minVersion' : 'maxVersion'}`,
        `package ${JSON.stringify(pkg.name)}: a package minVersion/maxVersion and a channel minVersion/maxVersion cannot be mixed`,
        { part: 'key', hint: 'keep the range on the package, or move it into each channel' },
      );
    }
    if (op.full && chRange) fullWithRange(ch, cp, problems);
  });
}

function fullWithRange(
  item: { minVersion?: string; maxVersion?: string },
  base: string,
  problems: IscProblems,
): void {
  const field = item.minVersion !== undefined ? 'minVersion' : 'maxVersion';
  problems.add(
    IscErrorCode.Conflict,
    `${base}.${field}`,
    `${base}.${field} cannot be used with full: true on its catalog`,
    {
      part: 'key',
      hint: 'full: true takes every bundle; remove it, or remove the version range',
    },
  );
}

/** Both bounds must be strict semver, and min must not be above max. */
function checkRange(
  min: string | undefined,
  max: string | undefined,
  base: string,
  problems: IscProblems,
): void {
  const lo = checkVersion(min, `${base}.minVersion`, problems);
  const hi = checkVersion(max, `${base}.maxVersion`, problems);
  if (lo && hi && compareSemver(lo, hi) > 0) {
    problems.add(
      IscErrorCode.Invalid,
      `${base}.minVersion`,
      `${base}.minVersion ${lo.raw} is above maxVersion ${hi.raw}`,
      {
        hint: 'swap them, or set both to the same version to select exactly one',
      },
    );
  }
}

function checkVersion(value: string | undefined, path: string, problems: IscProblems): SemVer | undefined {
  if (value === undefined) return undefined;
  const v = parseVersion(value);
  if (!v) {
    problems.add(IscErrorCode.Invalid, path, `${path} ${JSON.stringify(value)} is not a semantic version`, {
      hint: semverHint(value),
    });
  }
  return v;
}

/**
 * An image reference (a registry's `docker://` prefix allowed), checked where it is written: a
 * bad one is a problem with its file, line and field, like every other, not an error of the plan.
 */
function checkImageRef(value: string | undefined, path: string, problems: IscProblems): void {
  if (typeof value !== 'string' || value === '') return; // missing or empty: the decoder said so
  try {
    parseReference(value.replace(/^docker:\/\//, ''));
  } catch (e) {
    if (!isAirgapError(e)) throw e;
    problems.add(IscErrorCode.Invalid, path, `${path}: ${e.message}`, {
      ...(e.hint ? { hint: e.hint } : {}),
    });
  }
}

function checkTargetPath(value: string | undefined, path: string, problems: IscProblems): void {
  if (value === undefined || PATH_COMPONENTS.test(value)) return;
  problems.add(IscErrorCode.Invalid, path, `${path} ${JSON.stringify(value)} is not a repository path`, {
    hint:
      'write one or more lowercase path components separated by / (like my-ns/my-index), ' +
      'with no registry, tag or digest; put a tag in targetTag',
  });
}

function checkTag(value: string | undefined, path: string, problems: IscProblems): void {
  if (value === undefined || TAG.test(value)) return;
  problems.add(IscErrorCode.Invalid, path, `${path} ${JSON.stringify(value)} is not a valid tag`, {
    hint: 'a tag is up to 128 letters, digits, _, . and -, and does not start with . or -',
  });
}

/** Record `key` as seen at `path`, or report it as a duplicate of the first one. */
function duplicate(
  seen: Map<string, string>,
  key: string,
  path: string,
  label: string,
  problems: IscProblems,
): void {
  const first = seen.get(key);
  if (first === undefined) {
    seen.set(key, path);
    return;
  }
  if (problems.full) {
    problems.add(IscErrorCode.Duplicate, path, `${label} is listed twice`);
    return;
  }
  const at = problems.position(first);
  const here = problems.position(path);
  const place = at
    ? here?.line === at.line
      ? `line ${at.line}, column ${at.column}`
      : `line ${at.line}`
    : undefined;
  problems.add(
    IscErrorCode.Duplicate,
    path,
    `${label} is listed twice${place ? ` (first at ${place})` : ''}`,
    {
      hint: `remove one of them, or merge them into ${first.replace(/\.name$|\.catalog$/, '')}`,
    },
  );
}
