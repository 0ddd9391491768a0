/**
 * `airgap mirror list operators`: what an operator catalog holds, to choose the packages and
 * channels of an ImageSetConfiguration, as oc-mirror's `list operators` does:
 * - the catalogs of an OpenShift version (Red Hat's four indexes, by name: nothing is asked);
 * - the packages of a catalog with their default channel, display name and latest version;
 * - the channels of a package with their heads (the entry nothing replaces or skips), the default
 *   marked;
 * - the bundles of one channel, oldest first, the head marked.
 * The catalog is read straight from its registry as it streams (or from an OCI layout, `oci:`):
 * only its file-based catalog is kept, in memory; no container runtime, nothing written to disk.
 */
import { didYouMean } from '../../config/suggest.js';
import { AirgapError, CommonError, usageError } from '../../util/errors.js';
import { noProgress, type ProgressSink } from '../../util/progress.js';
import { MirrorError } from '../errors.js';
import { compareSemver, parseSemver } from '../isc/semver.js';
import { OciLayout } from '../layout/store.js';
import { readCatalogContent, readCatalogImage, type CatalogImage } from '../openshift/catalog-image.js';
import type { FbcBundle, FbcChannel, FbcModel, FbcPackage } from '../openshift/fbc.js';
import { formatReference, parseTransport } from '../reference.js';
import { ClientPool } from '../copy/pool.js';
import { loadRegistriesConf } from '../registry/registries-conf.js';
import { ReadRedirect } from '../registry/redirect.js';
import { RegistryContent } from './registry-content.js';
import { marked, table } from './table.js';

/** Options of {@link listOperators}: `version`, or `catalog` (with `package`, then `channel`). */
export interface ListOperatorsOptions {
  /** An OpenShift version (`4.18`, `4.18.3`): the catalogs of that minor. */
  version?: string;
  /** A catalog image (`registry/path:tag`, `docker://…`, or `oci:<dir>[:<ref>]`): its packages. */
  catalog?: string;
  /** A package of the catalog: its channels. */
  package?: string;
  /** A channel of the package: its bundles. */
  channel?: string;
  /** Auth file to use first (then REGISTRY_AUTH_FILE, the containers and docker files). */
  authFile?: string;
  caFiles?: string[];
  certDir?: string;
  /** false: do not verify the catalog registry's TLS certificate. */
  tlsVerify?: boolean;
  /** containers-registries.conf(5) whose mirrors the catalog is read through (as `airgap mirror`). */
  registriesConf?: string;
  progress?: ProgressSink;
}

/** One of Red Hat's catalogs for a version. */
export interface CatalogEntry {
  /** `redhat-operator-index`. */
  name: string;
  /** `registry.redhat.io/redhat/redhat-operator-index:v4.18`. */
  image: string;
  /** The CatalogSource name OpenShift gives it in openshift-marketplace. */
  catalogSource: string;
  description: string;
}

export interface CatalogsListing {
  kind: 'catalogs';
  /** `4.18`. */
  version: string;
  catalogs: CatalogEntry[];
  notes: string[];
}

/** Where a listing's catalog was read: as named, and the manifest digest it pointed at. */
interface FromCatalog {
  catalog: string;
  digest: string;
}

export interface PackageEntry {
  name: string;
  displayName?: string;
  defaultChannel?: string;
  /** The version of the default channel's head. */
  latest?: string;
  /** The catalog's deprecation message for the package. */
  deprecated?: string;
}

export interface PackagesListing extends FromCatalog {
  kind: 'packages';
  packages: PackageEntry[];
}

export interface ChannelEntry {
  name: string;
  default: boolean;
  /** The bundle nothing in the channel replaces or skips (the highest version when several). */
  head?: string;
  /** The head's version. */
  version?: string;
  bundles: number;
  deprecated?: string;
  /** What is wrong with the channel's upgrade graph (opm would refuse it). */
  problem?: string;
}

export interface ChannelsListing extends FromCatalog {
  kind: 'channels';
  package: string;
  displayName?: string;
  defaultChannel?: string;
  channels: ChannelEntry[];
}

export interface BundleEntry {
  name: string;
  version: string;
  head: boolean;
  image?: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  deprecated?: string;
}

export interface BundlesListing extends FromCatalog {
  kind: 'bundles';
  package: string;
  channel: string;
  default: boolean;
  head?: string;
  bundles: BundleEntry[];
}

