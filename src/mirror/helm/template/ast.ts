/**
 * The parse tree of a template, shaped as Go's text/template/parse: lists of text and actions,
 * if/range/with with their else lists, template calls, and pipelines of commands whose arguments
 * are fields, variables, function names, literals, chains and parenthesised pipelines.
 */
import { goQuote } from './fmt.js';

export interface ListNode {
  type: 'list';
  pos: number;
  nodes: Node[];
}

export interface TextNode {
  type: 'text';
  pos: number;
  text: string;
}

export interface ActionNode {
  type: 'action';
  pos: number;
  pipe: PipeNode;
}

export interface BranchNode {
  type: 'if' | 'range' | 'with';
  pos: number;
  pipe: PipeNode;
  list: ListNode;
  elseList?: ListNode;
}

export interface TemplateNode {
  type: 'template';
  pos: number;
  name: string;
  pipe?: PipeNode;
}

export interface LoopControlNode {
  type: 'break' | 'continue';
  pos: number;
}

export type Node = ListNode | TextNode | ActionNode | BranchNode | TemplateNode | LoopControlNode;

export interface PipeNode {
  type: 'pipe';
  pos: number;
  /** `$x = …` rather than `$x := …`. */
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}

export interface CommandNode {
  type: 'command';
  pos: number;
  args: ArgNode[];
}

/** `.a.b`: the field names without dots. */
export interface FieldNode {
  type: 'field';
  pos: number;
  ident: string[];
}

/** `$x.a.b`: `$x` first, then the field names. */
export interface VariableNode {
  type: 'variable';
  pos: number;
  ident: string[];
}

/** A function name. */
export interface IdentifierNode {
  type: 'identifier';
  pos: number;
  name: string;
}

/** `(pipeline).a.b` and the like: a term followed by fields. */
export interface ChainNode {
  type: 'chain';
  pos: number;
  node: ArgNode;
  field: string[];
}

export interface DotNode {
  type: 'dot';
  pos: number;
}

export interface NilNode {
  type: 'nil';
  pos: number;
}

export interface LiteralNode {
  type: 'literal';
  pos: number;
  /** The value: a string, a boolean, a bigint (int) or a number (float64). */
  value: string | boolean | bigint | number;
  /** The text as written, for error messages. */
  text: string;
}

export type ArgNode =
  FieldNode | VariableNode | IdentifierNode | ChainNode | DotNode | NilNode | LiteralNode | PipeNode;

/** A parsed template: its root list, with the file and text it came from (for error positions). */
export interface Tree {
  name: string;
  /** The file the text was parsed from (a define's file, not its name). */
  file: string;
  source: string;
  root: ListNode;
}

/** Go's IsEmptyTree: nothing but spaces (comments and definitions are not kept in a tree). */
export function isEmptyTree(l: ListNode): boolean {
  return l.nodes.every((n) => n.type === 'text' && n.text.trim() === '');
}

/** A node as Go's String() writes it, for "executing … at <…>". */
export function nodeString(n: ArgNode | CommandNode): string {
  switch (n.type) {
    case 'field':
      return n.ident.map((i) => `.${i}`).join('');
    case 'variable':
      return n.ident.join('.');
    case 'identifier':
      return n.name;
    case 'chain': {
      const inner = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return inner + n.field.map((f) => `.${f}`).join('');
    }
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'literal':
      return n.text;
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'pipe': {
      const decl = n.decl.length
        ? `${n.decl.map((d) => nodeString(d)).join(', ')} ${n.isAssign ? '=' : ':='} `
        : '';
      return decl + n.cmds.map((c) => nodeString(c)).join(' | ');
    }
  }
}

/**
 * A list of nodes as Go's (*ListNode).String() writes it, text quoted (`%q`, as Go's own parse
 * tests print it): what a tree parsed to, for tests and debugging.
 */
export function listString(l: ListNode, quote: (s: string) => string): string {
  return l.nodes.map((n) => treeNodeString(n, quote)).join('');
}

function treeNodeString(n: Node, quote: (s: string) => string): string {
  switch (n.type) {
    case 'list':
      return listString(n, quote);
    case 'text':
      return quote(n.text);
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'if':
    case 'range':
    case 'with': {
      const elseList = n.elseList ? `{{else}}${listString(n.elseList, quote)}` : '';
      return `{{${n.type} ${nodeString(n.pipe)}}}${listString(n.list, quote)}${elseList}{{end}}`;
    }
    case 'template':
      return `{{template ${goQuote(n.name)}${n.pipe ? ` ${nodeString(n.pipe)}` : ''}}}`;
    case 'break':
    case 'continue':
      return `{{${n.type}}}`;
  }
}
