/**
 * Sprig's functions (sprig.ts): strings, encodings and hashes, regular expressions. A string or
 * list that grows with an argument (repeat, indent, randAlphaNum, replace, join, split, the regex
 * functions) is checked against the budget before it is built (budget.ts).
 */
import { RE2JS } from 're2js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LIMITS, checkChars, checkItems, measure } from './budget.js';
import { goQuote } from './fmt.js';
import { int, str, strval, toInt64 } from './convert.js';
import { isNil, type GoMap } from './values.js';
import { f, V, type Add } from './sprig-def.js';

function title(s: string): string {
  return s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase());
}

function untitle(s: string): string {
  return s.replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toLowerCase());
}

function words(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
}

const isConnector = (c: string) => c === '-' || c === '_' || /\s/u.test(c);

/**
 * xstrings.ToPascalCase (sprig's camelcase): each letter after connectors (`_`, `-`, spaces) upper
 * case, a lone connector dropped; leading connectors and a run's extra connectors kept.
 */
function pascalCase(s: string): string {
  const chars = Array.from(s);
  let out = '';
  let i = 0;
  while (i < chars.length && isConnector(chars[i]!)) out += chars[i++];
  if (i === chars.length) return out;
  let r0 = chars[i++]!.toUpperCase();
  for (; i < chars.length; i++) {
    const r1 = r0;
    r0 = chars[i]!;
    if (isConnector(r0) && isConnector(r1)) out += r1;
    else if (isConnector(r1)) r0 = r0.toUpperCase();
    else out += r1;
  }
  return out + r0;
}

function trunc(n: unknown, s: unknown): string {
  const c = int(n);
  const t = str(s);
  if (c < 0 && t.length + c > 0) return t.slice(t.length + c);
  if (c >= 0 && t.length > c) return t.slice(0, c);
  return t;
}

function substr(start: unknown, end: unknown, s: unknown): string {
  const a = int(start);
  const b = int(end);
  const t = str(s);
  if (a < 0) return t.slice(0, b);
  if (b < 0 || b > t.length) return t.slice(a);
  return t.slice(a, b);
}

/** How many times `sub` occurs in `s` (without overlaps; "" between every two characters). */
function occurrences(s: string, sub: string): number {
  if (sub === '') return Math.max(0, s.length - 1);
  let n = 0;
  for (let i = s.indexOf(sub); i >= 0; i = s.indexOf(sub, i + sub.length)) n++;
  return n;
}

/** The parts `s.split(sep)` gives, checked against the budget first when there could be too many. */
function splitChecked(what: string, s: string, sep: string): string[] {
  if (s.length > LIMITS.items) checkItems(what, occurrences(s, sep) + 1);
  return s.split(sep);
}

function indent(n: unknown, s: unknown): string {
  const width = Math.max(0, int(n));
  const text = str(s);
  checkChars(`indent ${width}`, text.length + width * (occurrences(text, '\n') + 1));
  const pad = ' '.repeat(width);
  return pad + text.replace(/\n/g, `\n${pad}`);
}

function repeat(n: unknown, s: unknown): string {
  const count = Math.max(0, int(n));
  checkChars(`repeat ${count}`, count * str(s).length);
  return str(s).repeat(count);
}

function replace(old: string, by: string, s: string): string {
  if (by.length > old.length)
    checkChars('replace', s.length + occurrences(s, old) * (by.length - old.length));
  return s.split(old).join(by);
}

function trimAll(cutset: string, s: string): string {
  const set = new Set(Array.from(cutset));
  const chars = Array.from(s);
  let a = 0;
  let b = chars.length;
  while (a < b && set.has(chars[a]!)) a++;
  while (b > a && set.has(chars[b - 1]!)) b--;
  return chars.slice(a, b).join('');
}

function splitMap(parts: string[]): GoMap {
  const out: GoMap = {};
  parts.forEach((p, i) => (out[`_${i}`] = p));
  return out;
}

function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  const all = splitChecked('splitn', s, sep);
  if (n < 0 || all.length <= n) return all;
  return [...all.slice(0, n - 1), all.slice(n - 1).join(sep)];
}

