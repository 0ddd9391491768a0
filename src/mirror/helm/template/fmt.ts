/**
 * Go's fmt as templates use it: `%v` printing of every value (what `{{ . }}` writes), Sprint,
 * Sprintln and Sprintf with the common verbs, flags, widths and precisions, and strconv.Quote.
 */
import { checkChars, checkPrinted } from './budget.js';
import { GoStruct, isNil, mapOf, sortedKeys, typeOf } from './values.js';

/** strconv.FormatFloat(x, 'g', -1, 64) as `%v` uses it: shortest digits, exponent from 1e+06 (as Go prints). */
function formatFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return goExponent(mant!, exp);
  return String(x);
}

function goExponent(mantissa: string, exp: number): string {
  const sign = exp < 0 ? '-' : '+';
  const digits = String(Math.abs(exp)).padStart(2, '0');
  return `${mantissa}e${sign}${digits}`;
}

/** A time as Go's time.Time.String() prints it (UTC). */
function formatTime(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${iso.slice(20, 23)} +0000 UTC`;
}

/** `%v` of any value, as fmt.Sprint prints one operand (a list or map checked for size first). */
export function formatValue(v: unknown): string {
  if (typeof v === 'object' && v !== null) checkPrinted('printing a value', v);
  return format(v);
}

function format(v: unknown): string {
  if (isNil(v)) return '<nil>';
  switch (typeof v) {
    case 'string':
      return v;
    case 'bigint':
    case 'boolean':
      return String(v);
    case 'number':
      return formatFloat(v);
    default:
  }
  if (Array.isArray(v)) return `[${v.map(format).join(' ')}]`;
  if (v instanceof Uint8Array) return `[${Array.from(v).join(' ')}]`;
  if (v instanceof Date) return formatTime(v);
  if (v instanceof GoStruct && !v.entries) {
    if (v.display) return v.display();
    return `{${Object.values(v.fields).map(format).join(' ')}}`;
  }
  const m = mapOf(v);
  if (m)
    return `map[${sortedKeys(m)
      .map((k) => `${k}:${format(m[k])}`)
      .join(' ')}]`;
  return String(v);
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isPrint(ch: string): boolean {
  return ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
}

/** strconv.Quote (strconv.QuoteToASCII with `asciiOnly`): Go escapes, printable Unicode kept. */
export function goQuote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
      default:
    }
    if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && (asciiOnly || !isPrint(ch)))
      out += c < 0x10000 ? `\\u${c.toString(16).padStart(4, '0')}` : `\\U${c.toString(16).padStart(8, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** fmt.Sprint: operands side by side, a space between two operands when neither is a string. */
export function sprint(args: readonly unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a);
  });
  return out;
}

/** fmt.Sprintln: spaces between all operands and a final newline. */
export function sprintln(args: readonly unknown[]): string {
  return `${args.map(formatValue).join(' ')}\n`;
}

interface Spec {
  minus: boolean;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width?: number;
  prec?: number;
}

/**
 * Padded to the width, counted in runes as Go counts it (not UTF-16 units). The 0 flag pads with
 * zeros, after the sign of a number (a string too is zero-padded, as Go's writePadding does).
 */
function pad(s: string, spec: Spec, numeric: boolean): string {
  const runes = s.length < (spec.width ?? 0) * 2 ? Array.from(s).length : s.length;
  if (spec.width === undefined || runes >= spec.width) return s;
  const fill = spec.width - runes;
  if (spec.minus) return s + ' '.repeat(fill);
  if (spec.zero && !(numeric && /^[+-]?(Inf|NaN)/.test(s))) {
    const sign = numeric && /^[+-]/.test(s) ? s[0]! : '';
    return sign + '0'.repeat(fill) + s.slice(sign.length);
  }
  return ' '.repeat(fill) + s;
}

function bad(verb: string, v: unknown): string {
  return isNil(v) ? `%!${verb}(<nil>)` : `%!${verb}(${typeOf(v)}=${formatValue(v)})`;
}

