/**
 * Go's text/template built-in functions: and, or (evaluated lazily by the executor), not, eq (with
 * several arguments), ne, lt, le, gt, ge, len, index, slice, print, printf, println, html, js,
 * urlquery, call. Comparisons refuse what Go refuses ("incompatible types for comparison").
 */
import type { FuncDef } from './exec.js';
import { goQuote, sprint, sprintf, sprintln } from './fmt.js';
import { GoStruct, isNil, isTrue, mapGet, mapOf, typeOf } from './values.js';

type Kind = 'bool' | 'int' | 'float' | 'string' | 'invalid' | 'other';

function basicKind(v: unknown): Kind {
  if (isNil(v)) return 'invalid';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
    default:
      return 'other';
  }
}

function eq(a: unknown, ...rest: unknown[]): boolean {
  if (rest.length === 0) throw new Error('missing argument for comparison');
  const k1 = basicKind(a);
  for (const b of rest) {
    const k2 = basicKind(b);
    let truth: boolean;
    if (k1 !== k2) {
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new Error('incompatible types for comparison');
      truth = false;
    } else if (k1 === 'other') {
      if (!(a instanceof GoStruct || a instanceof Date) || typeOf(a) !== typeOf(b))
        throw new Error(`non-comparable type ${typeOf(a)}`);
      truth = a === b || (a instanceof Date && b instanceof Date && a.getTime() === b.getTime());
    } else {
      truth = k1 === 'invalid' || a === b;
    }
    if (truth) return true;
  }
  return false;
}

function lt(a: unknown, b: unknown): boolean {
  const k1 = basicKind(a);
  const k2 = basicKind(b);
  if (k1 === 'invalid' || k2 === 'invalid' || k1 === 'bool' || k1 === 'other')
    throw new Error('invalid type for comparison');
  if (k1 !== k2) throw new Error('incompatible types for comparison');
  return (a as string | number | bigint) < (b as string | number | bigint);
}

function toIndex(v: unknown, what: string): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new Error(`cannot index ${what} with type ${typeOf(v)}`);
}

function index(item: unknown, ...keys: unknown[]): unknown {
  let v = item;
  for (const k of keys) {
    if (isNil(v)) throw new Error('index of untyped nil');
    if (Array.isArray(v) || typeof v === 'string' || v instanceof Uint8Array) {
      const i = toIndex(k, Array.isArray(v) ? 'slice' : 'string');
      const len = typeof v === 'string' ? Buffer.byteLength(v) : v.length;
      if (i < 0 || i >= len) throw new Error(`index out of range: ${i}`);
      v = typeof v === 'string' ? BigInt(Buffer.from(v)[i]!) : v instanceof Uint8Array ? BigInt(v[i]!) : v[i];
    } else if (mapOf(v)) {
      if (isNil(k)) v = null;
      else if (typeof k !== 'string') throw new Error(`value has type ${typeOf(k)}; should be string`);
      else v = mapGet(mapOf(v)!, k);
    } else {
      throw new Error(`can't index item of type ${typeOf(v)}`);
    }
  }
  return v;
}

function slice(item: unknown, ...idx: unknown[]): unknown {
  if (isNil(item)) throw new Error('slice of untyped nil');
  if (idx.length > 3) throw new Error(`too many slice indexes: ${idx.length}`);
  const isStr = typeof item === 'string';
  if (!isStr && !Array.isArray(item)) throw new Error(`can't slice item of type ${typeOf(item)}`);
  if (isStr && idx.length === 3) throw new Error('cannot 3-index slice a string');
  const bytes = isStr ? Buffer.from(item) : undefined;
  const len = bytes ? bytes.length : (item as unknown[]).length;
  const ix = idx.map((i) => toIndex(i, 'slice'));
  const start = ix[0] ?? 0;
  const end = ix[1] ?? len;
  if (start < 0 || start > len) throw new Error(`index out of range: ${start}`);
  if (end < start || end > len) throw new Error(`invalid slice index: ${start} > ${end}`);
  return bytes ? bytes.subarray(start, end).toString('utf8') : (item as unknown[]).slice(start, end);
}

function length(v: unknown): bigint {
  if (isNil(v)) throw new Error('len of nil pointer');
  if (typeof v === 'string') return BigInt(Buffer.byteLength(v));
  if (Array.isArray(v) || v instanceof Uint8Array) return BigInt(v.length);
  const m = mapOf(v);
  if (m) return BigInt(Object.keys(m).length);
  throw new Error(`len of type ${typeOf(v)}`);
}

/** The text of the arguments of html, js and urlquery: one string as it is, else fmt.Sprint. */
function evalArgs(args: unknown[]): string {
  return args.length === 1 && typeof args[0] === 'string' ? args[0] : sprint(args);
}

function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) =>
    c === '\0' ? '\uFFFD' : { '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]!,
  );
}

function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (c < 0x20) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

const f = (min: number, max: number, fn: (...args: never[]) => unknown): FuncDef => ({
  min,
  max,
  fn: fn as (...args: unknown[]) => unknown,
});

export const goBuiltins: ReadonlyMap<string, FuncDef> = new Map<string, FuncDef>([
  ['and', f(1, Infinity, () => undefined)], // evaluated by the executor, lazily
  ['or', f(1, Infinity, () => undefined)],
  ['not', f(1, 1, (v: unknown) => !isTrue(v))],
  ['eq', f(1, Infinity, eq)],
  ['ne', f(2, 2, (a: unknown, b: unknown) => !eq(a, b))],
  ['lt', f(2, 2, lt)],
  ['le', f(2, 2, (a: unknown, b: unknown) => lt(a, b) || eq(a, b))],
  ['gt', f(2, 2, (a: unknown, b: unknown) => !(lt(a, b) || eq(a, b)))],
  ['ge', f(2, 2, (a: unknown, b: unknown) => !lt(a, b))],
  ['len', f(1, 1, length)],
  ['index', f(1, Infinity, index)],
  ['slice', f(1, Infinity, slice)],
  ['print', f(0, Infinity, (...a: unknown[]) => sprint(a))],
  ['printf', f(1, Infinity, (format: unknown, ...a: unknown[]) => sprintf(String(format), a))],
  ['println', f(0, Infinity, (...a: unknown[]) => sprintln(a))],
  ['html', f(0, Infinity, (...a: unknown[]) => htmlEscape(evalArgs(a)))],
  ['js', f(0, Infinity, (...a: unknown[]) => jsEscape(evalArgs(a)))],
  [
    'urlquery',
    f(0, Infinity, (...a: unknown[]) =>
      encodeURIComponent(evalArgs(a))
        .replace(/%20/g, '+')
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    ),
  ],
  [
    'call',
    f(1, Infinity, (fn: unknown) => {
      throw new Error(`non-function ${goQuote(String(fn))} of type ${typeOf(fn)}`);
    }),
  ],
]);
