/**
 * Sprig's functions (sprig.ts): lists and dicts. A list that grows with an argument (until,
 * untilStep, seq, append, concat) is checked against the budget before it is built; deepCopy,
 * merge, set, uniq, sortAlpha, deepEqual and without pay for the items they walk (budget.ts).
 */
import { LIMITS, OBJECT_STEPS, checkItems, countItems } from './budget.js';
import { int, list, str, strval, toInt64 } from './convert.js';
import { compareStrings, deepCopy, isEmpty, isMap, isNil, typeOf, type GoMap } from './values.js';
import { f, V, type Add } from './sprig-def.js';

function dict(v: unknown, fn: string): GoMap {
  if (isMap(v)) return v;
  throw new Error(`${fn}: expected a dict, got ${typeOf(v)}`);
}

// ---- strings

const isComposite = (x: unknown) => typeof x === 'object' && x !== null;

/** sprig's uniq: first occurrences, in order; scalars found by a set, lists and maps compared deeply. */
function uniq(l: unknown[]): unknown[] {
  const out: unknown[] = [];
  const scalars = new Set<unknown>();
  const composites: unknown[] = [];
  for (const x of l) {
    if (isComposite(x)) {
      if (composites.some((y) => deepEqual(x, y))) continue;
      composites.push(x);
    } else {
      // 1 and 1.0 are different Go values (int and float64): the key keeps the type.
      const key = `${typeof x}:${String(x)}`;
      if (scalars.has(key)) continue;
      scalars.add(key);
    }
    out.push(x);
  }
  return out;
}

