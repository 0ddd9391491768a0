/**
 * Literals as Go's text/template reads them: numbers (Go's syntax: `0x`, `0o`, `0b`, old octal,
 * `_` separators, hex floats with a `p` exponent) and quoted strings and characters (strconv's
 * escapes). Each function gives undefined for what Go refuses; the parser says where.
 */

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
};

/** A hex float (`0x1.8p+1`): the p exponent is required, as strconv.ParseFloat requires it. */
function hexFloat(body: string): number | undefined {
  const m = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/.exec(body);
  if (!m || (m[1] === '' && !m[2])) return undefined;
  const frac = m[2] ?? '';
  const mantissa = parseInt(`${m[1]}${frac}` || '0', 16);
  return mantissa * 2 ** (Number(m[3]) - 4 * frac.length);
}

/**
 * A number token's value as Go's idealConstant gives it: an int (bigint, of any size: the executor
 * refuses what overflows int64) unless written with `.`, `e` or `p` (hex digits excepted), then a
 * float64. Undefined for a complex number or a bad one.
 */
export function parseNumber(text: string): bigint | number | undefined {
  const t = text.replace(/_/g, '');
  const neg = t.startsWith('-');
  const body = t.replace(/^[+-]/, '');
  if (body === '' || body.endsWith('i')) return undefined;
  let int: bigint | undefined;
  if (/^0[xX][0-9a-fA-F]+$/.test(body) || /^0[oO][0-7]+$/.test(body) || /^0[bB][01]+$/.test(body))
    int = BigInt(body);
  else if (/^0[0-7]+$/.test(body)) int = BigInt(`0o${body.slice(1)}`);
  else if (/^[0-9]+$/.test(body)) int = BigInt(body);
  if (int !== undefined) return neg ? -int : int;
  const f = /^0[xX]/.test(body)
    ? hexFloat(body)
    : /^[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?$/.test(body)
      ? Number(body)
      : NaN;
  if (f === undefined || Number.isNaN(f)) return undefined;
  return neg ? -f : f;
}

/**
 * The escapes of a quoted string or character (without its quotes): `quote` is the one that may be
 * escaped. In a string, `\x` and octal escapes are bytes; in a character, they are the rune.
 */
function unescape(s: string, quote: '"' | "'"): { text: string; runes: number[] } | undefined {
  const runes: number[] = [];
  const bytes: number[] = [];
  let text = '';
  const flush = () => {
    if (bytes.length) text += Buffer.from(bytes).toString('utf8');
    bytes.length = 0;
  };
  const put = (cp: number) => {
    flush();
    text += String.fromCodePoint(cp);
    runes.push(cp);
  };
  for (let i = 0; i < s.length; i++) {
    const cp = s.codePointAt(i)!;
    if (cp > 0xffff) i++;
    if (s[i] !== '\\') {
      put(cp);
      continue;
    }
    const e = s[++i];
    if (e === undefined) return undefined;
    if (SIMPLE_ESCAPES[e] !== undefined) put(SIMPLE_ESCAPES[e].codePointAt(0)!);
    else if (e === quote) put(quote.codePointAt(0)!);
    else if (e === 'x' || /[0-7]/.test(e)) {
      const digits = e === 'x' ? s.slice(i + 1, i + 3) : s.slice(i, i + 3);
      if (!(e === 'x' ? /^[0-9a-fA-F]{2}$/ : /^[0-7]{3}$/).test(digits)) return undefined;
      const v = parseInt(digits, e === 'x' ? 16 : 8);
      if (v > 255) return undefined;
      if (quote === "'") put(v);
      else {
        bytes.push(v);
        runes.push(v);
      }
      i += 2;
    } else if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const digits = s.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) return undefined;
      const v = parseInt(digits, 16);
      if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return undefined;
      put(v);
      i += n;
    } else return undefined;
  }
  flush();
  return { text, runes };
}

/** An interpreted string literal (`"…"` with its quotes), or undefined when Go refuses it. */
export function unquoteString(literal: string): string | undefined {
  return unescape(literal.slice(1, -1), '"')?.text;
}

/** A character constant (`'…'` with its quotes): its rune, or undefined unless exactly one. */
export function unquoteChar(literal: string): bigint | undefined {
  const u = unescape(literal.slice(1, -1), "'");
  return u && u.runes.length === 1 ? BigInt(u.runes[0]!) : undefined;
}
