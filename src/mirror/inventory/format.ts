/**
 * An inventory: what a registry below a prefix really holds, taken on the disconnected side
 * (`airgap mirror inventory`) and carried back so the next archive leaves out what is already there
 * (`airgap mirror … --inventory`). One file, versioned, in a stable order, compact (every blob and
 * every manifest listed once, referred to by its place in the list):
 *
 *   { "apiVersion": "airgap/v1", "kind": "RegistryInventory",
 *     "destination": "docker://mirror.example.com:8443/ocp", "takenAt": "…", "takenBy": "airgap 1.2.0",
 *     "complete": true, "problems": [],
 *     "repositories": ["ocp/openshift/release", …],            sorted
 *     "blobs":     [["sha256:…", 1234, 0], …],                  [digest, size, repository], sorted by digest
 *     "manifests": [["sha256:…", 529, 0, [3, 7], []], …],      [digest, size, repository, blobs, children]
 *     "tags":      [[0, "4.18.1-x86_64", 12], …] }             [repository, tag, manifest], sorted
 *
 * A repository index names where the registry holds the blob or manifest (one of them, the first
 * in order); configs and layers are blobs, index children are manifests (those present in any
 * repository: a copy filtered by architecture holds only some). `complete: false` means a
 * read failed (`problems` says which): what is listed is there, but not all that is there is listed.
 *
 * The file is input from the other side of the air gap: it is read bounded (gzip included),
 * every field checked (digests, sizes, names as a registry allows them, every index in range) and
 * a problem named by its place in the file. It is trusted only by digest and size: a blob the
 * next archive leaves out because the inventory lists it is checked again by the far side before
 * anything is pushed (mirror/archive/preflight.ts).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { readBounded } from '../../net/body.js';
import { messageOf, usageError } from '../../util/errors.js';
import { isNotFound, writeFileAtomic } from '../../util/fs.js';
import { isDigest } from '../digest.js';
import { MirrorError } from '../errors.js';
import { inflateSync } from '../inflate.js';
import { parseLocation } from '../location.js';
import { isValidRepository, isValidTag } from '../reference.js';

export const INVENTORY_API_VERSION = 'airgap/v1';
export const INVENTORY_KIND = 'RegistryInventory';

/** The largest inventory read, as stored (a registry of 100,000 images is some 40 MiB of JSON). */
const MAX_INVENTORY_BYTES = 512 * 1024 * 1024;

/** The file as written: see the module comment. */
export interface InventoryDocument {
  apiVersion: typeof INVENTORY_API_VERSION;
  kind: typeof INVENTORY_KIND;
  destination: string;
  takenAt: string;
  takenBy?: string;
  complete: boolean;
  problems: string[];
  repositories: string[];
  blobs: [digest: string, size: number, repository: number][];
  manifests: [digest: string, size: number, repository: number, blobs: number[], children: number[]][];
  tags: [repository: number, tag: string, manifest: number][];
}

