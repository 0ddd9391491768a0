/**
 * Go's reference-time layouts (`2006-01-02T15:04:05Z07:00`) for sprig's date functions, in a
 * named time zone (IANA names, read through the runtime's ICU). "Local" is UTC: a rendering for
 * images has no use for the bastion's time zone.
 */
import { toInt64 } from './convert.js';
import { typeOf } from './values.js';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A zone at one instant: its offset east of UTC in minutes, and its abbreviation. */
export interface Zone {
  offset: number;
  abbr: string;
}

const UTC: Zone = { offset: 0, abbr: 'UTC' };

/** `+hh:mm` (or `+hhmm`, `+hh`) for an offset in minutes. */
function offsetText(offset: number, colon: boolean, minutes = true): string {
  const a = Math.abs(offset);
  const hh = p2(Math.floor(a / 60));
  const mm = p2(a % 60);
  return `${offset < 0 ? '-' : '+'}${hh}${minutes ? `${colon ? ':' : ''}${mm}` : ''}`;
}

const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-IN', 'en-AU', 'ja-JP'];

/** Formatters by locale, zone and style, made once (making one takes far longer than using it). */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
function formatter(locale: string, zone: string, style: 'short' | 'longOffset'): Intl.DateTimeFormat {
  const key = `${locale}\0${zone}\0${style}`;
  let fmt = FORMATTERS.get(key);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat(locale, { timeZone: zone, timeZoneName: style, year: 'numeric' });
    if (FORMATTERS.size < 1000) FORMATTERS.set(key, fmt);
  }
  return fmt;
}

/**
 * time.LoadLocation's zone at instant `d`: UTC for "", "UTC" and "Local"; an IANA name through
 * ICU; undefined for a name ICU does not know (sprig then takes UTC).
 */
function zoneAt(name: string, d: Date): Zone | undefined {
  if (name === '' || name === 'UTC' || name === 'Local') return UTC;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = formatter('en-US', name, 'longOffset').formatToParts(d);
  } catch (e) {
    // Intl's RangeError is "no such time zone" (LoadLocation's error, which sprig replaces by UTC).
    if (e instanceof RangeError) return undefined;
    throw e;
  }
  const long = parts.find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(long);
  const offset = m?.[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  // ICU names a zone's abbreviation in the locales that use it (CEST in en-GB, IST in en-IN,
  // AEST in en-AU, JST in ja-JP); where none does, Go's tzdata has none either, mostly.
  const short = ABBREVIATION_LOCALES.map(
    (locale) =>
      formatter(locale, name, 'short')
        .formatToParts(d)
        .find((p) => p.type === 'timeZoneName')?.value,
  ).find((a) => a !== undefined && /^[A-Z]{2,5}$/.test(a) && a !== 'GMT');
  // Go's tzdata names a zone without letters by its offset (`+03`, `+0530`).
  const abbr =
    short !== undefined
      ? short
      : offset === 0
        ? name.startsWith('Etc/') || name === 'GMT'
          ? 'GMT'
          : 'UTC'
        : offsetText(offset, false, offset % 60 !== 0);
  return { offset, abbr };
}

const p2 = (n: number) => String(n).padStart(2, '0');

