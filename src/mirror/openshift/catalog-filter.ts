/**
 * Operator catalog filtering with oc-mirror v2's rules (sherine-k/catalog-filter
 * mirror-config/v1alpha1 `FilterCatalog`, fed by oc-mirror internal/pkg/operator/catalog_handler.go),
 * and a validation of the result with opm's model rules (operator-registry alpha/model) so a broken
 * catalog is refused before it is built. Everything is linear in catalog size: each channel entry
 * and each replaces/skips edge is visited a bounded number of times (no skip expansion, OCPBUGS-52471).
 */
import type { IncludeChannel, IncludePackage, Operator } from '../isc/types.js';
import { compareSemver, parseSemver, semverHint, type SemVer } from '../isc/semver.js';
import { AirgapError, usageError } from '../../util/errors.js';
import type { FbcBundle, FbcChannel, FbcChannelEntry, FbcModel, FbcPackage } from './fbc.js';
import { followDependencies, type DependencyAddition } from './catalog-dependencies.js';
import { MirrorError } from '../errors.js';

/**
 * Why a bundle was kept, per channel. `upgrade-path`: outside the range but needed to keep one chain;
 * `dependency`: a kept bundle requires it (catalog-dependencies.ts).
 */
export type KeepReason = 'head' | 'full' | 'in-range' | 'upgrade-path' | 'version' | 'dependency';

/** A kept bundle and the channels that kept it (`detail`: which bundle needs it, for dependencies). */
export interface KeptBundle {
  bundle: FbcBundle;
  why: { channel: string; reason: KeepReason; detail?: string }[];
}

/** The filtered catalog, the bundles kept and the images to mirror (bundle images + relatedImages). */
export interface FilterResult {
  model: FbcModel;
  kept: KeptBundle[];
  images: string[];
  warnings: string[];
  /** `full: true` with no packages: oc-mirror mirrors the catalog as is and does not rebuild it. */
  unmodified: boolean;
  /** Bundles kept only because a kept bundle requires them, in the order they were added. */
  added: DependencyAddition[];
}

export interface FilterOptions {
  /**
   * Follow the kept bundles' `olm.package.required` and `olm.gvk.required` through the catalog
   * (default true; off with --no-dependencies or the operator's `skipDependencies: true`). Only
   * with listed packages: without, every package's channel heads are kept already.
   */
  dependencies?: boolean;
}

/** The channel graph as OLM reads it: heads are entries nothing replaces or skips. */
interface Graph {
  byName: Map<string, FbcChannelEntry>;
  heads: FbcChannelEntry[];
  problems: string[];
}

const q = JSON.stringify;

function targets(e: FbcChannelEntry): Set<string> {
  const t = new Set(e.skips ?? []);
  if (e.replaces) t.add(e.replaces);
  return t;
}

/** Heads, duplicates, self-references, and cycles (a walk from the head must consume every edge). */
function analyze(ch: FbcChannel): Graph {
  const byName = new Map<string, FbcChannelEntry>();
  const incoming = new Map<string, number>();
  const problems: string[] = [];
  for (const e of ch.entries) {
    if (byName.has(e.name)) problems.push(`duplicate entry ${q(e.name)}`);
    byName.set(e.name, e);
    for (const t of targets(e)) {
      if (t === e.name) problems.push(`entry ${q(e.name)} replaces or skips itself`);
      incoming.set(t, (incoming.get(t) ?? 0) + 1);
    }
  }
  const heads = [...byName.values()].filter((e) => !incoming.has(e.name));
  if (ch.entries.length > 0 && heads.length === 0)
    problems.push('no channel head (every entry is replaced or skipped)');
  if (heads.length > 1)
    problems.push(
      `multiple channel heads: ${heads
        .map((h) => h.name)
        .sort()
        .join(', ')}`,
    );
  if (heads.length === 1 && problems.length === 0) {
    const queue = [heads[0].name];
    while (queue.length > 0) {
      const cur = byName.get(queue.pop() as string);
      for (const t of cur ? targets(cur) : []) {
        const left = (incoming.get(t) ?? 0) - 1;
        incoming.set(t, left);
        if (left === 0) queue.push(t);
      }
    }
    const cyclic = [...incoming].filter(([, n]) => n > 0).map(([name]) => name);
    if (cyclic.length > 0) problems.push(`cycle in the upgrade graph through ${cyclic.sort().join(', ')}`);
  }
  return { byName, heads, problems };
}

