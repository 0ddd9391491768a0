/**
 * The hub API server's plain verbs on a resource: get and list (as the type's list, or as a
 * meta.k8s.io Table for `kubectl get`, table.ts), create (POST), update (PUT, also of `/status`),
 * delete of one object (with uid/resourceVersion preconditions) and deletecollection. Every write
 * honours `dryRun=All`; create and update honour `fieldValidation`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isObject } from '../schema.js';
import { conflict } from '../store.js';
import { toTable } from '../table.js';
import { HubApiError, type KubeObject } from '../types.js';
import { bodyObject, deleteOptions, fieldValidation } from './bodies.js';
import { type ApiContext, dryRun, getOrThrow, keyOf, listTarget, type Target } from './context.js';
import { methodNotAllowed, send } from './status.js';

/** The Table apiVersion the Accept header asks for (`as=Table;g=meta.k8s.io;v=...`), if any. */
function tableAccept(req: FastifyRequest): string | undefined {
  const accept = String(req.headers.accept ?? '');
  for (const part of accept.split(',')) {
    if (/as=Table/.test(part) && /g=meta\.k8s\.io/.test(part))
      return /v=v1beta1/.test(part) ? 'meta.k8s.io/v1beta1' : 'meta.k8s.io/v1';
  }
  return undefined;
}

/** `objects` as the Table the request asks for, or undefined when it wants JSON objects. */
function asTable(
  req: FastifyRequest,
  t: Target,
  q: URLSearchParams,
  objects: KubeObject[],
  resourceVersion: string,
): Record<string, unknown> | undefined {
  const table = tableAccept(req);
  if (!table) return undefined;
  return toTable(t.type, objects, resourceVersion, {
    apiVersion: table,
    includeObject: q.get('includeObject') ?? undefined,
  });
}

/** GET of a collection: the type's list kind, or a Table. */
export function listObjects(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  const items = listTarget(ctx.store, t, q);
  const rv = ctx.store.resourceVersion();
  const table = asTable(req, t, q, items, rv);
  if (table) return send(reply, 200, table);
  return send(reply, 200, {
    kind: t.type.listKind,
    apiVersion: t.type.apiVersion,
    metadata: { resourceVersion: rv },
    items,
  });
}

/** GET of one object (or its status), or a one-row Table. */
export function getObject(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  const obj = getOrThrow(ctx.store, t);
  const table = asTable(req, t, q, [obj], obj.metadata.resourceVersion ?? '');
  return send(reply, 200, table ?? obj);
}

/** POST to a collection. */
export function createObject(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  if (t.name !== undefined) throw methodNotAllowed('POST');
  if (t.type.namespaced && !t.namespace) throw methodNotAllowed('POST');
  const obj = bodyObject(req, t);
  fieldValidation(reply, q, t.type, obj);
  return send(
    reply,
    201,
    dryRun(ctx.store, q, () => ctx.store.create(obj)),
  );
}

/** PUT of one object or its status. */
export function updateObject(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  if (t.name === undefined) throw methodNotAllowed('PUT');
  const obj = bodyObject(req, t);
  fieldValidation(reply, q, t.type, obj);
  const { store } = ctx;
  return send(
    reply,
    200,
    dryRun(store, q, () => (t.subresource ? store.updateStatus(obj) : store.update(obj))),
  );
}

/** The DeleteOptions preconditions: a uid or resourceVersion other than the object's is a 409. */
function checkPreconditions(t: Target, current: KubeObject, options: Record<string, unknown>): void {
  const pre = isObject(options.preconditions) ? options.preconditions : {};
  if (typeof pre.uid === 'string' && pre.uid !== current.metadata.uid) {
    throw new HubApiError(
      409,
      'Conflict',
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      {
        name: t.name,
        group: t.type.group,
        kind: t.type.plural,
      },
    );
  }
  if (typeof pre.resourceVersion === 'string' && pre.resourceVersion !== current.metadata.resourceVersion) {
    throw conflict(t.type, t.name!);
  }
}

/**
 * DELETE of one object: the object when finalizers keep it (or, for CRD types, as deleted), a
 * Success Status for built-in types.
 */
export function deleteObject(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  const { store } = ctx;
  const options = deleteOptions(req);
  const type = t.type;
  const current = getOrThrow(store, t);
  checkPreconditions(t, current, options);
  if (Array.isArray(options.dryRun) && options.dryRun.includes('All')) q.append('dryRun', 'All');
  const result = dryRun(store, q, () => {
    const r = store.delete(keyOf(t));
    return { r, still: store.get(keyOf(t)) };
  });
  if (result.still) return send(reply, 200, result.still);
  if (type.source !== 'builtin' && result.r) return send(reply, 200, result.r);
  return send(reply, 200, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: t.name, group: type.group, kind: type.plural, uid: current.metadata.uid },
  });
}

/** DELETE of a collection (deletecollection): the list of what was deleted. */
export function deleteCollection(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  const { store } = ctx;
  deleteOptions(req);
  const type = t.type;
  const items = listTarget(store, t, q);
  const deleted = dryRun(store, q, () =>
    items.map((o) =>
      store.delete({
        apiVersion: type.apiVersion,
        kind: type.kind,
        namespace: o.metadata.namespace,
        name: o.metadata.name,
      }),
    ),
  );
  return send(reply, 200, {
    kind: type.listKind,
    apiVersion: type.apiVersion,
    metadata: { resourceVersion: store.resourceVersion() },
    items: deleted.filter((o) => o !== undefined),
  });
}
