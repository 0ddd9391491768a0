/**
 * The OpenAPI documents clients fetch before they write, only as far as they look at them: for every
 * resource path, the PATCH operation with its query parameters (`fieldValidation`, `fieldManager`,
 * `dryRun`, `force`) and the `x-kubernetes-group-version-kind` extension. kubectl 1.27+ checks there
 * that the server does field validation (and then leaves validation to it); kubectl before 1.27
 * validates client-side with the v2 document and skips the kinds it has no schema for. No schemas.
 *
 * v3: the index (`/openapi/v3`) and one JSON document per group-version. v2: one protobuf document
 * (gnostic `openapi.v2.Document`), which is all kubectl asks `/openapi/v2` for.
 */
import type { ResourceType } from './types.js';

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'];

const gvPrefix = (g: string, v: string) => (g ? `apis/${g}/${v}` : `api/${v}`);

function itemPath(t: ResourceType): string {
  return `/${gvPrefix(t.group, t.version)}/${t.namespaced ? 'namespaces/{namespace}/' : ''}${t.plural}/{name}`;
}

/** The group-versions served, in order. */
function groupVersions(types: ResourceType[]): [string, string][] {
  const gvs: [string, string][] = [];
  for (const t of types)
    if (!gvs.some(([g, v]) => g === t.group && v === t.version)) gvs.push([t.group, t.version]);
  return gvs;
}

/** The `/openapi/v3` index. */
export function openapiV3Index(types: ResourceType[], hash: string): Record<string, unknown> {
  return {
    paths: Object.fromEntries(
      groupVersions(types).map(([g, v]) => [
        gvPrefix(g, v),
        { serverRelativeURL: `/openapi/v3/${gvPrefix(g, v)}?hash=${hash}` },
      ]),
    ),
  };
}

/** The `/openapi/v3/<api/v1|apis/g/v>` document, or undefined for an unknown group-version. */
export function openapiV3Doc(
  types: ResourceType[],
  gvPath: string,
  title: string,
): Record<string, unknown> | undefined {
  const gv = groupVersions(types).find(([g, v]) => gvPrefix(g, v) === gvPath);
  if (!gv) return undefined;
  const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  const paths: Record<string, unknown> = {};
  for (const t of types.filter((x) => x.group === gv[0] && x.version === gv[1])) {
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const op = (action: string) => ({
      operationId: `${action}${t.kind}`,
      parameters: QUERY_PARAMS.map(param),
      responses: { '200': { description: 'OK' } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
    });
    paths[itemPath(t)] = { get: op('get'), put: op('put'), patch: op('patch'), delete: op('delete') };
    if (t.hasStatus) paths[`${itemPath(t)}/status`] = { get: op('get'), put: op('put'), patch: op('patch') };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: title },
    paths,
    components: { schemas: {} },
  };
}

/** The `/openapi/v2` document as JSON, for clients that do not ask for protobuf. */
export function openapiV2Json(types: ResourceType[], title: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const t of types) {
    const op = (action: string) => ({
      operationId: `${action}${t.kind}`,
      parameters: QUERY_PARAMS.map((name) => ({ name, in: 'query', type: 'string', uniqueItems: true })),
      responses: { '200': { description: 'OK' } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
    });
    paths[itemPath(t)] = { get: op('get'), put: op('put'), patch: op('patch'), delete: op('delete') };
  }
  return { swagger: '2.0', info: { title: 'Kubernetes', version: title }, paths, definitions: {} };
}

// ---- a minimal protobuf writer ----

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** A length-delimited field (string, bytes or message). */
function field(num: number, value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([varint((num << 3) | 2), varint(bytes.length), bytes]);
}

const msg = (...parts: Buffer[]) => Buffer.concat(parts);

/** The `/openapi/v2` document as protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`). */
export function openapiV2Protobuf(types: ResourceType[], title: string): Buffer {
  const queryParam = (name: string) =>
    // ParametersItem.parameter(1) → Parameter.non_body_parameter(2) → NonBodyParameter.query(3)
    field(8, field(1, field(2, field(3, msg(field(2, 'query'), field(4, name), field(6, 'string'))))));
  const operation = (t: ResourceType, action: string) => {
    const gvk = `group: ${JSON.stringify(t.group)}\nkind: ${t.kind}\nversion: ${t.version}\n`;
    return msg(
      field(5, `${action}${t.kind}`),
      ...QUERY_PARAMS.map(queryParam),
      // responses(9) → response_code(1) NamedResponseValue{name, value: ResponseValue.response(1) Response{description}}
      field(9, field(1, msg(field(1, '200'), field(2, field(1, field(1, 'OK')))))),
      field(13, msg(field(1, 'x-kubernetes-action'), field(2, field(2, `${action}\n`)))),
      field(13, msg(field(1, 'x-kubernetes-group-version-kind'), field(2, field(2, gvk)))),
    );
  };
  const pathItems: Buffer[] = [];
  for (const t of types) {
    // PathItem: get(2) put(3) delete(5) patch(8)
    const item = msg(
      field(2, operation(t, 'get')),
      field(3, operation(t, 'put')),
      field(5, operation(t, 'delete')),
      field(8, operation(t, 'patch')),
    );
    pathItems.push(field(2, msg(field(1, itemPath(t)), field(2, item))));
  }
  return msg(
    field(1, '2.0'),
    field(2, msg(field(1, 'Kubernetes'), field(2, title))),
    field(8, msg(...pathItems)),
  );
}