/** Masterminds semver "`>=min <=max`": prereleases match only when a bound has a prerelease. */
function versionRange(min?: string, max?: string): ((v: string) => boolean) | undefined {
  if (min === undefined && max === undefined) return undefined;
  const bound = (raw: string | undefined, field: string): SemVer | undefined => {
    if (raw === undefined) return undefined;
    const v = parseSemver(raw);
    if (!v)
      throw usageError(MirrorError.CATALOG_FILTER, `${field} ${q(raw)} is not a semantic version`, {
        hint: semverHint(raw),
      });
    return v;
  };
  const lo = bound(min, 'minVersion');
  const hi = bound(max, 'maxVersion');
  const pre = (lo?.prerelease.length ?? 0) > 0 || (hi?.prerelease.length ?? 0) > 0;
  return (raw) => {
    const v = looseSemver(raw);
    if (!v || (v.prerelease.length > 0 && !pre)) return false;
    return (!lo || compareSemver(v, lo) >= 0) && (!hi || compareSemver(v, hi) <= 0);
  };
}

function looseSemver(raw: string): SemVer | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/.exec(raw);
  return parseSemver(raw) ?? (m ? parseSemver(`${m[1]}.${m[2] ?? 0}.${m[3] ?? 0}${m[4]}`) : undefined);
}

/**
 * catalog-filter `filterByVersionRange`: walk the replaces chain from the head; count, bottom-up,
 * the in-range entries at or below each node (each counted once); the new head is the lowest node
 * with the top count, the tail the first node with none. Keep head..tail and in-range skips.
 */
function rangeEntries(g: Graph, inRange: (name: string) => boolean): Map<string, KeepReason> {
  const chain: FbcChannelEntry[] = [];
  const onChain = new Set<string>();
  let cur: FbcChannelEntry | undefined = g.heads[0];
  while (cur && !onChain.has(cur.name)) {
    chain.push(cur);
    onChain.add(cur.name);
    cur = cur.replaces === undefined ? undefined : g.byName.get(cur.replaces);
  }
  const seen = new Set<string>();
  const counts = new Array<number>(chain.length + 1).fill(0);
  const countOnce = (name: string): number => {
    if (seen.has(name) || !g.byName.has(name) || !inRange(name)) return 0;
    seen.add(name);
    return 1;
  };
  for (let i = chain.length - 1; i >= 0; i--) {
    counts[i] = counts[i + 1] + countOnce(chain[i].name);
    for (const s of chain[i].skips ?? []) counts[i] += countOnce(s);
  }
  let head = 0;
  let tail = chain.length;
  for (let i = 0; i < chain.length; i++) {
    if (counts[i] >= counts[head]) head = i;
    if (counts[i] === 0) {
      tail = i;
      break;
    }
  }
  const keep = new Map<string, KeepReason>();
  for (let i = head; i < tail; i++) {
    keep.set(chain[i].name, inRange(chain[i].name) ? 'in-range' : 'upgrade-path');
    for (const s of chain[i].skips ?? []) if (g.byName.has(s) && inRange(s)) keep.set(s, 'in-range');
  }
  return keep;
}

function didYouMean(name: string, options: string[]): string | undefined {
  const dist = (a: string, b: string): number => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) {
        row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      prev = row;
    }
    return prev[b.length];
  };
  let best: [string, number] | undefined;
  for (const o of options) {
    const d = o.includes(name) || name.includes(o) ? 1 : dist(name.toLowerCase(), o.toLowerCase());
    if (d <= Math.max(2, Math.floor(name.length / 3)) && (!best || d < best[1])) best = [o, d];
  }
  return best?.[0];
}

function notFound(what: string, name: string, options: string[], where: string): AirgapError {
  const guess = didYouMean(name, options);
  return usageError(MirrorError.CATALOG_FILTER, `${what} ${q(name)} is not in the catalog`, {
    where,
    hint: guess
      ? `did you mean ${q(guess)}?`
      : `the catalog has: ${options.slice(0, 12).join(', ')}${options.length > 12 ? ', …' : ''}`,
  });
}

