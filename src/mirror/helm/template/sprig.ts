/**
 * The sprig functions charts use (Helm's function map, minus include/tpl/required/fail/lookup,
 * which the chart renderer adds): strings, lists, dicts, math, conversions, encodings, hashes,
 * regular expressions, types, semver, dates, and stand-ins for the crypto generators (their
 * output is a placeholder: rendering for images needs their shape, not real keys).
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import type { FuncDef } from './exec.js';
import { goQuote } from './fmt.js';
import { int, list, str, strval, toFloat64, toInt64 } from './convert.js';
import { semverCompare, semverObject } from './semver.js';
import { formatDate, parseDate } from './time.js';
import {
  compareStrings,
  deepCopy,
  GoStruct,
  isEmpty,
  isMap,
  isNil,
  isTrue,
  kindOf,
  typeOf,
  type GoMap,
} from './values.js';

const f = (min: number, max: number, fn: (...args: never[]) => unknown): FuncDef => ({
  min,
  max,
  fn: fn as (...args: unknown[]) => unknown,
});
const V = Infinity;

function dict(v: unknown, fn: string): GoMap {
  if (isMap(v)) return v;
  throw new Error(`${fn}: expected a dict, got ${typeOf(v)}`);
}

// ---- strings

function title(s: string): string {
  return s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase());
}

function untitle(s: string): string {
  return s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toLowerCase());
}

function words(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
}

function trunc(n: unknown, s: unknown): string {
  const c = int(n);
  const t = str(s);
  if (c < 0 && t.length + c > 0) return t.slice(t.length + c);
  if (c >= 0 && t.length > c) return t.slice(0, c);
  return t;
}

function substr(start: unknown, end: unknown, s: unknown): string {
  const a = int(start);
  const b = int(end);
  const t = str(s);
  if (a < 0) return t.slice(0, b);
  if (b < 0 || b > t.length) return t.slice(a);
  return t.slice(a, b);
}

function indent(n: unknown, s: unknown): string {
  const pad = ' '.repeat(Math.max(0, int(n)));
  return pad + str(s).replace(/\n/g, `\n${pad}`);
}

function trimAll(cutset: string, s: string): string {
  const set = new Set(Array.from(cutset));
  const chars = Array.from(s);
  let a = 0;
  let b = chars.length;
  while (a < b && set.has(chars[a]!)) a++;
  while (b > a && set.has(chars[b - 1]!)) b--;
  return chars.slice(a, b).join('');
}

function splitMap(parts: string[]): GoMap {
  const out: GoMap = {};
  parts.forEach((p, i) => (out[`_${i}`] = p));
  return out;
}

function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  const all = s.split(sep);
  if (n < 0 || all.length <= n) return all;
  return [...all.slice(0, n - 1), all.slice(n - 1).join(sep)];
}

function join(sep: unknown, v: unknown): string {
  const items = Array.isArray(v) ? v : isNil(v) ? [] : [v];
  return items
    .filter((x) => !isNil(x))
    .map(strval)
    .join(str(sep));
}

function randomString(n: unknown, alphabet: string): string {
  let out = '';
  for (let i = 0; i < int(n); i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

// ---- regular expressions (RE2 → JavaScript for what charts write)

function regex(pattern: unknown, global = false): RegExp {
  let p = str(pattern);
  let flags = global ? 'gu' : 'u';
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    p = p.slice(lead[0].length);
    for (const c of lead[1]!) if (c !== 'U' && !flags.includes(c)) flags += c;
  }
  p = p.replace(/\(\?P</g, '(?<').replace(/\\z/g, '$(?![\\s\\S])');
  try {
    return new RegExp(p, flags);
  } catch (e) {
    throw new Error(`error parsing regexp: ${(e as Error).message}`);
  }
}

/** Go's Regexp.Expand template ($1, ${1}, ${name}, $$) in JavaScript's replacement syntax. */
function goReplacement(repl: string): string {
  return repl.replace(/\$(\$|\{(\w+)\}|(\w+))/g, (_m, all: string, braced?: string, bare?: string) => {
    if (all === '$') return '$$';
    const name = braced ?? bare!;
    return /^\d+$/.test(name) ? `$${name}` : `$<${name}>`;
  });
}

