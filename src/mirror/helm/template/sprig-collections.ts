/** Sprig's functions (sprig.ts): lists and dicts. */
import { int, list, str, strval, toInt64 } from './convert.js';
import { compareStrings, deepCopy, isEmpty, isMap, isNil, typeOf, type GoMap } from './values.js';
import { f, V, type Add } from './sprig-def.js';

function dict(v: unknown, fn: string): GoMap {
  if (isMap(v)) return v;
  throw new Error(`${fn}: expected a dict, got ${typeOf(v)}`);
}

// ---- strings

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

/** Add the lists and dicts functions. */
export function addCollectionFunctions(add: Add): void {
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
}
