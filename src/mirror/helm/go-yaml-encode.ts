/**
 * Template values turned into the YAML tree Helm's YAML writers lay out (go-yaml-writer.ts).
 *
 * - toYaml (sigs.k8s.io/yaml Marshal): the value goes through encoding/json, the JSON is read back
 *   by go-yaml v2 and written by it. So a number is what JSON gives back: an integer that fits
 *   int64 or uint64 stays an integer (`1000000`), anything else is a float64 written with Go's
 *   shortest `%g` (`1.5`, `1.2345675e+06`, `1e-07`, `1e+20`); NaN and ±Inf are JSON errors; []byte
 *   is base64; a time is its RFC 3339 text.
 * - toYamlPretty (go-yaml v3 Encoder): the value is written as it is, so a float64 is always `%g`
 *   (`1e+06`), NaN and ±Inf are `.nan`, `.inf`, `-.inf`, and []byte is a list of numbers.
 *
 * Both: keys in go-yaml's order (a natural order: letters after other characters, digit runs by
 * value), and a string is plain unless it would read back as something else (a bool in YAML 1.1's
 * spelling, a number in Go's syntax, a null, a timestamp, a sexagesimal number), then it is
 * double-quoted; a string with a newline asks for a literal block. The emitter may still quote
 * it (single quotes) when plain text cannot hold it.
 */
import { GoStruct, isMap } from './template/values.js';
import type { YamlNode } from './go-yaml-writer.js';

/** What Helm's toYaml turns into "" (and mustToYaml into an error): a value JSON cannot hold. */
export class GoYamlError extends Error {}

/** Which of Helm's writers: toYaml (go-yaml v2 after JSON) or toYamlPretty (go-yaml v3). */
export type GoYamlDialect = 'v2' | 'v3';

const scalar = (value: string, style: 'plain' | 'double' | 'literal' = 'plain'): YamlNode => ({
  kind: 'scalar',
  value,
  style,
});

/** YAML 1.1's booleans, which both go-yaml versions keep out of plain text (v2 reads them as bools). */
const OLD_BOOLS = [
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'on',
  'On',
  'ON',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'off',
  'Off',
  'OFF',
];
/** The rest of go-yaml's table of words: bools, nulls, infinities, not-a-number. */
const WORDS = new Set([
  ...OLD_BOOLS,
  ...['true', 'True', 'TRUE', 'false', 'False', 'FALSE', '', '~', 'null', 'Null', 'NULL'],
  ...['.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF'],
]);
/** go-yaml looks a word up only when its first character is one of these (or it is empty). */
const HINTED = /^(?:$|[-+0-9yYnNtTfFoO~.])/;
/** Go's strconv.ParseInt syntax with base 0 (underscores already taken out). */
const GO_INT = /^([+-]?)(0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** The integer a Go base-0 integer literal spells, or undefined. */
function goIntLiteral(s: string): { value: bigint; signed: boolean } | undefined {
  const m = GO_INT.exec(s);
  if (!m) return undefined;
  const body = m[2]!;
  const digits = /^0[0-7]+$/.test(body) ? `0o${body.slice(1)}` : body.toLowerCase();
  const value = BigInt(digits);
  return { value: m[1] === '-' ? -value : value, signed: m[1] !== '' };
}

/** An integer go-yaml reads as int/int64 (ParseInt) or uint64 (ParseUint, no sign allowed). */
function readsAsInt(plain: string): boolean {
  const n = goIntLiteral(plain);
  if (!n) return false;
  return (n.value >= INT64_MIN && n.value <= INT64_MAX) || (!n.signed && n.value <= UINT64_MAX);
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * go-yaml's timestamps: Go's time.Parse with `2006-1-2T15:4:5.999999999Z07:00` (or `t`),
 * `2006-1-2 15:4:5.999999999` or `2006-1-2`, fields checked for range as Go checks them.
 */
function isTimestamp(s: string): boolean {
  const m =
    /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?(Z|[+-]\d\d:\d\d))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:[.,]\d+)?))?$/.exec(
      s,
    );
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  const hms = (m[4] ?? m[8]) === undefined ? [] : [m[4] ?? m[8], m[5] ?? m[9], m[6] ?? m[10]].map(Number);
  if (hms.length && (hms[0]! > 23 || hms[1]! > 59 || hms[2]! > 59)) return false;
  const tz = m[7];
  return !tz || tz === 'Z' || (Number(tz.slice(1, 3)) <= 24 && Number(tz.slice(4, 6)) <= 60);
}

/** Whether go-yaml reads `s`, written plain, back as the same string (its resolve() gives !!str). */
function readsAsString(s: string): boolean {
  if (!HINTED.test(s)) return true;
  if (WORDS.has(s)) return false;
  const c = s[0]!;
  if (c === '.') return !(DOT_FLOAT.test(s) && Number.isFinite(Number(s)));
  if (c !== '+' && c !== '-' && !(c >= '0' && c <= '9')) return true;
  if (isTimestamp(s)) return false;
  const plain = s.replaceAll('_', '');
  if (readsAsInt(plain)) return false;
  return !(YAML_FLOAT.test(plain) && Number.isFinite(Number(plain)));
}

/** A sexagesimal number (`1:30`), which YAML 1.1 readers take as a number: go-yaml quotes it. */
function isBase60Float(s: string): boolean {
  return /^[-+0-9]/.test(s) && s.includes(':') && BASE60.test(s);
}

/** A string as go-yaml's encoder hands it to the emitter. */
function stringNode(raw: string): YamlNode {
  // Go strings are UTF-8: a lone surrogate has no place there (JSON makes it U+FFFD).
  const s = /[\uD800-\uDFFF]/.test(raw)
    ? raw.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    : raw;
  if (s.includes('\n')) return scalar(s, 'literal');
  return scalar(s, readsAsString(s) && !isBase60Float(s) ? 'plain' : 'double');
}

