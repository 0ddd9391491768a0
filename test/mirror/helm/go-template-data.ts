/**
 * Data and functions for the Go text/template conformance tests (go-template-exec*.test.ts): our
 * own equivalent of the struct Go's exec tests run against, held as the engine holds Go values
 * (ints as bigint, structs as GoStruct with their fields, methods and String()), and a template
 * set with Go's builtins and the tests' own functions only (no Sprig).
 */
import { goBuiltins } from '../../../src/mirror/helm/template/builtins.js';
import type { FuncDef } from '../../../src/mirror/helm/template/exec.js';
import { formatValue } from '../../../src/mirror/helm/template/fmt.js';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { GoStruct, typeOf } from '../../../src/mirror/helm/template/values.js';

type Fn = (...a: never[]) => unknown;

const u = (v: string) =>
  new GoStruct('*template.U', { V: v }, { TrueFalse: (b: unknown) => (b ? 'true' : '') });
/** A type whose pointer has a String method: `%v` prints what it says. */
const stringer = (text: string) => new GoStruct('*template.V', {}, {}, () => text);

const methods = (self: () => GoStruct): Record<string, Fn> => ({
  Method0: () => 'M0',
  Method1: (a: bigint) => a,
  Method2: (a: bigint, b: string) => `Method2: ${a} ${b}`,
  Method3: (v: unknown) => `Method3: ${formatValue(v)}`,
  Copy: () => self(),
  MAdd: (a: bigint, b: bigint[]) => b.map((x) => x + a),
  MyError: (fail: boolean) => {
    if (fail) throw new Error('my error');
    return false;
  },
  GetU: () => self().fields.U,
});

function makeT(fields: Record<string, unknown>): GoStruct {
  const t: GoStruct = new GoStruct('*template.T', fields, methods(() => t) as GoStruct['methods']);
  return t;
}

/** Our T: the values Go's exec tests read, in the shapes charts see them. */
export const tVal = makeT({
  True: true,
  I: 17n,
  U16: 16n,
  X: 'x',
  S: 'xyz',
  FloatZero: 0,
  U: u('v'),
  V0: stringer('<6666>'),
  V1: stringer('<7777>'),
  V2: stringer('nilV'),
  W0: stringer('[888]'),
  W1: stringer('[999]'),
  W2: stringer('nilW'),
  SI: [3n, 4n, 5n],
  SIEmpty: [],
  SB: [true, false],
  AI: [3n, 4n, 5n],
  MSI: { one: 1n, two: 2n, three: 3n },
  MSIone: { one: 1n },
  MSIEmpty: {},
  MXI: { one: 1n },
  SMSI: [
    { one: 1n, two: 2n },
    { eleven: 11n, twelve: 12n },
  ],
  Empty0: null,
  Empty1: 3n,
  Empty2: 'empty2',
  Empty3: [7n, 8n],
  Empty4: u('UinEmpty'),
  NonEmptyInterface: makeT({ X: 'x' }),
  Str: stringer('foozle'),
  Err: stringer('erroozle'),
  PI: 23n,
  PS: 'a string',
  PSI: [21n, 22n, 23n],
  BinaryFunc: (a: string, b: string) => `[${a}=${b}]`,
  VariadicFunc: (...s: string[]) => `<${s.join('+')}>`,
  VariadicFuncInt: (a: bigint, ...s: string[]) => `${a}=<${s.join('+')}>`,
  NilOKFunc: (p: unknown) => p === null || p === undefined,
  ErrFunc: () => 'bla',
  PanicFunc: () => {
    throw new Error('test panic');
  },
});

const fn = (min: number, max: number, f: Fn, params?: FuncDef['params']): FuncDef => ({
  min,
  max,
  fn: f as FuncDef['fn'],
  ...(params ? { params } : {}),
});

/** The functions Go's exec tests add (count, over a channel, is Go-only). */
const testFuncs: [string, FuncDef][] = [
  ['add', fn(0, Infinity, (...a: bigint[]) => a.reduce((x, y) => x + y, 0n))],
  ['echo', fn(1, 1, (a: unknown) => a)],
  [
    'makemap',
    fn(0, Infinity, (...a: string[]) => {
      if (a.length % 2 !== 0) throw new Error('bad makemap');
      return Object.fromEntries(a.flatMap((k, i) => (i % 2 === 0 ? [[k, a[i + 1]]] : [])));
    }),
  ],
  ['mapOfThree', fn(0, 0, () => ({ three: 3n }))],
  ['oneArg', fn(1, 1, (a: string) => `oneArg=${a}`, ['string'])],
  ['twoArgs', fn(2, 2, (a: string, b: string) => `twoArgs=${a}${b}`, ['string', 'string'])],
  ['dddArg', fn(1, Infinity, (a: bigint, ...b: string[]) => `${a} [${b.join(' ')}]\n`, ['int', 'string'])],
  ['valueString', fn(1, 1, () => 'value is ignored', ['string'])],
  ['floatArg', fn(1, 1, (x: number) => `float=${x}`, ['float64'])],
  ['intArg', fn(1, 1, (x: bigint) => `int=${x}`, ['int'])],
  ['returnInt', fn(0, 0, () => 7n)],
  ['stringer', fn(1, 1, (s: GoStruct) => s.display!())],
  ['typeOf', fn(1, 1, (a: unknown) => typeOf(a))],
  ['vfunc', fn(2, 2, () => 'vfunc')],
  ['zeroArgs', fn(0, 0, () => 'zeroArgs')],
  [
    'die',
    fn(0, 0, () => {
      throw new Error('die');
    }),
  ],
  [
    'doPanic',
    fn(0, 0, () => {
      throw new Error('custom panic string');
    }),
  ],
];

/** A set with Go's builtins and the test functions, `text` parsed as `name`. */
export function goSet(text: string, name = 't', delims?: [string, string]): TemplateSet {
  const set = new TemplateSet(new Map([...goBuiltins, ...testFuncs]));
  if (delims) set.delims(...delims);
  return set.parse(name, text);
}

/** `text` run with `data`, as Go's Execute writes it ("<no value>" left in, as Go leaves it). */
export function exec(text: string, data: unknown, name = 't'): string {
  return goSet(text, name).execute(name, data);
}

/** The error `text` gives, parsing or running. */
export function execError(text: string, data: unknown, name = 't'): string {
  try {
    exec(text, data, name);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`expected an error from ${JSON.stringify(text)}`);
}
