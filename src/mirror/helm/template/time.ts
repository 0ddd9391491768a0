/**
 * Go's reference-time layouts (`2006-01-02T15:04:05Z07:00`) for sprig's date functions. Times are
 * formatted in UTC: a rendering for images has no use for the bastion's time zone.
 */
import { toInt64 } from './convert.js';

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

const p2 = (n: number) => String(n).padStart(2, '0');

/** The layout's tokens, longest first where one is a prefix of another. */
const TOKENS: [string, (d: Date) => string][] = [
  ['January', (d) => MONTHS[d.getUTCMonth()]!],
  ['Monday', (d) => DAYS[d.getUTCDay()]!],
  ['Jan', (d) => MONTHS[d.getUTCMonth()]!.slice(0, 3)],
  ['Mon', (d) => DAYS[d.getUTCDay()]!.slice(0, 3)],
  ['MST', () => 'UTC'],
  ['2006', (d) => String(d.getUTCFullYear())],
  ['Z07:00', () => 'Z'],
  ['-07:00', () => '+00:00'],
  ['-0700', () => '+0000'],
  ['Z0700', () => 'Z'],
  ['-07', () => '+00'],
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

function toDate(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === 'bigint' || typeof v === 'number') return new Date(Number(toInt64(v)) * 1000);
  return new Date();
}

/** sprig's date: a time (or Unix seconds) in a Go layout. */
export function formatDate(layout: string, v: unknown): string {
  const d = toDate(v);
  let out = '';
  let i = 0;
  outer: while (i < layout.length) {
    for (const [tok, fn] of TOKENS) {
      if (layout.startsWith(tok, i)) {
        out += fn(d);
        i += tok.length;
        continue outer;
      }
    }
    out += layout[i++];
  }
  return out;
}

/** sprig's toDate, for the layouts JavaScript can read too (RFC 3339, dates). */
export function parseDate(_layout: string, s: string): Date {
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new Error(`parsing time "${s}": cannot parse`);
  return d;
}
