/**
 * Operator dependencies, followed through the same catalog as OLM's resolver would need them on the
 * cluster (oc-mirror v1 did this through operator-registry's `declcfg` diff; v2 does not). Every
 * kept bundle's `olm.package.required` ({packageName, versionRange}, a blang/semver range) and
 * `olm.gvk.required` ({group, version, kind}) properties are read; a requirement that no kept bundle
 * meets brings in one bundle of the catalog that meets it, whose own requirements are then followed:
 *
 * - a package: the head of its default channel if it is in range, else the highest version in range
 *   in any channel;
 * - an API (GVK): the default channel head of a package whose bundle provides it (`olm.gvk`), else
 *   the highest version of a providing package; packages already kept are preferred.
 *
 * The bundle is kept in one channel: alone when that channel is new to the filtered catalog (it is
 * then that channel's head, and the channel the package's default when the package is new), or with
 * the entries between it and the channel's kept entries, so the channel stays one upgrade chain.
 * A requirement nothing in the catalog meets is a warning naming the bundle that has it.
 */
import { compareSemver, parseSemver, type SemVer } from '../isc/semver.js';
import type { KeptBundle } from './catalog-filter.js';
import type { FbcBundle, FbcChannel, FbcChannelEntry, FbcModel, FbcPackage } from './fbc.js';
import { parseSemverRange, RangeSyntaxError, type SemverRange } from './semver-range.js';

/** A bundle kept because a kept bundle requires it, and why. */
export interface DependencyAddition {
  package: string;
  bundle: string;
  version: string;
  channel: string;
  /** The kept bundle that requires it: `odf-operator 4.18.2`. */
  requiredBy: string;
  /** `olm.package.required odf-dependencies >=4.18.0 <4.19.0`, `olm.gvk.required ocs.openshift.io/v1 StorageCluster`, or the upgrade path it is on. */
  requirement: string;
}

export interface DependencyResult {
  added: DependencyAddition[];
  warnings: string[];
}

type Requirement =
  | { type: 'olm.package.required'; packageName: string; range: string; inRange: SemverRange }
  | { type: 'olm.gvk.required'; group: string; version: string; kind: string };

interface Choice {
  pkg: FbcPackage;
  bundle: FbcBundle;
  channel: string;
}

const q = JSON.stringify;
const label = (b: FbcBundle): string => `${b.package} ${b.version}`;
const gvkKey = (g: { group: string; version: string; kind: string }): string =>
  `${g.group}\0${g.version}\0${g.kind}`;
const gvkText = (g: { group: string; version: string; kind: string }): string =>
  `${g.group ? `${g.group}/` : ''}${g.version} ${g.kind}`;

