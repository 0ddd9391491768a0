/**
 * Where an image is read from, as containers-registries.conf(5) says: the `[[registry]]` table
 * with the longest prefix of the image's name is chosen; its mirrors are tried in order (those
 * whose `pull-from-mirror` allows a read by digest, or by tag), then its `location` (the prefix
 * rewritten), unless it is blocked. Only reads are redirected; the names in the plan, the
 * destination and the cluster resources stay the images' own.
 */
import type { RegistryClient } from './client.js';
import type { RegistriesConf, RegistryTable } from './registries-conf.js';

/** One place to try: a registry host, the repository there, and whether TLS is verified. */
export interface ReadCandidate {
  registry: string;
  repository: string;
  insecure: boolean;
  /** A mirror (not the table's location): said once when it first serves a read. */
  mirror: boolean;
  /** The table that chose it, for messages. */
  table: RegistryTable;
}

/** The places to read `registry/repository` from, in order; `blocked` when the table forbids it. */
export type ReadPlan = { blocked: RegistryTable } | { candidates: ReadCandidate[] } | undefined;

/** Whether `name` starts with `prefix` at a boundary (the name itself, or followed by / : @). */
function startsAt(name: string, prefix: string): boolean {
  return name === prefix || (name.startsWith(prefix) && '/:@'.includes(name[prefix.length]!));
}

/** How long a table's match is, or -1: a wildcard matches the host's subdomains. */
function matchLength(table: RegistryTable, registry: string, name: string): number {
  if (table.prefix.startsWith('*.')) {
    const host = registry.replace(/:\d+$/, '');
    return host.endsWith(table.prefix.slice(1)) ? table.prefix.length : -1;
  }
  return startsAt(name, table.prefix) ? table.prefix.length : -1;
}

/** `host[:port]/path` split into the registry and the repository (which may be empty). */
function split(location: string): { registry: string; repository: string } {
  const slash = location.indexOf('/');
  return slash < 0
    ? { registry: location, repository: '' }
    : { registry: location.slice(0, slash), repository: location.slice(slash + 1) };
}

/** Chooses the read candidates of image names from a registries configuration. */
export class ReadRedirect {
  constructor(readonly conf: RegistriesConf) {}

  /** Whether any table applies to `registry` at all (so its client needs the redirect). */
  covers(registry: string): boolean {
    return this.conf.tables.some(
      (t) => matchLength(t, registry, registry) >= 0 || t.prefix.startsWith(`${registry}/`),
    );
  }

  /** The table with the longest prefix of `registry/repository`, if any. */
  tableFor(registry: string, repository: string): RegistryTable | undefined {
    const name = `${registry}/${repository}`;
    let best: RegistryTable | undefined;
    let bestLength = -1;
    for (const t of this.conf.tables) {
      const n = matchLength(t, registry, name);
      if (n > bestLength) {
        best = t;
        bestLength = n;
      }
    }
    return best;
  }

  /**
   * Where to read `registry/repository`, by digest or by tag: undefined when no table applies
   * (read it where it is named).
   */
  plan(registry: string, repository: string, byDigest: boolean): ReadPlan {
    const table = this.tableFor(registry, repository);
    if (!table) return undefined;
    if (table.blocked) return { blocked: table };
    const name = `${registry}/${repository}`;
    // What follows the prefix in the name: a wildcard rewrites the host only.
    const rest = table.prefix.startsWith('*.')
      ? name.slice(registry.length)
      : name.slice(table.prefix.length);
    const at = (location: string) => split(`${location}${rest}`);
    const candidates: ReadCandidate[] = [];
    for (const m of table.mirrors) {
      if (m.pullFromMirror === (byDigest ? 'tag-only' : 'digest-only')) continue;
      candidates.push({ ...at(m.location), insecure: m.insecure, mirror: true, table });
    }
    const primary = table.location ? at(table.location) : { registry, repository };
    candidates.push({ ...primary, insecure: table.insecure, mirror: false, table });
    return { candidates };
  }
}

/** One place a read is tried: a client (this one, or a mirror's) and the repository there. */
export interface ReadTry {
  client: RegistryClient;
  repo: string;
  /** A mirror, not the image's own (or remapped) location. */
  mirror: boolean;
}

/** The places to read an image from, in order, or the table that blocks it. */
export type ReadRoute = { blocked: string } | { tries: ReadTry[] };

/** Decides where reads go and keeps what the run learnt about mirrors (pool.ts). */
export interface ReadRedirector {
  route(registry: string, repo: string, byDigest: boolean): ReadRoute | undefined;
  /** Whether a try is skipped: a mirror that stopped answering earlier in the run. */
  skip(t: ReadTry): boolean;
  /** A try served the read. */
  served(t: ReadTry): void;
  /** A try that was not the last failed; the next is tried. */
  failed(t: ReadTry, e: unknown): void;
}
