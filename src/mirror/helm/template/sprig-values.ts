/**
 * Sprig's functions (sprig.ts): conversions, defaults and logic, math, types, semver, and
 * getHostByName (offline: no address, as a lookup that finds none).
 */
import { countItems } from './budget.js';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { goInt, goString, str, toFloat64, toInt64 } from './convert.js';
import { decimalFold } from './decimal.js';
import { semverCompare, semverObject } from './semver.js';
import { isEmpty, isTrue, kindOf, typeOf } from './values.js';
import { f, V, type Add } from './sprig-def.js';
import { deepEqual } from './sprig-collections.js';

/** Go's int64 arithmetic wraps around (and a product squared in a loop stays 64 bits here too). */
const int64 = (v: bigint) => BigInt.asIntN(64, v);

function intFold(args: unknown[], op: (a: bigint, b: bigint) => bigint, start?: bigint): bigint {
  const vals = args.map(toInt64);
  const wrapped = (a: bigint, b: bigint) => int64(op(a, b));
  return start === undefined ? vals.reduce(wrapped) : vals.reduce(wrapped, start);
}

function divide(a: unknown, b: unknown): bigint {
  const d = toInt64(b);
  if (d === 0n) throw new Error('runtime error: integer divide by zero');
  return int64(toInt64(a) / d);
}

function modulo(a: unknown, b: unknown): bigint {
  const d = toInt64(b);
  if (d === 0n) throw new Error('runtime error: integer divide by zero');
  return toInt64(a) % d;
}

/** sprig's randInt: an int in [min, max), as rand.Intn draws it (Go panics for an empty range). */
function randInt(min: unknown, max: unknown): bigint {
  const lo = goInt(min);
  const n = goInt(max) - lo;
  if (n <= 0n) throw new Error('invalid argument to Intn');
  return lo + randomBigInt(n);
}

/** A uniform random int in [0, n), n at most 2^63 (rejection sampling over 64 random bits). */
function randomBigInt(n: bigint): bigint {
  const limit = (1n << 64n) - ((1n << 64n) % n);
  for (;;) {
    const r = randomBytes(8).readBigUInt64BE();
    if (r < limit) return r % n;
  }
}

/**
 * sprig's round: `v` to `places` decimals, up when the dropped fraction is at least `on` (a
 * float64, .5 if not given), else down.
 */
function round(v: number, places: bigint, on?: unknown): number {
  const roundOn = on === undefined ? 0.5 : goFloat(on);
  const pow = 10 ** Number(places);
  const digit = pow * v;
  const frac = digit - Math.trunc(digit);
  return (frac >= roundOn ? Math.ceil(digit) : Math.floor(digit)) / pow;
}

/** A Go float64 parameter: a float, or an int literal (Go converts an untyped constant). */
function goFloat(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new Error(`wrong type for value; expected float64; got ${typeOf(v)}`);
}

// ---- types

function typeIsLike(t: string, v: unknown): boolean {
  const ty = typeOf(v);
  return t === ty || `*${t}` === ty;
}

/**
 * sprig's getHostByName, offline: an IP address is itself and localhost the loopback address (as
 * Go's resolver answers without a network); any other name has no address here, "" (where Helm,
 * finding none, fails the render).
 */
function hostByName(name: string): string {
  if (isIP(name) !== 0) return name;
  return name === 'localhost' ? '127.0.0.1' : '';
}

/** Add the conversions, defaults and logic, math, types, semver functions, and getHostByName. */
export function addValueFunctions(add: Add): void {
  addConversionFunctions(add);
  addMathFunctions(add);
  addTypeFunctions(add);
}

/** Conversions, defaults and logic. */
function addConversionFunctions(add: Add): void {
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
  add(
    'deepEqual',
    f(2, 2, deepEqual, (a: unknown, b: unknown) => countItems(a) + countItems(b)),
  );
}

function addMathFunctions(add: Add): void {
  // math
  add(
    'add',
    f(0, V, (...a: unknown[]) => intFold(a, (x, y) => x + y, 0n)),
  );
  add(
    'add1',
    f(1, 1, (a: unknown) => int64(toInt64(a) + 1n)),
  );
  add(
    'sub',
    f(2, 2, (a: unknown, b: unknown) => int64(toInt64(a) - toInt64(b))),
  );
  add(
    'mul',
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => x * y, 1n)),
  );
  add('div', f(2, 2, divide));
  add('randInt', f(2, 2, randInt));
  add('mod', f(2, 2, modulo));
  add(
    ['max', 'biggest'],
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => (x > y ? x : y))),
  );
  add(
    'min',
    f(1, V, (...a: unknown[]) => intFold(a, (x, y) => (x < y ? x : y))),
  );
  add(
    'addf',
    f(0, V, (...a: unknown[]) => decimalFold('add', 0, a.map(toFloat64))),
  );
  add(
    'add1f',
    f(1, 1, (a: unknown) => decimalFold('add', toFloat64(a), [1])),
  );
  add(
    'subf',
    f(1, V, (a: unknown, ...b: unknown[]) => decimalFold('sub', toFloat64(a), b.map(toFloat64))),
  );
  add(
    'mulf',
    f(1, V, (a: unknown, ...b: unknown[]) => decimalFold('mul', toFloat64(a), b.map(toFloat64))),
  );
  add(
    'divf',
    f(1, V, (a: unknown, ...b: unknown[]) => decimalFold('div', toFloat64(a), b.map(toFloat64))),
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
    f(2, 3, (a: unknown, p: unknown, on?: unknown) => round(toFloat64(a), goInt(p), on)),
  );
}

/** Types, semver, getHostByName. */
function addTypeFunctions(add: Add): void {
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

  // semver
  add(
    'semver',
    f(1, 1, (s: unknown) => semverObject(str(s))),
  );
  add(
    'semverCompare',
    f(2, 2, (c: unknown, v: unknown) => semverCompare(str(c), str(v))),
  );

  add(
    'hello',
    f(0, 0, () => 'Hello!'),
  );

  // the network: airgap renders offline, where no name resolves
  add(
    'getHostByName',
    f(1, 1, (name: unknown) => hostByName(goString(name))),
  );
}
