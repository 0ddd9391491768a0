/**
 * The layout go-yaml's emitter (libyaml's, as go-yaml v2 and v3 carry it) gives a YAML tree, so
 * that toYaml and toYamlPretty write what Helm writes, character for character.
 *
 * Our own writer, not js-yaml's dump: no combination of dump's options (quoteStyle, forceQuotes,
 * lineWidth, seqNoIndent, sortKeys, scalarStyleRules) gives this layout. go-yaml folds a long
 * plain or quoted string at the first space past column 80 (js-yaml folds before the width, and
 * only into `>` blocks); it single-quotes a string only when plain text cannot hold it and
 * double-quotes one that would read back as another type; it escapes in double quotes what is
 * outside its printable set (a tab, an emoji: `\t`, `\U0001F600`); it writes a key over 128 bytes
 * or with a newline as `? key`; its literal blocks take `|2` when the text starts with a space.
 *
 * Rules, as libyaml's emitter has them:
 * - Block mappings and sequences, two spaces a level; v2 writes a list under a key without
 *   indenting it (`key:\n- a`), v3 with its indent of 2 indents it (`key:\n  - a`). Empty ones
 *   are `{}` and `[]`.
 * - A scalar's style is asked by the encoder (plain, double-quoted, literal) and then checked
 *   against the text: plain falls back to single quotes (`'…'`, `'` doubled), single quotes to
 *   double quotes, a literal block to double quotes.
 * - Width 80 for v2 (v3: no folding); the column counts code points.
 */

/** A node as the encoder hands it over (go-yaml-encode.ts). */
export type YamlNode =
  | { kind: 'scalar'; value: string; style: 'plain' | 'double' | 'literal' }
  | { kind: 'map'; entries: [YamlNode, YamlNode][] }
  | { kind: 'seq'; items: YamlNode[] };

export interface EmitterOptions {
  /** Fold long scalars past this column (v2: 80); Infinity for none (v3). */
  width: number;
  /** v2: a block sequence that is a mapping's value is not indented under its key. */
  indentlessSequences: boolean;
  /** v3: a tab only rules out plain and single-quoted text; v2 treats it as unprintable. */
  tabsPrintable: boolean;
}

const BEST_INDENT = 2;
/** libyaml's longest simple key, in bytes; a longer one is written `? key`. */
const MAX_SIMPLE_KEY = 128;

/** A line break as libyaml knows them (the emitter writes \\n as \\n and the others as they are). */
const BREAKS = /[\n\r\u0085\u2028\u2029]/;
const isBreak = (c: string | undefined) =>
  c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';

/** libyaml's printable set (as its UTF-8 test has it): no C0/C1 controls but \n, no tab, no BOM, nothing past the BMP. */
function isPrintableCode(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}
const isPrintable = (c: string) => isPrintableCode(c.codePointAt(0)!);

