/**
 * Kubernetes structural schemas (the `openAPIV3Schema` of a CRD version) as the API server uses them,
 * for the hub simulator and the tests' CRD checks:
 *
 * - {@link toJsonSchema} translates one into plain JSON Schema for ajv:
 *   `x-kubernetes-int-or-string: true` → `anyOf: [integer, string]`; an object with `properties` and
 *   without `x-kubernetes-preserve-unknown-fields` or `additionalProperties` gets
 *   `additionalProperties: false` (a typo must fail); `x-kubernetes-list-type: set` → `uniqueItems`;
 *   other `x-kubernetes-*` keywords (CEL validations, list map keys) are ignored; formats are not checked.
 * - {@link normalizeObject} prunes the fields a schema does not declare (respecting
 *   `x-kubernetes-preserve-unknown-fields`), drops nulls of non-nullable fields and applies defaults,
 *   in place, as the API server does before validating a write.
 * - {@link compileValidator} checks an object and reports errors the way the API server prints them:
 *   `spec.platform.type: Unsupported value: "Foo": supported values: "AWS", ...`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FieldError } from './types.js';

export type Schema = Record<string, unknown>;

export function isObject(v: unknown): v is Schema {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Translate a Kubernetes structural schema into plain JSON Schema for ajv (see the file comment). */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties' && isObject(v)) {
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, toJsonSchema(s)]));
    } else if (k === 'description' || k.startsWith('x-kubernetes-')) {
      continue;
    } else {
      out[k] = toJsonSchema(v);
    }
  }
  if (node['x-kubernetes-int-or-string'] === true) {
    delete out.type;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (isObject(node.properties) && !preserve && node.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

/** The API server's way to print a field path: `spec.services[0].type`, `metadata.labels[a.b/c]`. */
function fieldPath(segments: readonly (string | number)[]): string {
  let path = '';
  for (const seg of segments) {
    if (typeof seg === 'number' || /^\d+$/.test(seg)) path += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) path += path === '' ? seg : `.${seg}`;
    else path += `[${seg}]`;
  }
  return path;
}

/** JSON Pointer (`/spec/x/0/y`) → its segments. */
function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const ROOT_KEEP = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Prune, drop non-nullable nulls and default `obj` in place against the structural `schema`
 * (`openAPIV3Schema`). Returns the paths of the pruned unknown fields (`spec.foo`).
 */
export function normalizeObject(obj: Schema, schema: Schema): string[] {
  const unknown: string[] = [];
  walk(obj, schema, [], unknown, true);
  return unknown;
}

function walk(
  value: unknown,
  schema: Schema,
  path: (string | number)[],
  unknown: string[],
  root = false,
): void {
  if (Array.isArray(value)) {
    const items = isObject(schema.items) ? schema.items : undefined;
    if (!items) return;
    value.forEach((v, i) => walk(v, items, [...path, i], unknown));
    return;
  }
  if (!isObject(value)) return;
  const props = isObject(schema.properties) ? (schema.properties as Record<string, Schema>) : undefined;
  const additional = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  const preserve =
    schema['x-kubernetes-preserve-unknown-fields'] === true || schema.additionalProperties === true;
  for (const key of Object.keys(value)) {
    if (root && ROOT_KEEP.has(key)) continue; // metadata is ObjectMeta, never pruned by the CRD schema
    const sub = props?.[key] ?? additional;
    if (!sub) {
      if (!preserve) {
        unknown.push(fieldPath([...path, key]));
        delete value[key];
      }
      continue;
    }
    if (value[key] === null && sub.nullable !== true) {
      delete value[key];
      continue;
    }
    walk(value[key], sub, [...path, key], unknown);
  }
  if (props) {
    for (const [key, sub] of Object.entries(props)) {
      if (value[key] === undefined && sub.default !== undefined) {
        value[key] = structuredClone(sub.default);
        walk(value[key], sub, [...path, key], unknown);
      }
    }
  }
}

function quote(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[]interface {}{...}';
  return '"object"';
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function valueAt(obj: unknown, segments: readonly string[]): unknown {
  let cur = obj;
  for (const s of segments) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (isObject(cur)) cur = cur[s];
    else return undefined;
  }
  return cur;
}

/** One ajv error as the API server would report it (undefined: folded into another error). */
function describe(e: ErrorObject, obj: unknown): FieldError | undefined {
  const segs = pointerSegments(e.instancePath);
  const field = fieldPath(segs);
  const value = valueAt(obj, segs);
  const body = field === '' ? '<root>' : field;
  const invalid = (detail: string): FieldError => ({
    field,
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${quote(value)}: ${body} in body ${detail}`,
  });
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return {
        field: fieldPath([...segs, String(p.missingProperty)]),
        reason: 'FieldValueRequired',
        message: 'Required value',
      };
    case 'enum':
      return {
        field,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${quote(value)}: supported values: ${(p.allowedValues as unknown[]).map(quote).join(', ')}`,
      };
    case 'type':
      return {
        field,
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: ${quote(value)}: ${body} in body must be of type ${String(p.type)}: "${typeName(value)}"`,
      };
    case 'anyOf':
      if (
        isObject(e.parentSchema) &&
        Array.isArray(e.parentSchema.anyOf) &&
        isIntOrString(e.parentSchema.anyOf)
      ) {
        return {
          field,
          reason: 'FieldValueTypeInvalid',
          message: `Invalid value: ${quote(value)}: ${body} in body must be of type integer,string: "${typeName(value)}"`,
        };
      }
      return invalid('must match at least one schema in anyOf');
    case 'pattern':
      return invalid(`should match '${String(p.pattern)}'`);
    case 'minimum':
    case 'exclusiveMinimum':
      return invalid(
        `should be greater than ${e.keyword === 'minimum' ? 'or equal to ' : ''}${String(p.limit)}`,
      );
    case 'maximum':
    case 'exclusiveMaximum':
      return invalid(
        `should be less than ${e.keyword === 'maximum' ? 'or equal to ' : ''}${String(p.limit)}`,
      );
    case 'minLength':
      return invalid(`should be at least ${String(p.limit)} chars long`);
    case 'maxLength':
      return {
        field,
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${String(p.limit)} bytes`,
      };
    case 'minItems':
      return invalid(`should have at least ${String(p.limit)} items`);
    case 'maxItems':
      return {
        field,
        reason: 'FieldValueTooMany',
        message: `Too many: ${Array.isArray(value) ? value.length : '?'}: must have at most ${String(p.limit)} items`,
      };
    case 'minProperties':
      return invalid(`should have at least ${String(p.limit)} properties`);
    case 'maxProperties':
      return invalid(`should have at most ${String(p.limit)} properties`);
    case 'uniqueItems': {
      const arr = Array.isArray(value) ? value : [];
      return {
        field: fieldPath([...segs, Number(p.i)]),
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${quote(arr[Number(p.i)])}`,
      };
    }
    case 'additionalProperties':
      return {
        field: fieldPath([...segs, String(p.additionalProperty)]),
        reason: 'FieldValueInvalid',
        message: 'field not declared in schema',
      };
    default:
      return invalid(e.message ?? e.keyword);
  }
}

function isIntOrString(anyOf: unknown[]): boolean {
  return (
    anyOf.length === 2 &&
    anyOf.some((s) => isObject(s) && s.type === 'integer') &&
    anyOf.some((s) => isObject(s) && s.type === 'string')
  );
}

/**
 * Compile a validator for a structural schema. It reports type, enum, required, pattern, length,
 * range, item-count and uniqueness failures with API-server paths and messages; an undeclared field
 * (only present when the object was not normalized first) is `field not declared in schema`.
 */
export function compileValidator(structural: Schema): (obj: unknown) => FieldError[] {
  let check: ValidateFunction | undefined;
  return (obj) => {
    if (!check) {
      const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, verbose: true });
      check = ajv.compile(toJsonSchema(structural) as Schema);
    }
    if (check(obj)) return [];
    const errors = check.errors ?? [];
    // The branches of a failed anyOf are reported once, as the anyOf.
    const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
    const out: FieldError[] = [];
    const seen = new Set<string>();
    for (const e of errors) {
      if (e.keyword !== 'anyOf' && anyOfPaths.has(e.instancePath) && /\/anyOf\/\d+\//.test(e.schemaPath))
        continue;
      const fe = describe(e, obj);
      if (!fe) continue;
      const key = `${fe.field}\0${fe.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(fe);
    }
    return out;
  };
}