/** What uniq walks: every item, and every pair of lists or maps among them. */
function uniqCost(l: unknown): number {
  if (!Array.isArray(l)) return 0;
  const c = l.filter(isComposite).length;
  return l.length + (c * c) / 2;
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

type Steps = [start: bigint, stop: bigint, step: bigint];

const untilSteps = (n: unknown): Steps => {
  const b = toInt64(n);
  return [0n, b, b >= 0n ? 1n : -1n];
};
const untilStepSteps = (a: unknown, b: unknown, s: unknown): Steps => [toInt64(a), toInt64(b), toInt64(s)];

/** How many of a, a+s, … there are before b. */
function stepCount([a, b, s]: Steps): bigint {
  if (s > 0n && b > a) return (b - a + s - 1n) / s;
  if (s < 0n && a > b) return (a - b - s - 1n) / -s;
  return 0n;
}

/** What a list of ints costs beyond its items: each int is an object. */
const intListCost = (steps: Steps) => OBJECT_STEPS * Math.min(Number(stepCount(steps)), LIMITS.items + 1);

/** a, a+s, … up to b (not included), its length checked against the budget first. */
function stepList(steps: Steps, what: string): bigint[] {
  const [a, , s] = steps;
  const count = stepCount(steps);
  checkItems(what, count);
  const out: bigint[] = [];
  for (let i = 0n, v = a; i < count; i++, v += s) out.push(v);
  return out;
}

/** seq: 1…end, start…end, or start, start+step… end (as GNU seq), as one string. */
/** sprig's seq: 1 to n, start to end, or start to end by step (as bash's seq), as text. */
function seq(...a: unknown[]): string {
  const n = a.map(toInt64);
  let steps: Steps;
  if (n.length === 1) {
    const inc = n[0]! < 1n ? -1n : 1n;
    steps = [1n, n[0]! + inc, inc];
  } else if (n.length === 2) {
    const inc = n[1]! < n[0]! ? -1n : 1n;
    steps = [n[0]!, n[1]! + inc, inc];
  } else if (n.length === 3) {
    const [start, step, end] = n as [bigint, bigint, bigint];
    if (end < start && step > 0n) return '';
    steps = [start, end + (end < start ? -1n : 1n), step];
  } else return '';
  return stepList(steps, `seq ${n.join(' ')}`).join(' ');
}

function concat(...ls: unknown[]): unknown[] {
  const lists = ls.filter((l) => !isNil(l)).map((l) => list(l, 'concat'));
  checkItems(
    'concat',
    lists.reduce((n, l) => n + l.length, 0),
  );
  return lists.flat(1);
}

// ---- dicts

function dictOf(...kv: unknown[]): GoMap {
  const out: GoMap = {};
  for (let i = 0; i < kv.length; i += 2) out[strval(kv[i])] = i + 1 < kv.length ? kv[i + 1] : '';
  return out;
}

/**
 * mergo.Merge (and, `overwrite`, mergo.WithOverride) of one map into another: maps on both sides
 * merge deeply; otherwise dst keeps a value it has that is not empty, unless overwriting, where
 * every value of src wins, empty ones and nil too (mergo compares the source map, not the value).
 * Values are not copied: a map merged in is the same map in both.
 */
function mergeInto(dst: GoMap, src: GoMap, overwrite: boolean): GoMap {
  for (const [k, sv] of Object.entries(src)) {
    const has = Object.hasOwn(dst, k);
    const dv = has ? dst[k] : undefined;
    if (isNil(sv)) {
      if (overwrite) dst[k] = null;
    } else if (isMap(dv) && isMap(sv)) mergeInto(dv, sv, overwrite);
    // mergo shares what it copies (sprig's issue 188): a map taken from src stays src's.
    else if (overwrite || !has || isEmpty(dv)) dst[k] = sv;
  }
  return dst;
}

/** What merging walks: every entry of every source (copied where dst lacks it). */
function mergeCost(_dst: unknown, ...srcs: unknown[]): number {
  return OBJECT_STEPS * srcs.reduce<number>((n, s) => n + countItems(s), 0);
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
  addListFunctions(add);
  addDictFunctions(add);
}

function addListFunctions(add: Add): void {
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
    f(2, 2, (l: unknown, v: unknown) => {
      const items = isNil(l) ? [] : list(l, 'append');
      checkItems('append', items.length + 1);
      return [...items, v];
    }),
  );
  add(
    ['prepend', 'mustPrepend'],
    f(2, 2, (l: unknown, v: unknown) => {
      const items = isNil(l) ? [] : list(l, 'prepend');
      checkItems('prepend', items.length + 1);
      return [v, ...items];
    }),
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
    f(1, 1, (l: unknown) => uniq(list(l, 'uniq')), uniqCost),
  );
  add(
    ['compact', 'mustCompact'],
    f(1, 1, (l: unknown) => list(l, 'compact').filter((x) => !isEmpty(x))),
  );
  add(
    ['without', 'mustWithout'],
    f(
      1,
      V,
      (l: unknown, ...w: unknown[]) => list(l, 'without').filter((x) => !w.some((y) => deepEqual(x, y))),
      (l: unknown, ...w: unknown[]) => (Array.isArray(l) ? l.length * w.length : 0),
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
  add('concat', f(0, V, concat));
  add(
    'sortAlpha',
    f(
      1,
      1,
      (l: unknown) => (Array.isArray(l) ? l.map(strval).sort(compareStrings) : [strval(l)]),
      (l: unknown) => (Array.isArray(l) ? l.length * Math.log2(l.length + 1) : 0),
    ),
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
  add(
    'until',
    f(
      1,
      1,
      (n: unknown) => stepList(untilSteps(n), `until ${toInt64(n)}`),
      (n: unknown) => intListCost(untilSteps(n)),
    ),
  );
  add(
    'untilStep',
    f(
      3,
      3,
      (a: unknown, b: unknown, s: unknown) =>
        stepList(untilStepSteps(a, b, s), `untilStep ${untilStepSteps(a, b, s).join(' ')}`),
      (a: unknown, b: unknown, s: unknown) => intListCost(untilStepSteps(a, b, s)),
    ),
  );
  add('seq', f(0, V, seq));
}

function addDictFunctions(add: Add): void {
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
    f(
      3,
      3,
      (d: unknown, k: unknown, v: unknown) => {
        dict(d, 'set')[str(k)] = v;
        return d;
      },
      // A new key: its entry and its string.
      () => 2 * OBJECT_STEPS,
    ),
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
    f(
      1,
      V,
      (dst: unknown, ...srcs: unknown[]) => {
        const d = dict(dst, 'merge');
        for (const s of srcs) if (!isNil(s)) mergeInto(d, dict(s, 'merge'), false);
        return d;
      },
      mergeCost,
    ),
  );
  add(
    ['mergeOverwrite', 'mustMergeOverwrite'],
    f(
      1,
      V,
      (dst: unknown, ...srcs: unknown[]) => {
        const d = dict(dst, 'mergeOverwrite');
        for (const s of srcs) if (!isNil(s)) mergeInto(d, dict(s, 'mergeOverwrite'), true);
        return d;
      },
      mergeCost,
    ),
  );
  add(
    ['deepCopy', 'mustDeepCopy'],
    f(
      1,
      1,
      (v: unknown) => deepCopy(v),
      (v: unknown) => OBJECT_STEPS * countItems(v),
    ),
  );
  add('dig', f(3, V, dig));
}