function requirementText(r: Requirement): string {
  return r.type === 'olm.package.required'
    ? `olm.package.required ${r.packageName}${r.range ? ` ${r.range}` : ''}`
    : `olm.gvk.required ${gvkText(r)}`;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The bundle's requirements; a malformed one is a warning and is not followed. */
function requirementsOf(b: FbcBundle, warnings: string[]): Requirement[] {
  const out: Requirement[] = [];
  for (const p of b.properties) {
    const v = record(p.value);
    if (p.type === 'olm.package.required') {
      const packageName = typeof v.packageName === 'string' ? v.packageName : '';
      const range = typeof v.versionRange === 'string' ? v.versionRange.trim() : '';
      if (packageName === '') {
        warnings.push(`${label(b)} has an olm.package.required property without packageName: not followed`);
        continue;
      }
      try {
        // An empty range is any version (operator-registry's diff reads it so).
        const inRange = range === '' ? () => true : parseSemverRange(range);
        out.push({ type: p.type, packageName, range, inRange });
      } catch (e) {
        if (!(e instanceof RangeSyntaxError)) throw e;
        warnings.push(
          `${label(b)} requires package ${packageName} in the version range ${q(range)}, which is not a valid range (${e.message}): not followed`,
        );
      }
    } else if (p.type === 'olm.gvk.required') {
      const [group, version, kind] = [v.group ?? '', v.version, v.kind];
      if (
        typeof group !== 'string' ||
        typeof version !== 'string' ||
        typeof kind !== 'string' ||
        !version ||
        !kind
      ) {
        warnings.push(
          `${label(b)} has an olm.gvk.required property without group, version and kind: not followed`,
        );
        continue;
      }
      out.push({ type: p.type, group, version, kind });
    }
  }
  return out;
}

function gvksOf(b: FbcBundle): string[] {
  return b.properties
    .filter((p) => p.type === 'olm.gvk')
    .map((p) => record(p.value))
    .filter((v) => typeof v.version === 'string' && typeof v.kind === 'string')
    .map((v) =>
      gvkKey({
        group: typeof v.group === 'string' ? v.group : '',
        version: String(v.version),
        kind: String(v.kind),
      }),
    );
}

function targets(e: FbcChannelEntry): string[] {
  return [...(e.skips ?? []), ...(e.replaces ? [e.replaces] : [])];
}

/** The channel's one head (the entry nothing replaces or skips), or undefined when it has none or several. */
function headOf(ch: FbcChannel | undefined): string | undefined {
  if (!ch) return undefined;
  const incoming = new Set(ch.entries.flatMap(targets));
  const heads = ch.entries.filter((e) => !incoming.has(e.name));
  return heads.length === 1 ? heads[0]!.name : undefined;
}

/**
 * Entries to add to a kept channel so that it also holds `target` and stays one chain: the source
 * channel's replaces chain is walked from its head, and every entry between the kept ones and
 * `target` (or the entry that skips it) is added. Undefined when the source channel has no single
 * chain to walk.
 */
function pathTo(source: FbcChannel, kept: FbcChannel, target: string): string[] | undefined {
  const head = headOf(source);
  if (head === undefined) return undefined;
  const byName = new Map(source.entries.map((e) => [e.name, e]));
  const chain: FbcChannelEntry[] = [];
  const seen = new Set<string>();
  for (
    let cur = byName.get(head);
    cur && !seen.has(cur.name);
    cur = cur.replaces ? byName.get(cur.replaces) : undefined
  ) {
    chain.push(cur);
    seen.add(cur.name);
  }
  const keptNames = new Set(kept.entries.map((e) => e.name));
  const onChain = chain.flatMap((e, i) => (keptNames.has(e.name) ? [i] : []));
  let at = chain.findIndex((e) => e.name === target);
  const skipped = at < 0;
  if (skipped) at = chain.findIndex((e) => (e.skips ?? []).includes(target));
  if (at < 0 || onChain.length === 0) return undefined;
  const [lo, hi] = [Math.min(at, ...onChain), Math.max(at, ...onChain)];
  const add = chain
    .slice(lo, hi + 1)
    .map((e) => e.name)
    .filter((n) => !keptNames.has(n));
  if (skipped && !keptNames.has(target)) add.push(target);
  return add;
}

/** What the walk through the catalog shares: its inputs, what it has added so far, and its indexes. */
interface Walk {
  /** The whole catalog. */
  source: FbcModel;
  /** The filtered packages, extended in place. */
  packages: Map<string, FbcPackage>;
  /** The kept bundles (by `package\0bundle`), extended in place. */
  kept: Map<string, KeptBundle>;
  added: DependencyAddition[];
  warnings: string[];
  versionOf(b: FbcBundle): SemVer | undefined;
  /** The kept bundles of each package. */
  keptByPackage: Map<string, FbcBundle[]>;
  /** The APIs (gvkKey) the kept bundles provide. */
  keptGvks: Set<string>;
  /** The catalog's bundles by the API they provide; built when first asked for. */
  providers?: Map<string, FbcBundle[]>;
}

/** The walk's starting state: the kept bundles indexed by package and by the APIs they provide. */
function startWalk(source: FbcModel, packages: Map<string, FbcPackage>, kept: Map<string, KeptBundle>): Walk {
  const versions = new Map<FbcBundle, SemVer | undefined>();
  const versionOf = (b: FbcBundle): SemVer | undefined => {
    if (!versions.has(b)) versions.set(b, parseSemver(b.version));
    return versions.get(b);
  };
  const w: Walk = {
    source,
    packages,
    kept,
    added: [],
    warnings: [],
    versionOf,
    keptByPackage: new Map(),
    keptGvks: new Set(),
  };
  for (const k of kept.values()) keep(w, k.bundle);
  return w;
}

/** Index a kept bundle, so the requirements it meets are seen as met. */
function keep(w: Walk, b: FbcBundle): void {
  w.keptByPackage.set(b.package, [...(w.keptByPackage.get(b.package) ?? []), b]);
  for (const g of gvksOf(b)) w.keptGvks.add(g);
}

/** The catalog's bundles that provide the API `key` (gvkKey). */
function providersOf(w: Walk, key: string): FbcBundle[] {
  if (!w.providers) {
    const providers = new Map<string, FbcBundle[]>();
    for (const p of w.source.packages.values())
      for (const b of p.bundles.values())
        for (const g of gvksOf(b)) providers.set(g, [...(providers.get(g) ?? []), b]);
    w.providers = providers;
  }
  return w.providers.get(key) ?? [];
}

function inRange(w: Walk, b: FbcBundle, r: Extract<Requirement, { type: 'olm.package.required' }>): boolean {
  const v = w.versionOf(b);
  return v !== undefined && r.inRange(v);
}

/** Whether a kept bundle already meets the requirement. */
function satisfied(w: Walk, r: Requirement): boolean {
  return r.type === 'olm.package.required'
    ? (w.keptByPackage.get(r.packageName) ?? []).some((b) => inRange(w, b, r))
    : w.keptGvks.has(gvkKey(r));
}

/** The channel to keep `b` in: the default channel, else one it heads, else the first by name. */
function channelFor(pkg: FbcPackage, b: FbcBundle): string | undefined {
  const holding = [...pkg.channels.values()]
    .filter((c) => c.entries.some((e) => e.name === b.name))
    .sort((x, y) => (x.name < y.name ? -1 : 1));
  return (
    holding.find((c) => c.name === pkg.defaultChannel) ??
    holding.find((c) => headOf(c) === b.name) ??
    holding[0]
  )?.name;
}

/** The head of the package's default channel, when it has one. */
function defaultHead(pkg: FbcPackage): FbcBundle | undefined {
  const head = headOf(pkg.defaultChannel ? pkg.channels.get(pkg.defaultChannel) : undefined);
  return head === undefined ? undefined : pkg.bundles.get(head);
}

/** The highest version among `bundles` that some channel holds. */
function highest(w: Walk, pkg: FbcPackage, bundles: FbcBundle[]): Choice | undefined {
  let best: Choice | undefined;
  for (const b of bundles) {
    const channel = channelFor(pkg, b);
    if (channel === undefined || w.versionOf(b) === undefined) continue;
    if (!best || compareSemver(w.versionOf(b)!, w.versionOf(best.bundle)!) > 0)
      best = { pkg, bundle: b, channel };
  }
  return best;
}

/** The bundle of the catalog that meets an unmet requirement (see the file comment), or undefined. */
function choose(w: Walk, r: Requirement): Choice | undefined {
  if (r.type === 'olm.package.required') {
    const pkg = w.source.packages.get(r.packageName);
    if (!pkg) return undefined;
    const head = defaultHead(pkg);
    if (head && inRange(w, head, r)) return { pkg, bundle: head, channel: pkg.defaultChannel! };
    return highest(
      w,
      pkg,
      [...pkg.bundles.values()].filter((b) => inRange(w, b, r)),
    );
  }
  const byPackage = new Map<string, FbcBundle[]>();
  for (const b of providersOf(w, gvkKey(r)))
    byPackage.set(b.package, [...(byPackage.get(b.package) ?? []), b]);
  const names = [...byPackage.keys()].sort((a, b) => {
    const [x, y] = [w.packages.has(a) ? 0 : 1, w.packages.has(b) ? 0 : 1];
    return x - y || (a < b ? -1 : 1);
  });
  for (const name of names) {
    const pkg = w.source.packages.get(name)!;
    const head = defaultHead(pkg);
    if (head && byPackage.get(name)!.includes(head))
      return { pkg, bundle: head, channel: pkg.defaultChannel! };
  }
  for (const name of names) {
    const pick = highest(w, w.source.packages.get(name)!, byPackage.get(name)!);
    if (pick) return pick;
  }
  return undefined;
}

/**
 * Put the choice into its channel of the filtered catalog (the package and the channel created when
 * new): returns the names of the entries added to the channel (the choice last), or undefined when
 * it cannot join the channel's kept entries as one chain.
 */
function placeInChannel(w: Walk, c: Choice): string[] | undefined {
  const src = c.pkg.channels.get(c.channel)!;
  const entry = src.entries.find((e) => e.name === c.bundle.name)!;
  let pkg = w.packages.get(c.pkg.name);
  if (!pkg) {
    pkg = { ...c.pkg, defaultChannel: c.channel, channels: new Map(), bundles: new Map() };
    w.packages.set(pkg.name, pkg);
  }
  const have = pkg.channels.get(c.channel);
  if (!have) {
    pkg.channels.set(c.channel, { ...src, entries: [entry] });
    return [c.bundle.name];
  }
  const path = pathTo(src, have, c.bundle.name);
  if (!path) return undefined;
  const keepNames = new Set([...have.entries.map((e) => e.name), ...path]);
  pkg.channels.set(c.channel, { ...have, entries: src.entries.filter((e) => keepNames.has(e.name)) });
  return [...path.filter((n) => n !== c.bundle.name), c.bundle.name];
}

/** Keep the choice in the filtered catalog; returns the bundles added (the choice last), or undefined. */
function add(w: Walk, c: Choice, by: FbcBundle, r: Requirement): FbcBundle[] | undefined {
  const names = placeInChannel(w, c);
  if (!names) return undefined;
  const pkg = w.packages.get(c.pkg.name)!;
  const out: FbcBundle[] = [];
  for (const n of names) {
    const b = c.pkg.bundles.get(n);
    if (!b) continue;
    const target = n === c.bundle.name;
    pkg.bundles.set(n, b);
    const key = `${b.package}\0${b.name}`;
    const before = w.kept.get(key);
    const k = before ?? { bundle: b, why: [] };
    k.why.push({
      channel: c.channel,
      reason: target ? 'dependency' : 'upgrade-path',
      detail: target ? `required by ${label(by)}` : `to ${label(c.bundle)}, required by ${label(by)}`,
    });
    w.kept.set(key, k);
    if (before) continue; // already kept in another channel: now in this one too
    keep(w, b);
    w.added.push({
      package: b.package,
      bundle: b.name,
      version: b.version,
      channel: c.channel,
      requiredBy: label(by),
      requirement: target
        ? requirementText(r)
        : `on the upgrade path to ${label(c.bundle)} in channel ${c.channel}`,
    });
    out.push(b);
  }
  return out;
}

/** A requirement nothing could meet: the bundles that have it, and why the catalog's choice could not be kept. */
interface Unmet {
  r: Requirement;
  by: FbcBundle[];
  why?: string;
}

/**
 * Follow the requirements breadth first from the kept bundles (by package, newest first), so the
 * bundle named as the requirer is the newest that has the requirement; returns what stayed unmet.
 */
function walkRequirements(w: Walk): Map<string, Unmet> {
  const queue = [...w.kept.values()]
    .map((k) => k.bundle)
    .sort((a, b) => {
      if (a.package !== b.package) return a.package < b.package ? -1 : 1;
      const [x, y] = [w.versionOf(a), w.versionOf(b)];
      return x && y ? compareSemver(y, x) : a.name < b.name ? -1 : 1;
    });
  const unmet = new Map<string, Unmet>();
  for (let i = 0; i < queue.length; i++) {
    const b = queue[i]!;
    for (const r of requirementsOf(b, w.warnings)) {
      if (satisfied(w, r)) continue;
      const choice = choose(w, r);
      const bundles = choice && add(w, choice, b, r);
      if (bundles) {
        queue.push(...bundles);
        continue;
      }
      const key = requirementText(r);
      const u = unmet.get(key) ?? {
        r,
        by: [],
        ...(choice
          ? {
              why: `${label(choice.bundle)} cannot be added to channel ${choice.channel} as one upgrade chain`,
            }
          : {}),
      };
      u.by.push(b);
      unmet.set(key, u);
    }
  }
  return unmet;
}

/** One warning per unmet requirement, naming the first bundle that has it (and up to three more). */
function unmetWarnings(unmet: Map<string, Unmet>, source: FbcModel): string[] {
  const out: string[] = [];
  for (const { r, by, why } of unmet.values()) {
    const more =
      by.length > 1
        ? ` (also required by ${by
            .slice(1, 4)
            .map(label)
            .join(', ')}${by.length > 4 ? `, and ${by.length - 4} more` : ''})`
        : '';
    out.push(`${label(by[0]!)} requires ${unmetText(r, source, why)}: the operator will not install${more}`);
  }
  return out;
}

/**
 * Follow the dependencies of the kept bundles through `source` (the whole catalog): `packages` (the
 * filtered packages) and `kept` (the kept bundles, by `package\0bundle`) are extended in place with
 * what is added. Returns the additions, in the order they were made, and the warnings.
 */
export function followDependencies(
  source: FbcModel,
  packages: Map<string, FbcPackage>,
  kept: Map<string, KeptBundle>,
): DependencyResult {
  const w = startWalk(source, packages, kept);
  const unmet = walkRequirements(w);
  w.warnings.push(...unmetWarnings(unmet, source));
  return { added: w.added, warnings: w.warnings };
}

/** What is missing, for the warning: the package and range (with what the catalog has instead), or the API. */
function unmetText(r: Requirement, source: FbcModel, why: string | undefined): string {
  if (r.type === 'olm.gvk.required') {
    const api = `the API ${gvkText(r)} (olm.gvk.required)`;
    return why ? `${api}, but ${why}` : `${api}, which no bundle in the catalog provides`;
  }
  const wanted = `package ${r.packageName}${r.range ? ` ${r.range}` : ''}`;
  if (why) return `${wanted}, but ${why}`;
  const pkg = source.packages.get(r.packageName);
  if (!pkg) return `${wanted}, which the catalog does not have`;
  const have = [...pkg.bundles.values()]
    .map((b) => [b.version, parseSemver(b.version)] as const)
    .sort(([, x], [, y]) => (x && y ? compareSemver(y, x) : 0))
    .map(([v]) => v);
  return `${wanted}, which the catalog does not have (it has ${r.packageName} ${have.slice(0, 5).join(', ')}${have.length > 5 ? ', …' : ''})`;
}
