/**
 * The lexer of Go's text/template: text and `{{ }}` actions, trim markers (`{{- ` and ` -}}`,
 * the space is part of the marker), comments (`{{/* … *\/}}`, alone in their action), and inside
 * actions the items Go knows: spaces (they separate arguments), fields, variables, identifiers,
 * keywords, strings, raw strings, characters, numbers, `|`, `(`, `)`, `:=`, `=` and `,`.
 */
import { parseError } from './errors.js';

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
  | 'eof';

export interface Token {
  type: TokenType;
  value: string;
  /** Offset in the source (UTF-16 units); errors turn it into a line and a byte column. */
  pos: number;
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
const isAlnum = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}_]/u.test(c);

function trimLeftSpace(s: string): string {
  return s.replace(/^[ \t\r\n]+/, '');
}

function trimRightSpace(s: string): string {
  return s.replace(/[ \t\r\n]+$/, '');
}

/** Tokens of a whole template, ending with `eof`. Throws a parse error naming `file:line:col`. */
export function lex(file: string, src: string): Token[] {
  const tokens: Token[] = [];
  const fail = (pos: number, what: string): never => {
    throw parseError(file, src, pos, what);
  };
  let pos = 0;
  let trimNext = false;
  while (pos <= src.length) {
    const open = src.indexOf('{{', pos);
    let text = src.slice(pos, open < 0 ? src.length : open);
    let textPos = pos;
    if (trimNext) {
      const trimmed = trimLeftSpace(text);
      textPos += text.length - trimmed.length;
      text = trimmed;
      trimNext = false;
    }
    if (open < 0) {
      if (text) tokens.push({ type: 'text', value: text, pos: textPos });
      break;
    }
    let p = open + 2;
    const trimLeft = src[p] === '-' && isSpace(src[p + 1]);
    if (trimLeft) {
      text = trimRightSpace(text);
      p += 2;
    }
    if (text) tokens.push({ type: 'text', value: text, pos: textPos });

    // A comment is the whole action.
    if (src.startsWith('/*', p)) {
      const close = src.indexOf('*/', p + 2);
      if (close < 0) fail(open, 'unclosed comment');
      p = close + 2;
      if (isSpace(src[p]) && src.startsWith('-}}', p + 1)) {
        trimNext = true;
        pos = p + 4;
      } else if (src.startsWith('}}', p)) {
        pos = p + 2;
      } else {
        fail(open, 'comment ends before closing delimiter');
      }
      continue;
    }

    tokens.push({ type: 'leftDelim', value: '{{', pos: open });
    let parens = 0;
    for (;;) {
      // The right delimiter, with its trim marker (a space, then `-`).
      if (isSpace(src[p]) && src[p + 1] === '-' && src.startsWith('}}', p + 2)) {
        if (parens > 0) fail(p, 'unclosed left paren');
        tokens.push({ type: 'rightDelim', value: '}}', pos: p + 2 });
        trimNext = true;
        pos = p + 4;
        break;
      }
      if (src.startsWith('}}', p)) {
        if (parens > 0) fail(p, 'unclosed left paren');
        tokens.push({ type: 'rightDelim', value: '}}', pos: p });
        pos = p + 2;
        break;
      }
      const c = src[p];
      if (c === undefined) fail(open, 'unclosed action');
      const start = p;
      if (isSpace(c)) {
        // Up to (not into) the space that starts a ` -}}` marker; the loop's first check takes that.
        while (isSpace(src[p]) && !(src[p + 1] === '-' && src.startsWith('}}', p + 2))) p++;
        tokens.push({ type: 'space', value: src.slice(start, p), pos: start });
        continue;
      }
      switch (c) {
        case '=':
          tokens.push({ type: 'assign', value: '=', pos: p++ });
          continue;
        case ':':
          if (src[p + 1] !== '=') fail(p, 'expected :=');
          tokens.push({ type: 'declare', value: ':=', pos: p });
          p += 2;
          continue;
        case '|':
          tokens.push({ type: 'pipe', value: '|', pos: p++ });
          continue;
        case ',':
          tokens.push({ type: 'comma', value: ',', pos: p++ });
          continue;
        case '(':
          parens++;
          tokens.push({ type: 'leftParen', value: '(', pos: p++ });
          continue;
        case ')':
          parens--;
          if (parens < 0) fail(p, 'unexpected right paren');
          tokens.push({ type: 'rightParen', value: ')', pos: p++ });
          continue;
        case '"': {
          p++;
          for (;;) {
            const d = src[p];
            if (d === undefined || d === '\n') fail(start, 'unterminated quoted string');
            if (d === '\\') p += 2;
            else if (d === '"') break;
            else p++;
          }
          p++;
          tokens.push({ type: 'string', value: src.slice(start, p), pos: start });
          continue;
        }
        case '`': {
          const close = src.indexOf('`', p + 1);
          if (close < 0) fail(start, 'unterminated raw quoted string');
          p = close + 1;
          tokens.push({ type: 'rawString', value: src.slice(start, p), pos: start });
          continue;
        }
        case "'": {
          p++;
          for (;;) {
            const d = src[p];
            if (d === undefined || d === '\n') fail(start, 'unterminated character constant');
            if (d === '\\') p += 2;
            else if (d === "'") break;
            else p++;
          }
          p++;
          tokens.push({ type: 'char', value: src.slice(start, p), pos: start });
          continue;
        }
        case '$': {
          p++;
          while (isAlnum(src[p])) p++;
          tokens.push({ type: 'variable', value: src.slice(start, p), pos: start });
          continue;
        }
        case '.': {
          if (src[p + 1] !== undefined && /[0-9]/.test(src[p + 1]!)) break; // a number like .5
          p++;
          if (!isAlnum(src[p])) {
            tokens.push({ type: 'dot', value: '.', pos: start });
            continue;
          }
          while (isAlnum(src[p])) p++;
          tokens.push({ type: 'field', value: src.slice(start, p), pos: start });
          continue;
        }
        default:
      }
      if (c === '.' || c === '+' || c === '-' || /[0-9]/.test(c!)) {
        const m =
          /^[+-]?(?:0[xX][0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?(?:[pP][+-]?[0-9_]+)?|0[oO][0-7_]+|0[bB][01_]+|[0-9_]*\.?[0-9_]*(?:[eE][+-]?[0-9_]+)?)i?/.exec(
            src.slice(p),
          );
        const text = m ? m[0] : '';
        if (!/[0-9]/.test(text) || isAlnum(src[p + text.length]) || src[p + text.length] === '.')
          fail(start, `bad number syntax: "${src.slice(p, p + Math.max(text.length, 1) + 1)}"`);
        p += text.length;
        tokens.push({ type: 'number', value: text, pos: start });
        continue;
      }
      if (isAlnum(c)) {
        while (isAlnum(src[p])) p++;
        const word = src.slice(start, p);
        const type: TokenType =
          word === 'true' || word === 'false'
            ? 'bool'
            : word === 'nil'
              ? 'nil'
              : KEYWORDS.has(word)
                ? 'keyword'
                : 'identifier';
        tokens.push({ type, value: word, pos: start });
        continue;
      }
      fail(p, `bad character U+${c!.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} '${c}'`);
    }
  }
  tokens.push({ type: 'eof', value: '', pos: src.length });
  return tokens;
}
