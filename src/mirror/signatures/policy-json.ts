/**
 * containers-policy.json's JSON, read with places: a syntax error at `file:line:column` (V8 gives an
 * offset for most errors but not for an unexpected token, so that offset is found by a small RFC 8259
 * scan), duplicate keys refused as containers/image refuses them, and every field's position (JSON is
 * YAML, and the config kit maps YAML field paths to their places) for the policy's own messages.
 */
import { loadYamlWithPositions, type PositionMap } from '../../config/positions.js';
import { messageOf, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

const INVALID = MirrorError.SIGNATURE_POLICY_INVALID;
const HINT =
  'containers-policy.json(5) is strict JSON: keys and strings in double quotes, no trailing commas, no comments';

/** JSON.parse, with a syntax error reported at `file:line:column`. */
export function parseStrictJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    // V8 names the offset for most errors ("… in JSON at position 13"), not for an unexpected token.
    const m = / in JSON at position (\d+)/.exec(message);
    const { line, column } = lineColumn(text, m ? Number(m[1]) : jsonErrorOffset(text));
    const what = message
      .replace(/ in JSON at position \d+[\s\S]*$/, '')
      .replace(/^(Unexpected token .+?), (?:"|\.\.\.")[\s\S]* is not valid JSON$/, '$1');
    throw usageError(INVALID, `the policy is not valid JSON: ${what}`, {
      where: `${file}:${line}:${column}`,
      hint: HINT,
      details: { file, line, column },
    });
  }
}

/** 1-based line and column of a string offset. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/**
 * The offset of the first character that makes `text` invalid JSON (RFC 8259), for the errors
 * V8 reports without a position. Only called on text JSON.parse refused.
 */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (ch: string) => {
    if (text[i] !== ch) throw i;
    i++;
  };
  const str = () => {
    expect('"');
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) throw i;
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) throw i;
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) throw i;
      }
      i++;
    }
    expect('"');
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      i++;
      ws();
      const close = c === '{' ? '}' : ']';
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === '{') {
          ws();
          str();
          ws();
          expect(':');
        }
        value();
        ws();
        if (text[i] === ',') i++;
        else return expect(close);
      }
    }
    if (c === '"') return str();
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = i;
    if (num.test(text)) return void (i = num.lastIndex);
    for (const lit of ['true', 'false', 'null']) {
      if (c !== lit[0]) continue;
      for (const ch of lit) expect(ch);
      return;
    }
    throw i;
  };
  try {
    value();
    ws();
    return i;
  } catch (at) {
    return typeof at === 'number' ? at : 0;
  }
}

/**
 * Every field's position (JSON is YAML, and the config kit maps YAML paths to places). A duplicate
 * key is an error, as containers/image refuses one; anything else YAML dislikes only costs positions.
 */
export function jsonPositions(text: string, file: string): PositionMap {
  try {
    // Positions only: JSON.parse read the file; one YAML will not load has none (nor any alias).
    return loadYamlWithPositions(text, { source: file, exitCode: 2 }).positions;
  } catch (e) {
    const mark = (e as { mark?: { line: number; column: number; position: number } }).mark;
    if (!mark || !/duplicated mapping key/.test(messageOf(e))) return new Map();
    // js-yaml marks a quoted key at its first character, after the quote.
    const at = text[mark.position - 1] === '"' ? mark.position - 1 : mark.position;
    const key = /"((?:[^"\\]|\\.)*)"/y;
    key.lastIndex = at;
    const name = key.exec(text)?.[1];
    throw usageError(
      INVALID,
      `the policy has the key ${name === undefined ? '' : `"${name}" `}twice in one object`,
      {
        where: `${file}:${mark.line + 1}:${mark.column + 1 - (mark.position - at)}`,
        hint: 'keep one of them: containers/image refuses duplicate keys',
      },
    );
  }
}
