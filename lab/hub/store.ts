/**
 * The hub simulator's in-memory object store ({@link HubStore}; semantics in types.ts): one global
 * resourceVersion counter, uid, generation, finalizers and deletionTimestamp, namespaces that
 * terminate and take their content with them, schema pruning, defaulting and validation on every
 * write, copies out, and every change as one event, in order, to in-process listeners and to a
 * bounded event log that watches resume from (older than the log: the caller answers 410 Gone).
 *
 * Objects are stored by group, kind, namespace and name (not by version: a type served in several
 * versions has one object, returned with the apiVersion it was asked for). A stored object is never
 * changed in place (every write stores a new one), which makes {@link HubStore.dryRun} a cheap
 * snapshot and restore.
 */
import { randomUUID } from 'node:crypto';
import { deepEqual } from './patch.js';
import { applyMergePatch } from './patch.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import {
  HubApiError,
  type FieldError,
  type HubStore,
  type KubeObject,
  type ListOptions,
  type ObjectKey,
  type ResourceType,
  type StoreEvent,
} from './types.js';

export interface StoreOptions {
  /** How many events the log keeps for watches that resume from a resourceVersion (default 1000). */
  eventLogSize?: number;
  /** Namespaces that exist from the start, as on a real cluster (default default, kube-system, kube-public). */
  namespaces?: string[];
  /** The clock for creationTimestamp and deletionTimestamp. */
  now?: () => Date;
}

/** `hostedclusters.hypershift.openshift.io`, or `secrets` for the core group. */
export function resourceName(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** `HostedCluster.hypershift.openshift.io`, or `Secret` for the core group. */
function qualifiedKind(type: ResourceType): string {
  return type.group ? `${type.kind}.${type.group}` : type.kind;
}

export function notFound(type: ResourceType, name: string): HubApiError {
  return new HubApiError(404, 'NotFound', `${resourceName(type)} "${name}" not found`, {
    name,
    group: type.group,
    kind: type.plural,
  });
}

export function conflict(type: ResourceType, name: string): HubApiError {
  return new HubApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resourceName(type)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: type.group, kind: type.plural },
  );
}

/** The 422 Invalid error for field errors, worded as the API server words it. */
function invalid(type: ResourceType, name: string, errors: FieldError[]): HubApiError {
  const lines = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
  const all = lines.length === 1 ? lines[0]! : `[${lines.join(', ')}]`;
  return new HubApiError(422, 'Invalid', `${qualifiedKind(type)} "${name}" is invalid: ${all}`, {
    name,
    group: type.group,
    kind: type.kind,
    causes: errors.map((e) => ({
      reason: e.reason ?? 'FieldValueInvalid',
      message: e.message,
      field: e.field,
    })),
  });
}

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function nameErrors(type: ResourceType, name: string): FieldError[] {
  if (type.group === 'rbac.authorization.k8s.io') {
    return name === '.' || name === '..' || /[/%]/.test(name)
      ? [
          {
            field: 'metadata.name',
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${name}": may not contain '/' or '%'`,
          },
        ]
      : [];
  }
  if (type.group === '' && type.kind === 'Namespace') {
    if (name.length <= 63 && LABEL.test(name)) return [];
    return [
      {
        field: 'metadata.name',
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      },
    ];
  }
  if (name.length <= 253 && SUBDOMAIN.test(name)) return [];
  return [
    {
      field: 'metadata.name',
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    },
  ];
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Everything of an object but metadata and status: what bumps generation when it changes. */
function specPart(obj: KubeObject): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...obj };
  delete rest.metadata;
  delete rest.status;
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

/** An object without its resourceVersion, for no-op detection. */
function sansVersion(obj: KubeObject): KubeObject {
  const meta: Record<string, unknown> = { ...obj.metadata };
  delete meta.resourceVersion;
  return { ...obj, metadata: meta as KubeObject['metadata'] };
}

interface LoggedEvent {
  rv: number;
  event: StoreEvent;
}

const NAMESPACE = 'v1\0Namespace';

