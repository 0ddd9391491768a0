/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`), simplified but with the behaviour
 * a client notices:
 * - the applied configuration's fields are owned by its field manager, recorded in
 *   `metadata.managedFields` (operation Apply, FieldsV1; the set is leaf paths: `f:` keys only, every
 *   list atomic, label and annotation keys one field each);
 * - a field another manager owns with a different value is a 409 Conflict listing the fields, unless
 *   `force`, which takes them over;
 * - fields the manager applied before and omits now are removed when no other manager owns them;
 * - the object is created when missing; an apply that changes nothing writes nothing (no new
 *   resourceVersion).
 * Applies to the `status` subresource merge the status and record no ownership (a known gap).
 */
import { deepEqual } from './patch.js';
import { isObject } from './schema.js';
import { notFound } from './store.js';
import { HubApiError, type HubStore, type KubeObject, type ObjectKey, type ResourceType } from './types.js';

type Path = string[];

interface ManagedEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
  [k: string]: unknown;
}

const pathKey = (p: Path) => JSON.stringify(p);
const dotted = (p: Path) => `.${p.join('.')}`;

/** The leaf fields of an applied configuration (its owned set). */
function configFields(config: KubeObject, type: ResourceType): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: Path) => {
    if (isObject(v) && Object.keys(v).length > 0)
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    else out.push(path);
  };
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k === 'status' && type.hasStatus) continue;
    if (k === 'metadata') {
      const meta = isObject(v) ? v : {};
      for (const m of ['labels', 'annotations']) {
        if (isObject(meta[m])) for (const key of Object.keys(meta[m])) out.push(['metadata', m, key]);
      }
      for (const m of ['finalizers', 'ownerReferences']) if (meta[m] !== undefined) out.push(['metadata', m]);
      continue;
    }
    walk(v, [k]);
  }
  return out;
}

/** FieldsV1 (`{"f:spec":{"f:replicas":{}}}`) for a set of leaf paths. */
function encodeFields(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let cur = root;
    for (const seg of p) cur = (cur[`f:${seg}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}

/** The leaf paths of a FieldsV1 set (a node with `k:`/`v:`/`i:` children counts as one atomic leaf). */
function decodeFields(fields: unknown, prefix: Path = []): Path[] {
  if (!isObject(fields)) return [];
  const children = Object.keys(fields).filter((k) => k.startsWith('f:'));
  if (children.length === 0) return prefix.length > 0 ? [prefix] : [];
  return children.flatMap((k) => decodeFields(fields[k], [...prefix, k.slice(2)]));
}

function valueAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const s of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[s];
  }
  return cur;
}

/** True when one path is the other or contains it. */
function overlaps(a: Path, b: Path): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Objects merge key by key; lists and scalars replace. */
function merge(live: unknown, config: unknown): unknown {
  if (!isObject(config) || !isObject(live)) return structuredClone(config);
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(config)) out[k] = v === null ? null : merge(live[k], v);
  return out;
}

function deleteAt(obj: Record<string, unknown>, path: Path, keep: (p: Path) => boolean): void {
  const parents: Record<string, unknown>[] = [];
  let cur: unknown = obj;
  for (const s of path.slice(0, -1)) {
    if (!isObject(cur)) return;
    parents.push(cur);
    cur = cur[s];
  }
  if (!isObject(cur)) return;
  delete cur[path[path.length - 1]!];
  // Drop maps that became empty, unless someone owns them or something under them.
  for (let depth = path.length - 1; depth > 0; depth--) {
    const parentPath = path.slice(0, depth);
    const node = valueAt(obj, parentPath);
    if (!isObject(node) || Object.keys(node).length > 0 || keep(parentPath)) return;
    delete parents[depth - 1]![path[depth - 1]!];
  }
}

export interface ApplyOptions {
  manager: string;
  force: boolean;
  subresource?: 'status';
  now?: () => Date;
}