function join(sep: unknown, v: unknown): string {
  const items = Array.isArray(v) ? v : isNil(v) ? [] : [v];
  checkChars('join', measure(items) + str(sep).length * items.length);
  return items
    .filter((x) => !isNil(x))
    .map(strval)
    .join(str(sep));
}

/** `n` characters drawn uniformly from an ASCII alphabet (random bytes, the biased top ones skipped). */
function randomString(what: string, n: unknown, alphabet: string): string {
  const count = Math.max(0, int(n));
  checkChars(`${what} ${count}`, count);
  const out = Buffer.alloc(count);
  const unbiased = 256 - (256 % alphabet.length);
  const codes = Buffer.from(alphabet, 'latin1');
  for (let i = 0; i < count;) {
    const bytes = randomBytes(Math.max(64, count - i));
    for (let j = 0; j < bytes.length && i < count; j++)
      if (bytes[j]! < unbiased) out[i++] = codes[bytes[j]! % codes.length]!;
  }
  return out.toString('latin1');
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

// ---- regular expressions: RE2 itself (re2js), as Go runs a chart's patterns: linear time, whatever
// the pattern, so no chart can make a match run for hours (a JavaScript RegExp backtracks)

/** A chart's pattern compiled as Go compiles it; Go's error text when it does not compile. */
function regex(pattern: unknown): RE2JS {
  try {
    return RE2JS.compile(str(pattern));
  } catch (e) {
    throw new Error(`error parsing regexp: ${(e as Error).message}`, { cause: e });
  }
}

/** One match: where it is, and its groups by number or name. */
interface Re2Match {
  start: number;
  end: number;
  text: string;
  group(g: number | string): string | undefined;
}

/** The successive non-overlapping matches of `re` in `s`, as Go's FindAll walks them. */
function* matchesOf(re: RE2JS, s: string): Generator<Re2Match> {
  const m = re.matcher(s);
  let prevEnd = -1;
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    // Go leaves out an empty match that abuts the match before it (regexp.allMatches).
    if (start === end && start === prevEnd) continue;
    prevEnd = end;
    yield { start, end, text: s.slice(start, end), group: (g) => groupOf(m, re, g) };
  }
}

function groupOf(m: ReturnType<RE2JS['matcher']>, re: RE2JS, g: number | string): string | undefined {
  if (typeof g === 'number') return g <= re.groupCount() ? (m.group(g) ?? '') : undefined;
  return g in re.namedGroups() ? (m.group(g) ?? '') : undefined;
}

/** The matched texts of `re` in `s`, at most `max` (all if negative), as a list within the budget. */
function findAll(what: string, re: RE2JS, s: string, max: number): string[] {
  const out: string[] = [];
  for (const m of matchesOf(re, s)) {
    if (max >= 0 && out.length >= max) break;
    out.push(m.text);
    if (out.length > LIMITS.items) checkItems(what, out.length);
  }
  return out;
}

/** Go's Regexp.Expand of a replacement template for one match: $1, ${1}, $name, ${name}, $$. */
function expand(repl: string, m: Re2Match): string {
  return repl.replace(/\$(\$|\{(\w+)\}|(\w+))/g, (_all, what: string, braced?: string, bare?: string) => {
    if (what === '$') return '$';
    const name = braced ?? bare!;
    return m.group(/^\d+$/.test(name) ? Number(name) : name) ?? '';
  });
}

/** ReplaceAllString (or, `literal`, ReplaceAllLiteralString), the result checked as it grows. */
function regexReplace(pattern: unknown, s: unknown, repl: unknown, literal: boolean): string {
  const text = str(s);
  const by = str(repl);
  const out: string[] = [];
  let length = 0;
  let last = 0;
  for (const m of matchesOf(regex(pattern), text)) {
    const r = literal ? by : expand(by, m);
    out.push(text.slice(last, m.start), r);
    length += m.start - last + r.length;
    if (length > LIMITS.chars) checkChars('regexReplaceAll', length);
    last = m.end;
  }
  out.push(text.slice(last));
  return out.join('');
}