/** What a walk of a registry found, before it is put in order (inventory/walk.ts builds it). */
export interface InventoryFindings {
  destination: string;
  takenAt: Date;
  takenBy?: string;
  problems: string[];
  /** Every repository read below the prefix. */
  repositories: Iterable<string>;
  /** Every manifest read: where, its size, its blobs (configs, layers) and children (an index's). */
  manifests: Iterable<{
    repository: string;
    digest: string;
    size: number;
    blobs: { digest: string; size: number }[];
    children: string[];
  }>;
  /** Every tag read and the digest it names. */
  tags: Iterable<{ repository: string; tag: string; digest: string }>;
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Put findings in the file's order: lists sorted, each blob and manifest once, indexes resolved. */
export function inventoryDocument(f: InventoryFindings): InventoryDocument {
  const repositories = [...new Set(f.repositories)].sort(byString);
  const repoAt = new Map(repositories.map((r, i) => [r, i]));
  const repo = (r: string) => {
    const i = repoAt.get(r);
    if (i === undefined) throw new Error(`inventory: repository ${r} was not listed`);
    return i;
  };
  const manifests = new Map<
    string,
    { repository: string; size: number; blobs: string[]; children: string[] }
  >();
  const blobs = new Map<string, { size: number; repository: string }>();
  for (const m of f.manifests) {
    const had = manifests.get(m.digest);
    // An index's children present in any repository: a sparse copy in one and a whole one in
    // another list different children of the same index (`mirror delete` keeps them all).
    const children = [...new Set([...(had?.children ?? []), ...m.children])];
    if (!had || byString(m.repository, had.repository) < 0)
      manifests.set(m.digest, {
        repository: m.repository,
        size: m.size,
        blobs: m.blobs.map((b) => b.digest),
        children,
      });
    else had.children = children;
    for (const b of m.blobs) {
      const seen = blobs.get(b.digest);
      if (!seen || byString(m.repository, seen.repository) < 0)
        blobs.set(b.digest, { size: b.size, repository: m.repository });
    }
  }
  const blobOrder = [...blobs.keys()].sort(byString);
  const blobAt = new Map(blobOrder.map((d, i) => [d, i]));
  const manifestOrder = [...manifests.keys()].sort(byString);
  const manifestAt = new Map(manifestOrder.map((d, i) => [d, i]));
  const tags: InventoryDocument['tags'] = [];
  for (const t of f.tags) {
    const m = manifestAt.get(t.digest);
    if (m !== undefined) tags.push([repo(t.repository), t.tag, m]);
  }
  tags.sort((a, b) => a[0] - b[0] || byString(a[1], b[1]));
  return {
    apiVersion: INVENTORY_API_VERSION,
    kind: INVENTORY_KIND,
    destination: f.destination,
    takenAt: f.takenAt.toISOString(),
    ...(f.takenBy ? { takenBy: f.takenBy } : {}),
    complete: f.problems.length === 0,
    problems: [...f.problems].sort(byString),
    repositories,
    blobs: blobOrder.map((d) => {
      const b = blobs.get(d)!;
      return [d, b.size, repo(b.repository)];
    }),
    manifests: manifestOrder.map((d) => {
      const m = manifests.get(d)!;
      return [
        d,
        m.size,
        repo(m.repository),
        [...new Set(m.blobs.map((b) => blobAt.get(b)!))].sort((a, b) => a - b),
        [...new Set(m.children.flatMap((c) => manifestAt.get(c) ?? []))].sort((a, b) => a - b),
      ];
    }),
    tags,
  };
}

/** The file's text: its header fields, then one list entry per line (diffable, stable). */
export function inventoryText(doc: InventoryDocument): string {
  const list = (items: unknown[]) =>
    items.length === 0 ? '[]' : `[\n    ${items.map((i) => JSON.stringify(i)).join(',\n    ')}\n  ]`;
  const { repositories, blobs, manifests, tags, ...head } = doc;
  const headText = Object.entries(head)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(',\n');
  return `{\n${headText},\n  "repositories": ${list(repositories)},\n  "blobs": ${list(blobs)},\n  "manifests": ${list(manifests)},\n  "tags": ${list(tags)}\n}\n`;
}

/** Write an inventory atomically; gzip-compressed when `path` ends in `.gz`. Returns its sha256. */
export async function writeInventory(path: string, doc: InventoryDocument): Promise<Inventory> {
  const text = Buffer.from(inventoryText(doc));
  const bytes = path.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text;
  await writeFileAtomic(path, bytes);
  return new Inventory(doc, sha256Of(bytes), path, bytes.length);
}

const sha256Of = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** An inventory read back and checked, with the lookups a delta needs. */
export class Inventory {
  private readonly blobIndex = new Map<string, number>();
  private readonly manifestIndex = new Map<string, number>();
  private readonly tagIndex = new Map<string, number>();

  constructor(
    readonly doc: InventoryDocument,
    /** sha256 of the file as stored (gzip or not): what an archive records it was cut against. */
    readonly sha256: string,
    /** Where it was read from. */
    readonly path: string,
    /** Bytes of the file as stored. */
    readonly fileBytes: number,
  ) {
    doc.blobs.forEach((b, i) => this.blobIndex.set(b[0], i));
    doc.manifests.forEach((m, i) => this.manifestIndex.set(m[0], i));
    for (const [r, tag, m] of doc.tags) this.tagIndex.set(`${doc.repositories[r]}:${tag}`, m);
  }

  /** The blob's size and a repository that holds it, when listed. */
  blob(digest: string): { size: number; repository: string } | undefined {
    const i = this.blobIndex.get(digest);
    if (i === undefined) return undefined;
    const b = this.doc.blobs[i]!;
    return { size: b[1], repository: this.doc.repositories[b[2]]! };
  }

  /** Whether it lists this blob at this size (only then is the blob left out of an archive). */
  holdsBlob(digest: string, size: number): boolean {
    return this.blob(digest)?.size === size;
  }

  /** The manifest's size and a repository that holds it, when listed. */
  manifest(digest: string): { size: number; repository: string } | undefined {
    const i = this.manifestIndex.get(digest);
    if (i === undefined) return undefined;
    const m = this.doc.manifests[i]!;
    return { size: m[1], repository: this.doc.repositories[m[2]]! };
  }