/** The layout's tokens, longest first where one is a prefix of another. */
const TOKENS: [string, (d: Date, z: Zone) => string][] = [
  ['January', (d) => MONTHS[d.getUTCMonth()]!],
  ['Monday', (d) => DAYS[d.getUTCDay()]!],
  ['Jan', (d) => MONTHS[d.getUTCMonth()]!.slice(0, 3)],
  ['Mon', (d) => DAYS[d.getUTCDay()]!.slice(0, 3)],
  ['MST', (_d, z) => z.abbr],
  ['2006', (d) => String(d.getUTCFullYear()).padStart(4, '0')],
  ['Z07:00', (_d, z) => (z.offset === 0 ? 'Z' : offsetText(z.offset, true))],
  ['-07:00', (_d, z) => offsetText(z.offset, true)],
  ['-0700', (_d, z) => offsetText(z.offset, false)],
  ['Z0700', (_d, z) => (z.offset === 0 ? 'Z' : offsetText(z.offset, false))],
  ['-07', (_d, z) => offsetText(z.offset, false, false)],
  ['.000000000', (d) => `.${String(d.getUTCMilliseconds()).padStart(3, '0')}000000`],
  ['.000000', (d) => `.${String(d.getUTCMilliseconds()).padStart(3, '0')}000`],
  ['.000', (d) => `.${String(d.getUTCMilliseconds()).padStart(3, '0')}`],
  [
    '.999999999',
    (d) =>
      d.getUTCMilliseconds() ? `.${String(d.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}` : '',
  ],
  [
    '.999',
    (d) =>
      d.getUTCMilliseconds() ? `.${String(d.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}` : '',
  ],
  ['01', (d) => p2(d.getUTCMonth() + 1)],
  ['02', (d) => p2(d.getUTCDate())],
  ['_2', (d) => String(d.getUTCDate()).padStart(2, ' ')],
  ['06', (d) => p2(d.getUTCFullYear() % 100)],
  ['15', (d) => p2(d.getUTCHours())],
  ['03', (d) => p2(d.getUTCHours() % 12 || 12)],
  ['04', (d) => p2(d.getUTCMinutes())],
  ['05', (d) => p2(d.getUTCSeconds())],
  ['PM', (d) => (d.getUTCHours() >= 12 ? 'PM' : 'AM')],
  ['pm', (d) => (d.getUTCHours() >= 12 ? 'pm' : 'am')],
  ['1', (d) => String(d.getUTCMonth() + 1)],
  ['2', (d) => String(d.getUTCDate())],
  ['3', (d) => String(d.getUTCHours() % 12 || 12)],
  ['4', (d) => String(d.getUTCMinutes())],
  ['5', (d) => String(d.getUTCSeconds())],
];

/**
 * The time sprig's date functions take (dateInZone's switch): a time, or Unix seconds as an int;
 * anything else (a float64 from values, a string, nil) is now.
 */
function timeArg(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === 'bigint') return new Date(Number(toInt64(v)) * 1000);
  return new Date();
}

/** A Go `time.Time` parameter (unixEpoch, dateModify): a time, else Go's error. */
export function goTime(v: unknown): Date {
  if (v instanceof Date) return v;
  if (v === null || v === undefined) throw new Error('invalid value; expected time.Time');
  throw new Error(`wrong type for value; expected time.Time; got ${typeOf(v)}`);
}

/** Format `d` in Go layout `layout`, in zone `zone` (UTC if ICU does not know it, as sprig). */
function formatIn(layout: string, d: Date, zone: string): string {
  const z = zoneAt(zone, d) ?? UTC;
  const shifted = new Date(d.getTime() + z.offset * 60_000);
  let out = '';
  let i = 0;
  outer: while (i < layout.length) {
    for (const [tok, fn] of TOKENS) {
      if (layout.startsWith(tok, i)) {
        out += fn(shifted, z);
        i += tok.length;
        continue outer;
      }
    }
    out += layout[i++];
  }
  return out;
}

/** sprig's dateInZone (and date, htmlDate: zone "Local"). */
export function formatDate(layout: string, v: unknown, zone = 'Local'): string {
  return formatIn(layout, timeArg(v), zone);
}

/** Go's zero time, 0001-01-01 00:00:00 UTC (what toDate gives for text that does not parse). */
export function zeroTime(): Date {
  const d = new Date(0);
  d.setUTCFullYear(1, 0, 1);
  return d;
}