function regexSplit(pattern: unknown, s: unknown, n: unknown): string[] {
  const parts = str(s).split(regex(pattern));
  const c = int(n);
  if (c < 0 || parts.length <= c) return parts;
  return parts.slice(0, c);
}

// ---- lists

function uniq(l: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const x of l) if (!out.some((y) => deepEqual(x, y))) out.push(x);
  return out;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

function until(n: unknown): bigint[] {
  return untilStep(0n, n, toInt64(n) >= 0n ? 1n : -1n);
}

function untilStep(start: unknown, stop: unknown, step: unknown): bigint[] {
  const a = toInt64(start);
  const b = toInt64(stop);
  const s = toInt64(step);
  const out: bigint[] = [];
  if (s === 0n) return out;
  if (s > 0n) for (let i = a; i < b; i += s) out.push(i);
  else for (let i = a; i > b; i += s) out.push(i);
  if (out.length > 1_000_000) throw new Error('untilStep: too many elements');
  return out;
}

// ---- dicts

function dictOf(...kv: unknown[]): GoMap {
  const out: GoMap = {};
  for (let i = 0; i < kv.length; i += 2) out[strval(kv[i])] = i + 1 < kv.length ? kv[i + 1] : '';
  return out;
}

/** mergo.Merge: dst keeps what it has; src fills what is missing or empty (maps deeply). */
function mergeInto(dst: GoMap, src: GoMap, overwrite: boolean): GoMap {
  for (const [k, sv] of Object.entries(src)) {
    const dv = Object.hasOwn(dst, k) ? dst[k] : undefined;
    if (isMap(dv) && isMap(sv)) mergeInto(dv, sv, overwrite);
    else if (dv === undefined || isEmpty(dv) || (overwrite && !isEmpty(sv))) dst[k] = deepCopy(sv);
  }
  return dst;
}

function dig(...args: unknown[]): unknown {
  if (args.length < 3) throw new Error('dig needs at least three arguments');
  const d = dict(args[args.length - 1], 'dig');
  const def = args[args.length - 2];
  const keys = args.slice(0, -2).map(str);
  let cur: unknown = d;
  for (const k of keys) {
    if (!isMap(cur) || !Object.hasOwn(cur, k)) return def;
    cur = cur[k];
  }
  return cur;
}

// ---- math

function intFold(args: unknown[], op: (a: bigint, b: bigint) => bigint, start?: bigint): bigint {
  const vals = args.map(toInt64);
  return start === undefined ? vals.reduce(op) : vals.reduce(op, start);
}

function divide(a: unknown, b: unknown): bigint {
  const d = toInt64(b);
  if (d === 0n) throw new Error('runtime error: integer divide by zero');
  return toInt64(a) / d;
}

function modulo(a: unknown, b: unknown): bigint {
  const d = toInt64(b);
  if (d === 0n) throw new Error('runtime error: integer divide by zero');
  return toInt64(a) % d;
}

// ---- types

function typeIsLike(t: string, v: unknown): boolean {
  const ty = typeOf(v);
  return t === ty || `*${t}` === ty;
}

// ---- crypto stand-ins

const PLACEHOLDER_PEM = (what: string) =>
  `-----BEGIN ${what}-----\nYWlyZ2FwIHJlbmRlcnMgY2hhcnRzIGZvciB0aGVpciBpbWFnZXMgb25seQ==\n-----END ${what}-----\n`;

function certificate(): GoStruct {
  return new GoStruct('sprig.certificate', {
    Cert: PLACEHOLDER_PEM('CERTIFICATE'),
    Key: PLACEHOLDER_PEM('RSA PRIVATE KEY'),
  });
}

function hash(alg: string, s: unknown): string {
  return createHash(alg).update(str(s)).digest('hex');
}

function adler32(s: string): bigint {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(s)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return BigInt(((b << 16) | a) >>> 0);
}

