/**
 * Go's text/template built-in functions: and, or (evaluated lazily by the executor), not, eq (with
 * several arguments), ne, lt, le, gt, ge, len, index, slice, print, printf, println, html, js,
 * urlquery, call. Comparisons refuse what Go refuses ("incompatible types for comparison").
 */
import type { FuncDef } from './exec.js';
import { clip } from './errors.js';
import { formatValue, goQuote, isPrint, sprint, sprintf, sprintln } from './fmt.js';
import { GoStruct, isNil, isTrue, kindOf, mapGet, mapOf, typeOf } from './values.js';

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

/** Go's eq for two values of no basic kind (maps, lists, structs): only structs compare. */
function eqOther(a: unknown, b: unknown): boolean {
  if (kindOf(a) !== kindOf(b) && typeOf(a) !== typeOf(b))
    throw new Error(
      `non-comparable types ${clip(formatValue(a))}: ${typeOf(a)}, ${typeOf(b)}: ${clip(formatValue(b))}`,
    );
  if (!(b instanceof GoStruct || b instanceof Date))
    throw new Error(`non-comparable type ${clip(formatValue(b))}: ${typeOf(b)}`);
  return a === b || (a instanceof Date && b instanceof Date && a.getTime() === b.getTime());
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
      truth = eqOther(a, b);
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
  if (k1 === 'invalid' || k1 === 'other' || k2 === 'invalid' || k2 === 'other')
    throw new Error('invalid type for comparison');
  if (k1 !== k2) throw new Error('incompatible types for comparison');
  if (k1 === 'bool') throw new Error('invalid type for comparison');
  // Go orders strings by their bytes (UTF-16 order differs past the BMP).
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string)) < 0;
  return (a as number | bigint) < (b as number | bigint);
}

/** Go's indexArg: an int index within 0..size (nil and other types refused, floats too). */
function indexArg(v: unknown, size: number): number {
  if (isNil(v)) throw new Error('cannot index slice/array with nil');
  if (typeof v !== 'bigint') throw new Error(`cannot index slice/array with type ${typeOf(v)}`);
  if (v < 0n || v > BigInt(size)) throw new Error(`index out of range: ${v}`);
  return Number(v);
}

function index(item: unknown, ...keys: unknown[]): unknown {
  if (isNil(item)) throw new Error('index of untyped nil');
  let v: unknown = item;
  for (const k of keys) {
    if (isNil(v)) throw new Error('index of nil pointer');
    if (Array.isArray(v) || typeof v === 'string' || v instanceof Uint8Array) {
      const bytes = typeof v === 'string' ? Buffer.from(v) : v;
      const i = indexArg(k, bytes.length);
      if (i === bytes.length) throw new Error(`index out of range: ${i}`);
      v = Array.isArray(bytes) ? bytes[i] : BigInt((bytes as Uint8Array)[i]!);
    } else if (mapOf(v)) {
      if (isNil(k)) throw new Error('value is nil; should be of type string');
      if (typeof k !== 'string') throw new Error(`value has type ${typeOf(k)}; should be string`);
      v = mapGet(mapOf(v)!, k);
    } else {
      throw new Error(`can't index item of type ${typeOf(v)}`);
    }
  }
  return v;
}

/** Go's slice: item[i:j] and item[i:j:k] (lists; strings by bytes, two indexes at most). */
function slice(item: unknown, ...idx: unknown[]): unknown {
  if (isNil(item)) throw new Error('slice of untyped nil');
  if (idx.length > 3) throw new Error(`too many slice indexes: ${idx.length}`);
  const str = typeof item === 'string' ? Buffer.from(item) : undefined;
  if (!str && !Array.isArray(item) && !(item instanceof Uint8Array))
    throw new Error(`can't slice item of type ${typeOf(item)}`);
  if (str && idx.length === 3) throw new Error('cannot 3-index slice a string');
  const seq = str ?? (item as unknown[] | Uint8Array);
  const ix = [0, seq.length];
  idx.forEach((i, n) => (ix[n] = indexArg(i, seq.length)));
  const [start, end] = ix as [number, number];
  if (start > end) throw new Error(`invalid slice index: ${start} > ${end}`);
  if (idx.length === 3 && end > ix[2]!) throw new Error(`invalid slice index: ${end} > ${ix[2]}`);
  if (str) return str.subarray(start, end).toString('utf8');
  return seq.slice(start, end);
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
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (isNil(a) ? '<no value>' : a)));
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
    else if (c < 0x20 || (c >= 0x80 && !isPrint(ch)))
      out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
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
  [
    'printf',
    { ...f(1, Infinity, (format: string, ...a: unknown[]) => sprintf(format, a)), params: ['string', 'any'] },
  ],
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
