/**
 * PATCH on the hub API server, chosen by content type: JSON merge patch, JSON patch (RFC 6902),
 * strategic merge patch (as a merge patch without its `$` directives), and server-side apply
 * (`application/apply-patch+yaml`, apply.ts: creates a missing object, 201). Any other type is 415.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { serverSideApply } from '../apply.js';
import { applyJsonPatch, applyMergePatch, stripStrategicDirectives } from '../patch.js';
import { isObject } from '../schema.js';
import { HubApiError, type KubeObject } from '../types.js';
import { fieldValidation, parseBody } from './bodies.js';
import { type ApiContext, dryRun, getOrThrow, keyOf, type Target } from './context.js';
import { methodNotAllowed, send } from './status.js';

const APPLY = 'application/apply-patch+yaml';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const PATCH_TYPES = [JSON_PATCH, 'application/merge-patch+json', STRATEGIC, APPLY];

/** PATCH of one object or its status. */
export function patchObject(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  if (t.name === undefined) throw methodNotAllowed('PATCH');
  const ct = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (!PATCH_TYPES.includes(ct)) {
    throw new HubApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
    );
  }
  if (ct === APPLY) return apply(ctx, req, reply, t, q);
  const body = parseBody(req);
  const result = dryRun(ctx.store, q, () => {
    const obj = patched(getOrThrow(ctx.store, t), ct, body, t);
    fieldValidation(reply, q, t.type, obj);
    return t.subresource ? ctx.store.updateStatus(obj) : ctx.store.update(obj);
  });
  return send(reply, 200, result);
}

/** `current` with the JSON, merge or strategic patch `body` applied, kept at the URL's type and name. */
function patched(current: KubeObject, ct: string, body: unknown, t: Target): KubeObject {
  let out: unknown;
  if (ct === JSON_PATCH) out = applyJsonPatch(current, body);
  else {
    if (!isObject(body)) throw new HubApiError(400, 'BadRequest', 'the merge patch is not an object');
    out = applyMergePatch(current, ct === STRATEGIC ? stripStrategicDirectives(body) : body);
  }
  if (!isObject(out)) throw new HubApiError(422, 'Invalid', 'the patched object is not an object');
  const obj = out as KubeObject;
  obj.apiVersion = t.type.apiVersion;
  obj.kind = t.type.kind;
  if (!isObject(obj.metadata)) obj.metadata = { name: t.name! };
  obj.metadata.name = t.name!;
  if (t.namespace) obj.metadata.namespace = t.namespace;
  return obj;
}

/** Server-side apply: 201 when it created the object, 200 otherwise. */
function apply(ctx: ApiContext, req: FastifyRequest, reply: FastifyReply, t: Target, q: URLSearchParams) {
  const manager = q.get('fieldManager');
  if (!manager) {
    throw new HubApiError(
      400,
      'BadRequest',
      'PATCH, application/apply-patch+yaml requests must have a fieldManager query parameter',
    );
  }
  const config = parseBody(req, true);
  if (!isObject(config)) throw new HubApiError(400, 'BadRequest', 'the apply configuration is not an object');
  fieldValidation(reply, q, t.type, config as KubeObject);
  const force = q.get('force') === 'true';
  const existed = ctx.store.get(keyOf(t)) !== undefined;
  const result = dryRun(ctx.store, q, () =>
    serverSideApply(ctx.store, t.type, keyOf(t), config as KubeObject, {
      manager,
      force,
      subresource: t.subresource,
    }),
  );
  return send(reply, existed ? 200 : 201, result);
}