/** Pick the kept entries of one channel, with the catalog-filter rules for its mode. */
function filterChannel(
  pkg: FbcPackage,
  ch: FbcChannel,
  full: boolean,
  inc: IncludePackage | undefined,
  chInc: IncludeChannel | undefined,
): Map<string, KeepReason> {
  if (full) return new Map(ch.entries.map((e) => [e.name, 'full' as const]));
  const [min, max] =
    chInc?.minVersion || chInc?.maxVersion
      ? [chInc.minVersion, chInc.maxVersion]
      : [inc?.minVersion, inc?.maxVersion];
  if (min !== undefined && min === max) {
    // OCPBUGS-61497: min == max selects exactly that version (searched across the package).
    const match = looseSemver(min);
    const hit = [...pkg.bundles.values()].find((b) => {
      const v = looseSemver(b.version);
      return v && match && compareSemver(v, match) === 0;
    });
    if (!hit)
      throw usageError(
        MirrorError.CATALOG_FILTER,
        `package ${q(pkg.name)} has no bundle with version ${min}`,
        {
          where: `package ${q(pkg.name)}`,
        },
      );
    return ch.entries.some((e) => e.name === hit.name) ? new Map([[hit.name, 'version']]) : new Map();
  }
  const g = analyze(ch);
  if (g.problems.length > 0) {
    throw new AirgapError(
      MirrorError.CATALOG_INVALID,
      `the source catalog's channel is invalid: ${g.problems.join('; ')}`,
      {
        where: `package ${q(pkg.name)} channel ${q(ch.name)}`,
        hint: 'the catalog image itself is broken; report it to its publisher or mirror it with full: true',
      },
    );
  }
  const inRange = versionRange(min, max);
  if (!inRange) return new Map([[g.heads[0].name, 'head']]);
  return rangeEntries(g, (name) => {
    const b = pkg.bundles.get(name);
    return b !== undefined && inRange(b.version);
  });
}

/** oc-mirror's default channel rule: an override must survive; without one the original must. */
function defaultChannel(pkg: FbcPackage, inc: IncludePackage, kept: string[]): string | undefined {
  const where = `package ${q(pkg.name)}`;
  if (inc.defaultChannel) {
    if (!kept.includes(inc.defaultChannel)) {
      throw usageError(
        MirrorError.CATALOG_FILTER,
        `the default channel override ${q(inc.defaultChannel)} is not among the mirrored channels`,
        {
          where,
          hint: `set defaultChannel to one of: ${kept.join(', ')}`,
        },
      );
    }
    return inc.defaultChannel;
  }
  if (pkg.defaultChannel && !kept.includes(pkg.defaultChannel)) {
    throw usageError(
      MirrorError.CATALOG_FILTER,
      `the default channel ${q(pkg.defaultChannel)} was filtered out, a new default channel must be configured for this package`,
      {
        where,
        hint: `add defaultChannel: <one of ${kept.join(', ')}> to this package in the ImageSetConfiguration`,
      },
    );
  }
  return pkg.defaultChannel;
}

/** Filter one package: its selected channels, their kept entries and bundles, its default channel. */
function filterPackage(
  pkg: FbcPackage,
  op: Operator,
  inc: IncludePackage | undefined,
  out: Map<string, KeptBundle>,
  warnings: string[],
): FbcPackage {
  const listed = inc && inc.channels.length > 0 ? new Map(inc.channels.map((c) => [c.name, c])) : undefined;
  for (const name of listed?.keys() ?? []) {
    if (!pkg.channels.has(name))
      throw notFound(`channel`, name, [...pkg.channels.keys()], `package ${q(pkg.name)}`);
  }
  const selected = [...pkg.channels.values()].filter((c) => !listed || listed.has(c.name));
  const dflt = inc
    ? defaultChannel(
        pkg,
        inc,
        selected.map((c) => c.name),
      )
    : pkg.defaultChannel;
  const channels = new Map<string, FbcChannel>();
  for (const ch of selected) {
    const keep = filterChannel(pkg, ch, op.full, inc, listed?.get(ch.name));
    if (keep.size === 0) {
      if (ch.name === dflt) {
        throw usageError(
          MirrorError.CATALOG_FILTER,
          `the version range leaves the default channel ${q(ch.name)} empty`,
          {
            where: `package ${q(pkg.name)} channel ${q(ch.name)}`,
            hint: 'widen minVersion/maxVersion, or set defaultChannel to a channel that keeps bundles',
          },
        );
      }
      warnings.push(
        `package ${q(pkg.name)}: channel ${q(ch.name)} has no bundle in the range and is dropped`,
      );
      continue;
    }
    channels.set(ch.name, { ...ch, entries: ch.entries.filter((e) => keep.has(e.name)) });
    for (const [name, reason] of keep) {
      const bundle = pkg.bundles.get(name);
      if (!bundle) continue;
      if (reason === 'upgrade-path')
        warnings.push(`including ${q(name)} (${bundle.version}): outside the range but on the upgrade path`);
      const k = out.get(`${pkg.name}\0${name}`) ?? { bundle, why: [] };
      k.why.push({ channel: ch.name, reason });
      out.set(`${pkg.name}\0${name}`, k);
    }
  }
  const bundles = new Map([...pkg.bundles].filter(([name]) => out.has(`${pkg.name}\0${name}`)));
  return { ...pkg, defaultChannel: dflt, channels, bundles };
}

