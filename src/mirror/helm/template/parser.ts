/**
 * The parser of Go's text/template, over the lexer's tokens: one tree for the text and one per
 * `define` (and `block`). It checks what Go checks while parsing: functions must exist, variables
 * must be declared before use (and go out of scope at the `end` of their if/range/with),
 * `break`/`continue` only inside `range`, `else if` and `else with` chains share one `end`.
 */
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
import { lex, type Token, type TokenType } from './lexer.js';

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
): ParseResult {
  return new Parser(file, src, lex(file, src), hasFunction).parseFile();
}

class Parser {
  private i = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
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
    this.defines.push({ name, file: this.file, source: this.src, root: list });
    return name;
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

  private elseControl(t: Token): { type: 'else'; pos: number } {
    const p = this.peekNonSpace();
    // `else if` and `else with` are handled by the enclosing branch; leave the keyword for it.
    if (p.type === 'keyword' && (p.value === 'if' || p.value === 'with')) return { type: 'else', pos: t.pos };
    this.expect('rightDelim', 'else');
    return { type: 'else', pos: t.pos };
  }

  private branch(kind: 'if' | 'range' | 'with', pos: number): BranchNode {
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
    const saved = this.vars;
    this.vars = ['$'];
    const [list, end] = this.itemList();
    this.vars = saved;
    if (end.type !== 'end') this.fail(end.pos, 'unexpected {{else}} in block clause');
    this.defines.push({ name, file: this.file, source: this.src, root: list });
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

  /** `$x :=`, `$x =`, and in range `$i, $v :=`. */
  private declarations(pipe: PipeNode, context: string): void {
    const save = this.i;
    const v = this.nextNonSpace();
    if (v.type !== 'variable') {
      this.i = save;
      return;
    }
    const op = this.nextNonSpace();
    if (op.type === 'declare' || op.type === 'assign') {
      pipe.isAssign = op.type === 'assign';
      pipe.decl.push(this.declare(v, pipe.isAssign));
      return;
    }
    if (op.type === 'comma' && context === 'range') {
      const v2 = this.nextNonSpace();
      const op2 = this.nextNonSpace();
      if (v2.type !== 'variable' || (op2.type !== 'declare' && op2.type !== 'assign'))
        this.fail(v2.pos, 'range can only initialize variables');
      pipe.isAssign = op2.type === 'assign';
      pipe.decl.push(this.declare(v, pipe.isAssign), this.declare(v2, pipe.isAssign));
      return;
    }
    if (op.type === 'comma') this.fail(op.pos, `too many declarations in ${context}`);
    this.i = save;
  }

  private declare(v: Token, assign: boolean): VariableNode {
    if (assign) this.useVar(v);
    else this.vars.push(v.value);
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
      case 'leftParen':
        return this.pipeline('parenthesized pipeline', 'rightParen');
      default:
        this.backup();
        return undefined;
    }
  }

  /** A number as Go's idealConstant gives it: an int unless written with `.`, `e` or `p` (hex excepted). */
  private number(t: Token): bigint | number {
    if (t.type === 'char') {
      const s = this.unquoteChar(t);
      return BigInt(s.codePointAt(0)!);
    }
    const text = t.value.replace(/_/g, '');
    if (text.endsWith('i')) this.fail(t.pos, `complex numbers are not supported: ${t.value}`);
    const neg = text.startsWith('-');
    const body = text.replace(/^[+-]/, '');
    if (/^0[xX][0-9a-fA-F]+$/.test(body) || /^0[oO][0-7]+$/.test(body) || /^0[bB][01]+$/.test(body)) {
      const v = BigInt(body);
      return neg ? -v : v;
    }
    if (/^0[0-7]+$/.test(body)) {
      const v = BigInt(`0o${body.slice(1)}`);
      return neg ? -v : v;
    }
    if (/^[0-9]+$/.test(body)) {
      const v = BigInt(body);
      return neg ? -v : v;
    }
    const f = Number(text);
    if (Number.isNaN(f)) this.fail(t.pos, `illegal number syntax: "${t.value}"`);
    return f;
  }

  private unquoteChar(t: Token): string {
    const inner = t.value.slice(1, -1);
    const s = inner.startsWith('\\') ? this.unescape(inner, t) : inner;
    if (Array.from(s).length !== 1) this.fail(t.pos, `malformed character constant: ${t.value}`);
    return s;
  }

  private unquote(t: Token): string {
    if (t.type === 'rawString') return t.value.slice(1, -1).replace(/\r/g, '');
    return this.unescape(t.value.slice(1, -1), t);
  }

  /** Go's escapes in interpreted strings: \a \b \f \n \r \t \v \\ \" \' \xhh \ooo \uhhhh \Uhhhhhhhh. */
  private unescape(s: string, t: Token): string {
    let out = '';
    const bytes: number[] = [];
    const flush = () => {
      if (bytes.length) out += Buffer.from(bytes).toString('utf8');
      bytes.length = 0;
    };
    for (let i = 0; i < s.length; i++) {
      const c = s[i]!;
      if (c !== '\\') {
        flush();
        out += c;
        continue;
      }
      const e = s[++i];
      const simple: Record<string, string> = {
        a: '\x07',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
        v: '\v',
        '\\': '\\',
        '"': '"',
        "'": "'",
      };
      if (e !== undefined && simple[e] !== undefined) {
        flush();
        out += simple[e];
      } else if (e === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
        bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
        i += 2;
      } else if (e !== undefined && /^[0-7]{3}$/.test(s.slice(i, i + 3))) {
        bytes.push(parseInt(s.slice(i, i + 3), 8));
        i += 2;
      } else if ((e === 'u' || e === 'U') && /^[0-9a-fA-F]+$/.test(s.slice(i + 1, i + (e === 'u' ? 5 : 9)))) {
        const n = e === 'u' ? 4 : 8;
        flush();
        out += String.fromCodePoint(parseInt(s.slice(i + 1, i + 1 + n), 16));
        i += n;
      } else {
        this.fail(t.pos, `invalid syntax: ${t.value}`);
      }
    }
    flush();
    return out;
  }
}
