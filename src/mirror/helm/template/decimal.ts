/**
 * The decimal arithmetic sprig's float functions (addf, subf, mulf, divf, add1f) do with
 * shopspring/decimal: each float64 taken as its shortest decimal, the sums and products exact,
 * quotients rounded to 16 places, the result read back as the nearest float64. So `mulf 1.2 2.4
 * 10 4` is 115.2, where float64 products give 115.19999999999999.
 */

/** A decimal c × 10^e. */
interface Decimal {
  c: bigint;
  e: number;
}

/** decimal.NewFromFloat: the shortest decimal that reads back as `f` (Go panics for NaN and ±Inf). */
function fromFloat(f: number): Decimal {
  if (!Number.isFinite(f)) throw new Error(`Cannot create a Decimal from ${f}`);
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(f))!;
  const frac = m[3] ?? '';
  return { c: BigInt(`${m[1]}${m[2]}${frac}`), e: Number(m[4] ?? 0) - frac.length };
}

function toFloat(d: Decimal): number {
  return Number(`${d.c}e${d.e}`);
}

/** Both at the smaller exponent. */
function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const e = Math.min(a.e, b.e);
  return [a.c * 10n ** BigInt(a.e - e), b.c * 10n ** BigInt(b.e - e), e];
}

/** Quotients keep 16 places (decimal.DivisionPrecision), rounded half away from zero. */
const DIVISION_PLACES = 16;

export type DecimalOp = 'add' | 'sub' | 'mul' | 'div';

function apply(op: DecimalOp, a: Decimal, b: Decimal): Decimal {
  switch (op) {
    case 'add':
    case 'sub': {
      const [x, y, e] = align(a, b);
      return { c: op === 'add' ? x + y : x - y, e };
    }
    case 'mul':
      return { c: a.c * b.c, e: a.e + b.e };
    case 'div': {
      if (b.c === 0n) throw new Error('decimal division by 0');
      // a / b = (a.c / b.c) × 10^(a.e - b.e), wanted as q × 10^-16
      const shift = a.e - b.e + DIVISION_PLACES;
      let num = a.c;
      let den = b.c;
      if (shift >= 0) num *= 10n ** BigInt(shift);
      else den *= 10n ** BigInt(-shift);
      if (den < 0n) [num, den] = [-num, -den];
      const q = num / den;
      const r = num % den;
      const away = 2n * (r < 0n ? -r : r) >= den;
      return { c: away ? q + (num < 0n ? -1n : 1n) : q, e: -DIVISION_PLACES };
    }
  }
}

/** sprig's execDecimalOp: `first` op each of `rest`, in decimal, as a float64. */
export function decimalFold(op: DecimalOp, first: number, rest: number[]): number {
  let acc = fromFloat(first);
  for (const x of rest) acc = apply(op, acc, fromFloat(x));
  return toFloat(acc);
}