/** Go's strconv.FormatFloat(v, 'g', -1, 64): the shortest digits; exponent form below 1e-4 and from 1e6 on. */
function goFormatFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, e] = v.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 6)
    return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(v);
}

/** A float64 after encoding/json and go-yaml v2's reading of the JSON number. */
function jsonNumber(v: number): string {
  if (!Number.isFinite(v)) throw new GoYamlError(`json: unsupported value: ${goFormatFloat(v)}`);
  if (Number.isInteger(v) && Math.abs(v) < 1e21) {
    // JSON writes it without a point; go-yaml reads it as an int when ParseInt/ParseUint can.
    const text = String(v);
    if (readsAsInt(text)) return text;
  }
  return goFormatFloat(v);
}

/** time.Time's RFC3339Nano text (in UTC, as the template engine keeps times). */
function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.?0+Z$/, 'Z');
}

const isLetterCode = (c: number) =>
  (c >= 0x61 && c <= 0x7a) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c > 0x7f && /\p{L}/u.test(String.fromCodePoint(c)));
const isDigitCode = (c: number | undefined) =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c > 0x7f && /\p{Nd}/u.test(String.fromCodePoint(c))));

/** The value of the digit run `r[from..to)` after `seed`, as Go's int64 arithmetic gives it (wrapping). */
function runValue(
  r: readonly number[],
  from: number,
  to: number,
  seed: number,
  big: boolean,
): number | bigint {
  if (!big) {
    let n = seed;
    for (let k = from; k < to; k++) n = n * 10 + (r[k]! - 48);
    return n;
  }
  let n = BigInt(seed);
  for (let k = from; k < to; k++) n = BigInt.asIntN(64, n * 10n + BigInt(r[k]! - 48));
  return n;
}

/** go-yaml's key order (sorter.go keyList.Less) for string keys, over their code points; `v3` has its one change. */
function goKeyLess(ar: readonly number[], br: readonly number[], dialect: GoYamlDialect): boolean {
  let digits = false;
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const [a, b] = [ar[i]!, br[i]!];
    if (a === b) {
      digits = isDigitCode(a);
      continue;
    }
    const al = isLetterCode(a);
    const bl = isLetterCode(b);
    if (al && bl) return a < b;
    if (al || bl) return dialect === 'v3' && digits ? al : bl;
    let seed = 0;
    if (a === 0x30 || b === 0x30) {
      for (let j = i - 1; j >= 0 && isDigitCode(ar[j]); j--) {
        if (ar[j] !== 0x30) {
          seed = 1;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    while (ai < ar.length && isDigitCode(ar[ai])) ai++;
    while (bi < br.length && isDigitCode(br[bi])) bi++;
    // Up to 15 digits a double holds exactly; past that, int64 as Go has it.
    const big = ai - i > 15 || bi - i > 15;
    const an = runValue(ar, i, ai, seed, big);
    const bn = runValue(br, i, bi, seed, big);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return a < b;
  }
  return ar.length < br.length;
}

function codePoints(s: string): number[] {
  const r: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.codePointAt(i)!;
    r.push(c);
    if (c > 0xffff) i++;
  }
  return r;
}

/** Keys sorted as go-yaml sorts them. */
function goSortKeys(keys: readonly string[], dialect: GoYamlDialect): string[] {
  const runes = keys.map((k) => ({ k, r: codePoints(k) }));
  runes.sort((x, y) => (goKeyLess(x.r, y.r, dialect) ? -1 : goKeyLess(y.r, x.r, dialect) ? 1 : 0));
  return runes.map((x) => x.k);
}

function mapNode(m: Record<string, unknown>, dialect: GoYamlDialect, depth: number): YamlNode {
  return {
    kind: 'map',
    entries: goSortKeys(Object.keys(m), dialect).map((k) => [
      stringNode(k),
      encode(m[k], dialect, depth + 1),
    ]),
  };
}

/** Deeper than encoding/json goes before it reports a cycle; a template value is a tree, so never in practice. */
const MAX_DEPTH = 1000;

/** The YAML tree of a template value, as Helm's toYaml (`v2`) or toYamlPretty (`v3`) sees it. */
export function encode(v: unknown, dialect: GoYamlDialect, depth = 0): YamlNode {
  if (depth > MAX_DEPTH) throw new GoYamlError('json: unsupported value: encountered a cycle');
  if (v === null || v === undefined) return scalar('null');
  switch (typeof v) {
    case 'boolean':
      return scalar(String(v));
    case 'bigint':
      return scalar(String(v));
    case 'number':
      if (dialect === 'v2') return scalar(jsonNumber(v));
      return scalar(
        Number.isNaN(v) ? '.nan' : Number.isFinite(v) ? goFormatFloat(v) : v > 0 ? '.inf' : '-.inf',
      );
    case 'string':
      return stringNode(v);
    default:
  }
  if (Array.isArray(v)) return { kind: 'seq', items: v.map((x) => encode(x, dialect, depth + 1)) };
  if (v instanceof Uint8Array) {
    if (dialect === 'v2') return stringNode(Buffer.from(v).toString('base64'));
    return { kind: 'seq', items: Array.from(v, (b) => scalar(String(b))) };
  }
  if (v instanceof Date) return dialect === 'v2' ? stringNode(rfc3339Nano(v)) : scalar(rfc3339Nano(v));
  if (v instanceof GoStruct) return mapNode({ ...v.fields }, dialect, depth);
  if (isMap(v)) return mapNode(v, dialect, depth);
  throw new GoYamlError(`json: unsupported type: ${typeof v}`);
}