/**
 * Filter a catalog for one `mirror.operators[]` entry, as oc-mirror v2 does: no packages → every
 * package (heads of every channel, or the whole catalog unmodified with `full: true`); listed
 * packages → only those; per channel: the head, all entries (`full`), or the min/max range (the
 * channel's own range, else the package's); then, for listed packages, the bundles the kept ones
 * require (catalog-dependencies.ts). The result is validated before it is returned.
 */
export function filterCatalog(model: FbcModel, op: Operator, opts: FilterOptions = {}): FilterResult {
  const warnings: string[] = [];
  const out = new Map<string, KeptBundle>();
  if (op.full && op.packages.length === 0) {
    for (const p of model.packages.values()) {
      for (const b of p.bundles.values())
        out.set(`${p.name}\0${b.name}`, { bundle: b, why: [{ channel: '*', reason: 'full' }] });
    }
    return finish(model, out, warnings, true, []);
  }
  const listed = new Map(op.packages.map((p) => [p.name, p]));
  for (const [name, inc] of listed) {
    const ranged = inc.minVersion || inc.maxVersion || inc.channels.some((c) => c.minVersion || c.maxVersion);
    if (op.full && ranged)
      throw usageError(
        MirrorError.CATALOG_FILTER,
        `package ${q(name)}: full: true cannot be mixed with minVersion/maxVersion`,
      );
    if (!model.packages.has(name)) throw notFound('package', name, [...model.packages.keys()], op.catalog);
  }
  const packages = new Map<string, FbcPackage>();
  for (const pkg of model.packages.values()) {
    if (listed.size > 0 && !listed.has(pkg.name)) continue;
    packages.set(pkg.name, filterPackage(pkg, op, listed.get(pkg.name), out, warnings));
  }
  let added: DependencyAddition[] = [];
  if (opts.dependencies !== false && !op.skipDependencies && listed.size > 0) {
    const deps = followDependencies(model, packages, out);
    added = deps.added;
    warnings.push(...deps.warnings);
  }
  const keep = (pkg: unknown): boolean => listed.size === 0 || (typeof pkg === 'string' && packages.has(pkg));
  const deprecations = model.deprecations
    .filter((d) => keep(d.package))
    .map((d) => {
      const p = packages.get(String(d.package));
      const entries = (Array.isArray(d.entries) ? d.entries : []).filter(
        (e: { reference?: { schema?: string; name?: string } }) => {
          const ref = e.reference ?? {};
          if (ref.schema === 'olm.bundle') return !p || p.bundles.has(String(ref.name));
          if (ref.schema === 'olm.channel') return !p || p.channels.has(String(ref.name));
          return true;
        },
      );
      return { ...d, entries };
    });
  const others = model.others.filter((o) => o.package === undefined || o.package === '' || keep(o.package));
  const result = finish({ packages, deprecations, others }, out, warnings, false, added);
  validateCatalog(result.model);
  return result;
}

function finish(
  model: FbcModel,
  out: Map<string, KeptBundle>,
  warnings: string[],
  unmodified: boolean,
  added: DependencyAddition[],
): FilterResult {
  const kept = [...out.values()].sort((a, b) =>
    a.bundle.package === b.bundle.package
      ? a.bundle.name < b.bundle.name
        ? -1
        : 1
      : a.bundle.package < b.bundle.package
        ? -1
        : 1,
  );
  const images = new Set<string>();
  for (const k of kept) {
    if (k.bundle.image) images.add(k.bundle.image);
    for (const ri of k.bundle.relatedImages) images.add(ri.image);
  }
  return { model, kept, images: [...images], warnings, unmodified, added };
}

