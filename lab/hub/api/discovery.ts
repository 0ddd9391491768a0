/**
 * What the hub API server says about itself, and how it reads a path: `/version`, the OpenAPI
 * documents (openapi.ts), the discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`,
 * `/apis/<g>/<v>`; legacy JSON even when aggregated discovery is asked for, which clients accept),
 * and the route from a resource path to the type, namespace, name and subresource it names.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openapiV2Json, openapiV2Protobuf, openapiV3Doc, openapiV3Index } from '../openapi.js';
import type { ResourceType } from '../types.js';
import type { ApiContext, Target } from './context.js';
import { pathNotFound, send } from './status.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Each API group with its versions, in the order the types are served. */
function groupVersions(types: ResourceType[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const t of types) {
    const vs = m.get(t.group) ?? [];
    if (!vs.includes(t.version)) vs.push(t.version);
    m.set(t.group, vs);
  }
  return m;
}

function apiGroup(name: string, versions: string[]) {
  const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: vs, preferredVersion: vs[0] };
}

/** The APIResourceList of one group-version: every type, and its `/status` when it has one. */
function resourceList(types: ResourceType[], group: string, version: string) {
  const resources: Record<string, unknown>[] = [];
  for (const t of types.filter((x) => x.group === group && x.version === version)) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: ALL_VERBS,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
    });
    if (t.hasStatus) {
      resources.push({
        name: `${t.plural}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: ['get', 'patch', 'update'],
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

function versionDoc(gitVersion: string) {
  const minor = gitVersion.match(/^v\d+\.(\d+)/)?.[1] ?? '31';
  return {
    major: '1',
    minor,
    gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.22.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** Answers `/version` and `/openapi/*`; undefined for any other path. */
export function serveServerInfo(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  path: string,
  segs: string[],
): FastifyReply | undefined {
  const types = ctx.store.types();
  if (path === '/version') return send(reply, 200, versionDoc(ctx.gitVersion));
  if (path === '/openapi/v3') return send(reply, 200, openapiV3Index(types, ctx.openapiHash));
  if (segs[0] === 'openapi' && segs[1] === 'v3') {
    const doc = openapiV3Doc(types, segs.slice(2).join('/'), ctx.gitVersion);
    if (!doc) throw pathNotFound();
    return send(reply, 200, doc);
  }
  if (path === '/openapi/v2') {
    if (/protobuf/.test(String(req.headers.accept ?? ''))) {
      return reply
        .code(200)
        .type('application/com.github.proto-openapi.spec.v2@v1.0+protobuf')
        .send(openapiV2Protobuf(types, ctx.gitVersion));
    }
    return send(reply, 200, openapiV2Json(types, ctx.gitVersion));
  }
  return undefined;
}

/** The group, version and rest of a path under `/api` or `/apis`, or the discovery document it names. */
function splitGroupVersion(
  ctx: ApiContext,
  segs: string[],
): { doc: unknown } | { group: string; version: string; rest: string[] } {
  if (segs[0] === 'api') {
    if (segs.length === 1) {
      return {
        doc: {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: ctx.serverAddress }],
        },
      };
    }
    if (segs[1] !== 'v1') throw pathNotFound();
    return { group: '', version: 'v1', rest: segs.slice(2) };
  }
  if (segs[0] !== 'apis') throw pathNotFound();
  const gv = groupVersions(ctx.store.types());
  gv.delete('');
  if (segs.length === 1) {
    return {
      doc: { kind: 'APIGroupList', apiVersion: 'v1', groups: [...gv].map(([g, vs]) => apiGroup(g, vs)) },
    };
  }
  const versions = gv.get(segs[1]!);
  if (!versions) throw pathNotFound();
  if (segs.length === 2)
    return { doc: { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(segs[1]!, versions) } };
  if (!versions.includes(segs[2]!)) throw pathNotFound();
  return { group: segs[1]!, version: segs[2]!, rest: segs.slice(3) };
}

/** The resource a path names, or a discovery document to send (404 for anything else). */
export function route(ctx: ApiContext, segs: string[]): { target?: Target; doc?: unknown } {
  const gv = splitGroupVersion(ctx, segs);
  if ('doc' in gv) return { doc: gv.doc };
  const { group, version } = gv;
  let rest = gv.rest;
  const types = ctx.store.types();
  const findType = (plural: string) =>
    types.find((t) => t.group === group && t.version === version && t.plural === plural);
  if (rest.length === 0) return { doc: resourceList(types, group, version) };
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && findType(rest[2]!)?.namespaced) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) throw pathNotFound();
  const type = findType(rest[0]!);
  if (!type) throw pathNotFound();
  const name = rest[1];
  if (!type.namespaced && namespace !== undefined) throw pathNotFound();
  if (type.namespaced && namespace === undefined && name !== undefined) throw pathNotFound();
  let subresource: 'status' | undefined;
  if (rest.length === 3) {
    if (rest[2] !== 'status' || !type.hasStatus) throw pathNotFound();
    subresource = 'status';
  }
  return { target: { type, namespace, name, subresource, watchPath } };
}