/** Go's Regexp.Split: at most `n` parts (all if negative, none if 0). */
function regexSplit(pattern: unknown, s: unknown, n: unknown): string[] {
  const re = regex(pattern);
  const text = str(s);
  const c = int(n);
  if (c === 0) return [];
  if (str(pattern) !== '' && text === '') return [''];
  const parts: string[] = [];
  let beg = 0;
  let end = 0;
  for (const m of matchesOf(re, text)) {
    if (c > 0 && parts.length === c - 1) break;
    end = m.start;
    if (m.end !== 0) parts.push(text.slice(beg, end));
    if (parts.length > LIMITS.items) checkItems('regexSplit', parts.length);
    beg = m.end;
  }
  if (end !== text.length) parts.push(text.slice(beg));
  return parts;
}

// ---- lists

function hash(alg: string, s: unknown): string {
  return createHash(alg).update(str(s)).digest('hex');
}

function adler32(s: string): bigint {
  let a = 1;
  let b = 0;
  for (const byte of Buffer.from(s)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return BigInt(((b << 16) | a) >>> 0);
}

function base32(buf: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/** Add the string, encoding and hash, and regular expression functions. */
export function addStringFunctions(add: Add): void {
  addTrimCaseFunctions(add);
  addShapeFunctions(add);
  addEncodingFunctions(add);
  addRegexFunctions(add);
}

/** trim*, case, contains/prefix/suffix, split and join, quoting. */
function addTrimCaseFunctions(add: Add): void {
  // strings
  add(
    'trim',
    f(1, 1, (s: unknown) => str(s).trim()),
  );
  add(
    ['trimAll', 'trimall'],
    f(2, 2, (c: unknown, s: unknown) => trimAll(str(c), str(s))),
  );
  add(
    'trimSuffix',
    f(2, 2, (x: unknown, s: unknown) =>
      str(s).endsWith(str(x)) ? str(s).slice(0, str(s).length - str(x).length) : str(s),
    ),
  );
  add(
    'trimPrefix',
    f(2, 2, (x: unknown, s: unknown) => (str(s).startsWith(str(x)) ? str(s).slice(str(x).length) : str(s))),
  );
  add('trunc', f(2, 2, trunc));
  add('substr', f(3, 3, substr));
  add(
    'upper',
    f(1, 1, (s: unknown) => str(s).toUpperCase()),
  );
  add(
    'lower',
    f(1, 1, (s: unknown) => str(s).toLowerCase()),
  );
  add(
    'title',
    f(1, 1, (s: unknown) => title(str(s))),
  );
  add(
    'untitle',
    f(1, 1, (s: unknown) => untitle(str(s))),
  );
  add('repeat', f(2, 2, repeat));
  add(
    'replace',
    f(3, 3, (o: unknown, n: unknown, s: unknown) => replace(str(o), str(n), str(s))),
  );
  add(
    'contains',
    f(2, 2, (sub: unknown, s: unknown) => str(s).includes(str(sub))),
  );
  add(
    'hasPrefix',
    f(2, 2, (p: unknown, s: unknown) => str(s).startsWith(str(p))),
  );
  add(
    'hasSuffix',
    f(2, 2, (p: unknown, s: unknown) => str(s).endsWith(str(p))),
  );
  add(
    'split',
    f(2, 2, (sep: unknown, s: unknown) => splitMap(splitChecked('split', str(s), str(sep)))),
  );
  add(
    'splitn',
    f(3, 3, (sep: unknown, n: unknown, s: unknown) => splitMap(splitN(str(s), str(sep), int(n)))),
  );
  add(
    'splitList',
    f(2, 2, (sep: unknown, s: unknown) => splitChecked('splitList', str(s), str(sep))),
  );
  add('join', f(2, 2, join));
  add(
    'quote',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map((x) => goQuote(strval(x)))
        .join(' '),
    ),
  );
  add(
    'squote',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map((x) => `'${strval(x)}'`)
        .join(' '),
    ),
  );
  add(
    'cat',
    f(0, V, (...a: unknown[]) =>
      a
        .filter((x) => !isNil(x))
        .map(strval)
        .join(' '),
    ),
  );
}