/** What libyaml's analysis of a scalar allows (flow contexts never hold text here). */
interface Analysis {
  multiline: boolean;
  plain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

const FIRST_INDICATORS = new Set(Array.from('#,[]{}&*!|>\'"%@`', (c) => c.charCodeAt(0)));
const [SPACE, TAB, HASH, COLON, DASH, QUESTION] = [0x20, 0x09, 0x23, 0x3a, 0x2d, 0x3f];
const isBreakCode = (cp: number) =>
  cp === 0x0a || cp === 0x0d || cp === 0x85 || cp === 0x2028 || cp === 0x2029;

/** libyaml's yaml_emitter_analyze_scalar, over code points. */
function analyze(value: string, tabsPrintable: boolean): Analysis {
  if (value === '') return { multiline: false, plain: true, singleQuoted: true, block: false };
  let indicators = value.startsWith('---') || value.startsWith('...');
  let lineBreaks = false;
  let special = false;
  let tabs = false;
  let edges = false;
  let trailingSpace = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  const n = value.length;
  for (let i = 0; i < n;) {
    const cp = value.codePointAt(i)!;
    const next = i + (cp > 0xffff ? 2 : 1);
    const after = next < n ? value.charCodeAt(next) : -1;
    const followedByWhitespace = after === -1 || after === SPACE || after === TAB;
    if (i === 0) {
      if (FIRST_INDICATORS.has(cp)) indicators = true;
      else if ((cp === QUESTION || cp === COLON || cp === DASH) && followedByWhitespace) indicators = true;
    } else if ((cp === COLON && followedByWhitespace) || (cp === HASH && precededByWhitespace)) {
      indicators = true;
    }
    if (cp === TAB && tabsPrintable) tabs = true;
    else if (!isPrintableCode(cp)) special = true;
    const breaks = isBreakCode(cp);
    if (cp === SPACE || breaks) {
      if (i === 0 || next >= n) edges = true;
      if (cp === SPACE) trailingSpace ||= next >= n;
      lineBreaks ||= breaks;
      if (cp === SPACE) breakSpace ||= previousBreak;
      else spaceBreak ||= previousSpace;
    }
    previousSpace = cp === SPACE;
    previousBreak = breaks;
    precededByWhitespace = cp === SPACE || cp === TAB || breaks || cp === 0;
    i = next;
  }
  return {
    multiline: lineBreaks,
    plain: !(edges || breakSpace || spaceBreak || tabs || special || lineBreaks || indicators),
    singleQuoted: !(breakSpace || spaceBreak || tabs || special),
    block: !(trailingSpace || spaceBreak || special),
  };
}

/** The escapes libyaml writes in double quotes by name; the rest are \xXX, \uXXXX, \UXXXXXXXX. */
const ESCAPES: Record<string, string> = {
  '\0': '0',
  '\x07': 'a',
  '\b': 'b',
  '\t': 't',
  '\n': 'n',
  '\v': 'v',
  '\f': 'f',
  '\r': 'r',
  '\x1b': 'e',
  '"': '"',
  '\\': '\\',
  '\u0085': 'N',
  '\u00a0': '_',
  '\u2028': 'L',
  '\u2029': 'P',
};

function escape(c: string): string {
  const named = ESCAPES[c];
  if (named) return `\\${named}`;
  const cp = c.codePointAt(0)!;
  const [letter, width] = cp <= 0xff ? ['x', 2] : cp <= 0xffff ? ['u', 4] : ['U', 8];
  return `\\${letter}${cp.toString(16).toUpperCase().padStart(width, '0')}`;
}

/** libyaml's emitter state while it writes one document. */
class Emitter {
  private out = '';
  private column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;

  constructor(private readonly o: EmitterOptions) {}

  document(root: YamlNode): string {
    this.node(root, false, false);
    this.writeIndent();
    return this.out;
  }

  private put(s: string): void {
    this.out += s;
    this.column++;
  }

  /** Text with no line breaks, at once. */
  private putText(s: string): void {
    this.out += s;
    this.column += /[\uD800-\uDBFF]/.test(s) ? Array.from(s).length : s.length;
  }

  private putBreak(): void {
    this.out += '\n';
    this.column = 0;
  }

