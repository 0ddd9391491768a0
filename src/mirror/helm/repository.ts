/**
 * A Helm chart repository over HTTP(S), as `helm repo add` and `helm pull` read one: its
 * `index.yaml` (`entries: {<chart>: [{version, urls, digest, type}]}`), then a chart archive from
 * one of the version's `urls` (relative to the repository), checked against the index's sha256
 * digest. As oc-mirror v2 does: a repository listing no charts means every version of every chart
 * of its index (library charts left out), a chart without a version means its newest release; the index is kept
 * in the workspace at `helm/indexes/<host/path>/index.yaml` and each chart at
 * `helm/charts/<name>-<version>.tgz`.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isYamlLimitError, parseYaml } from '../../config/yaml-load.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { getBytes, type TlsOptions } from '../../net/http.js';
import { shownUrl } from '../../net/url.js';
import { pathSegment, segmentProblem, shownInput, type PathSegment } from '../../util/path-segment.js';
import { compareSemver, parseSemver, parseVersion } from '../isc/semver.js';
import { MirrorError } from '../errors.js';

/** One version of a chart in a repository index: its name and version checked as Helm checks them. */
export interface IndexedChart {
  name: PathSegment;
  version: string;
  /** `<name>-<version>.tgz`, the file it is kept as (checked: it names one file). */
  file: PathSegment;
  urls: string[];
  /** The sha256 of the chart archive (hex), when the index gives one. */
  digest?: string;
  /** `library` charts render nothing and are not mirrored. */
  type?: string;
}

/** A repository index: the versions of each chart. */
export interface ChartIndex {
  url: string;
  /** The index as served (kept in the workspace). */
  text: string;
  entries: Map<string, IndexedChart[]>;
  /** Entries left out, as Helm leaves them out (`skipping loading invalid entry …`), with why. */
  skipped: string[];
}

/** The largest index.yaml read (Bitnami's full index is ~15 MiB). */
const MAX_INDEX = 64 * 1024 * 1024;
/** The largest chart archive read. */
const MAX_CHART = 100 * 1024 * 1024;

/** The index URL of a repository URL, as oc-mirror forms it (`<url>/index.yaml`). */
function indexUrlOf(repoUrl: string): string {
  return repoUrl.endsWith('/index.yaml') ? repoUrl : `${repoUrl.replace(/\/+$/, '')}/index.yaml`;
}

/**
 * `helm/indexes/<host/path>` of a repository, as oc-mirror names it; each part of the URL is a
 * checked path segment (a dot segment the URL parser left, or a NUL, is refused).
 */
export function indexDirOf(repoUrl: string): string {
  const u = new URL(indexUrlOf(repoUrl));
  const where = `helm repository ${shownUrl(u)}`;
  const path = u.pathname.split('/').slice(0, -1).filter(Boolean);
  return join(
    'helm',
    'indexes',
    ...[u.host, ...path].map((p) => pathSegment(decodeURIComponentSafe(p), where)),
  );
}

/** A URL path segment as the file name it becomes (`%2F` is a separator once decoded, and refused). */
function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // A malformed escape (URIError) is kept as written: pathSegment then checks it as it is.
    return s;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fetch and read a repository's index; HELM_REPO_* errors name the repository. */
export async function fetchIndex(
  name: string,
  repoUrl: string,
  tls: TlsOptions = {},
  authorization?: string,
): Promise<ChartIndex> {
  const url = indexUrlOf(repoUrl);
  let body: Buffer | undefined;
  try {
    body = await getBytes(url, {
      ...tls,
      ...(authorization ? { headers: { authorization } } : {}),
      accept: 'application/x-yaml, text/yaml, */*',
      errorPrefix: 'HELM_REPO',
      retries: 2,
      maxBytes: MAX_INDEX,
      unreachableHint: `check the URL of helm repository "${name}" and the network or proxy to it`,
    });
  } catch (e) {
    if (e instanceof AirgapError) {
      throw new AirgapError(e.code, `helm repository "${name}": ${e.message}`, {
        ...(e.hint ? { hint: e.hint } : {}),
        where: shownUrl(url),
        cause: e,
      });
    }
    throw e;
  }
  const text = body!.toString('utf8');
  return { url, text, ...parseIndex(text, `helm repository "${name}" (${shownUrl(url)})`) };
}

/**
 * Why an index entry is not loaded, as Helm's index loader skips it (metadata.Validate: a name that
 * is its own base name, a SemVer version as Masterminds parses it), or undefined. The file it
 * becomes (`<name>-<version>.tgz`) must be one file name too.
 */
function entryProblem(name: string, version: unknown): string | undefined {
  const bad = segmentProblem(name); // Helm: the name is its own base name; here: one file name
  if (bad) return `its name cannot name a file: ${bad}`;
  if (typeof version !== 'string' || version === '') return 'it has no version';
  if (!parseVersion(version)) return `its version ${shownInput(version)} is not a semantic version`;
  const file = segmentProblem(`${name}-${version}.tgz`);
  return file ? `its file name cannot be made: ${file}` : undefined;
}

