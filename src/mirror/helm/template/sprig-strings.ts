/** Sprig's functions (sprig.ts): strings, encodings and hashes, regular expressions. */
import { createHash, randomInt, randomUUID } from 'node:crypto';
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

function indent(n: unknown, s: unknown): string {
  const pad = ' '.repeat(Math.max(0, int(n)));
  return pad + str(s).replace(/\n/g, `\n${pad}`);
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
  const all = s.split(sep);
  if (n < 0 || all.length <= n) return all;
  return [...all.slice(0, n - 1), all.slice(n - 1).join(sep)];
}

function join(sep: unknown, v: unknown): string {
  const items = Array.isArray(v) ? v : isNil(v) ? [] : [v];
  return items
    .filter((x) => !isNil(x))
    .map(strval)
    .join(str(sep));
}

function randomString(n: unknown, alphabet: string): string {
  let out = '';
  for (let i = 0; i < int(n); i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

// ---- regular expressions (RE2 → JavaScript for what charts write)

function regex(pattern: unknown, global = false): RegExp {
  let p = str(pattern);
  let flags = global ? 'gu' : 'u';
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    p = p.slice(lead[0].length);
    for (const c of lead[1]!) if (c !== 'U' && !flags.includes(c)) flags += c;
  }
  p = p.replace(/\(\?P</g, '(?<').replace(/\\z/g, '$(?![\\s\\S])');
  try {
    return new RegExp(p, flags);
  } catch (e) {
    throw new Error(`error parsing regexp: ${(e as Error).message}`);
  }
}

/** Go's Regexp.Expand template ($1, ${1}, ${name}, $$) in JavaScript's replacement syntax. */
function goReplacement(repl: string): string {
  return repl.replace(/\$(\$|\{(\w+)\}|(\w+))/g, (_m, all: string, braced?: string, bare?: string) => {
    if (all === '$') return '$$';
    const name = braced ?? bare!;
    return /^\d+$/.test(name) ? `$${name}` : `$<${name}>`;
  });
}

function regexSplit(pattern: unknown, s: unknown, n: unknown): string[] {
  const parts = str(s).split(regex(pattern));
  const c = int(n);
  if (c < 0 || parts.length <= c) return parts;
  return parts.slice(0, c);
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

/** Add the strings, encodings and hashes, regular expressions functions. */
export function addStringFunctions(add: Add): void {
  // strings
  add(
    'trim',
    f(1, 1, (s: unknown) => str(s).trim()),
  );
  add(
    'trimAll',
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
  add(
    'repeat',
    f(2, 2, (n: unknown, s: unknown) => str(s).repeat(Math.max(0, int(n)))),
  );
  add(
    'replace',
    f(3, 3, (o: unknown, n: unknown, s: unknown) => str(s).split(str(o)).join(str(n))),
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
    f(2, 2, (sep: unknown, s: unknown) => splitMap(str(s).split(str(sep)))),
  );
  add(
    'splitn',
    f(3, 3, (sep: unknown, n: unknown, s: unknown) => splitMap(splitN(str(s), str(sep), int(n)))),
  );
  add(
    'splitList',
    f(2, 2, (sep: unknown, s: unknown) => str(s).split(str(sep))),
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
    f(1, 1, (s: unknown) =>
      str(s)
        .split(/_+/)
        .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : ''))
        .join(''),
    ),
  );
  add(
    'plural',
    f(3, 3, (one: unknown, many: unknown, n: unknown) => (toInt64(n) === 1n ? str(one) : str(many))),
  );
  add('toString', f(1, 1, strval));
  add(
    'toStrings',
    f(1, 1, (l: unknown) => (Array.isArray(l) ? l.map(strval) : isNil(l) ? [] : [strval(l)])),
  );
  add(
    'wrap',
    f(2, 2, (_n: unknown, s: unknown) => str(s)),
  );
  add(
    'abbrev',
    f(2, 2, (n: unknown, s: unknown) =>
      str(s).length > int(n) ? `${str(s).slice(0, Math.max(0, int(n) - 3))}...` : str(s),
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
    f(1, 1, (n: unknown) => randomString(n, ALPHA + DIGITS)),
  );
  add(
    'randAlpha',
    f(1, 1, (n: unknown) => randomString(n, ALPHA)),
  );
  add(
    'randNumeric',
    f(1, 1, (n: unknown) => randomString(n, DIGITS)),
  );
  add(
    'randAscii',
    f(1, 1, (n: unknown) => randomString(n, ALPHA + DIGITS + '!#$%&()*+,-./:;<=>?@[]^_{|}~')),
  );
  add(
    'uuidv4',
    f(0, 0, () => randomUUID()),
  );
  add(
    'shuffle',
    f(1, 1, (s: unknown) => str(s)),
  );

  // encodings and hashes
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

  // regular expressions
  add(
    ['regexMatch', 'mustRegexMatch'],
    f(2, 2, (r: unknown, s: unknown) => regex(r).test(str(s))),
  );
  add(
    ['regexFind', 'mustRegexFind'],
    f(2, 2, (r: unknown, s: unknown) => regex(r).exec(str(s))?.[0] ?? ''),
  );
  add(
    ['regexFindAll', 'mustRegexFindAll'],
    f(3, 3, (r: unknown, s: unknown, n: unknown) => {
      const all = Array.from(str(s).matchAll(regex(r, true)), (x) => x[0]);
      return int(n) < 0 ? all : all.slice(0, int(n));
    }),
  );
  add(
    ['regexReplaceAll', 'mustRegexReplaceAll'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) =>
      str(s).replace(regex(r, true), goReplacement(str(repl))),
    ),
  );
  add(
    ['regexReplaceAllLiteral', 'mustRegexReplaceAllLiteral'],
    f(3, 3, (r: unknown, s: unknown, repl: unknown) => str(s).replace(regex(r, true), () => str(repl))),
  );
  add(['regexSplit', 'mustRegexSplit'], f(3, 3, regexSplit));
  add(
    'regexQuoteMeta',
    f(1, 1, (s: unknown) => str(s).replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')),
  );
}
