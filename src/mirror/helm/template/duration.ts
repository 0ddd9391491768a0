/**
 * Go's time.Duration, in nanoseconds held as a bigint (int64): time.ParseDuration and
 * Duration.String, which sprig's duration, durationRound, ago and dateModify print and read.
 */

const NS = 1n;
const US = 1000n * NS;
const MS = 1000n * US;
const S = 1000n * MS;
const M = 60n * S;
const H = 60n * M;

export const DURATION = { ns: NS, us: US, ms: MS, s: S, m: M, h: H } as const;

const UNITS: Record<string, bigint> = { ns: NS, us: US, µs: US, μs: US, ms: MS, s: S, m: M, h: H };

const MAX_INT64 = (1n << 63n) - 1n;

/** Go's time.ParseDuration: `[-+]` then `<number><unit>` pairs (`1h30m`, `1.5s`, `-2m3.4s`, `0`). */
export function parseDuration(text: string): bigint {
  const bad = () => new Error(`time: invalid duration ${goQuoteDuration(text)}`);
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw bad();
  let total = 0n;
  while (s !== '') {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(s)!;
    const [all, whole = '', frac] = m;
    if (all === '' || (whole === '' && (frac === undefined || frac === ''))) throw bad();
    s = s.slice(all.length);
    const unit = /^[^0-9.]+/.exec(s)?.[0];
    if (unit === undefined) throw new Error(`time: missing unit in duration ${goQuoteDuration(text)}`);
    const per = UNITS[unit];
    if (per === undefined)
      throw new Error(`time: unknown unit ${goQuoteDuration(unit)} in duration ${goQuoteDuration(text)}`);
    s = s.slice(unit.length);
    let v = BigInt(whole || '0') * per;
    if (frac) v += (BigInt(frac) * per) / 10n ** BigInt(frac.length);
    total += v;
    if (total > MAX_INT64 + (neg ? 1n : 0n)) throw bad();
  }
  return neg ? -total : total;
}

/** Go quotes the text in its duration errors (strconv.Quote). */
function goQuoteDuration(s: string): string {
  return JSON.stringify(s);
}

/** A fraction's digits without trailing zeros, after a point (`.5`), or nothing. */
function fraction(v: bigint, digits: number): string {
  const f = v.toString().padStart(digits, '0').replace(/0+$/, '');
  return f === '' ? '' : `.${f}`;
}

/** Go's Duration.String: `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatDuration(d: bigint): string {
  if (d === 0n) return '0s';
  const sign = d < 0n ? '-' : '';
  const u = d < 0n ? -d : d;
  if (u < S) {
    if (u < US) return `${sign}${u}ns`;
    if (u < MS) return `${sign}${u / US}${fraction(u % US, 3)}µs`;
    return `${sign}${u / MS}${fraction(u % MS, 6)}ms`;
  }
  const h = u / H;
  const m = (u % H) / M;
  const sec = `${(u % M) / S}${fraction(u % S, 9)}s`;
  if (h > 0n) return `${sign}${h}h${m}m${sec}`;
  if (m > 0n) return `${sign}${m}m${sec}`;
  return `${sign}${sec}`;
}

/** Go's Duration.Round(m): halves away from zero, saturating at the int64 bounds. */
export function roundDuration(d: bigint, m: bigint): bigint {
  if (m <= 0n) return d;
  let r = d % m;
  if (r < 0n) r = -r;
  if (d < 0n) {
    if (r + r < m) return d + r;
    const d1 = d - m + r;
    return d1 < d ? d1 : -MAX_INT64 - 1n;
  }
  if (r + r < m) return d - r;
  const d1 = d + m - r;
  return d1 > d ? d1 : MAX_INT64;
}

/** The nanoseconds between two times (JavaScript keeps milliseconds). */
export function since(t: Date, now: Date = new Date()): bigint {
  return BigInt(now.getTime() - t.getTime()) * MS;
}
