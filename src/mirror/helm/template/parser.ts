/**
 * The parser of Go's text/template, over the lexer's tokens: one tree for the text and one per
 * `define` (and `block`). It checks what Go checks while parsing: functions must exist, variables
 * must be declared before use (and go out of scope at the `end` of their if/range/with),
 * `break`/`continue` only inside `range`, `else if` and `else with` chains share one `end`.
 */
import { isEmptyTree } from './ast.js';
import type {
  ArgNode,
  BranchNode,
  CommandNode,
  ListNode,
  Node,
  PipeNode,
  TemplateNode,
  Tree,
  VariableNode,
} from './ast.js';
import { parseError } from './errors.js';
import { lex, type LexOptions, type Token, type TokenType } from './lexer.js';
import { parseNumber, unquoteChar, unquoteString } from './literals.js';

/** What a parse gives: the file's own tree and the trees it defines. */
export interface ParseResult {
  main: Tree;
  defines: Tree[];
}

/** `{{end}}` and `{{else}}`: they end a list rather than being in it. */
interface Mark {
  type: 'end' | 'else';
  pos: number;
}

const isMark = (n: Node | Mark): n is Mark => n.type === 'end' || n.type === 'else';

const describe = (t: Token): string => {
  switch (t.type) {
    case 'eof':
      return 'EOF';
    case 'rightDelim':
      return '"}}"';
    case 'leftDelim':
      return '"{{"';
    case 'keyword':
      return `<${t.value}>`;
    default:
      return JSON.stringify(t.value);
  }
};

/** Parse one file of template text. `hasFunction` says which function names exist. */
export function parseTemplate(
  file: string,
  src: string,
  hasFunction: (name: string) => boolean,
  delims: Pick<LexOptions, 'left' | 'right'> = {},
): ParseResult {
  const tokens = lex(file, src, {
    ...delims,
    breakOK: !hasFunction('break'),
    continueOK: !hasFunction('continue'),
  });
  return new Parser(file, src, tokens, hasFunction).parseFile();
}

/**
 * How deep parenthesised pipelines and if/range/with/block bodies may nest, together. Go refuses
 * parentheses nested over 10000 (maxStackDepth) and does not limit blocks (its stack grows); here
 * both recurse on JavaScript's stack, which holds a few thousand levels, so the limit is lower:
 * a clear error rather than a stack overflow. Charts nest a dozen.
 */
const MAX_NESTING = 1000;

class Parser {
  private i = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private depth = 0;
  private readonly defines: Tree[] = [];

  constructor(
    private readonly file: string,
    private readonly src: string,
    private readonly tokens: Token[],
    private readonly hasFunction: (name: string) => boolean,
  ) {}

  private fail(pos: number, what: string): never {
    throw parseError(this.file, this.src, pos, what);
  }