function signed(s: string, negative: boolean, spec: Spec): string {
  if (negative) return `-${s}`;
  if (spec.plus) return `+${s}`;
  if (spec.space) return ` ${s}`;
  return s;
}

const INT_BASES: Readonly<Record<string, number>> = { d: 10, v: 10, x: 16, X: 16, o: 8, O: 8, b: 2 };

/** Go's fmtInteger: digits, zeros up to the precision (or the width with the 0 flag), prefix, sign. */
function formatInteger(v: bigint, verb: string, spec: Spec): string {
  const neg = v < 0n;
  const abs = neg ? -v : v;
  if (verb === 'c') return String.fromCodePoint(Number(v));
  if (verb === 'q') {
    const inner = goQuote(String.fromCodePoint(Number(v))).slice(1, -1);
    return `'${inner === '\\"' ? '"' : inner === "'" ? "\\'" : inner}'`;
  }
  if (verb === 'U') {
    const u = `U+${abs.toString(16).toUpperCase().padStart(4, '0')}`;
    return spec.sharp ? `${u} '${String.fromCodePoint(Number(v))}'` : u;
  }
  const base = INT_BASES[verb];
  if (base === undefined) return bad(verb, v);
  let digits = abs.toString(base);
  if (verb === 'X') digits = digits.toUpperCase();
  let prec = spec.prec;
  if (prec === 0 && v === 0n) digits = '';
  else if (prec === undefined && spec.zero && !spec.minus && spec.width !== undefined)
    prec = spec.width - (neg || spec.plus || spec.space ? 1 : 0);
  if (prec !== undefined) digits = digits.padStart(prec, '0');
  // A precision pads with zeros itself; the 0 flag then pads with spaces.
  spec.zero = false;
  if (spec.sharp && verb === 'o' && !digits.startsWith('0')) digits = `0${digits}`;
  else if (spec.sharp && (verb === 'x' || verb === 'X')) digits = `0${verb}${digits}`;
  else if (verb === 'O') digits = `0o${digits}`;
  return signed(digits, neg, spec);
}

