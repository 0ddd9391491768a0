/**
 * Sprig's date functions (sprig.ts): now, date, dateInZone, htmlDate(InZone), unixEpoch,
 * toDate, dateModify, ago, duration, durationRound, with sprig's conversions (a time or Unix
 * seconds; anything else is now) and Go's checks of typed parameters.
 */
import { goString } from './convert.js';
import { DURATION, formatDuration, parseDuration, roundDuration, since } from './duration.js';
import { f, type Add } from './sprig-def.js';
import { formatDate, goTime, parseDate, zeroTime } from './time.js';

const int64 = (v: bigint) => BigInt.asIntN(64, v);

/** sprig's ago: the time since a time (or Unix seconds), to the second. */
function ago(v: unknown): string {
  const t = v instanceof Date ? v : typeof v === 'bigint' ? new Date(Number(v) * 1000) : new Date();
  return formatDuration(roundDuration(since(t), DURATION.s));
}

/** strconv.ParseInt(s, 10, 64): 0 for text that is not an int, the bound for one past int64. */
function parseInt64(s: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(s)) return 0n;
  const n = BigInt(s);
  const max = (1n << 63n) - 1n;
  return n > max ? max : n < -max - 1n ? -max - 1n : n;
}

/** sprig's duration: seconds (an int, or text of one; else 0) as a Go duration. */
function duration(v: unknown): string {
  const n = typeof v === 'string' ? parseInt64(v) : typeof v === 'bigint' ? v : 0n;
  return formatDuration(int64(n * DURATION.s));
}

const YEAR = 365n * 24n * DURATION.h;
const ROUNDED: [bigint, string][] = [
  [YEAR, 'y'],
  [30n * 24n * DURATION.h, 'mo'],
  [24n * DURATION.h, 'd'],
  [DURATION.h, 'h'],
  [DURATION.m, 'm'],
  [DURATION.s, 's'],
];

/** sprig's durationRound: a duration (text, nanoseconds, or the time since a time) in its largest unit. */
function durationRound(v: unknown): string {
  let d = 0n;
  if (typeof v === 'string') {
    try {
      d = parseDuration(v);
    } catch {
      // sprig drops time.ParseDuration's error: text that is no duration rounds as 0.
      d = 0n;
    }
  } else if (typeof v === 'bigint') d = v;
  else if (v instanceof Date) d = since(v);
  const u = d < 0n ? -d : d;
  for (const [unit, name] of ROUNDED) if (u > unit) return `${u / unit}${name}`;
  return '0s';
}

/** sprig's dateModify: the time moved by a Go duration (`-1.5h`); text that is not one leaves it. */
function dateModify(must: boolean, by: unknown, t: unknown): Date {
  const text = goString(by);
  const d = goTime(t);
  let ns: bigint;
  try {
    ns = parseDuration(text);
  } catch (e) {
    if (must) throw e;
    return d;
  }
  return new Date(d.getTime() + Number(ns / DURATION.ms));
}

/** Add the date functions. */
export function addDateFunctions(add: Add): void {
  add(
    'now',
    f(0, 0, () => new Date()),
  );
  add(
    'date',
    f(2, 2, (fmt: unknown, d: unknown) => formatDate(goString(fmt), d)),
  );
  add(
    ['dateInZone', 'date_in_zone'],
    f(3, 3, (fmt: unknown, d: unknown, zone: unknown) => formatDate(goString(fmt), d, goString(zone))),
  );
  add(
    'htmlDate',
    f(1, 1, (d: unknown) => formatDate('2006-01-02', d)),
  );
  add(
    'htmlDateInZone',
    f(2, 2, (d: unknown, zone: unknown) => formatDate('2006-01-02', d, goString(zone))),
  );
  add(
    'unixEpoch',
    f(1, 1, (d: unknown) => String(Math.floor(goTime(d).getTime() / 1000))),
  );
  add(
    'toDate',
    f(2, 2, (fmt: unknown, s: unknown) => {
      const [layout, text] = [goString(fmt), goString(s)];
      try {
        return parseDate(layout, text);
      } catch {
        // sprig's toDate drops the parse error and gives Go's zero time (mustToDate keeps it).
        return zeroTime();
      }
    }),
  );
  add(
    'mustToDate',
    f(2, 2, (fmt: unknown, s: unknown) => parseDate(goString(fmt), goString(s))),
  );
  add(
    ['dateModify', 'date_modify'],
    f(2, 2, (by: unknown, d: unknown) => dateModify(false, by, d)),
  );
  add(
    ['mustDateModify', 'must_date_modify'],
    f(2, 2, (by: unknown, d: unknown) => dateModify(true, by, d)),
  );
  add('ago', f(1, 1, ago));
  add('duration', f(1, 1, duration));
  add('durationRound', f(1, 1, durationRound));
}