  private next(): Token {
    return this.tokens[Math.min(this.i++, this.tokens.length - 1)]!;
  }
  private peek(): Token {
    return this.tokens[Math.min(this.i, this.tokens.length - 1)]!;
  }
  private backup(n = 1): void {
    this.i -= n;
  }
  private nextNonSpace(): Token {
    let t = this.next();
    while (t.type === 'space') t = this.next();
    return t;
  }
  private peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }
  private expect(type: TokenType, context: string): Token {
    const t = this.nextNonSpace();
    if (t.type !== type) this.unexpected(t, context);
    return t;
  }
  private unexpected(t: Token, context: string): never {
    this.fail(t.pos, `unexpected ${describe(t)} in ${context}`);
  }

  parseFile(): ParseResult {
    const root: ListNode = { type: 'list', pos: 0, nodes: [] };
    while (this.peek().type !== 'eof') {
      if (this.peek().type === 'leftDelim') {
        const at = this.i;
        this.next();
        const t = this.nextNonSpace();
        if (t.type === 'keyword' && t.value === 'define') {
          this.parseDefinition('define');
          continue;
        }
        this.i = at;
      }
      const n = this.textOrAction();
      if (isMark(n)) this.fail(n.pos, `unexpected {{${n.type}}}`);
      else root.nodes.push(n);
    }
    return {
      main: { name: this.file, file: this.file, source: this.src, root },
      defines: this.defines,
    };
  }

  /** `{{define "name"}} … {{end}}` (the `define` already read), or a block's body. */
  private parseDefinition(context: string): string {
    const nameTok = this.nextNonSpace();
    const name = this.templateName(nameTok, context);
    this.expect('rightDelim', context);
    const saved = this.vars;
    this.vars = ['$'];
    const [list, end] = this.itemList();
    this.vars = saved;
    if (end.type !== 'end') this.fail(end.pos, `unexpected {{${end.type}}} in ${context}`);
    this.add({ name, file: this.file, source: this.src, root: list }, end.pos);
    return name;
  }

  /** A definition, unless the file defined the name already: an empty one gives way, two are an error. */
  private add(tree: Tree, pos: number): void {
    const i = this.defines.findIndex((d) => d.name === tree.name);
    const old = this.defines[i];
    if (!old) this.defines.push(tree);
    else if (isEmptyTree(old.root)) this.defines[i] = tree;
    else if (!isEmptyTree(tree.root))
      this.fail(pos, `template: multiple definition of template "${tree.name}"`);
  }

  private templateName(t: Token, context: string): string {
    if (t.type === 'string' || t.type === 'rawString') return this.unquote(t);
    this.unexpected(t, context);
  }

  /** Nodes up to `{{end}}` or `{{else}}`, which is returned as the second element. */
  private itemList(): [ListNode, Mark] {
    const list: ListNode = { type: 'list', pos: this.peek().pos, nodes: [] };
    while (this.peekNonSpace().type !== 'eof') {
      const n = this.textOrAction();
      if (isMark(n)) return [list, n];
      list.nodes.push(n);
    }
    this.fail(this.src.length, 'unexpected EOF');
  }

  private textOrAction(): Node | Mark {
    const t = this.nextNonSpace();
    if (t.type === 'text') return { type: 'text', pos: t.pos, text: t.value };
    if (t.type === 'leftDelim') return this.action();
    this.unexpected(t, 'input');
  }

  private action(): Node | Mark {
    const t = this.nextNonSpace();
    if (t.type === 'keyword') {
      switch (t.value) {
        case 'block':
          return this.blockControl(t);
        case 'break':
        case 'continue':
          if (this.rangeDepth === 0) this.fail(t.pos, `{{${t.value}}} outside {{range}}`);
          this.expect('rightDelim', t.value);
          return { type: t.value, pos: t.pos };
        case 'else':
          return this.elseControl(t);
        case 'end':
          this.expect('rightDelim', 'end');
          return { type: 'end', pos: t.pos };
        case 'if':
        case 'range':
        case 'with':
          return this.branch(t.value, t.pos);
        case 'template':
          return this.templateControl(t);
        case 'define':
          this.fail(t.pos, 'unexpected <define> in command');
      }
    }
    this.backup();
    const pipe = this.pipeline('command', 'rightDelim');
    return { type: 'action', pos: t.pos, pipe };
  }

  /** One level deeper (the caller comes back up), unless that is over {@link MAX_NESTING}. */
  private nest(pos: number, what: string): void {
    if (this.depth >= MAX_NESTING) this.fail(pos, what);
    this.depth++;
  }

  private elseControl(t: Token): { type: 'else'; pos: number } {
    const p = this.peekNonSpace();
    // `else if` and `else with` are handled by the enclosing branch; leave the keyword for it.
    if (p.type === 'keyword' && (p.value === 'if' || p.value === 'with')) return { type: 'else', pos: t.pos };
    this.expect('rightDelim', 'else');
    return { type: 'else', pos: t.pos };
  }

  private branch(kind: 'if' | 'range' | 'with', pos: number): BranchNode {
    this.nest(pos, `{{${kind}}} nested over ${MAX_NESTING} deep (with parentheses and blocks)`);
    const mark = this.vars.length;
    const pipe = this.pipeline(kind, 'rightDelim');
    if (kind === 'range') this.rangeDepth++;
    const [list, next] = this.itemList();
    if (kind === 'range') this.rangeDepth--;
    let elseList: ListNode | undefined;
    if (next.type === 'else') {
      const p = this.peekNonSpace();
      if ((kind === 'if' || kind === 'with') && p.type === 'keyword' && p.value === kind) {
        // `{{else if …}}`: an if inside the else list, sharing this branch's {{end}}.
        this.nextNonSpace();
        elseList = { type: 'list', pos: next.pos, nodes: [this.branch(kind, p.pos)] };
      } else {
        if (p.type === 'keyword' && (p.value === 'if' || p.value === 'with'))
          this.fail(p.pos, `unexpected <${p.value}> in else`);
        const [l, end] = this.itemList();
        if (end.type !== 'end') this.fail(end.pos, `expected end; found {{else}}`);
        elseList = l;
      }
    }
    this.vars.length = mark;
    this.depth--;
    return { type: kind, pos, pipe, list, ...(elseList ? { elseList } : {}) };
  }

  private templateControl(t: Token): TemplateNode {
    const name = this.templateName(this.nextNonSpace(), 'template clause');
    if (this.peekNonSpace().type === 'rightDelim') {
      this.nextNonSpace();
      return { type: 'template', pos: t.pos, name };
    }
    return { type: 'template', pos: t.pos, name, pipe: this.pipeline('template clause', 'rightDelim') };
  }

  /** `{{block "name" pipeline}} body {{end}}`: define the body, then call it. */
  private blockControl(t: Token): TemplateNode {
    const name = this.templateName(this.nextNonSpace(), 'block clause');
    const pipe = this.pipeline('block clause', 'rightDelim');
    this.nest(t.pos, `{{block}} nested over ${MAX_NESTING} deep (with parentheses and blocks)`);
    const [saved, savedRange] = [this.vars, this.rangeDepth];
    // The body is a template of its own: its variables and loops are not the caller's.
    [this.vars, this.rangeDepth] = [['$'], 0];
    const [list, end] = this.itemList();
    [this.vars, this.rangeDepth] = [saved, savedRange];
    this.depth--;
    if (end.type !== 'end') this.fail(end.pos, 'unexpected {{else}} in block clause');
    this.add({ name, file: this.file, source: this.src, root: list }, end.pos);
    return { type: 'template', pos: t.pos, name, pipe };
  }

  /** A pipeline up to `end` (the right delimiter or a right paren), with its declarations. */
  private pipeline(context: string, end: 'rightDelim' | 'rightParen'): PipeNode {
    const start = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: start.pos, isAssign: false, decl: [], cmds: [] };
    this.declarations(pipe, context);
    for (;;) {
      const t = this.nextNonSpace();
      if (t.type === end) {
        if (pipe.cmds.length === 0) this.fail(t.pos, `missing value for ${context}`);
        pipe.cmds.forEach((c, i) => {
          const first = c.args[0]!;
          if (i > 0 && (first.type === 'literal' || first.type === 'dot' || first.type === 'nil'))
            this.fail(first.pos, `non executable command in pipeline stage ${i + 1}`);
        });
        return pipe;
      }
      switch (t.type) {
        case 'bool':
        case 'char':
        case 'dot':
        case 'field':
        case 'identifier':
        case 'number':
        case 'nil':
        case 'rawString':
        case 'string':
        case 'variable':
        case 'leftParen':
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  /**
   * `$x :=`, `$x =`, and in range `$i, $v :=`. As in Go, a variable assigned to (`$x = …`) is not
   * looked up here: an undeclared one is an error when the assignment runs.
   */
  private declarations(pipe: PipeNode, context: string): void {
    for (;;) {
      const save = this.i;
      const v = this.nextNonSpace();
      const next = v.type === 'variable' ? this.peekNonSpace() : v;
      if (next.type === 'declare' || next.type === 'assign') {
        this.nextNonSpace();
        pipe.isAssign = next.type === 'assign';
        pipe.decl.push(this.declare(v));
        return;
      }
      if (v.type !== 'variable' || next.type !== 'comma') {
        this.i = save;
        return;
      }
      this.nextNonSpace();
      pipe.decl.push(this.declare(v));
      if (context === 'range' && pipe.decl.length < 2) {
        const after = this.peekNonSpace();
        if (after.type === 'variable' || after.type === 'rightDelim' || after.type === 'rightParen') continue;
        this.fail(after.pos, 'range can only initialize variables');
      }
      this.fail(next.pos, `too many declarations in ${context}`);
    }
  }

  private declare(v: Token): VariableNode {
    this.vars.push(v.value);
    return { type: 'variable', pos: v.pos, ident: [v.value] };
  }

  private useVar(v: Token): void {
    if (!this.vars.includes(v.value)) this.fail(v.pos, `undefined variable "${v.value}"`);
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      if (t.type === 'space') continue;
      if (t.type === 'rightDelim' || t.type === 'rightParen') this.backup();
      else if (t.type !== 'pipe') this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.fail(cmd.pos, 'empty command');
    return cmd;
  }

  private operand(): ArgNode | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().type !== 'field') return node;
    const fields: string[] = [];
    while (this.peek().type === 'field') fields.push(this.next().value.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', pos: node.pos, ident: [...node.ident, ...fields] };
      case 'variable':
        return { type: 'variable', pos: node.pos, ident: [...node.ident, ...fields] };
      case 'literal':
      case 'nil':
      case 'dot':
        return this.fail(
          node.pos,
          `unexpected . after term "${node.type === 'dot' ? '.' : node.type === 'nil' ? 'nil' : node.text}"`,
        );
      default:
        return { type: 'chain', pos: node.pos, node, field: fields };
    }
  }

  private term(): ArgNode | undefined {
    const t = this.nextNonSpace();
    switch (t.type) {
      case 'identifier':
        if (!this.hasFunction(t.value)) this.fail(t.pos, `function "${t.value}" not defined`);
        return { type: 'identifier', pos: t.pos, name: t.value };
      case 'dot':
        return { type: 'dot', pos: t.pos };
      case 'nil':
        return { type: 'nil', pos: t.pos };
      case 'variable':
        this.useVar(t);
        return { type: 'variable', pos: t.pos, ident: [t.value] };
      case 'field':
        return { type: 'field', pos: t.pos, ident: [t.value.slice(1)] };
      case 'bool':
        return { type: 'literal', pos: t.pos, value: t.value === 'true', text: t.value };
      case 'char':
      case 'number':
        return { type: 'literal', pos: t.pos, value: this.number(t), text: t.value };
      case 'string':
      case 'rawString':
        return { type: 'literal', pos: t.pos, value: this.unquote(t), text: t.value };
      case 'leftParen': {
        this.nest(t.pos, 'max expression depth exceeded');
        const pipe = this.pipeline('parenthesized pipeline', 'rightParen');
        this.depth--;
        return pipe;
      }
      default:
        this.backup();
        return undefined;
    }
  }

  /** A number or character constant (see {@link parseNumber}). */
  private number(t: Token): bigint | number {
    if (t.type === 'char')
      return unquoteChar(t.value) ?? this.fail(t.pos, `malformed character constant: ${t.value}`);
    if (/i$/.test(t.value) && !/^[+-]?0[xX]/.test(t.value))
      this.fail(t.pos, `complex numbers are not supported: ${t.value}`);
    return parseNumber(t.value) ?? this.fail(t.pos, `illegal number syntax: "${t.value}"`);
  }

  private unquote(t: Token): string {
    if (t.type === 'rawString') return t.value.slice(1, -1).replace(/\r/g, '');
    return unquoteString(t.value) ?? this.fail(t.pos, `invalid syntax: ${t.value}`);
  }
}