/**
 * Refuse a catalog OLM would reject (opm's model validation): every package has channels and a
 * default channel that exists; every channel has entries, each entry a bundle of the package, one
 * head, no cycle and no stranded entry; every bundle is in a channel. Replaces/skips may point
 * outside the channel (the tail may replace a bundle that is not there: that is how heads-only
 * catalogs upgrade installed operators). Throws CATALOG_INVALID naming package and channel.
 */
export function validateCatalog(model: FbcModel): void {
  const problems: { where: string; what: string; hint: string }[] = [];
  for (const pkg of model.packages.values()) {
    const where = `package ${q(pkg.name)}`;
    const names = [...pkg.channels.keys()];
    if (names.length === 0)
      problems.push({ where, what: 'the package has no channel', hint: 'mirror at least one channel of it' });
    else if (!pkg.defaultChannel || !pkg.channels.has(pkg.defaultChannel)) {
      problems.push({
        where,
        what: `the default channel ${q(pkg.defaultChannel ?? '')} is not in the catalog`,
        hint: `set defaultChannel for this package to one of: ${names.join(', ')}`,
      });
    }
    const inChannel = new Set<string>();
    for (const ch of pkg.channels.values()) {
      const cw = `${where} channel ${q(ch.name)}`;
      if (ch.entries.length === 0) {
        problems.push({
          where: cw,
          what: 'the channel is empty',
          hint: 'widen minVersion/maxVersion or stop listing this channel',
        });
        continue;
      }
      for (const e of ch.entries) {
        inChannel.add(e.name);
        if (!pkg.bundles.has(e.name)) {
          problems.push({
            where: cw,
            what: `entry ${q(e.name)} has no bundle in the catalog`,
            hint: 'the bundle was not kept; widen the version range so it is',
          });
        }
      }
      const g = analyze(ch);
      problems.push(...g.problems.map((what) => ({ where: cw, what, hint: brokenChainHint(g) })));
      if (g.problems.length === 0) {
        const stranded = strandedEntries(g);
        if (stranded.length > 0)
          problems.push({
            where: cw,
            what: `stranded entries: ${stranded.join(', ')}`,
            hint: brokenChainHint(g),
          });
      }
    }
    for (const b of pkg.bundles.keys()) {
      if (!inChannel.has(b))
        problems.push({
          where,
          what: `bundle ${q(b)} is in no channel`,
          hint: 'drop the bundle or keep a channel that lists it',
        });
    }
  }
  if (problems.length === 0) return;
  const [first] = problems;
  const more =
    problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new AirgapError(
    MirrorError.CATALOG_INVALID,
    `the filtered catalog is invalid: ${first.what}${more}`,
    {
      where: first.where,
      hint: first.hint,
      details: { problems },
    },
  );
}

/** opm `validateReplacesChain`: entries off the replaces chain from the head and never skipped. */
function strandedEntries(g: Graph): string[] {
  const skipped = new Set<string>();
  for (const e of g.byName.values()) for (const s of e.skips ?? []) skipped.add(s);
  const chain = new Set<string>();
  let cur: FbcChannelEntry | undefined = g.heads[0];
  while (cur && !chain.has(cur.name)) {
    chain.add(cur.name);
    cur = !cur.replaces || skipped.has(cur.replaces) ? undefined : g.byName.get(cur.replaces);
  }
  return [...g.byName.keys()].filter((n) => !chain.has(n) && !skipped.has(n)).sort();
}

function brokenChainHint(g: Graph): string {
  const gaps = [...g.byName.values()].filter(
    (e) => e.replaces && !g.byName.has(e.replaces) && g.heads.length > 1,
  );
  const gap = gaps.find((e) => !g.heads.some((h) => h.name === e.replaces));
  return gap
    ? `${q(gap.name)} replaces ${q(gap.replaces)}, which is not in the channel, so the upgrade chain is broken there; widen the version range to keep it`
    : 'the kept bundles must form one upgrade chain; widen the version range or use the channel head';
}
