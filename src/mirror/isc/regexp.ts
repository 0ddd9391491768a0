/**
 * Go (RE2) regular expressions, as oc-mirror compiles `blockedImages[].name`, checked and turned
 * into JavaScript RegExps. RE2 refuses what JS accepts (lookaround, backreferences, unknown
 * escapes), and writes some things differently (`(?P<n>`, `(?i)`, `\A`, `\z`, `\Q…\E`, `[[:alpha:]]`,
 * `\x{…}`, octal); those are translated. Flags inside the pattern (`(?i:…)`) become whole-pattern
 * flags when leading and are dropped otherwise, and `\pL` classes are approximated: the check is
 * exact, the match is close.
 */

/** A compiled pattern, or why it does not compile. */
export type GoRegexpResult = { ok: true; regexp: RegExp } | { ok: false; error: string };

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const ESCAPES_ANYWHERE = new Set(['f', 'n', 'r', 't', 'v', 'd', 'D', 's', 'S', 'w', 'W']);
const MAX_REPEAT = 1000;

function literal(cp: number): string {
  return cp <= 0xff ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}

function escapeLiteral(text: string): string {
  return [...text].map((ch) => (/[\w\s]/.test(ch) ? ch : `\\${ch}`)).join('');
}

/** Compile a Go regular expression (RE2 syntax) into a JS RegExp, unanchored like Go's MatchString. */
export function compileGoRegexp(pattern: string): GoRegexpResult {
  let out = '';
  let flags = '';
  let inClass = false;
  let classStart = -1;
  let i = 0;
  const fail = (error: string): GoRegexpResult => ({ ok: false, error });
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined) return fail('trailing backslash at end of expression');
      if (n === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const text = pattern.slice(i + 2, end < 0 ? undefined : end);
        out += escapeLiteral(text);
        i = end < 0 ? pattern.length : end + 2;
        continue;
      }
      if (/[0-7]/.test(n)) {
        const digits = /^[0-7]{1,3}/.exec(pattern.slice(i + 1))![0];
        if (n !== '0' && digits.length === 1)
          return fail(`invalid escape sequence: \\${n} (backreferences are not supported)`);
        out += literal(parseInt(digits, 8));
        i += 1 + digits.length;
        continue;
      }
      if (n === 'x') {
        const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i + 2));
        const short = /^[0-9A-Fa-f]{2}/.exec(pattern.slice(i + 2));
        if (braced) {
          const cp = parseInt(braced[1], 16);
          if (cp > 0x10ffff) return fail(`invalid escape sequence: \\x{${braced[1]}}`);
          out += cp > 0xffff ? escapeLiteral(String.fromCodePoint(cp)) : literal(cp);
          i += 2 + braced[0].length;
        } else if (short) {
          out += `\\x${short[0]}`;
          i += 4;
        } else return fail('invalid escape sequence: \\x');
        continue;
      }
      if (n === 'p' || n === 'P') {
        const name = /^(?:\{\^?\w+\}|[A-Za-z])/.exec(pattern.slice(i + 2));
        if (!name) return fail(`invalid character class range: \\${n}`);
        out += inClass ? '\\w' : n === 'p' ? '[^\\x00-\\x2F]' : '[\\x00-\\x2F]';
        i += 2 + name[0].length;
        continue;
      }
      if (!inClass && n === 'A') out += '^';
      else if (!inClass && n === 'z') out += '(?![\\s\\S])';
      else if (!inClass && (n === 'b' || n === 'B')) out += `\\${n}`;
      else if (n === 'a') out += '\\x07';
      else if (/[0-9A-Za-z]/.test(n) && !ESCAPES_ANYWHERE.has(n))
        return fail(`invalid escape sequence: \\${n}`);
      else out += `\\${n}`;
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        if (!m || !POSIX[m[2]]) return fail(`invalid character class range: ${pattern.slice(i, i + 10)}`);
        if (m[1]) return fail(`negated POSIX class ${m[0]} is not supported by airgap; use [^…] instead`);
        out += POSIX[m[2]];
        i += m[0].length;
        continue;
      }
      if (c === ']' && i !== classStart) inClass = false;
      out += c === ']' && i === classStart ? '\\]' : c;
      i++;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += '[';
      i++;
      if (pattern[i] === '^') {
        out += '^';
        i++;
      }
      classStart = i; // a ']' right here is a literal in RE2
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2);
      const group = /^([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest);
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 4;
      } else if (/^<[A-Za-z_]/.test(rest) || rest.startsWith(':')) {
        out += '(?';
        i += 2;
      } else if (/^(?:=|!|<=|<!)/.test(rest)) {
        return fail('lookahead and lookbehind (?= (?! (?<= (?<! are not supported by Go regular expressions');
      } else if (group && (group[1] || group[2])) {
        if (group[3] === ')' && out === '') flags += group[1].replace(/U/g, '');
        else if (group[3] === ':') out += '(?:';
        i += 2 + group[0].length;
      } else {
        return fail(`invalid or unsupported Perl syntax: ${pattern.slice(i, i + 4)}`);
      }
      continue;
    }
    if (c === '{') {
      const rep = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (rep && (Number(rep[1]) > MAX_REPEAT || Number(rep[2] || 0) > MAX_REPEAT)) {
        return fail(`invalid repeat count: ${rep[0]} (at most ${MAX_REPEAT})`);
      }
    }
    out += c;
    i++;
  }
  if (inClass) return fail(`missing closing ]: ${pattern.slice(Math.max(0, classStart - 1))}`);
  try {
    return { ok: true, regexp: new RegExp(out, [...new Set(flags)].join('')) };
  } catch (e) {
    const reason = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    return fail(reason.charAt(0).toLowerCase() + reason.slice(1));
  }
}