  /** The digest `repository:tag` named when the inventory was taken. */
  tag(repository: string, tag: string): string | undefined {
    const m = this.tagIndex.get(`${repository}:${tag}`);
    return m === undefined ? undefined : this.doc.manifests[m]![0];
  }

  /** What it covers, in numbers. */
  summary(): InventorySummary {
    return {
      path: this.path,
      sha256: this.sha256,
      destination: this.doc.destination,
      takenAt: this.doc.takenAt,
      ...(this.doc.takenBy ? { takenBy: this.doc.takenBy } : {}),
      complete: this.doc.complete,
      problems: this.doc.problems,
      repositories: this.doc.repositories.length,
      tags: this.doc.tags.length,
      manifests: this.doc.manifests.length,
      blobs: this.doc.blobs.length,
      bytes: this.doc.blobs.reduce((n, b) => n + b[1], 0),
    };
  }
}

export interface InventorySummary {
  path: string;
  sha256: string;
  destination: string;
  takenAt: string;
  takenBy?: string;
  complete: boolean;
  problems: string[];
  repositories: number;
  tags: number;
  manifests: number;
  blobs: number;
  /** Bytes of every blob listed, each once. */
  bytes: number;
}

/** What an archive records of the inventory it was cut against (mirror verify shows it). */
export interface InventoryStamp {
  sha256: string;
  destination: string;
  takenAt: string;
  complete: boolean;
}

export function inventoryStamp(inv: Inventory): InventoryStamp {
  return {
    sha256: inv.sha256,
    destination: inv.doc.destination,
    takenAt: inv.doc.takenAt,
    complete: inv.doc.complete,
  };
}

const TAKE_AGAIN =
  'take it again on the disconnected side with `airgap mirror inventory docker://<registry>/<prefix> -o <file>`';

function invalid(path: string, where: string, what: string): never {
  throw usageError(MirrorError.INVENTORY_INVALID, `${path}: ${where}: ${what}`, {
    where: path,
    hint: `an inventory is written by airgap and read as it was written; ${TAKE_AGAIN}`,
  });
}

/** Read an inventory file (plain or gzip), bounded, every field checked. */
export async function readInventory(path: string): Promise<Inventory> {
  let bytes: Buffer | undefined;
  try {
    // Bounded as it is read: a file past the limit is not held whole first.
    bytes = await readBounded(createReadStream(path), MAX_INVENTORY_BYTES);
  } catch (e) {
    if (!isNotFound(e)) throw e; // a permission or I/O error, said with its path
    throw usageError(MirrorError.INVENTORY_INVALID, `the inventory ${path} does not exist`, {
      where: path,
      hint: TAKE_AGAIN,
      cause: e,
    });
  }
  if (!bytes)
    invalid(path, 'the file', `is over the ${MAX_INVENTORY_BYTES / 1024 / 1024} MiB an inventory may be`);
  const sha256 = sha256Of(bytes);
  let plain = bytes;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      plain = inflateSync(bytes, 'inventory', 'it');
    } catch (e) {
      // Past the limits (a gzip bomb) or not gzip after all: the file is not an inventory (exit 2).
      invalid(path, 'the file (gzip)', messageOf(e).split('\n')[0]!);
    }
  }
  const text = plain.toString('utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    invalid(path, 'the file', `is not JSON (${(e as Error).message})`);
  }
  return new Inventory(checkDocument(path, doc), sha256, path, bytes.length);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSize = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Every field of a parsed inventory as airgap writes it; the first problem is thrown, with its place. */