function expForm(s: string): string {
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

function formatFloatVerb(x: number, verb: string, spec: Spec): string {
  if (!Number.isFinite(x)) return signed(formatFloat(Math.abs(x)), x < 0, spec);
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  let s: string;
  switch (verb) {
    case 'f':
    case 'F':
      s = a.toFixed(spec.prec ?? 6);
      break;
    case 'e':
    case 'E':
      s = expForm(a.toExponential(spec.prec ?? 6));
      if (verb === 'E') s = s.toUpperCase();
      break;
    case 'g':
    case 'G':
    case 'v':
      if (spec.prec === undefined) s = formatFloat(a);
      else {
        const p = spec.prec === 0 ? 1 : spec.prec;
        const exp = a === 0 ? 0 : Math.floor(Math.log10(a));
        s =
          exp < -4 || exp >= p
            ? expForm(a.toExponential(p - 1).replace(/\.?0+e/, 'e'))
            : String(Number(a.toPrecision(p)));
      }
      if (verb === 'G') s = s.toUpperCase();
      break;
    default:
      return bad(verb, x);
  }
  return signed(s, neg, spec);
}

/** Go's fmtSbx: bytes in hex, the precision counting bytes; `% x` spaces them, `%#x` adds 0x. */
function hexBytes(b: Buffer, verb: 'x' | 'X', spec: Spec): string {
  const bytes = spec.prec !== undefined && spec.prec < b.length ? b.subarray(0, spec.prec) : b;
  const prefix = verb === 'x' ? '0x' : '0X';
  const digits = (n: number) => n.toString(16).padStart(2, '0');
  let out = '';
  bytes.forEach((n, i) => {
    if (spec.space && i > 0) out += ' ';
    if (spec.sharp && (spec.space || i === 0)) out += prefix;
    out += verb === 'X' ? digits(n).toUpperCase() : digits(n);
  });
  return out;
}

function formatString(s: string, verb: string, spec: Spec): string {
  switch (verb) {
    case 's':
    case 'v':
      return spec.prec === undefined ? s : Array.from(s).slice(0, spec.prec).join('');
    case 'q': {
      const t = spec.prec === undefined ? s : Array.from(s).slice(0, spec.prec).join('');
      // strconv.CanBackquote: no backquote, no control character but tab, no BOM.
      const raw =
        spec.sharp &&
        Array.from(t).every(
          (ch) => ch === '\t' || (ch >= ' ' && ch !== '\x7f' && ch !== '`' && ch !== '\ufeff'),
        );
      return raw ? `\`${t}\`` : goQuote(t, spec.plus);
    }
    case 'x':
    case 'X':
      return hexBytes(Buffer.from(s, 'utf8'), verb, spec);
    default:
      return bad(verb, s);
  }
}

/** One operand under one verb. */
function formatOne(v: unknown, verb: string, spec: Spec): string {
  if (verb === 'T') return typeOf(v);
  if (typeof v === 'string') return formatString(v, verb, spec);
  if (typeof v === 'bigint') return formatInteger(v, verb, spec);
  if (typeof v === 'number') return formatFloatVerb(v, verb, spec);
  if (typeof v === 'boolean') return verb === 't' || verb === 'v' ? String(v) : bad(verb, v);
  if (isNil(v)) return verb === 'v' || verb === 's' ? (verb === 'v' ? '<nil>' : '%!s(<nil>)') : bad(verb, v);
  // A list's or a map's elements (keys too) are printed with the verb, as Go prints them.
  if (Array.isArray(v) && verb !== 'v') return `[${v.map((x) => formatOne(x, verb, spec)).join(' ')}]`;
  const m = mapOf(v);
  if (m && verb !== 'v') {
    const entries = sortedKeys(m).map((k) => `${formatOne(k, verb, spec)}:${formatOne(m[k], verb, spec)}`);
    return `map[${entries.join(' ')}]`;
  }
  if (verb === 'v' || verb === 's') return formatValue(v);
  if (verb === 'q' && v instanceof GoStruct && v.display) return goQuote(v.display());
  return bad(verb, v);
}

/** Go's fmt refuses a width or precision over a million (tooLarge). */
const TOO_LARGE = 1_000_000;

/** One Sprintf: the format read left to right, the operands taken in order or by `[n]`. */
class Printf {
  private out = '';
  private i = 0;
  private argi = 0;
  /** An operand was chosen by `[n]`: unused operands are then not reported (Go's reordered). */
  private reordered = false;
  private goodArgNum = true;

  constructor(
    private readonly format: string,
    private readonly args: readonly unknown[],
  ) {}

  run(): string {
    const { format } = this;
    while (this.i < format.length) {
      const pct = format.indexOf('%', this.i);
      if (pct < 0) {
        this.out += format.slice(this.i);
        break;
      }
      this.out += format.slice(this.i, pct);
      this.i = pct + 1;
      if (!this.directive()) break;
      checkChars('printf', this.out.length);
    }
    if (!this.reordered && this.argi < this.args.length) {
      const extra = this.args
        .slice(this.argi)
        .map((a) => (isNil(a) ? '<nil>' : `${typeOf(a)}=${formatValue(a)}`));
      this.out += `%!(EXTRA ${extra.join(', ')})`;
    }
    return this.out;
  }

  /** One `%…verb` after its `%`; false when the format ended inside it. */
  private directive(): boolean {
    const { format } = this;
    const spec = this.flags();
    this.goodArgNum = true;
    let afterIndex = this.argNumber();
    if (format[this.i] === '*') {
      spec.width = this.star('%!(BADWIDTH)');
      afterIndex = false;
    } else {
      spec.width = this.num();
      if (afterIndex && spec.width !== undefined) this.goodArgNum = false;
    }
    if (spec.width !== undefined && spec.width < 0) {
      [spec.width, spec.minus, spec.zero] = [-spec.width, true, false];
    }
    if (format[this.i] === '.' && this.i + 1 < format.length) {
      this.i++;
      if (afterIndex) this.goodArgNum = false;
      afterIndex = this.argNumber();
      if (format[this.i] === '*') {
        const p = this.star('%!(BADPREC)');
        if (p !== undefined && p < 0) this.out += '%!(BADPREC)';
        spec.prec = p !== undefined && p >= 0 ? p : undefined;
        afterIndex = false;
      } else spec.prec = this.num() ?? 0;
    }
    if (!afterIndex) this.argNumber();
    const verb = format[this.i++];
    if (verb === undefined) {
      this.out += '%!(NOVERB)';
      return false;
    }
    if (verb === '%') this.out += '%';
    else if (!this.goodArgNum) this.out += `%!${verb}(BADINDEX)`;
    else if (this.argi >= this.args.length) this.out += `%!${verb}(MISSING)`;
    else this.operand(this.args[this.argi++], verb, spec);
    return true;
  }

  private operand(arg: unknown, verb: string, spec: Spec): void {
    const one = formatOne(arg, verb, spec);
    // Go writes a bad verb's note as it is, unpadded.
    this.out += one.startsWith(`%!${verb}(`)
      ? one
      : pad(one, spec, typeof arg === 'number' || typeof arg === 'bigint');
  }

  private flags(): Spec {
    const spec: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false };
    for (; this.i < this.format.length; this.i++) {
      const c = this.format[this.i];
      if (c === '-') [spec.minus, spec.zero] = [true, false];
      else if (c === '+') spec.plus = true;
      else if (c === '#') spec.sharp = true;
      else if (c === ' ') spec.space = true;
      else if (c === '0') spec.zero = !spec.minus;
      else break;
    }
    return spec;
  }

  /** `[n]`: the operand to take next (one-based); whether one was given. */
  private argNumber(): boolean {
    if (this.format[this.i] !== '[') return false;
    this.reordered = true;
    const close = this.format.indexOf(']', this.i + 1);
    const digits = close < 0 ? '' : this.format.slice(this.i + 1, close);
    if (close < 0 || !/^\d+$/.test(digits) || digits.length > 7) {
      this.i = close < 0 ? this.i + 1 : close + 1;
      this.goodArgNum = false;
      return false;
    }
    this.i = close + 1;
    const index = Number(digits) - 1;
    if (index >= 0 && index < this.args.length) this.argi = index;
    else this.goodArgNum = false;
    return true;
  }

  /** A width or precision from an operand (`*`): an int within a million, else `bad` is written. */
  private star(bad: string): number | undefined {
    this.i++;
    const a = this.args[this.argi++];
    if (typeof a === 'bigint' && a <= TOO_LARGE && a >= -TOO_LARGE) return Number(a);
    this.out += bad;
    return undefined;
  }

  /** A width or precision written in the format. */
  private num(): number | undefined {
    const m = /^\d+/.exec(this.format.slice(this.i));
    if (!m) return undefined;
    // Go's parsenum gives up (and the verb is lost) once the number before a digit is too large.
    if (m[0].length > 1 && Number(m[0].slice(0, -1)) > TOO_LARGE) {
      this.i = this.format.length;
      return undefined;
    }
    this.i += m[0].length;
    return Number(m[0]);
  }
}

/**
 * fmt.Sprintf with Go's verbs, flags, widths (`*` too), explicit operand indexes (`%[2]s`) and
 * Go's error notes for bad or missing operands; widths and precisions over a million are refused
 * as Go refuses them, and the result is checked against the budget's limit on one string as it
 * grows.
 */
export function sprintf(format: string, args: readonly unknown[]): string {
  for (const a of args) if (typeof a === 'object' && a !== null) checkPrinted('printf', a);
  return new Printf(format, args).run();
}