export type OperatorListing = CatalogsListing | PackagesListing | ChannelsListing | BundlesListing;

/** Red Hat's operator catalogs, as oc-mirror lists them, with the CatalogSource OpenShift names each. */
const RED_HAT_CATALOGS: readonly Omit<CatalogEntry, 'image'>[] = [
  {
    name: 'redhat-operator-index',
    catalogSource: 'redhat-operators',
    description: 'Red Hat products, supported by Red Hat',
  },
  {
    name: 'certified-operator-index',
    catalogSource: 'certified-operators',
    description: 'certified partner operators, supported by the partner',
  },
  {
    name: 'community-operator-index',
    catalogSource: 'community-operators',
    description: 'community operators, not supported by Red Hat',
  },
  {
    name: 'redhat-marketplace-index',
    catalogSource: 'redhat-marketplace',
    description: 'operators bought through Red Hat Marketplace',
  },
];

/** File-based catalogs replaced SQLite ones in OpenShift 4.11. */
const FIRST_FBC_MINOR = 11;

function flagMissing(flag: string, message: string, hint: string): AirgapError {
  return usageError(CommonError.FLAG_MISSING, message, { where: `--${flag}`, hint });
}

/** The catalogs of an OpenShift version (`4.18` or `4.18.3`). */
function listCatalogs(raw: string): CatalogsListing {
  const m = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.\d+(?:[-+].*)?)?$/.exec(raw.trim());
  if (!m) {
    throw usageError(CommonError.FLAG_INVALID, `--version "${raw}" is not an OpenShift version`, {
      where: '--version',
      hint: 'write the OpenShift minor, such as 4.18',
    });
  }
  const [major, minor] = [Number(m[1]), Number(m[2])];
  const version = `${major}.${minor}`;
  const notes: string[] = [];
  if (major === 4 && minor < FIRST_FBC_MINOR) {
    notes.push(
      `the catalogs of OpenShift ${version} are SQLite catalogs: airgap reads file-based catalogs (4.${FIRST_FBC_MINOR} and later) only`,
    );
  }
  return {
    kind: 'catalogs',
    version,
    catalogs: RED_HAT_CATALOGS.map((c) => ({
      name: c.name,
      image: `registry.redhat.io/redhat/${c.name}:v${version}`,
      catalogSource: c.catalogSource,
      description: c.description,
    })),
    notes,
  };
}

/** Read the catalog's FBC: from an OCI layout on disk, or streamed from its registry. */
async function readCatalog(opts: ListOperatorsOptions): Promise<{ catalog: string; image: CatalogImage }> {
  const raw = opts.catalog!.trim();
  const progress = opts.progress ?? noProgress;
  const t = parseTransport(raw, 'image');
  if (t.transport === 'oci') {
    const layout = await OciLayout.open(t.path);
    const entries = await layout.entries();
    const entry = t.refName
      ? entries.find((e) => e.refName === t.refName || e.refName.endsWith(`:${t.refName}`))
      : entries.length === 1
        ? entries[0]
        : undefined;
    if (!entry) {
      throw usageError(
        MirrorError.CATALOG_LAYOUT,
        t.refName
          ? `${raw}: the layout has no image named ${t.refName}`
          : `${raw} holds ${entries.length} images; name one as oci:<dir>:<name>`,
        {
          where: raw,
          hint: entries.length
            ? `it holds ${entries
                .slice(0, 5)
                .map((e) => e.refName)
                .join(', ')}${entries.length > 5 ? ', …' : ''}`
            : 'copy the catalog image into the layout first',
        },
      );
    }
    progress({ type: 'phase', name: 'catalog', detail: raw });
    return { catalog: raw, image: await readCatalogImage(layout, entry.descriptor.digest) };
  }
  if (t.transport !== 'docker') {
    throw usageError(MirrorError.REF_INVALID, `--catalog ${raw} is not an image`, {
      where: '--catalog',
      hint: 'name the catalog image: registry.redhat.io/redhat/redhat-operator-index:v4.18, or oci:<dir> for one on disk',
    });
  }
  const ref = t.reference;
  const name = formatReference(ref);
  // Read as `airgap mirror` reads a source: through registries.conf mirrors when a table applies.
  const registries = await loadRegistriesConf({ path: opts.registriesConf });
  const insecure = opts.tlsVerify === false;
  const pool = new ClientPool(
    {
      credentials: { authFile: opts.authFile },
      caFiles: opts.caFiles,
      ...(opts.certDir ? { certDirs: [opts.certDir] } : {}),
      onNotice: (message) => progress({ type: 'warning', message }),
    },
    undefined,
    { redirect: new ReadRedirect(registries), sourceInsecure: insecure },
  );
  const client = pool.get(ref.registry, 'source', insecure).client;
  try {
    const top = await client.getManifest(ref.repository, ref.digest ?? ref.tag ?? 'latest');
    progress({ type: 'phase', name: 'catalog', detail: name, moves: true, counting: true });
    const content = new RegistryContent(client, ref.repository, progress);
    return { catalog: name, image: await readCatalogContent(content, top.digest, name) };
  } finally {
    await pool.close();
  }
}

