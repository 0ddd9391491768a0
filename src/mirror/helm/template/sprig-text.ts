/**
 * Sprig's text-shaping functions (sprig.ts): abbrev, abbrevboth, wrap, wrapWith, swapcase,
 * shuffle, as Masterminds/goutils and xstrings shape text. Their Go parameters are typed (`int`,
 * `string`): another type is Go's error. wrapWith's result grows with its separator and is
 * checked against the budget before it is built (budget.ts).
 */
import { randomInt } from 'node:crypto';
import { checkChars } from './budget.js';
import { goInt, goString } from './convert.js';
import { f, type Add } from './sprig-def.js';

/**
 * goutils.AbbreviateFull: `s` in at most `width` characters, with "..." where text was cut, the
 * text from about `offset` kept; undefined where goutils refuses the widths.
 */
function abbreviate(s: string, offset: number, width: number): string | undefined {
  if (s === '') return '';
  if (width < 4) return undefined;
  if (s.length <= width) return s;
  let at = Math.min(offset, s.length);
  if (s.length - at < width - 3) at = s.length - (width - 3);
  if (at <= 4) return `${s.slice(0, width - 3)}...`;
  if (width < 7) return undefined;
  if (at + width - 3 < s.length) return `...${abbreviate(s.slice(at), 0, width - 3) ?? ''}`;
  return `...${s.slice(s.length - (width - 3))}`;
}

/** sprig's abbrev: `s` cut to `width` with "..." (a width under 4 leaves it). */
function abbrev(width: unknown, s: unknown): string {
  const w = Number(goInt(width));
  const text = goString(s);
  if (w < 4) return text;
  return abbreviate(text, 0, w) ?? '';
}

/** sprig's abbrevboth: "..." on both sides, the text from `left` kept, in `right` characters. */
function abbrevboth(left: unknown, right: unknown, s: unknown): string {
  const l = Number(goInt(left));
  const r = Number(goInt(right));
  const text = goString(s);
  if (r < 4 || (l > 0 && r < 7)) return text;
  return abbreviate(text, l, r) ?? '';
}

/**
 * goutils.WrapCustom: lines of at most `width` characters broken at spaces (a space at a break
 * is dropped), `sep` between them; a word longer than a line is cut (`long`) or left whole.
 */
function wrapText(s: string, width: number, sep: string, long: boolean): string {
  if (s === '') return '';
  const nl = sep === '' ? '\n' : sep;
  const w = Math.max(1, width);
  checkChars('wrapWith', s.length + (Math.floor(s.length / w) + 1) * nl.length);
  let out = '';
  let at = 0;
  while (s.length - at > w) {
    if (s[at] === ' ') {
      at++;
      continue;
    }
    const space = s.slice(at, at + w + 1).lastIndexOf(' ');
    if (space >= 0) {
      out += s.slice(at, at + space) + nl;
      at += space + 1;
    } else if (long) {
      out += s.slice(at, at + w) + nl;
      at += w;
    } else {
      const next = s.indexOf(' ', at + w);
      if (next < 0) {
        out += s.slice(at);
        at = s.length;
      } else {
        out += s.slice(at, next) + nl;
        at = next + 1;
      }
    }
  }
  return out + s.slice(at);
}

/**
 * goutils.SwapCase: upper and title case become lower, lower case upper (title case at the start
 * of a word, which is upper case but for a few digraphs).
 */
function swapcase(s: string): string {
  let out = '';
  for (const c of s) {
    if (/\p{Lu}|\p{Lt}/u.test(c)) out += c.toLowerCase();
    else if (/\p{Ll}/u.test(c)) out += c.toUpperCase();
    else out += c;
  }
  return out;
}

/** xstrings.Shuffle: the characters of `s` in a random order. */
function shuffle(s: string): string {
  const chars = Array.from(s);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}

/** Add abbrev, abbrevboth, wrap, wrapWith, swapcase, shuffle. */
export function addTextFunctions(add: Add): void {
  add('abbrev', f(2, 2, abbrev));
  add('abbrevboth', f(3, 3, abbrevboth));
  add(
    'wrap',
    f(2, 2, (n: unknown, s: unknown) => wrapText(goString(s), Number(goInt(n)), '', false)),
  );
  add(
    'wrapWith',
    f(3, 3, (n: unknown, sep: unknown, s: unknown) =>
      wrapText(goString(s), Number(goInt(n)), goString(sep), true),
    ),
  );
  add(
    'swapcase',
    f(1, 1, (s: unknown) => swapcase(goString(s))),
  );
  add(
    'shuffle',
    f(1, 1, (s: unknown) => shuffle(goString(s))),
  );
}