  private writeBreak(c: string): void {
    if (c === '\n') this.putBreak();
    else {
      this.out += c;
      this.column = 0;
    }
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace))
      this.putBreak();
    if (this.column < indent) {
      this.out += ' '.repeat(indent - this.column);
      this.column = indent;
    }
    this.whitespace = true;
    this.indention = true;
  }

  private indicator(
    text: string,
    needWhitespace: boolean,
    isWhitespace: boolean,
    isIndention: boolean,
  ): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const c of text) this.put(c);
    this.whitespace = isWhitespace;
    this.indention &&= isIndention;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private restoreIndent(): void {
    this.indent = this.indents.pop()!;
  }

  private node(n: YamlNode, mapping: boolean, simpleKey: boolean, analysis?: Analysis): void {
    if (n.kind === 'scalar') this.scalar(n.value, n.style, simpleKey, analysis);
    else if (n.kind === 'seq' ? n.items.length === 0 : n.entries.length === 0) {
      this.indicator(n.kind === 'seq' ? '[' : '{', true, true, false);
      this.indicator(n.kind === 'seq' ? ']' : '}', false, false, false);
    } else if (n.kind === 'seq') this.sequence(n.items, mapping);
    else this.mapping(n.entries);
  }

  private sequence(items: YamlNode[], mapping: boolean): void {
    this.increaseIndent(false, this.o.indentlessSequences && mapping && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.indicator('-', true, false, true);
      this.node(item, false, false);
    }
    this.restoreIndent();
  }

  private mapping(entries: [YamlNode, YamlNode][]): void {
    this.increaseIndent(false, false);
    for (const [key, value] of entries) {
      this.writeIndent();
      const analysis = key.kind === 'scalar' ? analyze(key.value, this.o.tabsPrintable) : undefined;
      if (this.isSimpleKey(key, analysis)) {
        this.node(key, true, true, analysis);
        this.indicator(':', false, false, false);
      } else {
        this.indicator('?', true, false, true);
        this.node(key, true, false, analysis);
        this.writeIndent();
        this.indicator(':', true, false, true);
      }
      this.node(value, true, false);
    }
    this.restoreIndent();
  }

  private isSimpleKey(key: YamlNode, analysis: Analysis | undefined): boolean {
    if (key.kind === 'seq') return key.items.length === 0;
    if (key.kind === 'map') return key.entries.length === 0;
    return !analysis!.multiline && Buffer.byteLength(key.value) <= MAX_SIMPLE_KEY;
  }

  private scalar(
    value: string,
    asked: 'plain' | 'double' | 'literal',
    simpleKey: boolean,
    analysis?: Analysis,
  ): void {
    const a = analysis ?? analyze(value, this.o.tabsPrintable);
    let style: 'plain' | 'single' | 'double' | 'literal' = simpleKey && a.multiline ? 'double' : asked;
    if (style === 'plain' && (!a.plain || (value === '' && simpleKey))) style = 'single';
    if (style === 'single' && !a.singleQuoted) style = 'double';
    if (style === 'literal' && (!a.block || simpleKey)) style = 'double';
    this.increaseIndent(true, false);
    if (style === 'plain') this.plain(value, !simpleKey);
    else if (style === 'single') this.singleQuoted(value, !simpleKey);
    else if (style === 'double') this.doubleQuoted(Array.from(value), !simpleKey);
    else this.literal(value);
    this.restoreIndent();
  }

  /** A space that may become a line break: past the width, the first of its run. */
  private folds(allowBreaks: boolean, spaces: boolean): boolean {
    return allowBreaks && !spaces && this.column > this.o.width;
  }

  /** Whether a scalar without line breaks ends before the width, so no space in it can fold. */
  private fits(text: string, allowBreaks: boolean): boolean {
    return (!allowBreaks || this.column + text.length <= this.o.width) && !BREAKS.test(text);
  }

  private plain(value: string, allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    if (this.fits(value, allowBreaks)) this.putText(value);
    else this.text(Array.from(value), allowBreaks, false);
    this.whitespace = false;
    this.indention = false;
  }

  private singleQuoted(value: string, allowBreaks: boolean): void {
    this.indicator("'", true, false, false);
    // A doubled quote takes its column too.
    const doubled = value.replaceAll("'", "''");
    if (this.fits(doubled, allowBreaks)) this.putText(doubled);
    else this.text(Array.from(value), allowBreaks, true);
    this.indicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  /** The body of a plain or single-quoted scalar: folded at spaces, breaks kept as line breaks. */
  private text(cs: string[], allowBreaks: boolean, quoted: boolean): void {
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!;
      if (c === ' ') {
        const inside = !quoted || (i > 0 && i < cs.length - 1);
        if (this.folds(allowBreaks, spaces) && inside && cs[i + 1] !== ' ') this.writeIndent();
        else this.put(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (quoted && c === "'") this.put("'");
        this.put(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
  }

  private doubleQuoted(cs: string[], allowBreaks: boolean): void {
    // libyaml's BOM test looks at the start of the text, so a text that starts with one is escaped throughout.
    const bom = cs[0] === '\ufeff';
    this.indicator('"', true, false, false);
    let spaces = false;
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!;
      if (bom || !isPrintable(c) || isBreak(c) || c === '"' || c === '\\') {
        for (const e of escape(c)) this.put(e);
        spaces = false;
      } else if (c === ' ') {
        if (this.folds(allowBreaks, spaces) && i > 0 && i < cs.length - 1) {
          this.writeIndent();
          if (cs[i + 1] === ' ') this.put('\\');
        } else this.put(c);
        spaces = true;
      } else {
        this.put(c);
        spaces = false;
      }
    }
    this.indicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private literal(value: string): void {
    // Line breaks are single UTF-16 units, so the ends can be looked at unit by unit.
    this.indicator('|', true, false, false);
    if (value[0] === ' ' || isBreak(value[0])) this.indicator(String(BEST_INDENT), false, false, false);
    const chomp = !isBreak(value.at(-1)) ? '-' : value.length === 1 || isBreak(value.at(-2)) ? '+' : '';
    if (chomp) this.indicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    // Line by line: each non-empty line indented, each break kept (\n written as \n, others as they are).
    const lines = value.split(/(\n|\r|\u0085|\u2028|\u2029)/);
    for (let k = 0; k < lines.length; k++) {
      const part = lines[k]!;
      if (k % 2 === 1) {
        this.writeBreak(part);
        this.indention = true;
      } else if (part !== '') {
        this.writeIndent();
        this.putText(part);
        this.indention = false;
      }
    }
  }
}

/** One YAML document as go-yaml writes it, ending with a newline (Helm trims that one). */
export function emitYaml(root: YamlNode, options: EmitterOptions): string {
  return new Emitter(options).document(root);
}