/** The store, for `types` (built-in and CRD types). */
export function createStore(types: ResourceType[], options: StoreOptions = {}): HubStore {
  const now = options.now ?? (() => new Date());
  const logSize = Math.max(1, options.eventLogSize ?? 1000);
  const byVersionKind = new Map<string, ResourceType>();
  for (const t of types)
    if (!byVersionKind.has(`${t.apiVersion}\0${t.kind}`)) byVersionKind.set(`${t.apiVersion}\0${t.kind}`, t);
  const namespaceType = byVersionKind.get(NAMESPACE);

  /** group\0kind → namespace/name → object (never mutated in place). */
  let objects = new Map<string, Map<string, KubeObject>>();
  let counter = 0;
  const listeners = new Set<(e: StoreEvent) => void>();
  let log: LoggedEvent[] = [];
  let floor = 0;
  let suppress = false;
  const queue: StoreEvent[] = [];
  let draining = false;

  const gk = (t: ResourceType) => `${t.group}\0${t.kind}`;
  const nsName = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
  const bucket = (t: ResourceType) => {
    let m = objects.get(gk(t));
    if (!m) objects.set(gk(t), (m = new Map()));
    return m;
  };

  function requireType(apiVersion: string | undefined, kind: string | undefined): ResourceType {
    const t = byVersionKind.get(`${apiVersion}\0${kind}`);
    if (!t) {
      throw new HubApiError(
        404,
        'NotFound',
        `the server could not find the requested resource (no kind "${kind}" is registered for version "${apiVersion}")`,
      );
    }
    return t;
  }

  function out(obj: KubeObject, type: ResourceType): KubeObject {
    const copy = structuredClone(obj);
    copy.apiVersion = type.apiVersion;
    return copy;
  }

  function emit(event: StoreEvent): void {
    if (suppress) return;
    const rv = Number(event.object.metadata.resourceVersion);
    log.push({ rv, event });
    if (log.length > logSize) floor = log.splice(0, log.length - logSize).at(-1)!.rv;
    queue.push(event);
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) {
        const e = queue.shift()!;
        for (const l of [...listeners]) {
          try {
            l({ ...e, object: structuredClone(e.object), old: e.old && structuredClone(e.old) });
          } catch {
            // A listener's failure is its own; the store and the other listeners go on.
          }
        }
      }
    } finally {
      draining = false;
    }
  }

  function keyOf(obj: KubeObject, type: ResourceType): string {
    return nsName(type.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name);
  }

  function nextVersion(): string {
    counter += 1;
    return String(counter);
  }

  function checkNamespace(type: ResourceType, ns: string | undefined, name: string): void {
    if (!type.namespaced) return;
    if (!ns) {
      throw invalid(type, name, [
        { field: 'metadata.namespace', reason: 'FieldValueRequired', message: 'Required value' },
      ]);
    }
    if (!namespaceType) return;
    const nsObj = objects.get(gk(namespaceType))?.get(nsName(undefined, ns));
    if (!nsObj)
      throw new HubApiError(404, 'NotFound', `namespaces "${ns}" not found`, {
        name: ns,
        kind: 'namespaces',
      });
    if (nsObj.metadata.deletionTimestamp) {
      throw new HubApiError(
        403,
        'Forbidden',
        `${type.plural} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
        { name, group: type.group, kind: type.plural },
      );
    }
  }

  /** Normalize (prune, default) and validate `obj` in place; throws 422 on field errors. */
  function admit(obj: KubeObject, type: ResourceType): void {
    type.normalize?.(obj);
    const errors = [...nameErrors(type, obj.metadata.name), ...(type.validate?.(obj) ?? [])];
    if (errors.length > 0) throw invalid(type, obj.metadata.name, errors);
  }

  function create(input: KubeObject): KubeObject {
    const type = requireType(input?.apiVersion, input?.kind);
    const obj = structuredClone(input);
    const meta = (obj.metadata ??= { name: '' });
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
      meta.name = `${meta.generateName}${randomUUID().replaceAll('-', '').slice(0, 5)}`;
    }
    if (!meta.name) {
      throw invalid(type, '', [
        {
          field: 'metadata.name',
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
        },
      ]);
    }
    if (!type.namespaced) delete meta.namespace;
    checkNamespace(type, meta.namespace, meta.name);
    const key = keyOf(obj, type);
    if (bucket(type).has(key)) {
      throw new HubApiError(409, 'AlreadyExists', `${resourceName(type)} "${meta.name}" already exists`, {
        name: meta.name,
        group: type.group,
        kind: type.plural,
      });
    }
    if (type.hasStatus) delete obj.status;
    admit(obj, type);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    meta.generation = 1;
    meta.creationTimestamp = timestamp(now());
    meta.resourceVersion = nextVersion();
    bucket(type).set(key, obj);
    emit({ type: 'ADDED', object: out(obj, type), resource: type });
    return out(obj, type);
  }

  function current(key: ObjectKey): { type: ResourceType; obj: KubeObject } {
    const type = requireType(key.apiVersion, key.kind);
    const obj = bucket(type).get(nsName(type.namespaced ? key.namespace : undefined, key.name));
    if (!obj) throw notFound(type, key.name);
    return { type, obj };
  }

  /** Store `next` in place of `old` (or remove it when its last finalizer went while deleting). */
  function replace(type: ResourceType, old: KubeObject, next: KubeObject): KubeObject {
    if (deepEqual(sansVersion(next), sansVersion(old))) return out(old, type);
    const gone =
      next.metadata.deletionTimestamp &&
      (next.metadata.finalizers ?? []).length === 0 &&
      (type !== namespaceType || namespaceEmpty(next.metadata.name));
    next.metadata.resourceVersion = nextVersion();
    const key = keyOf(old, type);
    if (gone) {
      bucket(type).delete(key);
      emit({ type: 'DELETED', object: out(next, type), old: out(old, type), resource: type });
      afterRemoval(type, next);
      return out(next, type);
    }
    bucket(type).set(key, next);
    emit({ type: 'MODIFIED', object: out(next, type), old: out(old, type), resource: type });
    return out(next, type);
  }

  function update(input: KubeObject): KubeObject {
    const { type, obj: old } = current({
      ...input.metadata,
      apiVersion: input.apiVersion,
      kind: input.kind,
    } as ObjectKey);
    const rv = input.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw conflict(type, old.metadata.name);
    const next = structuredClone(input);
    const meta = next.metadata;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    if (type.namespaced) meta.namespace = old.metadata.namespace;
    else delete meta.namespace;
    if (old.metadata.deletionTimestamp) meta.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (meta.managedFields === undefined && old.metadata.managedFields !== undefined)
      meta.managedFields = old.metadata.managedFields;
    if (type.hasStatus) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
    admit(next, type);
    meta.generation = (old.metadata.generation ?? 1) + (deepEqual(specPart(next), specPart(old)) ? 0 : 1);
    return replace(type, old, next);
  }

  function updateStatus(input: KubeObject): KubeObject {
    const { type, obj: old } = current({
      ...input.metadata,
      apiVersion: input.apiVersion,
      kind: input.kind,
    } as ObjectKey);
    const rv = input.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw conflict(type, old.metadata.name);
    const next = structuredClone(old);
    if (input.status === undefined) delete next.status;
    else next.status = structuredClone(input.status);
    admit(next, type);
    return replace(type, old, next);
  }

  /** Remove an object now (no finalizers left) and emit DELETED. */
  function remove(type: ResourceType, old: KubeObject): KubeObject {
    const gone = structuredClone(old);
    gone.metadata.resourceVersion = nextVersion();
    bucket(type).delete(keyOf(old, type));
    emit({ type: 'DELETED', object: out(gone, type), old: out(old, type), resource: type });
    afterRemoval(type, gone);
    return out(gone, type);
  }

  /** A terminating namespace goes once it is empty and has no finalizers of its own. */
  function afterRemoval(type: ResourceType, obj: KubeObject): void {
    if (!namespaceType || !type.namespaced || !obj.metadata.namespace) return;
    maybeFinishNamespace(obj.metadata.namespace);
  }

  function namespaceEmpty(ns: string): boolean {
    for (const t of types) {
      if (!t.namespaced) continue;
      for (const o of objects.get(gk(t))?.values() ?? []) if (o.metadata.namespace === ns) return false;
    }
    return true;
  }

  function maybeFinishNamespace(ns: string): void {
    if (!namespaceType) return;
    const nsObj = bucket(namespaceType).get(nsName(undefined, ns));
    if (!nsObj?.metadata.deletionTimestamp || (nsObj.metadata.finalizers ?? []).length > 0) return;
    if (namespaceEmpty(ns)) remove(namespaceType, nsObj);
  }

  function markDeleting(type: ResourceType, old: KubeObject): KubeObject {
    const next = structuredClone(old);
    next.metadata.deletionTimestamp = timestamp(now());
    next.metadata.deletionGracePeriodSeconds = 0;
    if (type.group !== '' || type.hasStatus) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    return replace(type, old, next);
  }

  function del(key: ObjectKey): KubeObject | undefined {
    const type = requireType(key.apiVersion, key.kind);
    const old = bucket(type).get(nsName(type.namespaced ? key.namespace : undefined, key.name));
    if (!old) return undefined;
    if (old.metadata.deletionTimestamp) return out(old, type);
    if (type === namespaceType) {
      const next = structuredClone(old);
      next.metadata.deletionTimestamp = timestamp(now());
      next.status = { ...(next.status ?? {}), phase: 'Terminating' };
      replace(type, old, next);
      const ns = old.metadata.name;
      for (const t of types) {
        if (!t.namespaced) continue;
        for (const o of [...(objects.get(gk(t))?.values() ?? [])]) {
          if (o.metadata.namespace === ns)
            del({ apiVersion: t.apiVersion, kind: t.kind, namespace: ns, name: o.metadata.name });
        }
      }
      maybeFinishNamespace(ns);
      const left = bucket(type).get(nsName(undefined, ns));
      if (left) return out(left, type);
      const gone = structuredClone(next);
      gone.metadata.resourceVersion = String(counter);
      return out(gone, type);
    }
    if ((old.metadata.finalizers ?? []).length > 0) return markDeleting(type, old);
    return remove(type, old);
  }

  const store: HubStore = {
    types: () => [...types],
    typeFor: (apiVersion, kind) => byVersionKind.get(`${apiVersion}\0${kind}`),
    get(key) {
      const type = byVersionKind.get(`${key.apiVersion}\0${key.kind}`);
      if (!type) return undefined;
      const obj = objects.get(gk(type))?.get(nsName(type.namespaced ? key.namespace : undefined, key.name));
      return obj && out(obj, type);
    },
    list(apiVersion, kind, opts: ListOptions = {}) {
      const type = requireType(apiVersion, kind);
      const labels = parseLabelSelector(opts.labelSelector);
      const fields = parseFieldSelector(opts.fieldSelector, type.source === 'builtin');
      return [...(objects.get(gk(type))?.values() ?? [])]
        .filter((o) => !opts.namespace || !type.namespaced || o.metadata.namespace === opts.namespace)
        .filter((o) => labels(o) && fields(o))
        .sort((a, b) => keyOf(a, type).localeCompare(keyOf(b, type)))
        .map((o) => out(o, type));
    },
    create,
    update,
    updateStatus,
    mergePatch(key, patch, subresource) {
      const { obj } = current(key);
      const patched = applyMergePatch(obj, patch) as KubeObject;
      patched.apiVersion = key.apiVersion;
      patched.kind = key.kind;
      if (!patched.metadata || typeof patched.metadata !== 'object')
        patched.metadata = structuredClone(obj.metadata);
      patched.metadata.name = obj.metadata.name;
      if (obj.metadata.namespace) patched.metadata.namespace = obj.metadata.namespace;
      return subresource === 'status' ? updateStatus(patched) : update(patched);
    },
    delete: del,
    resourceVersion: () => String(counter),
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    eventsSince(resourceVersion) {
      const n = Number(resourceVersion);
      if (!/^\d+$/.test(resourceVersion)) {
        throw new HubApiError(400, 'BadRequest', `invalid resource version "${resourceVersion}"`);
      }
      if (n < floor) return undefined;
      return log
        .filter((e) => e.rv > n)
        .map((e) => ({
          ...e.event,
          object: structuredClone(e.event.object),
          old: e.event.old && structuredClone(e.event.old),
        }));
    },
    dryRun<T>(fn: () => T): T {
      const saved = { objects, counter, log, floor };
      objects = new Map([...objects].map(([k, m]) => [k, new Map(m)]));
      log = [...log];
      const wasSuppressed = suppress;
      suppress = true;
      try {
        return fn();
      } finally {
        ({ objects, counter, log, floor } = saved);
        suppress = wasSuppressed;
      }
    },
  };

  if (namespaceType) {
    for (const name of options.namespaces ?? ['default', 'kube-system', 'kube-public']) {
      create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }
  return store;
}
