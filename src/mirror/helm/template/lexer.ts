/**
 * The lexer of Go's text/template: text and actions between delimiters (`{{ }}` unless set), trim
 * markers (`{{- ` and ` -}}`, the space is part of the marker), comments (`{{/* … *\/}}`, alone in
 * their action), and inside actions the items Go knows: spaces (they separate arguments), fields,
 * variables, identifiers, keywords, strings, raw strings, characters, numbers, `|`, `(`, `)`,
 * `:=`, `=`, `,` and other ASCII punctuation (which the parser refuses, as Go's does).
 */
import { locate, parseError } from './errors.js';

export type TokenType =
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'space'
  | 'identifier'
  | 'keyword'
  | 'field'
  | 'variable'
  | 'string'
  | 'rawString'
  | 'char'
  | 'number'
  | 'bool'
  | 'nil'
  | 'dot'
  | 'pipe'
  | 'leftParen'
  | 'rightParen'
  | 'declare'
  | 'assign'
  | 'comma'
  /** Other printable ASCII punctuation (Go's itemChar): lexed, then refused by the parser. */
  | 'punct'
  | 'eof';

export interface Token {
  type: TokenType;
  value: string;
  /** Offset in the source (UTF-16 units); errors turn it into a line and a byte column. */
  pos: number;
}

export interface LexOptions {
  /** The delimiters (Go's Delims): `{{` and `}}` when not set or empty. */
  left?: string;
  right?: string;
  /** `break` and `continue` are keywords unless a function has the name (Go's breakOK). */
  breakOK?: boolean;
  continueOK?: boolean;
}