/** 400 unless `config` is an object of `type` with the name (and namespace, if any) of `key`; its metadata. */
function checkConfig(type: ResourceType, key: ObjectKey, config: KubeObject): Record<string, unknown> {
  if (!isObject(config)) throw new HubApiError(400, 'BadRequest', 'the apply configuration is not an object');
  if (config.apiVersion !== type.apiVersion || config.kind !== type.kind) {
    throw new HubApiError(
      400,
      'BadRequest',
      `the apply configuration's apiVersion and kind (${String(config.apiVersion)}, ${String(config.kind)}) do not match the request (${type.apiVersion}, ${type.kind})`,
    );
  }
  const meta = isObject(config.metadata) ? config.metadata : undefined;
  if (!meta || meta.name !== key.name) {
    throw new HubApiError(
      400,
      'BadRequest',
      `the name of the object (${String(meta?.name)}) does not match the name on the URL (${key.name})`,
    );
  }
  if (type.namespaced && meta.namespace !== undefined && meta.namespace !== key.namespace) {
    throw new HubApiError(
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  return meta;
}

interface Conflict {
  manager: string;
  apiVersion: string;
  path: Path;
}

/** The fields other managers own that this configuration sets to a different value. */
function findConflicts(
  others: ManagedEntry[],
  fields: Path[],
  config: KubeObject,
  live: KubeObject,
  type: ResourceType,
): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const other of others) {
    for (const owned of decodeFields(other.fieldsV1)) {
      for (const f of fields) {
        if (!overlaps(owned, f)) continue;
        const at = owned.length <= f.length ? owned : f;
        if (isObject(valueAt(config, f)) && owned.length > f.length) continue; // an empty map owns nothing below
        if (!deepEqual(valueAt(live, at), valueAt(config, at))) {
          conflicts.push({
            manager: other.manager ?? 'unknown',
            apiVersion: other.apiVersion ?? type.apiVersion,
            path: owned,
          });
          break;
        }
      }
    }
  }
  return conflicts;
}

