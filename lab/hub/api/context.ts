/**
 * What every request handler of the hub API server shares: the server's state (the store, the
 * request log, the open watch streams, settings) as one context object, the resource a request
 * targets, and the store operations on that target every verb needs (its key, get-or-404, dryRun).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { notFound } from '../store.js';
import { HubApiError, type HubStore, type KubeObject, type ObjectKey, type ResourceType } from '../types.js';

export interface RequestRecord {
  method: string;
  /** The path without the query string. */
  path: string;
  status: number;
  /** The query string without `?` ('' when none). */
  query: string;
}

/** An open watch stream; `cleanup` stops its events and timers and forgets it. */
export interface OpenWatch {
  res: ServerResponse;
  cleanup(): void;
}

/** The API server's state, shared by its handlers. */
export interface ApiContext {
  store: HubStore;
  /** `/version` gitVersion (also the OpenAPI documents' title). */
  gitVersion: string;
  /** How often a watch that allows bookmarks gets one. */
  bookmarkMs: number;
  /** How long a watch without timeoutSeconds stays open. */
  maxWatchSeconds: number;
  /** A random hash for the `/openapi/v3` index, fixed for the server's life. */
  openapiHash: string;
  /** `host:port` as `/api` advertises it in `serverAddressByClientCIDRs` (set once listening). */
  serverAddress: string;
  /** The request log entry of each request in flight (a hijacked watch sets its status itself). */
  records: WeakMap<FastifyRequest, RequestRecord>;
  watches: Set<OpenWatch>;
}

/** The resource a request path names. */
export interface Target {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: 'status';
  /** The path had the legacy `/watch/` segment. */
  watchPath: boolean;
}

/** The store key of a target that names one object. */
export const keyOf = (t: Target): ObjectKey => ({
  apiVersion: t.type.apiVersion,
  kind: t.type.kind,
  namespace: t.namespace,
  name: t.name!,
});

/** The object a target names, or the API server's 404. */
export function getOrThrow(store: HubStore, t: Target): KubeObject {
  const obj = store.get(keyOf(t));
  if (!obj) throw notFound(t.type, t.name!);
  return obj;
}

/** The objects of a target's type and namespace that the request's selectors match. */
export function listTarget(store: HubStore, t: Target, q: URLSearchParams): KubeObject[] {
  return store.list(t.type.apiVersion, t.type.kind, {
    namespace: t.namespace,
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
  });
}

/** Runs `fn`, or with `dryRun=All` runs it against the store and undoes it; other values are 400. */
export function dryRun<T>(store: HubStore, q: URLSearchParams, fn: () => T): T {
  const v = q.getAll('dryRun');
  if (v.length === 0) return fn();
  if (!v.every((x) => x === 'All'))
    throw new HubApiError(
      400,
      'BadRequest',
      `dryRun: Unsupported value: "${v.join(',')}": supported values: "All"`,
    );
  if (!store.dryRun) throw new HubApiError(400, 'BadRequest', 'this store does not support dryRun');
  return store.dryRun(fn);
}
