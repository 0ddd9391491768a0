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

const isBreak = (c: string | undefined) =>
  c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';
const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

/** libyaml's printable set (as its UTF-8 test has it): no C0/C1 controls but \n, no tab, no BOM, nothing past the BMP. */
function isPrintable(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

/** What libyaml's analysis of a scalar allows (flow contexts never hold text here). */
interface Analysis {
  multiline: boolean;
  plain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

function analyze(value: string, tabsPrintable: boolean): Analysis {
  if (value === '') return { multiline: false, plain: true, singleQuoted: true, block: false };
  const cs = Array.from(value);
  let indicators = value.startsWith('---') || value.startsWith('...');
  let [lineBreaks, special, tabs] = [false, false, false];
  let [leadingSpace, leadingBreak, trailingSpace, trailingBreak] = [false, false, false, false];
  let [breakSpace, spaceBreak] = [false, false];
  let [precededByWhitespace, previousSpace, previousBreak] = [true, false, false];
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    const followedByWhitespace = i + 1 >= cs.length || isBlank(cs[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) indicators = true;
      else if ((c === '?' || c === ':' || c === '-') && followedByWhitespace) indicators = true;
    } else if ((c === ':' && followedByWhitespace) || (c === '#' && precededByWhitespace)) {
      indicators = true;
    }
    if (c === '\t' && tabsPrintable) tabs = true;
    else if (!isPrintable(c)) special = true;
    const last = i === cs.length - 1;
    if (c === ' ') {
      leadingSpace ||= i === 0;
      trailingSpace ||= last;
      breakSpace ||= previousBreak;
      [previousSpace, previousBreak] = [true, false];
    } else if (isBreak(c)) {
      lineBreaks = true;
      leadingBreak ||= i === 0;
      trailingBreak ||= last;
      spaceBreak ||= previousSpace;
      [previousSpace, previousBreak] = [false, true];
    } else {
      [previousSpace, previousBreak] = [false, false];
    }
    precededByWhitespace = isBlank(c) || isBreak(c) || c === '\0';
  }
  const edges = leadingSpace || leadingBreak || trailingSpace || trailingBreak;
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
  private readonly out: string[] = [];
  private column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;

  constructor(private readonly o: EmitterOptions) {}

  document(root: YamlNode): string {
    this.node(root, false, false);
    this.writeIndent();
    return this.out.join('');
  }

  private put(s: string): void {
    this.out.push(s);
    this.column++;
  }

  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }

  private writeBreak(c: string): void {
    if (c === '\n') this.putBreak();
    else {
      this.out.push(c);
      this.column = 0;
    }
  }

  private writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace))
      this.putBreak();
    while (this.column < indent) this.put(' ');
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

  private node(n: YamlNode, mapping: boolean, simpleKey: boolean): void {
    if (n.kind === 'scalar') this.scalar(n.value, n.style, simpleKey);
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
      if (this.isSimpleKey(key)) {
        this.node(key, true, true);
        this.indicator(':', false, false, false);
      } else {
        this.indicator('?', true, false, true);
        this.node(key, true, false);
        this.writeIndent();
        this.indicator(':', true, false, true);
      }
      this.node(value, true, false);
    }
    this.restoreIndent();
  }

  private isSimpleKey(key: YamlNode): boolean {
    if (key.kind === 'seq') return key.items.length === 0;
    if (key.kind === 'map') return key.entries.length === 0;
    const { multiline } = analyze(key.value, this.o.tabsPrintable);
    return !multiline && Buffer.byteLength(key.value) <= MAX_SIMPLE_KEY;
  }

  private scalar(value: string, asked: 'plain' | 'double' | 'literal', simpleKey: boolean): void {
    const a = analyze(value, this.o.tabsPrintable);
    let style: 'plain' | 'single' | 'double' | 'literal' = simpleKey && a.multiline ? 'double' : asked;
    if (style === 'plain' && (!a.plain || (value === '' && simpleKey))) style = 'single';
    if (style === 'single' && !a.singleQuoted) style = 'double';
    if (style === 'literal' && (!a.block || simpleKey)) style = 'double';
    this.increaseIndent(true, false);
    const cs = Array.from(value);
    if (style === 'plain') this.plain(cs, !simpleKey);
    else if (style === 'single') this.singleQuoted(cs, !simpleKey);
    else if (style === 'double') this.doubleQuoted(cs, !simpleKey);
    else this.literal(cs);
    this.restoreIndent();
  }

  /** A space that may become a line break: past the width, the first of its run. */
  private folds(allowBreaks: boolean, spaces: boolean): boolean {
    return allowBreaks && !spaces && this.column > this.o.width;
  }

  private plain(cs: string[], allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    this.text(cs, allowBreaks, false);
    this.whitespace = false;
    this.indention = false;
  }

  private singleQuoted(cs: string[], allowBreaks: boolean): void {
    this.indicator("'", true, false, false);
    this.text(cs, allowBreaks, true);
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

  private literal(cs: string[]): void {
    this.indicator('|', true, false, false);
    if (cs[0] === ' ' || isBreak(cs[0])) this.indicator(String(BEST_INDENT), false, false, false);
    const last = cs.length - 1;
    const chomp = !isBreak(cs[last]) ? '-' : last === 0 || isBreak(cs[last - 1]) ? '+' : '';
    if (chomp) this.indicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of cs) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

/** One YAML document as go-yaml writes it, ending with a newline (Helm trims that one). */
export function emitYaml(root: YamlNode, options: EmitterOptions): string {
  return new Emitter(options).document(root);
}