/** The display name of a bundle: its `olm.csv.metadata`, else the CSV among its `olm.bundle.object`s. */
function displayNameOf(b: FbcBundle | undefined): string | undefined {
  if (!b) return undefined;
  for (const p of b.properties) {
    if (p.type !== 'olm.csv.metadata') continue;
    const name = (p.value as { displayName?: unknown } | null)?.displayName;
    if (typeof name === 'string' && name !== '') return name;
  }
  for (const p of b.properties) {
    if (p.type !== 'olm.bundle.object') continue;
    const data = (p.value as { data?: unknown } | null)?.data;
    if (typeof data !== 'string') continue;
    try {
      const o = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as {
        kind?: unknown;
        spec?: { displayName?: unknown };
      };
      if (o.kind === 'ClusterServiceVersion' && typeof o.spec?.displayName === 'string')
        return o.spec.displayName;
    } catch {
      // not JSON: no display name from it
    }
  }
  return undefined;
}

const byVersion = (a: FbcBundle | undefined, b: FbcBundle | undefined): number => {
  const x = a && parseSemver(a.version);
  const y = b && parseSemver(b.version);
  if (x && y) return compareSemver(x, y);
  const [s, t] = [a?.version ?? '', b?.version ?? ''];
  return s < t ? -1 : s > t ? 1 : 0;
};

/** The heads of a channel: entries nothing in it replaces or skips, the highest version first. */
function headsOf(pkg: FbcPackage, ch: FbcChannel): string[] {
  const targets = new Set<string>();
  for (const e of ch.entries) {
    if (e.replaces) targets.add(e.replaces);
    for (const s of e.skips ?? []) targets.add(s);
  }
  return ch.entries
    .map((e) => e.name)
    .filter((n) => !targets.has(n))
    .sort((a, b) => byVersion(pkg.bundles.get(b), pkg.bundles.get(a)));
}

/** What the catalog's `olm.deprecations` say, keyed `package`, `package/channel/<name>`, `package/bundle/<name>`. */
function deprecations(model: FbcModel): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of model.deprecations) {
    const pkg = d.package;
    if (typeof pkg !== 'string' || !Array.isArray(d.entries)) continue;
    for (const e of d.entries as { reference?: { schema?: unknown; name?: unknown }; message?: unknown }[]) {
      const schema = e?.reference?.schema;
      const message =
        typeof e?.message === 'string' && e.message.trim() !== '' ? e.message.trim() : 'deprecated';
      if (schema === 'olm.package') out.set(pkg, message);
      else if (schema === 'olm.channel' && typeof e.reference?.name === 'string')
        out.set(`${pkg}/channel/${e.reference.name}`, message);
      else if (schema === 'olm.bundle' && typeof e.reference?.name === 'string')
        out.set(`${pkg}/bundle/${e.reference.name}`, message);
    }
  }
  return out;
}

/** The hint for a name that is not there: the closest ones, else those that contain it, else all. */
function closest(word: string, names: readonly string[], listing: string): string {
  const close = didYouMean(word, names);
  if (close) return close;
  const containing = names.filter((n) => n.toLowerCase().includes(word.toLowerCase())).slice(0, 5);
  if (containing.length > 0) return `did you mean ${containing.join(' or ')}?`;
  if (names.length <= 8) return `it has ${names.join(', ')}`;
  return `${listing} lists all ${names.length}`;
}