/** indent, case conversions, plural, conversions to strings, random strings. */
function addShapeFunctions(add: Add): void {
  add('indent', f(2, 2, indent));
  add(
    'nindent',
    f(2, 2, (n: unknown, s: unknown) => `\n${indent(n, s)}`),
  );
  add(
    'nospace',
    f(1, 1, (s: unknown) => str(s).replace(/\s+/gu, '')),
  );
  add(
    'snakecase',
    f(1, 1, (s: unknown) =>
      words(str(s))
        .map((w) => w.toLowerCase())
        .join('_'),
    ),
  );
  add(
    'kebabcase',
    f(1, 1, (s: unknown) =>
      words(str(s))
        .map((w) => w.toLowerCase())
        .join('-'),
    ),
  );
  add(
    'camelcase',
    f(1, 1, (s: unknown) => pascalCase(str(s))),
  );
  add(
    'plural',
    f(3, 3, (one: unknown, many: unknown, n: unknown) => (toInt64(n) === 1n ? str(one) : str(many))),
  );
  add('toString', f(1, 1, strval));
  add(
    'toStrings',
    f(1, 1, (l: unknown) =>
      Array.isArray(l) ? l.filter((x) => !isNil(x)).map(strval) : isNil(l) ? [] : [strval(l)],
    ),
  );
  add(
    'initials',
    f(1, 1, (s: unknown) =>
      str(s)
        .split(/\s+/)
        .map((w) => w[0] ?? '')
        .join(''),
    ),
  );
  add(
    'randAlphaNum',
    f(1, 1, (n: unknown) => randomString('randAlphaNum', n, ALPHA + DIGITS)),
  );
  add(
    'randAlpha',
    f(1, 1, (n: unknown) => randomString('randAlpha', n, ALPHA)),
  );
  add(
    'randNumeric',
    f(1, 1, (n: unknown) => randomString('randNumeric', n, DIGITS)),
  );
  add(
    'randAscii',
    f(1, 1, (n: unknown) => randomString('randAscii', n, ALPHA + DIGITS + '!#$%&()*+,-./:;<=>?@[]^_{|}~')),
  );
  add(
    'uuidv4',
    f(0, 0, () => randomUUID()),
  );
}

/** Encodings and hashes. */
function addEncodingFunctions(add: Add): void {
  add(
    'b64enc',
    f(1, 1, (s: unknown) => Buffer.from(str(s)).toString('base64')),
  );
  add(
    'b64dec',
    f(1, 1, (s: unknown) => Buffer.from(str(s), 'base64').toString('utf8')),
  );
  add(
    'b32enc',
    f(1, 1, (s: unknown) => base32(Buffer.from(str(s)))),
  );
  add(
    'sha256sum',
    f(1, 1, (s: unknown) => hash('sha256', s)),
  );
  add(
    'sha1sum',
    f(1, 1, (s: unknown) => hash('sha1', s)),
  );
  add(
    'md5sum',
    f(1, 1, (s: unknown) => hash('md5', s)),
  );
  add(
    'adler32sum',
    f(1, 1, (s: unknown) => String(adler32(str(s)))),
  );
}

function addRegexFunctions(add: Add): void {
  // regular expressions
  add(
    ['regexMatch', 'mustRegexMatch'],
    f(2, 2, (r: unknown, s: unknown) => regex(r).matcher(str(s)).find()),
  );
  add(
    ['regexFind', 'mustRegexFind'],
    f(2, 2, (r: unknown, s: unknown) => matchesOf(regex(r), str(s)).next().value?.text ?? ''),
  );
  add(
    ['regexFindAll', 'mustRegexFindAll'],
    f(3, 3, (r: unknown, s: unknown, n: unknown) => findAll('regexFindAll', regex(r), str(s), int(n))),
  );
  add(
    ['regexReplaceAll', 'mustRegexReplaceAll'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) => regexReplace(r, s, repl, false)),
  );
  add(
    ['regexReplaceAllLiteral', 'mustRegexReplaceAllLiteral'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) => regexReplace(r, s, repl, true)),
  );
  add(['regexSplit', 'mustRegexSplit'], f(3, 3, regexSplit));
  add(
    'regexQuoteMeta',
    f(1, 1, (s: unknown) => str(s).replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')),
  );
}