function checkDocument(path: string, doc: unknown): InventoryDocument {
  if (!isRecord(doc)) invalid(path, 'the file', 'is not a JSON object');
  if (doc.apiVersion !== INVENTORY_API_VERSION || doc.kind !== INVENTORY_KIND)
    invalid(
      path,
      'apiVersion/kind',
      `are ${JSON.stringify(doc.apiVersion)}/${JSON.stringify(doc.kind)}, not ${INVENTORY_API_VERSION}/${INVENTORY_KIND}`,
    );
  if (typeof doc.destination !== 'string' || !doc.destination.startsWith('docker://'))
    invalid(path, 'destination', 'must be the docker://host[:port][/prefix] the inventory was taken of');
  try {
    parseLocation(doc.destination, 'destination');
  } catch (e) {
    invalid(path, 'destination', (e as Error).message);
  }
  if (typeof doc.takenAt !== 'string' || Number.isNaN(Date.parse(doc.takenAt)))
    invalid(path, 'takenAt', 'must be an RFC 3339 time');
  if (doc.takenBy !== undefined && typeof doc.takenBy !== 'string')
    invalid(path, 'takenBy', 'must be a string');
  if (typeof doc.complete !== 'boolean') invalid(path, 'complete', 'must be true or false');
  const strings = (v: unknown, field: string): string[] => {
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
      invalid(path, field, 'must be a list of strings');
    return v as string[];
  };
  const problems = strings(doc.problems, 'problems');
  if (doc.complete === problems.length > 0)
    invalid(path, 'complete', `says ${String(doc.complete)} with ${problems.length} problem(s) listed`);
  const repositories = strings(doc.repositories, 'repositories');
  const unique = <T>(list: T[], key: (x: T) => string, field: string) => {
    const seen = new Set<string>();
    list.forEach((x, i) => {
      const k = key(x);
      if (seen.has(k)) invalid(path, `${field}[${i}]`, `lists ${k} a second time`);
      seen.add(k);
    });
  };
  repositories.forEach((r, i) => {
    if (!isValidRepository(r))
      invalid(path, `repositories[${i}]`, `${JSON.stringify(r)} is not a repository name`);
  });
  unique(repositories, (r) => r, 'repositories');
  const index = (v: unknown, count: number, where: string, of: string): number => {
    if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) >= count)
      invalid(path, where, `${JSON.stringify(v)} is not the index of one of the ${count} ${of}`);
    return v as number;
  };
  const list = (v: unknown, field: string): unknown[] => {
    if (!Array.isArray(v)) invalid(path, field, 'must be a list');
    return v;
  };
  const blobs = list(doc.blobs, 'blobs').map((b, i): InventoryDocument['blobs'][number] => {
    const at = `blobs[${i}]`;
    if (!Array.isArray(b) || b.length !== 3) invalid(path, at, 'must be [digest, size, repository]');
    if (!isDigest(b[0])) invalid(path, `${at}[0]`, `${JSON.stringify(b[0])} is not a digest`);
    if (!isSize(b[1])) invalid(path, `${at}[1]`, 'the size must be a whole number of bytes');
    return [b[0], b[1], index(b[2], repositories.length, `${at}[2]`, 'repositories')];
  });
  unique(blobs, (b) => b[0], 'blobs');
  const rawManifests = list(doc.manifests, 'manifests');
  const manifests = rawManifests.map((m, i): InventoryDocument['manifests'][number] => {
    const at = `manifests[${i}]`;
    if (!Array.isArray(m) || m.length !== 5)
      invalid(path, at, 'must be [digest, size, repository, blobs, children]');
    if (!isDigest(m[0])) invalid(path, `${at}[0]`, `${JSON.stringify(m[0])} is not a digest`);
    if (!isSize(m[1])) invalid(path, `${at}[1]`, 'the size must be a whole number of bytes');
    const refs = (v: unknown, j: number, count: number, of: string) =>
      list(v, `${at}[${j}]`).map((x, k) => index(x, count, `${at}[${j}][${k}]`, of));
    return [
      m[0],
      m[1],
      index(m[2], repositories.length, `${at}[2]`, 'repositories'),
      refs(m[3], 3, blobs.length, 'blobs'),
      refs(m[4], 4, rawManifests.length, 'manifests'),
    ];
  });
  unique(manifests, (m) => m[0], 'manifests');
  const tags = list(doc.tags, 'tags').map((t, i): InventoryDocument['tags'][number] => {
    const at = `tags[${i}]`;
    if (!Array.isArray(t) || t.length !== 3) invalid(path, at, 'must be [repository, tag, manifest]');
    const r = index(t[0], repositories.length, `${at}[0]`, 'repositories');
    if (typeof t[1] !== 'string' || !isValidTag(t[1]))
      invalid(path, `${at}[1]`, `${JSON.stringify(t[1])} is not a tag`);
    return [r, t[1], index(t[2], manifests.length, `${at}[2]`, 'manifests')];
  });
  unique(tags, (t) => `${repositories[t[0]]}:${t[1]}`, 'tags');
  return {
    apiVersion: INVENTORY_API_VERSION,
    kind: INVENTORY_KIND,
    destination: doc.destination,
    takenAt: doc.takenAt,
    ...(typeof doc.takenBy === 'string' ? { takenBy: doc.takenBy } : {}),
    complete: doc.complete,
    problems,
    repositories,
    blobs,
    manifests,
    tags,
  };
}