/** Read an index.yaml; HELM_INDEX_INVALID says what is wrong. Invalid entries are skipped, as Helm skips them. */
function parseIndex(text: string, what: string): { entries: Map<string, IndexedChart[]>; skipped: string[] } {
  let doc: unknown;
  try {
    doc = parseYaml(text, { source: `the index.yaml of ${what}`, json: true });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw new AirgapError(MirrorError.HELM_INDEX_INVALID, `${what}: its index.yaml is not YAML`, {
      hint: 'check that the URL is a Helm chart repository (it serves index.yaml)',
      cause: e,
    });
  }
  if (!isObject(doc) || !isObject(doc.entries)) {
    throw new AirgapError(MirrorError.HELM_INDEX_INVALID, `${what}: its index.yaml has no entries`, {
      hint: 'check that the URL is a Helm chart repository (it serves index.yaml with entries:)',
    });
  }
  const out = new Map<string, IndexedChart[]>();
  const skipped: string[] = [];
  for (const [name, versions] of Object.entries(doc.entries)) {
    if (!Array.isArray(versions)) continue;
    const list: IndexedChart[] = [];
    for (const v of versions) {
      if (!isObject(v) || !Array.isArray(v.urls)) continue;
      const problem = entryProblem(name, v.version);
      if (problem) {
        skipped.push(
          `${what}: skipped the entry for chart ${shownInput(name)} ${shownInput(v.version)}: ${problem}`,
        );
        continue;
      }
      const version = v.version as string;
      list.push({
        name: name as PathSegment,
        version,
        file: `${name}-${version}.tgz` as PathSegment,
        urls: v.urls.filter((u): u is string => typeof u === 'string'),
        ...(typeof v.digest === 'string' ? { digest: v.digest } : {}),
        ...(typeof v.type === 'string' ? { type: v.type } : {}),
      });
    }
    if (list.length > 0) out.set(name, list);
  }
  return { entries: out, skipped };
}

/**
 * The versions to mirror: the one asked for, else the newest release (prereleases only when the
 * chart has nothing else), as `helm pull` picks it. HELM_CHART_NOT_FOUND names what there is.
 */
export function chooseChart(index: ChartIndex, repo: string, name: string, version?: string): IndexedChart {
  const versions = index.entries.get(name);
  if (!versions || versions.length === 0) {
    const names = [...index.entries.keys()].sort();
    throw usageError(MirrorError.HELM_CHART_NOT_FOUND, `helm repository "${repo}" has no chart "${name}"`, {
      hint:
        names.length > 0
          ? `it has ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`
          : 'its index lists no chart',
    });
  }
  if (version !== undefined) {
    const v = versions.find((c) => c.version === version || c.version === `v${version}`);
    if (!v) {
      throw usageError(
        MirrorError.HELM_CHART_NOT_FOUND,
        `helm repository "${repo}" has no version ${version} of chart "${name}"`,
        {
          hint: `it has ${versions
            .map((c) => c.version)
            .slice(0, 12)
            .join(', ')}`,
        },
      );
    }
    return v;
  }
  const parsed = versions
    .map((c) => ({ c, s: parseSemver(c.version.replace(/^v/, '')) }))
    .filter((x): x is { c: IndexedChart; s: NonNullable<typeof x.s> } => x.s !== undefined);
  const releases = parsed.filter((x) => x.s.prerelease.length === 0);
  const pool = releases.length > 0 ? releases : parsed;
  if (pool.length === 0) return versions[0]!;
  return pool.reduce((a, b) => (compareSemver(b.s, a.s) > 0 ? b : a)).c;
}

/**
 * Every version of every chart of an index that renders something (library charts left out), as
 * oc-mirror v2 reads a repository that lists no charts: by name, each chart's newest first.
 */
export function allCharts(index: ChartIndex): IndexedChart[] {
  const newestFirst = (a: IndexedChart, b: IndexedChart) => {
    const [sa, sb] = [parseSemver(a.version.replace(/^v/, '')), parseSemver(b.version.replace(/^v/, ''))];
    return sa && sb ? compareSemver(sb, sa) : 0;
  };
  return [...index.entries.keys()]
    .sort()
    .flatMap((name) => [...index.entries.get(name)!].sort(newestFirst))
    .filter((c) => c.type !== 'library');
}

/** Download a chart archive, check it against the index's digest, and keep it at `file`. */
export async function downloadChart(
  repo: string,
  index: ChartIndex,
  chart: IndexedChart,
  file: string,
  tls: TlsOptions = {},
  authorization?: string,
): Promise<Buffer> {
  const first = chart.urls[0];
  if (!first) {
    throw new AirgapError(
      MirrorError.HELM_INDEX_INVALID,
      `helm repository "${repo}": chart ${chart.name} ${chart.version} has no URL in its index`,
    );
  }
  const target = new URL(first, index.url);
  const url = target.href;
  const what = `chart ${chart.name} ${chart.version} of helm repository "${repo}"`;
  // The repository's credentials go to the repository's host only (Helm's default: credentials are not passed to other hosts).
  const sameHost = target.host === new URL(index.url).host;
  let bytes: Buffer | undefined;
  try {
    bytes = await getBytes(url, {
      ...tls,
      ...(authorization && sameHost ? { headers: { authorization } } : {}),
      errorPrefix: 'HELM_REPO',
      retries: 2,
      maxBytes: MAX_CHART,
    });
  } catch (e) {
    if (e instanceof AirgapError)
      throw new AirgapError(e.code, `${what}: ${e.message}`, { where: shownUrl(url), cause: e });
    throw e;
  }
  const hex = createHash('sha256').update(bytes!).digest('hex');
  const want = chart.digest?.replace(/^sha256:/, '');
  if (want && want !== hex) {
    throw new AirgapError(
      MirrorError.HELM_CHART_DIGEST,
      `${what}: the archive hashes to ${hex}, its index says ${want}`,
      {
        where: shownUrl(url),
        hint: 'the repository or a proxy served something else; nothing was kept',
      },
    );
  }
  await writeFileAtomic(file, bytes!);
  return bytes!;
}
