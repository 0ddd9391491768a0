/**
 * Request bodies as the hub API server reads them: JSON or YAML, checked against the URL (type,
 * name, namespace) the way kube-apiserver does, and the `fieldValidation` of unknown fields
 * (Strict: 400; Warn, the default: `Warning` headers; Ignore: nothing).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { load } from 'js-yaml';
import { isObject } from '../schema.js';
import { HubApiError, type KubeObject, type ResourceType } from '../types.js';
import type { Target } from './context.js';

/** The body decoded as YAML (when `yaml` or the content type says so) or JSON; 400 when empty or bad. */
export function parseBody(req: FastifyRequest, yaml = false): unknown {
  const raw = req.body;
  if (!Buffer.isBuffer(raw) || raw.length === 0)
    throw new HubApiError(400, 'BadRequest', 'the request body is empty');
  const text = raw.toString('utf8');
  try {
    return yaml || /yaml/.test(String(req.headers['content-type'] ?? '')) ? load(text) : JSON.parse(text);
  } catch (e) {
    throw new HubApiError(
      400,
      'BadRequest',
      `the request body could not be decoded: ${(e as Error).message}`,
    );
  }
}

/** The body as an object of `type` at the URL's namespace and name (400 on mismatch). */
export function bodyObject(req: FastifyRequest, t: Target): KubeObject {
  const body = parseBody(req);
  if (!isObject(body)) throw new HubApiError(400, 'BadRequest', 'the request body is not an object');
  const obj = body as KubeObject;
  if (obj.apiVersion === undefined) obj.apiVersion = t.type.apiVersion;
  if (obj.kind === undefined) obj.kind = t.type.kind;
  if (obj.apiVersion !== t.type.apiVersion || obj.kind !== t.type.kind) {
    throw new HubApiError(
      400,
      'BadRequest',
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${t.type.apiVersion})`,
    );
  }
  if (!isObject(obj.metadata)) obj.metadata = { name: '' };
  if (t.name !== undefined) {
    if (obj.metadata.name && obj.metadata.name !== t.name) {
      throw new HubApiError(
        400,
        'BadRequest',
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${t.name})`,
      );
    }
    obj.metadata.name = t.name;
  }
  if (t.type.namespaced) {
    if (obj.metadata.namespace && t.namespace && obj.metadata.namespace !== t.namespace) {
      throw new HubApiError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (t.namespace) obj.metadata.namespace = t.namespace;
  }
  return obj;
}

/** The DeleteOptions body of a DELETE, `{}` when there is none. */
export function deleteOptions(req: FastifyRequest): Record<string, unknown> {
  if (!Buffer.isBuffer(req.body) || req.body.length === 0) return {};
  const body = parseBody(req);
  return isObject(body) ? body : {};
}

/** Unknown fields of `obj` per `fieldValidation`: Strict → 400; Warn (default) → Warning headers. */
export function fieldValidation(
  reply: FastifyReply,
  q: URLSearchParams,
  type: ResourceType,
  obj: KubeObject,
): void {
  if (!type.normalize) return;
  const mode = q.get('fieldValidation') ?? 'Warn';
  if (mode === 'Ignore') return;
  const { unknownFields } = type.normalize(structuredClone(obj));
  if (unknownFields.length === 0) return;
  if (mode === 'Strict') {
    throw new HubApiError(
      400,
      'BadRequest',
      `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: strict decoding error: ${unknownFields
        .map((f) => `unknown field "${f}"`)
        .join(', ')}`,
    );
  }
  reply.header(
    'Warning',
    unknownFields.map((f) => `299 - ${JSON.stringify(`unknown field "${f}"`)}`),
  );
}