/** The 409 of an apply without force that meets `conflicts`, listed by manager as the real server does. */
function conflictError(conflicts: Conflict[], key: ObjectKey, type: ResourceType): HubApiError {
  const byManager = new Map<string, Conflict[]>();
  for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c]);
  const parts = [...byManager].map(([m, cs]) =>
    cs.length === 1
      ? `conflict with "${m}" using ${cs[0]!.apiVersion}: ${dotted(cs[0]!.path)}`
      : `conflicts with "${m}" using ${cs[0]!.apiVersion}:\n${cs.map((c) => `- ${dotted(c.path)}`).join('\n')}`,
  );
  const n = conflicts.length;
  return new HubApiError(
    409,
    'Conflict',
    `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`,
    {
      name: key.name,
      group: type.group,
      kind: type.plural,
      causes: conflicts.map((c) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with "${c.manager}" using ${c.apiVersion}`,
        field: dotted(c.path),
      })),
    },
  );
}

/** The other managers' entries after a forced apply took the fields in conflict (emptied ones go). */
function withoutLost(others: ManagedEntry[], conflicts: Conflict[], time: string): ManagedEntry[] {
  const lost = new Set(conflicts.map((c) => `${c.manager}\0${pathKey(c.path)}`));
  return others
    .map((e) => {
      const kept = decodeFields(e.fieldsV1).filter(
        (p) => !lost.has(`${e.manager ?? 'unknown'}\0${pathKey(p)}`),
      );
      return { ...e, fieldsV1: encodeFields(kept), time };
    })
    .filter((e) => decodeFields(e.fieldsV1).length > 0);
}

/** `live` with the configuration merged in: maps by key, labels and annotations key by key. */
function mergeConfig(
  live: KubeObject,
  config: KubeObject,
  meta: Record<string, unknown>,
  type: ResourceType,
): KubeObject & Record<string, unknown> {
  const next = structuredClone(live) as KubeObject & Record<string, unknown>;
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    if (k === 'status' && type.hasStatus) continue;
    next[k] = merge(next[k], v);
  }
  for (const m of ['labels', 'annotations'] as const) {
    if (isObject(meta[m]))
      next.metadata[m] = { ...(next.metadata[m] ?? {}), ...(meta[m] as Record<string, string>) };
  }
  if (meta.finalizers !== undefined) next.metadata.finalizers = structuredClone(meta.finalizers) as string[];
  if (meta.ownerReferences !== undefined)
    next.metadata.ownerReferences = structuredClone(meta.ownerReferences) as unknown[];
  return next;
}

/** Remove from `next` the fields this manager applied before (`previous`) and omits now, unless another manager owns them. */
function removeDropped(
  next: KubeObject,
  previous: Path[],
  fields: Path[],
  config: KubeObject,
  remaining: ManagedEntry[],
): void {
  const current = new Set(fields.map(pathKey));
  // A field of the configuration keeps `p`: the same field, one under it, or a list or scalar above it
  // (an empty map above it owns nothing below).
  const covers = (f: Path, p: Path) =>
    overlaps(f, p) && !(f.length < p.length && isObject(valueAt(config, f)));
  const otherOwned = remaining.flatMap((e) => decodeFields(e.fieldsV1));
  const ownedByOthers = (p: Path) => otherOwned.some((o) => overlaps(o, p));
  for (const old of previous) {
    if (current.has(pathKey(old)) || ownedByOthers(old)) continue;
    if (fields.some((f) => covers(f, old))) continue;
    deleteAt(
      next as Record<string, unknown>,
      old,
      (p) => ownedByOthers(p) || fields.some((f) => covers(f, p)),
    );
  }
}

/**
 * The managedFields after the apply, in the recorded order: entries as they were (without those a
 * forced apply emptied), this manager's in its old place or, when new, last.
 */
function managedFieldsAfter(
  entries: ManagedEntry[],
  mine: ManagedEntry | undefined,
  remaining: ManagedEntry[],
  myEntry: ManagedEntry,
): ManagedEntry[] {
  const managed = [...remaining, myEntry];
  const out = entries
    .map((e) =>
      e === mine
        ? myEntry
        : managed.find(
            (m) => m.manager === e.manager && m.operation === e.operation && m.subresource === e.subresource,
          ),
    )
    .filter((e): e is ManagedEntry => e !== undefined);
  if (!mine) out.push(myEntry);
  return out;
}

/** Server-side apply `config` to the object at `key` (see the file comment). Returns the result. */
export function serverSideApply(
  store: HubStore,
  type: ResourceType,
  key: ObjectKey,
  config: KubeObject,
  opts: ApplyOptions,
): KubeObject {
  const meta = checkConfig(type, key, config);
  const now = opts.now ?? (() => new Date());
  const time = now()
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  const live = store.get(key);

  if (opts.subresource === 'status') {
    if (!live) throw notFound(type, key.name);
    const next = {
      ...live,
      status: merge(live.status ?? {}, config.status ?? {}) as Record<string, unknown>,
    };
    return deepEqual(next, live) ? live : store.updateStatus(next);
  }

  const fields = configFields(config, type);
  const entry = (): ManagedEntry => ({
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: type.apiVersion,
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: encodeFields(fields),
  });

  if (!live) {
    const obj = structuredClone(config);
    obj.metadata = { ...obj.metadata, managedFields: [entry()] };
    if (type.namespaced) obj.metadata.namespace = key.namespace;
    return store.create(obj);
  }

  const entries = ((live.metadata.managedFields ?? []) as ManagedEntry[]).filter((e) => isObject(e));
  const mine = entries.find((e) => e.manager === opts.manager && e.operation === 'Apply' && !e.subresource);
  const others = entries.filter((e) => e !== mine && !e.subresource);

  const conflicts = findConflicts(others, fields, config, live, type);
  if (conflicts.length > 0 && !opts.force) throw conflictError(conflicts, key, type);
  // force: the other managers lose the fields in conflict.
  const remaining = conflicts.length > 0 ? withoutLost(others, conflicts, time) : others;

  const next = mergeConfig(live, config, meta, type);
  const previous = mine ? decodeFields(mine.fieldsV1) : [];
  removeDropped(next, previous, fields, config, remaining);

  const sameSet = mine && deepEqual(previous.map(pathKey).sort(), [...new Set(fields.map(pathKey))].sort());
  next.metadata.managedFields = managedFieldsAfter(entries, mine, remaining, sameSet ? mine : entry());
  if (deepEqual(next, live)) return live;
  return store.update(next);
}