/** What each layout token reads: a pattern, and where its value goes. */
const READERS: [string, string, (f: Fields, s: string) => void][] = [
  ['January', MONTHS.join('|'), (f, s) => (f.month = MONTHS.indexOf(s))],
  ['Monday', DAYS.join('|'), () => undefined],
  [
    'Jan',
    MONTHS.map((m) => m.slice(0, 3)).join('|'),
    (f, s) => (f.month = MONTHS.findIndex((m) => m.startsWith(s))),
  ],
  ['Mon', DAYS.map((m) => m.slice(0, 3)).join('|'), () => undefined],
  ['MST', '[A-Z]{3,5}|[+-]\\d{2,4}', (f, s) => (f.zoneName = s)],
  ['2006', '\\d{4}', (f, s) => (f.year = Number(s))],
  ['Z07:00', 'Z|[+-]\\d{2}:\\d{2}', (f, s) => (f.offset = readOffset(s))],
  ['-07:00', '[+-]\\d{2}:\\d{2}', (f, s) => (f.offset = readOffset(s))],
  ['-0700', '[+-]\\d{4}', (f, s) => (f.offset = readOffset(s))],
  ['Z0700', 'Z|[+-]\\d{4}', (f, s) => (f.offset = readOffset(s))],
  ['-07', '[+-]\\d{2}', (f, s) => (f.offset = readOffset(s))],
  ['.000000000', '\\.\\d{9}', (f, s) => (f.ms = Number(s.slice(1, 4)))],
  ['.000000', '\\.\\d{6}', (f, s) => (f.ms = Number(s.slice(1, 4)))],
  ['.000', '\\.\\d{3}', (f, s) => (f.ms = Number(s.slice(1, 4)))],
  ['.999999999', '(?:\\.\\d+)?', (f, s) => (f.ms = s ? Number(s.slice(1, 4).padEnd(3, '0')) : 0)],
  ['.999', '(?:\\.\\d+)?', (f, s) => (f.ms = s ? Number(s.slice(1, 4).padEnd(3, '0')) : 0)],
  ['01', '\\d{2}', (f, s) => (f.month = Number(s) - 1)],
  ['02', '\\d{2}', (f, s) => (f.day = Number(s))],
  ['_2', ' ?\\d{1,2}', (f, s) => (f.day = Number(s.trim()))],
  ['06', '\\d{2}', (f, s) => (f.year = Number(s) + (Number(s) >= 69 ? 1900 : 2000))],
  ['15', '\\d{1,2}', (f, s) => (f.hour = Number(s))],
  ['03', '\\d{2}', (f, s) => (f.hour12 = Number(s))],
  ['04', '\\d{2}', (f, s) => (f.minute = Number(s))],
  ['05', '\\d{2}', (f, s) => (f.second = Number(s))],
  ['PM', 'AM|PM', (f, s) => (f.pm = s === 'PM')],
  ['pm', 'am|pm', (f, s) => (f.pm = s === 'pm')],
  ['1', '\\d{1,2}', (f, s) => (f.month = Number(s) - 1)],
  ['2', '\\d{1,2}', (f, s) => (f.day = Number(s))],
  ['3', '\\d{1,2}', (f, s) => (f.hour12 = Number(s))],
  ['4', '\\d{1,2}', (f, s) => (f.minute = Number(s))],
  ['5', '\\d{1,2}', (f, s) => (f.second = Number(s))],
];

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  hour12?: number;
  pm?: boolean;
  minute: number;
  second: number;
  ms: number;
  offset?: number;
  zoneName?: string;
}

function readOffset(s: string): number {
  if (s === 'Z') return 0;
  const sign = s.startsWith('-') ? -1 : 1;
  const digits = s.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}

/**
 * time.ParseInLocation for the layouts charts use: the layout's tokens read their fields (a
 * year `0001`, a month, day, clock, fraction and zone); text the layout does not match is Go's
 * error. Without an offset in the text the time is in `zone` ("Local": UTC).
 */
export function parseDate(layout: string, s: string, zone = 'Local'): Date {
  const f: Fields = { year: 0, month: 0, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
  let i = 0;
  let j = 0;
  const bad = () => new Error(`parsing time ${JSON.stringify(s)} as ${JSON.stringify(layout)}: cannot parse`);
  outer: while (i < layout.length) {
    for (const [tok, pattern, set] of READERS) {
      if (!layout.startsWith(tok, i)) continue;
      const m = new RegExp(`^(?:${pattern})`).exec(s.slice(j));
      if (!m) throw bad();
      set(f, m[0]);
      i += tok.length;
      j += m[0].length;
      continue outer;
    }
    if (s[j] !== layout[i]) throw bad();
    i++;
    j++;
  }
  if (j !== s.length)
    throw new Error(`parsing time ${JSON.stringify(s)}: extra text: ${JSON.stringify(s.slice(j))}`);
  if (f.hour12 !== undefined) f.hour = (f.hour12 % 12) + (f.pm ? 12 : 0);
  const local = new Date(0);
  local.setUTCFullYear(f.year, f.month, f.day);
  local.setUTCHours(f.hour, f.minute, f.second, f.ms);
  if (f.month < 0 || f.month > 11 || f.day < 1 || f.day > 31 || f.hour > 23 || f.minute > 59 || f.second > 59)
    throw new Error(`parsing time ${JSON.stringify(s)}: value out of range`);
  const offset = f.offset ?? zoneAt(zone, local)?.offset ?? 0;
  return new Date(local.getTime() - offset * 60_000);
}