function packageOf(model: FbcModel, name: string, catalog: string): FbcPackage {
  const pkg = model.packages.get(name);
  if (pkg) return pkg;
  const names = [...model.packages.keys()].sort();
  throw usageError(
    MirrorError.CATALOG_PACKAGE_UNKNOWN,
    `--package ${name}: the catalog ${catalog} has no such package`,
    { where: '--package', hint: closest(name, names, `airgap mirror list operators --catalog ${catalog}`) },
  );
}

function channelOf(pkg: FbcPackage, name: string, catalog: string): FbcChannel {
  const ch = pkg.channels.get(name);
  if (ch) return ch;
  const names = [...pkg.channels.keys()].sort();
  throw usageError(
    MirrorError.CATALOG_CHANNEL_UNKNOWN,
    `--channel ${name}: package ${pkg.name} of ${catalog} has no such channel`,
    {
      where: '--channel',
      hint: closest(name, names, `airgap mirror list operators --catalog ${catalog} --package ${pkg.name}`),
    },
  );
}

function packages(model: FbcModel, from: FromCatalog): PackagesListing {
  const dep = deprecations(model);
  const list = [...model.packages.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((p): PackageEntry => {
      const ch = p.defaultChannel ? p.channels.get(p.defaultChannel) : undefined;
      const head = ch ? p.bundles.get(headsOf(p, ch)[0] ?? '') : undefined;
      const displayName = displayNameOf(head);
      return {
        name: p.name,
        ...(displayName ? { displayName } : {}),
        ...(p.defaultChannel ? { defaultChannel: p.defaultChannel } : {}),
        ...(head ? { latest: head.version } : {}),
        ...(dep.has(p.name) ? { deprecated: dep.get(p.name) } : {}),
      };
    });
  return { kind: 'packages', ...from, packages: list };
}

function channels(pkg: FbcPackage, model: FbcModel, from: FromCatalog): ChannelsListing {
  const dep = deprecations(model);
  const list = [...pkg.channels.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((ch): ChannelEntry => {
      const heads = headsOf(pkg, ch);
      const head = heads[0];
      const problem =
        ch.entries.length > 0 && heads.length === 0
          ? 'no head: every entry is replaced or skipped'
          : heads.length > 1
            ? `${heads.length} heads: ${heads.join(', ')}`
            : undefined;
      const deprecated = dep.get(`${pkg.name}/channel/${ch.name}`);
      return {
        name: ch.name,
        default: ch.name === pkg.defaultChannel,
        ...(head ? { head } : {}),
        ...(head && pkg.bundles.get(head) ? { version: pkg.bundles.get(head)!.version } : {}),
        bundles: ch.entries.length,
        ...(deprecated ? { deprecated } : {}),
        ...(problem ? { problem } : {}),
      };
    });
  const defaultCh = pkg.defaultChannel ? pkg.channels.get(pkg.defaultChannel) : undefined;
  const displayName = displayNameOf(
    defaultCh ? pkg.bundles.get(headsOf(pkg, defaultCh)[0] ?? '') : undefined,
  );
  return {
    kind: 'channels',
    ...from,
    package: pkg.name,
    ...(displayName ? { displayName } : {}),
    ...(pkg.defaultChannel ? { defaultChannel: pkg.defaultChannel } : {}),
    channels: list,
  };
}

function bundles(pkg: FbcPackage, ch: FbcChannel, model: FbcModel, from: FromCatalog): BundlesListing {
  const dep = deprecations(model);
  const head = headsOf(pkg, ch)[0];
  const list = [...ch.entries]
    .sort((a, b) => byVersion(pkg.bundles.get(a.name), pkg.bundles.get(b.name)) || (a.name < b.name ? -1 : 1))
    .map((e): BundleEntry => {
      const b = pkg.bundles.get(e.name);
      const deprecated = dep.get(`${pkg.name}/bundle/${e.name}`);
      return {
        name: e.name,
        version: b?.version ?? '',
        head: e.name === head,
        ...(b?.image ? { image: b.image } : {}),
        ...(e.replaces ? { replaces: e.replaces } : {}),
        ...(e.skips ? { skips: e.skips } : {}),
        ...(e.skipRange ? { skipRange: e.skipRange } : {}),
        ...(deprecated ? { deprecated } : {}),
      };
    });
  return {
    kind: 'bundles',
    ...from,
    package: pkg.name,
    channel: ch.name,
    default: ch.name === pkg.defaultChannel,
    ...(head ? { head } : {}),
    bundles: list,
  };
}

/**
 * What a catalog offers: the catalogs of `version`, the packages of `catalog`, the channels of its
 * `package`, or the bundles of one `channel`. FLAG_MISSING / FLAG_CONFLICT for flags that do not go
 * together; CATALOG_PACKAGE_UNKNOWN and CATALOG_CHANNEL_UNKNOWN (usage, with the closest names);
 * CATALOG_NO_FBC for an image that is no file-based catalog; the registry's own errors.
 */
export async function listOperators(opts: ListOperatorsOptions): Promise<OperatorListing> {
  if (opts.version !== undefined && opts.catalog !== undefined) {
    throw usageError(CommonError.FLAG_CONFLICT, '--version and --catalog list different things', {
      where: '--version, --catalog',
      hint: 'give --version for the catalogs of a version, or --catalog for the packages of one catalog',
    });
  }
  if (opts.catalog === undefined) {
    if (opts.package !== undefined)
      throw flagMissing(
        'catalog',
        '--package needs --catalog',
        'name the catalog the package is in: --catalog <image>',
      );
    if (opts.channel !== undefined)
      throw flagMissing(
        'catalog',
        '--channel needs --catalog and --package',
        'add --catalog <image> --package <name>',
      );
    if (opts.version === undefined)
      throw flagMissing(
        'version',
        'say what to list',
        'give --version 4.18 (the catalogs of that version) or --catalog <image> (its packages)',
      );
    return listCatalogs(opts.version);
  }
  if (opts.channel !== undefined && opts.package === undefined)
    throw flagMissing(
      'package',
      '--channel needs --package',
      'name the package the channel is in: --package <name>',
    );
  const { catalog, image } = await readCatalog(opts);
  const from = { catalog, digest: image.digest };
  const model = image.model;
  if (opts.package === undefined) return packages(model, from);
  const pkg = packageOf(model, opts.package.trim(), catalog);
  if (opts.channel === undefined) return channels(pkg, model, from);
  return bundles(pkg, channelOf(pkg, opts.channel.trim(), catalog), model, from);
}

/** A listing as aligned text, for a person. */
export function renderOperatorListing(l: OperatorListing): string {
  switch (l.kind) {
    case 'catalogs':
      return [
        `Operator catalogs of OpenShift ${l.version}:`,
        '',
        table(
          ['CATALOG', 'CATALOGSOURCE', 'WHAT'],
          l.catalogs.map((c) => [c.image, c.catalogSource, c.description]),
        ),
        '',
        'The packages of one: airgap mirror list operators --catalog <catalog>',
        '',
      ].join('\n');
    case 'packages':
      return [
        `${l.catalog} (${l.digest}): ${l.packages.length} package${l.packages.length === 1 ? '' : 's'}`,
        '',
        table(
          ['NAME', 'DISPLAY NAME', 'DEFAULT CHANNEL', 'LATEST'],
          l.packages.map((p) => [
            marked(p.name, [p.deprecated !== undefined && 'deprecated']),
            p.displayName ?? '',
            p.defaultChannel ?? '',
            p.latest ?? '',
          ]),
        ),
        '',
      ].join('\n');
    case 'channels': {
      const problems = l.channels.filter((c) => c.problem);
      return [
        `${l.package}${l.displayName ? ` (${l.displayName})` : ''} in ${l.catalog}: default channel ${l.defaultChannel ?? '(none)'}`,
        '',
        table(
          ['CHANNEL', 'HEAD', 'VERSION', 'BUNDLES'],
          l.channels.map((c) => [
            marked(c.name, [c.default && 'default', c.deprecated !== undefined && 'deprecated']),
            c.head ?? '',
            c.version ?? '',
            String(c.bundles),
          ]),
        ),
        ...problems.map((c) => `warning: channel ${c.name} has ${c.problem}`),
        '',
      ].join('\n');
    }
    case 'bundles':
      return [
        `${l.package} channel ${marked(l.channel, [l.default && 'default'])} in ${l.catalog}: ${l.bundles.length} bundle${l.bundles.length === 1 ? '' : 's'}, head ${l.head ?? '(none)'}`,
        '',
        table(
          ['VERSION', 'BUNDLE', 'REPLACES'],
          l.bundles.map((b) => [
            marked(b.version, [b.head && 'head', b.deprecated !== undefined && 'deprecated']),
            b.name,
            b.replaces ?? '',
          ]),
        ),
        '',
      ].join('\n');
  }
}
