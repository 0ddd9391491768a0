/**
 * Conversions between Go values the way sprig makes them: strval (fmt's %v for anything that is
 * not a string), cast.ToInt64 and cast.ToFloat64 (lenient: a bad string is 0), lists from any
 * slice. Functions whose Go parameter is a string take nil as "" here (Go would refuse it).
 */
import { formatValue } from './fmt.js';
import { isNil, typeOf } from './values.js';

/** sprig's strval: a string as it is, anything else as `%v` (nil is "<nil>"). */
export function strval(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof Error) return v.message;
  return formatValue(v);
}

/** A string parameter: nil is "", other values their `%v`. */
export function str(v: unknown): string {
  return isNil(v) ? '' : strval(v);
}

/** cast.ToInt64: ints, floats (truncated), bools, numeric strings (0 past int64); anything else 0. */
export function toInt64(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? BigInt.asIntN(64, BigInt(Math.trunc(v))) : 0n;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^[+-]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[0-9]+)$/.test(s)) {
      const neg = s.startsWith('-');
      const body = s.replace(/^[+-]/, '');
      const n = /^0[0-7]+$/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
      const r = neg ? -n : n;
      return BigInt.asIntN(64, r) === r ? r : 0n;
    }
    return 0n;
  }
  return 0n;
}

/**
 * Go's strconv.ParseFloat(s, 64), or undefined where it fails: decimal and hexadecimal (`0x1p-2`)
 * forms, `inf`/`infinity`/`nan` in any case, no spaces; a value out of range fails too.
 */
function parseGoFloat(s: string): number | undefined {
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(s)) return NaN;
  let n: number;
  const hex = /^([+-]?)0x([0-9a-f_]*)(?:\.([0-9a-f_]*))?p([+-]?[0-9]+)$/i.exec(s);
  if (hex) {
    const [, sign, int = '', frac = '', exp = '0'] = hex;
    const digits = `${int}${frac}`.replaceAll('_', '');
    if (digits === '' || /^_|_$|__/.test(`${int}${frac}`)) return undefined;
    n = Number.parseInt(digits, 16) * 2 ** (Number(exp) - 4 * frac.replaceAll('_', '').length);
    if (sign === '-') n = -n;
  } else if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?$/i.test(s)) n = Number(s);
  else return undefined;
  return Number.isFinite(n) ? n : undefined;
}

/** cast.ToFloat64: a string as strconv.ParseFloat reads it, 0 where it fails. */
export function toFloat64(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return parseGoFloat(v) ?? 0;
  return 0;
}

/** A Go int parameter (literals are ints; values from YAML are float64 and taken too). */
export function int(v: unknown): number {
  return Number(toInt64(v));
}

/** A list parameter: a slice, or an error naming what it got (sprig's must* wording). */
export function list(v: unknown, fn: string): unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Uint8Array) return Array.from(v, (b) => BigInt(b));
  throw new Error(`Cannot ${fn} on type ${typeOf(v)}`);
}

/**
 * A Go `string` parameter, as text/template checks it before the call: a string, else Go's
 * error (nil is an invalid value, any other type the wrong one).
 */
export function goString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (isNil(v)) throw new Error('invalid value; expected string');
  throw new Error(`wrong type for value; expected string; got ${typeOf(v)}`);
}

/**
 * A Go `int` parameter: an int (a literal, or what int/len/add give), else Go's error. A number
 * from values is a float64 in Helm, and Helm refuses it too (`{{ randInt 0 .Values.max }}`).
 */
export function goInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (isNil(v)) throw new Error('invalid value; expected int');
  throw new Error(`wrong type for value; expected int; got ${typeOf(v)}`);
}
