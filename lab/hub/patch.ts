/**
 * Patch formats the API server takes: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with
 * `test`), and strategic merge patch treated as a merge patch after its `$`-directives are dropped
 * (enough for the objects the hub holds; lists are replaced whole). Failures are HubApiErrors: a
 * malformed patch is 400, a patch that does not apply (failed `test`, missing path) is 422.
 */
import { isObject } from './schema.js';
import { HubApiError } from './types.js';

/** RFC 7386: objects merge key by key, `null` deletes, everything else replaces. Returns a new value. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** A strategic merge patch without its directives (`$patch`, `$setElementOrder/...`, `$retainKeys`, ...). */
export function stripStrategicDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(stripStrategicDirectives);
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    out[k] = stripStrategicDirectives(v);
  }
  return out;
}

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function unapplicable(message: string): HubApiError {
  return new HubApiError(422, 'Invalid', message);
}

function tokens(pointer: string, what: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new HubApiError(400, 'BadRequest', `${what}: invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The container of the last token and that token; throws 422 when a parent is missing. */
function parentOf(
  doc: unknown,
  toks: string[],
  pointer: string,
): [Record<string, unknown> | unknown[], string] {
  let cur: unknown = doc;
  for (const t of toks.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined)
      throw unapplicable(
        `the server rejected our request due to an error in our request: doc is missing path: "${pointer}"`,
      );
  }
  if (!Array.isArray(cur) && !isObject(cur)) {
    throw unapplicable(
      `the server rejected our request due to an error in our request: doc is missing path: "${pointer}"`,
    );
  }
  return [cur, toks[toks.length - 1]!];
}

function index(arr: unknown[], t: string, pointer: string, forAdd: boolean): number {
  if (forAdd && t === '-') return arr.length;
  const i = Number(t);
  if (!/^\d+$/.test(t) || i > arr.length || (!forAdd && i >= arr.length)) {
    throw unapplicable(
      `the server rejected our request due to an error in our request: Unable to access invalid index: ${t} (${pointer})`,
    );
  }
  return i;
}

function get(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const t of tokens(pointer, 'path')) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(t) ? cur[Number(t)] : undefined;
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined)
      throw unapplicable(
        `the server rejected our request due to an error in our request: doc is missing path: "${pointer}"`,
      );
  }
  return cur;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  const toks = tokens(pointer, 'path');
  if (toks.length === 0) return value;
  const [parent, t] = parentOf(doc, toks, pointer);
  if (Array.isArray(parent)) parent.splice(index(parent, t, pointer, true), 0, value);
  else parent[t] = value;
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  const toks = tokens(pointer, 'path');
  if (toks.length === 0) return undefined;
  const [parent, t] = parentOf(doc, toks, pointer);
  if (Array.isArray(parent)) parent.splice(index(parent, t, pointer, false), 1);
  else {
    if (!(t in parent))
      throw unapplicable(
        `the server rejected our request due to an error in our request: Unable to remove nonexistent key: ${t}: missing value (${pointer})`,
      );
    delete parent[t];
  }
  return doc;
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The value with object keys sorted, for comparisons. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical(v[k])]),
  );
}

/** Deep equality of JSON values (object key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  return equal(a, b);
}

/** RFC 6902 over a copy of `doc`; returns the patched copy. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch))
    throw new HubApiError(
      400,
      'BadRequest',
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
  let out = structuredClone(doc);
  for (const raw of patch as Op[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new HubApiError(400, 'BadRequest', `invalid JSON patch operation: ${JSON.stringify(raw)}`);
    }
    const op = raw;
    switch (op.op) {
      case 'add':
        out = add(out, op.path, structuredClone(op.value));
        break;
      case 'remove':
        out = remove(out, op.path);
        break;
      case 'replace':
        get(out, op.path);
        out = add(remove(out, op.path), op.path, structuredClone(op.value));
        break;
      case 'move': {
        const v = get(out, op.from ?? '');
        out = add(remove(out, op.from ?? ''), op.path, v);
        break;
      }
      case 'copy':
        out = add(out, op.path, structuredClone(get(out, op.from ?? '')));
        break;
      case 'test': {
        let actual: unknown;
        try {
          actual = get(out, op.path);
        } catch {
          actual = undefined;
        }
        if (!equal(actual, op.value)) {
          throw unapplicable(
            `the server rejected our request due to an error in our request: testing value ${op.path} failed: test failed`,
          );
        }
        break;
      }
      default:
        throw new HubApiError(400, 'BadRequest', `Unexpected kind: ${op.op}`);
    }
  }
  return out;
}