const KEYWORDS = new Set([
  'block',
  'break',
  'continue',
  'define',
  'else',
  'end',
  'if',
  'range',
  'template',
  'with',
]);

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{Nd}_]/u.test(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** A rune as Go's %#U prints it: `U+0040 '@'`, or `U+0001` when it is not printable. */
function runeName(c: string): string {
  const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(c) ? `${code} '${c}'` : code;
}

/** Tokens of a whole template, ending with `eof`. Throws a parse error naming `file:line:col`. */
export function lex(file: string, src: string, options: LexOptions = {}): Token[] {
  return new Lexer(file, src, options).run();
}

class Lexer {
  private readonly tokens: Token[] = [];
  private readonly left: string;
  private readonly right: string;
  private pos = 0;
  private parens = 0;

  constructor(
    private readonly file: string,
    private readonly src: string,
    private readonly options: LexOptions,
  ) {
    this.left = options.left || '{{';
    this.right = options.right || '}}';
  }

  private fail(pos: number, what: string): never {
    throw parseError(this.file, this.src, pos, what);
  }

  private emit(type: TokenType, start: number, end: number): void {
    this.tokens.push({ type, value: this.src.slice(start, end), pos: start });
  }

  run(): Token[] {
    for (;;) {
      const open = this.src.indexOf(this.left, this.pos);
      if (open < 0) break;
      const marker = open + this.left.length;
      const trimLeft = this.src[marker] === '-' && isSpace(this.src[marker + 1]);
      let end = open;
      if (trimLeft) while (end > this.pos && isSpace(this.src[end - 1])) end--;
      if (end > this.pos) this.emit('text', this.pos, end);
      const inner = trimLeft ? marker + 2 : marker;
      if (this.src.startsWith('/*', inner)) this.comment(open, inner);
      else this.action(open, inner);
    }
    if (this.pos < this.src.length) this.emit('text', this.pos, this.src.length);
    this.tokens.push({ type: 'eof', value: '', pos: this.src.length });
    return this.tokens;
  }

  /** Whether a right delimiter (with its trim marker or not) starts at `p`. */
  private atRightDelim(p: number): { at: boolean; trim: boolean } {
    if (this.src.startsWith(this.right, p)) return { at: true, trim: false };
    if (isSpace(this.src[p]) && this.src[p + 1] === '-' && this.src.startsWith(this.right, p + 2))
      return { at: true, trim: true };
    return { at: false, trim: false };
  }

  /** Past a right delimiter at `p`: the text after it starts here, its spaces skipped when trimmed. */
  private afterRightDelim(p: number, trim: boolean): void {
    let q = p + (trim ? 2 : 0) + this.right.length;
    if (trim) while (isSpace(this.src[q])) q++;
    this.pos = q;
  }

  /** A comment is the whole action: `{{/*`, the text, `*\/`, then the right delimiter. */
  private comment(open: number, p: number): void {
    const close = this.src.indexOf('*/', p + 2);
    if (close < 0) this.fail(open, 'unclosed comment');
    const { at, trim } = this.atRightDelim(close + 2);
    if (!at) this.fail(open, 'comment ends before closing delimiter');
    this.afterRightDelim(close + 2, trim);
  }

  private action(open: number, start: number): void {
    this.emit('leftDelim', open, open + this.left.length);
    this.parens = 0;
    let p = start;
    for (;;) {
      const { at, trim } = this.atRightDelim(p);
      if (at) {
        if (this.parens > 0) this.fail(p, 'unclosed left paren');
        const d = p + (trim ? 2 : 0);
        this.emit('rightDelim', d, d + this.right.length);
        this.afterRightDelim(p, trim);
        return;
      }
      if (p >= this.src.length) this.unclosedAction(open);
      p = this.item(p);
    }
  }

  /** Go names the line the text ended on, and the line the action started on when they differ. */
  private unclosedAction(open: number): never {
    const line = (pos: number) => locate(this.file, this.src, pos).replace(/:\d+$/, '');
    const started = line(open);
    const end = this.src.length;
    this.fail(end, started === line(end) ? 'unclosed action' : `unclosed action started at ${started}`);
  }

  /** One item inside an action, starting at `p`; where the next one starts. */
  private item(p: number): number {
    const c = this.src[p]!;
    if (isSpace(c)) return this.space(p);
    const single: Record<string, TokenType> = { '=': 'assign', '|': 'pipe', ',': 'comma' };
    if (single[c]) {
      this.emit(single[c], p, p + 1);
      return p + 1;
    }
    switch (c) {
      case ':':
        if (this.src[p + 1] !== '=') this.fail(p, 'expected :=');
        this.emit('declare', p, p + 2);
        return p + 2;
      case '(':
        this.parens++;
        this.emit('leftParen', p, p + 1);
        return p + 1;
      case ')':
        this.parens -= 1;
        if (this.parens < 0) this.fail(p, 'unexpected right paren');
        this.emit('rightParen', p, p + 1);
        return p + 1;
      case '"':
      case "'":
        return this.quoted(p, c);
      case '`':
        return this.rawString(p);
      case '$':
        return this.word(p, p + 1, 'variable');
      case '.':
        if (!isDigit(this.src[p + 1])) return this.word(p, p + 1, 'field');
        return this.number(p);
      default:
    }
    if (c === '+' || c === '-' || isDigit(c)) return this.number(p);
    if (isAlnum(c)) return this.word(p, p, 'identifier');
    const rune = String.fromCodePoint(this.src.codePointAt(p)!);
    if (/^[\x21-\x7e]$/.test(rune)) {
      this.emit('punct', p, p + 1);
      return p + 1;
    }
    this.fail(p, `unrecognized character in action: ${runeName(rune)}`);
  }

  /** A run of spaces, up to (not into) the space that starts a ` -}}` marker. */
  private space(start: number): number {
    let p = start;
    while (isSpace(this.src[p]) && !this.atRightDelim(p).trim) p++;
    if (p > start) this.emit('space', start, p);
    return p;
  }

  /** `"…"` (Go escapes, one line) or `'…'`: the parser reads what is inside. */
  private quoted(start: number, quote: '"' | "'"): number {
    let p = start + 1;
    for (;;) {
      const d = this.src[p];
      if (d === '\\' && this.src[p + 1] !== undefined && this.src[p + 1] !== '\n') p += 2;
      else if (d === undefined || d === '\n' || d === '\\')
        this.fail(start, quote === '"' ? 'unterminated quoted string' : 'unterminated character constant');
      else if (d === quote) break;
      else p++;
    }
    this.emit(quote === '"' ? 'string' : 'char', start, p + 1);
    return p + 1;
  }

  private rawString(start: number): number {
    const close = this.src.indexOf('`', start + 1);
    if (close < 0) this.fail(start, 'unterminated raw quoted string');
    this.emit('rawString', start, close + 1);
    return close + 1;
  }

  /** Whether an identifier, field or variable may end before `p` (Go's atTerminator). */
  private atTerminator(p: number): boolean {
    const c = this.src[p];
    return c === undefined || isSpace(c) || '.,|:()'.includes(c) || this.src.startsWith(this.right, p);
  }

  /** A field (`.x`), a variable (`$x`, `$`) or a word (keyword, bool, nil, function name). */
  private word(start: number, from: number, type: 'field' | 'variable' | 'identifier'): number {
    let p = from;
    while (isAlnum(this.src[p])) p++;
    if (!this.atTerminator(p)) {
      const bad = String.fromCodePoint(this.src.codePointAt(p)!);
      this.fail(p, `bad character ${runeName(bad)}`);
    }
    const text = this.src.slice(start, p);
    const t: TokenType =
      type === 'identifier' ? this.wordType(text) : type === 'field' && p === from ? 'dot' : type;
    this.emit(t, start, p);
    return p;
  }

  private wordType(word: string): TokenType {
    if (word === 'true' || word === 'false') return 'bool';
    if (word === 'nil') return 'nil';
    if (!KEYWORDS.has(word)) return 'identifier';
    if (word === 'break' && this.options.breakOK === false) return 'identifier';
    if (word === 'continue' && this.options.continueOK === false) return 'identifier';
    return 'keyword';
  }

  /** A number as Go's scanNumber takes it; `1+2i` (complex) is one item, refused by the parser. */
  private number(start: number): number {
    let p = this.scanNumber(start);
    if (p >= 0 && (this.src[p] === '+' || this.src[p] === '-')) {
      const q = this.scanNumber(p);
      p = q >= 0 && this.src[q - 1] === 'i' ? q : -Math.abs(q);
    }
    if (p < 0) this.fail(start, `bad number syntax: ${JSON.stringify(this.src.slice(start, -p))}`);
    this.emit('number', start, p);
    return p;
  }

  /** The end of the number at `start`, or minus the end of what was read when it is bad. */
  private scanNumber(start: number): number {
    let p = start;
    const accept = (set: string): boolean => {
      const c = this.src[p];
      if (c === undefined || !set.includes(c)) return false;
      p++;
      return true;
    };
    const run = (set: string) => {
      while (accept(set));
    };
    accept('+-');
    let digits = '0123456789_';
    if (accept('0')) {
      if (accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (accept('oO')) digits = '01234567_';
      else if (accept('bB')) digits = '01_';
    }
    run(digits);
    if (accept('.')) run(digits);
    if (digits.length === 11 && accept('eE')) {
      accept('+-');
      run('0123456789_');
    }
    if (digits.length === 23 && accept('pP')) {
      accept('+-');
      run('0123456789_');
    }
    accept('i');
    if (isAlnum(this.src[p])) return -(p + 1);
    return p;
  }
}