/** Every sprig function airgap knows, by name (must* variants share their implementation). */
export function sprigFunctions(): Map<string, FuncDef> {
  const m = new Map<string, FuncDef>();
  const add = (names: string | string[], def: FuncDef) => {
    for (const n of Array.isArray(names) ? names : [names]) m.set(n, def);
  };

  // strings
  add(
    'trim',
    f(1, 1, (s: unknown) => str(s).trim()),
  );
  add(
    'trimAll',
    f(2, 2, (c: unknown, s: unknown) => trimAll(str(c), str(s))),
  );
  add(
    'trimSuffix',
    f(2, 2, (x: unknown, s: unknown) =>
      str(s).endsWith(str(x)) ? str(s).slice(0, str(s).length - str(x).length) : str(s),
    ),
  );
  add(
    'trimPrefix',
    f(2, 2, (x: unknown, s: unknown) => (str(s).startsWith(str(x)) ? str(s).slice(str(x).length) : str(s))),
  );
  add('trunc', f(2, 2, trunc));
  add('substr', f(3, 3, substr));
  add(
    'upper',
    f(1, 1, (s: unknown) => str(s).toUpperCase()),
  );
  add(
    'lower',
    f(1, 1, (s: unknown) => str(s).toLowerCase()),
  );
  add(
    'title',
    f(1, 1, (s: unknown) => title(str(s))),
  );
  add(
    'untitle',
    f(1, 1, (s: unknown) => untitle(str(s))),
  );
  add(
    'repeat',
    f(2, 2, (n: unknown, s: unknown) => str(s).repeat(Math.max(0, int(n)))),
  );
  add(
    'replace',
    f(3, 3, (o: unknown, n: unknown, s: unknown) => str(s).split(str(o)).join(str(n))),
  );
  add(
    'contains',
    f(2, 2, (sub: unknown, s: unknown) => str(s).includes(str(sub))),
  );
  add(
    'hasPrefix',
    f(2, 2, (p: unknown, s: unknown) => str(s).startsWith(str(p))),
  );
  add(
    'hasSuffix',
    f(2, 2, (p: unknown, s: unknown) => str(s).endsWith(str(p))),
  );
  add(
    'split',
    f(2, 2, (sep: unknown, s: unknown) => splitMap(str(s).split(str(sep)))),
  );
  add(
    'splitn',
    f(3, 3, (sep: unknown, n: unknown, s: unknown) => splitMap(splitN(str(s), str(sep), int(n)))),
  );
  add(
    'splitList',
    f(2, 2, (sep: unknown, s: unknown) => str(s).split(str(sep))),
  );
  add('join', f(2, 2, join));
  add(
    'quote',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map((x) => goQuote(strval(x)))
        .join(' '),
    ),
  );
  add(
    'squote',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map((x) => `'${strval(x)}'`)
        .join(' '),
    ),
  );
  add(
    'cat',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map(strval)
        .join(' '),
    ),
  );
  add('indent', f(2, 2, indent));
  add(
    'nindent',
    f(2, 2, (n: unknown, s: unknown) => `\n${indent(n, s)}`),
  );
  add(
    'nospace',
    f(1, 1, (s: unknown) => str(s).replace(/\s+/gu, '')),
  );
  add(
    'snakecase',
    f(1, 1, (s: unknown) =>
      words(str(s))
        .map((w) => w.toLowerCase())
        .join('_'),
    ),
  );
  add(
    'kebabcase',
    f(1, 1, (s: unknown) =>
      words(str(s))
        .map((w) => w.toLowerCase())
        .join('-'),
    ),
  );
  add(
    'camelcase',
    f(1, 1, (s: unknown) =>
      str(s)
        .split(/_+/)
        .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : ''))
        .join(''),
    ),
  );
  add(
    'plural',
    f(3, 3, (one: unknown, many: unknown, n: unknown) => (toInt64(n) === 1n ? str(one) : str(many))),
  );
  add('toString', f(1, 1, strval));
  add(
    'toStrings',
    f(1, 1, (l: unknown) => (Array.isArray(l) ? l.map(strval) : isNil(l) ? [] : [strval(l)])),
  );
  add(
    'wrap',
    f(2, 2, (_n: unknown, s: unknown) => str(s)),
  );
  add(
    'abbrev',
    f(2, 2, (n: unknown, s: unknown) =>
      str(s).length > int(n) ? `${str(s).slice(0, Math.max(0, int(n) - 3))}...` : str(s),
    ),
  );
  add(
    'initials',
    f(1, 1, (s: unknown) =>
      str(s)
        .split(/\s+/)
        .map((w) => w[0] ?? '')
        .join(''),
    ),
  );
  add(
    'randAlphaNum',
    f(1, 1, (n: unknown) => randomString(n, ALPHA + DIGITS)),
  );
  add(
    'randAlpha',
    f(1, 1, (n: unknown) => randomString(n, ALPHA)),
  );
  add(
    'randNumeric',
    f(1, 1, (n: unknown) => randomString(n, DIGITS)),
  );
  add(
    'randAscii',
    f(1, 1, (n: unknown) => randomString(n, ALPHA + DIGITS + '!#$%&()*+,-./:;<=>?@[]^_{|}~')),
  );
  add(
    'uuidv4',
    f(0, 0, () => randomUUID()),
  );
  add(
    'shuffle',
    f(1, 1, (s: unknown) => str(s)),
  );

  // encodings and hashes
  add(
    'b64enc',
    f(1, 1, (s: unknown) => Buffer.from(str(s)).toString('base64')),
  );
  add(
    'b64dec',
    f(1, 1, (s: unknown) => Buffer.from(str(s), 'base64').toString('utf8')),
  );
  add(
    'b32enc',
    f(1, 1, (s: unknown) => base32(Buffer.from(str(s)))),
  );
  add(
    'sha256sum',
    f(1, 1, (s: unknown) => hash('sha256', s)),
  );
  add(
    'sha1sum',
    f(1, 1, (s: unknown) => hash('sha1', s)),
  );
  add(
    'md5sum',
    f(1, 1, (s: unknown) => hash('md5', s)),
  );
  add(
    'adler32sum',
    f(1, 1, (s: unknown) => String(adler32(str(s)))),
  );

  // conversions
  add(
    'atoi',
    f(1, 1, (s: unknown) => (/^[+-]?[0-9]+$/.test(str(s).trim()) ? BigInt(str(s).trim()) : 0n)),
  );
  add(['int', 'int64'], f(1, 1, toInt64));
  add('float64', f(1, 1, toFloat64));
  add(
    'toDecimal',
    f(1, 1, (s: unknown) => (/^[0-7]+$/.test(str(s)) ? BigInt(`0o${str(s)}`) : 0n)),
  );

  // defaults and logic
  add(
    'default',
    f(1, V, (d: unknown, ...given: unknown[]) => (given.length === 0 || isEmpty(given[0]) ? d : given[0])),
  );
  add('empty', f(1, 1, isEmpty));
  add(
    'coalesce',
    f(0, V, (...a: unknown[]) => a.find((x) => !isEmpty(x)) ?? null),
  );
  add(
    'all',
    f(0, V, (...a: unknown[]) => a.every(isTrue)),
  );
  add(
    'any',
    f(0, V, (...a: unknown[]) => a.some(isTrue)),
  );
  add(
    'ternary',
    f(3, 3, (t: unknown, e: unknown, c: unknown) => {
      if (typeof c !== 'boolean') throw new Error(`wrong type for value; expected bool; got ${typeOf(c)}`);
      return c ? t : e;
    }),
  );
  add('deepEqual', f(2, 2, deepEqual));

  // lists
  add(
    'list',
    f(0, V, (...a: unknown[]) => a),
  );
  add(
    'tuple',
    f(0, V, (...a: unknown[]) => a),
  );
  add(
    ['append', 'push', 'mustAppend', 'mustPush'],
    f(2, 2, (l: unknown, v: unknown) => [...(isNil(l) ? [] : list(l, 'append')), v]),
  );
  add(
    ['prepend', 'mustPrepend'],
    f(2, 2, (l: unknown, v: unknown) => [v, ...(isNil(l) ? [] : list(l, 'prepend'))]),
  );
  add(
    ['first', 'mustFirst'],
    f(1, 1, (l: unknown) => (isNil(l) ? null : (list(l, 'find first')[0] ?? null))),
  );
  add(
    ['last', 'mustLast'],
    f(1, 1, (l: unknown) => (isNil(l) ? null : (list(l, 'find last').at(-1) ?? null))),
  );
  add(
    ['rest', 'mustRest'],
    f(1, 1, (l: unknown) => (isNil(l) ? null : list(l, 'find rest').slice(1))),
  );
  add(
    ['initial', 'mustInitial'],
    f(1, 1, (l: unknown) => (isNil(l) ? null : list(l, 'find initial').slice(0, -1))),
  );
  add(
    ['reverse', 'mustReverse'],
    f(1, 1, (l: unknown) => [...list(l, 'reverse')].reverse()),
  );
  add(
    ['uniq', 'mustUniq'],
    f(1, 1, (l: unknown) => uniq(list(l, 'uniq'))),
  );
  add(
    ['compact', 'mustCompact'],
    f(1, 1, (l: unknown) => list(l, 'compact').filter((x) => !isEmpty(x))),
  );
  add(
    ['without', 'mustWithout'],
    f(1, V, (l: unknown, ...w: unknown[]) =>
      list(l, 'without').filter((x) => !w.some((y) => deepEqual(x, y))),
    ),
  );
  add(
    ['has', 'mustHas'],
    f(2, 2, (v: unknown, l: unknown) => !isNil(l) && list(l, 'has').some((x) => deepEqual(x, v))),
  );
  add(
    ['slice', 'mustSlice'],
    f(1, V, (l: unknown, ...ix: unknown[]) => {
      const items = list(l, 'slice');
      return items.slice(ix.length > 0 ? int(ix[0]) : 0, ix.length > 1 ? int(ix[1]) : items.length);
    }),
  );
  add(
    'concat',
    f(0, V, (...ls: unknown[]) => ls.flatMap((l) => (isNil(l) ? [] : list(l, 'concat')))),
  );
  add(
    'sortAlpha',
    f(1, 1, (l: unknown) => (Array.isArray(l) ? l.map(strval).sort(compareStrings) : [strval(l)])),
  );
  add(
    ['chunk', 'mustChunk'],
    f(2, 2, (n: unknown, l: unknown) => {
      const size = Math.max(1, int(n));
      const items = list(l, 'chunk');
      const out: unknown[][] = [];
      for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
      return out;
    }),
  );
  add('until', f(1, 1, until));
  add('untilStep', f(3, 3, untilStep));
  add(
    'seq',
    f(1, 3, (...a: unknown[]) => {
      const n = a.map(toInt64);
      const [start, step, end] =
        n.length === 1
          ? [1n, 1n, n[0]!]
          : n.length === 2
            ? [n[0]!, n[0]! <= n[1]! ? 1n : -1n, n[1]!]
            : [n[0]!, n[1]!, n[2]!];
      const out = untilStep(start, step > 0n ? end + 1n : end - 1n, step);
      return out.join(' ');
    }),
  );

  // dicts
  add('dict', f(0, V, dictOf));
  add(
    'get',
    f(2, 2, (d: unknown, k: unknown) => {
      const m = dict(d, 'get');
      return Object.hasOwn(m, str(k)) ? m[str(k)] : '';
    }),
  );
  add(
    'set',
    f(3, 3, (d: unknown, k: unknown, v: unknown) => {
      dict(d, 'set')[str(k)] = v;
      return d;
    }),
  );
  add(
    'unset',
    f(2, 2, (d: unknown, k: unknown) => {
      delete dict(d, 'unset')[str(k)];
      return d;
    }),
  );
  add(
    'hasKey',
    f(2, 2, (d: unknown, k: unknown) => Object.hasOwn(dict(d, 'hasKey'), str(k))),
  );
  add(
    'keys',
    f(0, V, (...ds: unknown[]) => ds.flatMap((d) => Object.keys(dict(d, 'keys')).sort(compareStrings))),
  );
  add(
    'values',
    f(1, 1, (d: unknown) =>
      Object.keys(dict(d, 'values'))
        .sort(compareStrings)
        .map((k) => (d as GoMap)[k]),
    ),
  );
  add(
    'pick',
    f(1, V, (d: unknown, ...ks: unknown[]) => {
      const m = dict(d, 'pick');
      const out: GoMap = {};
      for (const k of ks.map(str)) if (Object.hasOwn(m, k)) out[k] = m[k];
      return out;
    }),
  );
  add(
    'omit',
    f(1, V, (d: unknown, ...ks: unknown[]) => {
      const m = dict(d, 'omit');
      const drop = new Set(ks.map(str));
      const out: GoMap = {};
      for (const [k, v] of Object.entries(m)) if (!drop.has(k)) out[k] = v;
      return out;
    }),
  );
  add(
    'pluck',
    f(1, V, (k: unknown, ...ds: unknown[]) =>
      ds.filter((d) => isMap(d) && Object.hasOwn(d, str(k))).map((d) => (d as GoMap)[str(k)]),
    ),
  );
  add(
    ['merge', 'mustMerge'],
    f(1, V, (dst: unknown, ...srcs: unknown[]) => {
      const d = dict(dst, 'merge');
      for (const s of srcs) if (!isNil(s)) mergeInto(d, dict(s, 'merge'), false);
      return d;
    }),
  );
  add(
    ['mergeOverwrite', 'mustMergeOverwrite'],
    f(1, V, (dst: unknown, ...srcs: unknown[]) => {
      const d = dict(dst, 'mergeOverwrite');
      for (const s of srcs) if (!isNil(s)) mergeInto(d, dict(s, 'mergeOverwrite'), true);
      return d;
    }),
  );
  add(
    ['deepCopy', 'mustDeepCopy'],
    f(1, 1, (v: unknown) => deepCopy(v)),
  );
  add('dig', f(3, V, dig));

  // math
  add(
    'add',
    f(0, V, (...a: unknown[]) => intFold(a, (x, y) => x + y, 0n)),
  );
  add(
    'add1',
    f(1, 1, (a: unknown) => toInt64(a) + 1n),
  );
  add(
    'sub',
    f(2, 2, (a: unknown, b: unknown) => toInt64(a) - toInt64(b)),
  );
  add(
    'mul',
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => x * y, 1n)),
  );
  add('div', f(2, 2, divide));
  add('mod', f(2, 2, modulo));
  add(
    'max',
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => (x > y ? x : y))),
  );
  add(
    'min',
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => (x < y ? x : y))),
  );
  add(
    'addf',
    f(0, V, (...a: unknown[]) => a.map(toFloat64).reduce((x, y) => x + y, 0)),
  );
  add(
    'add1f',
    f(1, 1, (a: unknown) => toFloat64(a) + 1),
  );
  add(
    'subf',
    f(1, V, (a: unknown, ...b: unknown[]) => b.map(toFloat64).reduce((x, y) => x - y, toFloat64(a))),
  );
  add(
    'mulf',
    f(1, V, (...a: unknown[]) => a.map(toFloat64).reduce((x, y) => x * y, 1)),
  );
  add(
    'divf',
    f(1, V, (a: unknown, ...b: unknown[]) => b.map(toFloat64).reduce((x, y) => x / y, toFloat64(a))),
  );
  add(
    'maxf',
    f(1, V, (...a: unknown[]) => Math.max(...a.map(toFloat64))),
  );
  add(
    'minf',
    f(1, V, (...a: unknown[]) => Math.min(...a.map(toFloat64))),
  );
  add(
    'floor',
    f(1, 1, (a: unknown) => Math.floor(toFloat64(a))),
  );
  add(
    'ceil',
    f(1, 1, (a: unknown) => Math.ceil(toFloat64(a))),
  );
  add(
    'round',
    f(2, 3, (a: unknown, p: unknown) => {
      const k = 10 ** int(p);
      return Math.round(toFloat64(a) * k) / k;
    }),
  );

  // types
  add('kindOf', f(1, 1, kindOf));
  add(
    'kindIs',
    f(2, 2, (k: unknown, v: unknown) => kindOf(v) === str(k)),
  );
  add('typeOf', f(1, 1, typeOf));
  add(
    'typeIs',
    f(2, 2, (t: unknown, v: unknown) => typeOf(v) === str(t)),
  );
  add(
    'typeIsLike',
    f(2, 2, (t: unknown, v: unknown) => typeIsLike(str(t), v)),
  );

  // regular expressions
  add(
    ['regexMatch', 'mustRegexMatch'],
    f(2, 2, (r: unknown, s: unknown) => regex(r).test(str(s))),
  );
  add(
    ['regexFind', 'mustRegexFind'],
    f(2, 2, (r: unknown, s: unknown) => regex(r).exec(str(s))?.[0] ?? ''),
  );
  add(
    ['regexFindAll', 'mustRegexFindAll'],
    f(3, 3, (r: unknown, s: unknown, n: unknown) => {
      const all = Array.from(str(s).matchAll(regex(r, true)), (x) => x[0]);
      return int(n) < 0 ? all : all.slice(0, int(n));
    }),
  );
  add(
    ['regexReplaceAll', 'mustRegexReplaceAll'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) =>
      str(s).replace(regex(r, true), goReplacement(str(repl))),
    ),
  );
  add(
    ['regexReplaceAllLiteral', 'mustRegexReplaceAllLiteral'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) => str(s).replace(regex(r, true), () => str(repl))),
  );
  add(['regexSplit', 'mustRegexSplit'], f(3, 3, regexSplit));
  add(
    'regexQuoteMeta',
    f(1, 1, (s: unknown) => str(s).replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')),
  );

  // semver
  add(
    'semver',
    f(1, 1, (s: unknown) => semverObject(str(s))),
  );
  add(
    'semverCompare',
    f(2, 2, (c: unknown, v: unknown) => semverCompare(str(c), str(v))),
  );

  // dates
  add(
    'now',
    f(0, 0, () => new Date()),
  );
  add(
    'date',
    f(2, 2, (fmt: unknown, d: unknown) => formatDate(str(fmt), d)),
  );
  add(
    ['dateInZone', 'date_in_zone'],
    f(3, 3, (fmt: unknown, d: unknown) => formatDate(str(fmt), d)),
  );
  add(
    'htmlDate',
    f(1, 1, (d: unknown) => formatDate('2006-01-02', d)),
  );
  add(
    'unixEpoch',
    f(1, 1, (d: unknown) => String(Math.floor((d instanceof Date ? d.getTime() : Date.now()) / 1000))),
  );
  add(
    ['toDate', 'mustToDate'],
    f(2, 2, (fmt: unknown, s: unknown) => parseDate(str(fmt), str(s))),
  );
  add(
    'dateModify',
    f(2, 2, (_m: unknown, d: unknown) => d),
  );

  // crypto stand-ins, environment
  add(
    ['genCA', 'genSelfSignedCert'],
    f(2, 4, () => certificate()),
  );
  add(
    ['genCAWithKey', 'genSelfSignedCertWithKey'],
    f(3, 5, () => certificate()),
  );
  add(
    ['genSignedCert', 'genSignedCertWithKey'],
    f(5, 6, () => certificate()),
  );
  add(
    'buildCustomCert',
    f(2, 2, (c: unknown, k: unknown) => new GoStruct('sprig.certificate', { Cert: str(c), Key: str(k) })),
  );
  add(
    'genPrivateKey',
    f(1, 1, () => PLACEHOLDER_PEM('RSA PRIVATE KEY')),
  );
  add(
    'htpasswd',
    f(2, 2, (u: unknown) => `${str(u)}:$2a$10$airgap.placeholder.hash.not.a.real.one`),
  );
  add(
    'derivePassword',
    f(5, 5, () => 'airgap-placeholder'),
  );
  add(
    ['encryptAES', 'decryptAES'],
    f(2, 2, (_k: unknown, s: unknown) => str(s)),
  );
  add(
    'getHostByName',
    f(1, 1, () => ''),
  );

  return m;
}

function base32(buf: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}
