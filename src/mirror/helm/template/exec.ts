/**
 * Execution of parsed templates with Go's text/template semantics, as Helm runs them
 * (missingkey=zero): dot and `$`, variables scoped to their if/range/with, pipelines passing the
 * previous value as the last argument, lazy `and`/`or`, range over lists, maps (sorted keys) and
 * ints with break/continue, with/else, template calls (each with its own `$`). Errors are Go's:
 * `template: file:line:col: executing "name" at <node>: what`. Everything it does is paid for from
 * the set's {@link Budget} (budget.ts), which stops a chart that asks too much at the node where
 * it ran out.
 */
import type {
  ArgNode,
  BranchNode,
  CommandNode,
  LiteralNode,
  Node,
  PipeNode,
  TemplateNode,
  Tree,
} from './ast.js';
import { nodeString } from './ast.js';
import {
  BudgetExceeded,
  TemplateBudgetError,
  checkRange,
  tooLargeForMemory,
  type Budget,
  type Call,
} from './budget.js';
import { goBuiltins } from './builtins.js';
import { TemplateError, clip, clipMiddle, locate } from './errors.js';
import { formatValue } from './fmt.js';
import { convertArg, type GoParam } from './params.js';
import { GoStruct, isMap, isNil, isTrue, mapGet, mapOf, sortedKeys, typeOf } from './values.js';
import { MirrorError } from '../../errors.js';

/** A template function: arity checked as Go checks it (max Infinity for variadic functions). */
export interface FuncDef {
  min: number;
  max: number;
  fn: (...args: unknown[]) => unknown;
  /**
   * List items and map entries a call walks beyond reading its arguments (deepCopy, merge, uniq),
   * computed before it runs and paid for from the budget.
   */
  cost?: (...args: unknown[]) => number;
  /**
   * The Go parameter types, checked as Go checks them (the last one repeated when the function is
   * variadic). Without them, any value is passed.
   */
  params?: readonly GoParam[];
}

/** What execution needs from the template set. */
export interface ExecEnv {
  lookup(name: string): Tree | undefined;
  func(name: string): FuncDef | undefined;
  /** What executions of the set may spend (shared by every execution of the set and its tpl sets). */
  budget: Budget;
}

/** No final value: the command is the first of its pipeline. */
const NO_FINAL = Symbol('no final');
type Final = unknown;

type Signal = 'break' | 'continue' | undefined;

interface Variable {
  name: string;
  value: unknown;
}

/**
 * What a template writes, counted against the budget. Small writes are joined a thousand at a time,
 * so a million of them hold their text, not a million strings.
 */
class Output {
  private readonly chunks: string[] = [];
  private pieces: string[] = [];

  constructor(private readonly budget: Budget) {}

  write(s: string): void {
    this.budget.wrote(s.length);
    this.add(s);
  }

  /** A called template's output (counted when it was written). */
  append(o: Output): void {
    this.add(o.text());
  }

  private add(s: string): void {
    this.pieces.push(s);
    if (this.pieces.length >= 1024) {
      this.chunks.push(this.pieces.join(''));
      this.pieces = [];
    }
  }

  text(): string {
    return this.chunks.join('') + this.pieces.join('');
  }
}

/**
 * Run the template `name` with `data` as dot and `$`; its output. `call`: how it was called
 * (include, tpl), for the budget's nesting count.
 */
export function executeTemplate(
  env: ExecEnv,
  name: string,
  data: unknown,
  call: Call = { kind: 'execute', name },
): string {
  const tree = env.lookup(name);
  if (!tree) throw new Error(`template: no template "${name}" associated with template "gotpl"`);
  env.budget.enter(call);
  try {
    const s = new State(env, tree, name, [{ name: '$', value: data }]);
    s.walk(data, tree.root);
    return s.out.text();
  } finally {
    env.budget.leave();
  }
}

class State {
  readonly out: Output;
  private readonly budget: Budget;

  constructor(
    private readonly env: ExecEnv,
    private readonly tree: Tree,
    private readonly name: string,
    private readonly vars: Variable[],
  ) {
    this.budget = env.budget;
    this.out = new Output(env.budget);
  }

  private error(node: { pos: number } & ({ type: string } | object), what: string, failure?: string): never {
    const where = locate(this.tree.file, this.tree.source, node.pos);
    const at = clip(describeNode(node));
    throw new TemplateError(
      MirrorError.HELM_TEMPLATE_EXEC,
      `template: ${where}: executing "${this.name}" at <${at}>: ${clipMiddle(what)}`,
      where,
      failure,
    );
  }

  /** The budget ran out at `node`: say where, as `<file>:<line>`. */
  private stop(node: { pos: number }, why: string): never {
    const where = locate(this.tree.file, this.tree.source, node.pos).replace(/:\d+$/, '');
    throw new TemplateBudgetError(where, why);
  }

  walk(dot: unknown, node: Node): Signal {
    try {
      this.budget.step();
      return this.walkNode(dot, node);
    } catch (e) {
      if (e instanceof BudgetExceeded) this.stop(node, e.message);
      throw e;
    }
  }

  private walkNode(dot: unknown, node: Node): Signal {
    switch (node.type) {
      case 'list':
        for (const n of node.nodes) {
          const sig = this.walk(dot, n);
          if (sig) return sig;
        }
        return undefined;
      case 'text':
        this.out.write(node.text);
        return undefined;
      case 'action': {
        const v = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.out.write(printable(v));
        return undefined;
      }
      case 'if':
      case 'with':
        return this.walkIfOrWith(dot, node);
      case 'range':
        return this.walkRange(dot, node);
      case 'template':
        this.walkTemplate(dot, node);
        return undefined;
      case 'break':
      case 'continue':
        return node.type;
    }
  }

  private walkIfOrWith(dot: unknown, node: BranchNode): Signal {
    const mark = this.vars.length;
    try {
      const v = this.evalPipeline(dot, node.pipe);
      if (isTrue(v)) return this.walk(node.type === 'with' ? v : dot, node.list);
      if (node.elseList) return this.walk(dot, node.elseList);
      return undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkRange(dot: unknown, node: BranchNode): Signal {
    const mark = this.vars.length;
    try {
      const v = this.evalPipeline(dot, node.pipe);
      const afterDecl = this.vars.length;
      const decl = node.pipe.decl;
      let ran = false;
      const one = (index: unknown, elem: unknown): Signal => {
        ran = true;
        this.budget.step();
        if (decl.length > 0) {
          if (node.pipe.isAssign) {
            if (decl.length > 1) {
              this.setVar(decl[0]!, index);
              this.setVar(decl[1]!, elem);
            } else this.setVar(decl[0]!, elem);
          } else {
            this.vars[this.vars.length - 1]!.value = elem;
            if (decl.length > 1) this.vars[this.vars.length - 2]!.value = index;
          }
        }
        try {
          return this.walk(elem, node.list);
        } finally {
          this.vars.length = afterDecl;
        }
      };
      if (Array.isArray(v) || v instanceof Uint8Array) {
        const items: unknown[] = v instanceof Uint8Array ? Array.from(v, (b) => BigInt(b)) : v;
        for (let i = 0; i < items.length; i++) if (one(BigInt(i), items[i]) === 'break') break;
      } else if (mapOf(v)) {
        const m = mapOf(v)!;
        for (const k of sortedKeys(m)) if (one(k, m[k]) === 'break') break;
      } else if (typeof v === 'bigint') {
        if (decl.length > 1) this.error(node.pipe, `can't use ${v} to iterate over more than one variable`);
        checkRange(v);
        for (let i = 0n; i < v; i++) if (one(i, i) === 'break') break;
      } else if (!isNil(v)) {
        this.error(node.pipe, `range can't iterate over ${clip(formatValue(v))}`);
      }
      if (!ran && node.elseList) return this.walk(dot, node.elseList);
      return undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkTemplate(dot: unknown, node: TemplateNode): void {
    const tree = this.env.lookup(node.name);
    if (!tree) this.error(node, `template: no template "${node.name}" associated with template "gotpl"`);
    const newDot = node.pipe ? this.evalPipeline(dot, node.pipe) : undefined;
    this.budget.enter({ kind: 'template', name: node.name });
    try {
      const s = new State(this.env, tree, node.name, [{ name: '$', value: newDot }]);
      s.walk(newDot, tree.root);
      this.out.append(s.out);
    } finally {
      this.budget.leave();
    }
  }

  private setVar(v: { ident: string[]; pos: number }, value: unknown): void {
    const name = v.ident[0]!;
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    this.error(v, `undefined variable: ${name}`);
  }

  private varValue(v: { ident: string[]; pos: number }): unknown {
    const name = v.ident[0]!;
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.error(v, `undefined variable: ${name}`);
  }

  evalPipeline(dot: unknown, pipe: PipeNode): unknown {
    let value: Final = NO_FINAL;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // A nil interface dug out of its interface has no value (Go: reflect.ValueOf(nil)).
      if (value === null) value = undefined;
    }
    for (const d of pipe.decl) {
      if (pipe.isAssign) this.setVar(d, value);
      else this.vars.push({ name: d.ident[0]!, value });
    }
    return value;
  }

  private notAFunction(args: ArgNode[], final: Final): void {
    if (args.length > 1 || final !== NO_FINAL)
      this.error(args[0]!, `can't give argument to non-function ${nodeString(args[0]!)}`);
  }

  private evalCommand(dot: unknown, cmd: CommandNode, final: Final): unknown {
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldChain(dot, dot, first, first.ident, cmd.args, final, true);
      case 'chain': {
        const receiver = this.evalArg(dot, first.node);
        return this.evalFieldChain(dot, receiver, first, first.field, cmd.args, final, false);
      }
      case 'identifier':
        return this.evalFunction(dot, first.name, cmd, cmd.args.slice(1), final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable': {
        const value = this.varValue(first);
        if (first.ident.length === 1) {
          this.notAFunction(cmd.args, final);
          return value;
        }
        return this.evalFieldChain(dot, value, first, first.ident.slice(1), cmd.args, final, false);
      }
      default:
    }
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'dot':
        return dot;
      case 'nil':
        return this.error(first, 'nil is not a command');
      case 'literal':
        return this.literal(first);
    }
  }

  /** A literal's value: an int must fit Go's int (int64), as Go's idealConstant checks. */
  private literal(node: LiteralNode): unknown {
    const v = node.value;
    if (typeof v === 'bigint' && BigInt.asIntN(64, v) !== v) this.error(node, `${node.text} overflows int`);
    return v;
  }

  /** Go's builtin call: its first argument is a function value (never in Helm's values). */
  private evalCall(dot: unknown, node: CommandNode | ArgNode, args: ArgNode[], final: Final): unknown {
    const values = args.map((a) => this.evalArg(dot, a));
    if (final !== NO_FINAL) values.push(final);
    if (values.length === 0) this.error(node, 'wrong number of args for call: want at least 1 got 0');
    const [fn, ...rest] = values;
    const callee = args[0] ? nodeString(args[0]) : formatValue(final);
    try {
      if (isNil(fn)) throw new Error('call of nil');
      if (typeof fn !== 'function') throw new Error(`non-function ${callee} of type ${typeOf(fn)}`);
      this.budget.call(rest);
      return (fn as (...a: unknown[]) => unknown)(...rest);
    } catch (e) {
      return this.callFailed(node, 'call', e);
    }
  }

  /** An argument's value (a function name alone is a call without arguments). */
  private evalArg(dot: unknown, arg: ArgNode): unknown {
    switch (arg.type) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'literal':
        return this.literal(arg);
      case 'field':
        return this.evalFieldChain(dot, dot, arg, arg.ident, [arg], NO_FINAL, true);
      case 'variable': {
        const value = this.varValue(arg);
        return arg.ident.length === 1
          ? value
          : this.evalFieldChain(dot, value, arg, arg.ident.slice(1), [arg], NO_FINAL, false);
      }
      case 'pipe':
        return this.evalPipeline(dot, arg);
      case 'identifier':
        return this.evalFunction(dot, arg.name, arg, [], NO_FINAL);
      case 'chain': {
        const receiver = this.evalArg(dot, arg.node);
        return this.evalFieldChain(dot, receiver, arg, arg.field, [arg], NO_FINAL, false);
      }
    }
  }

  /**
   * `.a.b.c` on a receiver: every field but the last without arguments, the last with the
   * command's arguments (a method). `fromDot`: a nil dot is no value, as Go's invalid dot.
   */
  private evalFieldChain(
    dot: unknown,
    receiver: unknown,
    node: ArgNode,
    ident: string[],
    cmdArgs: ArgNode[],
    final: Final,
    fromDot: boolean,
  ): unknown {
    let r = fromDot && receiver === null ? undefined : receiver;
    for (let i = 0; i < ident.length; i++) {
      const last = i === ident.length - 1;
      r = this.evalField(dot, ident[i]!, node, last ? cmdArgs.slice(1) : [], last ? final : NO_FINAL, r);
    }
    return r;
  }

  private evalField(
    dot: unknown,
    name: string,
    node: ArgNode,
    args: ArgNode[],
    final: Final,
    receiver: unknown,
  ): unknown {
    if (receiver === undefined) return undefined;
    if (receiver === null) this.error(node, `nil pointer evaluating interface {}.${name}`);
    const hasArgs = args.length > 0 || final !== NO_FINAL;
    if (receiver instanceof GoStruct) {
      const method = receiver.methods[name];
      if (method) {
        const values = args.map((a) => this.evalArg(dot, a));
        if (final !== NO_FINAL) values.push(final);
        try {
          this.budget.call(values);
          const v = method(...values);
          this.budget.gave(name, v);
          return v;
        } catch (e) {
          return this.callFailed(node, name, e);
        }
      }
      if (Object.hasOwn(receiver.fields, name)) {
        if (hasArgs) this.error(node, `${name} has arguments but cannot be invoked as function`);
        return receiver.fields[name];
      }
      if (receiver.entries) {
        if (hasArgs) this.error(node, `${name} is not a method but has arguments`);
        return mapGet(receiver.entries, name);
      }
      this.error(node, `can't evaluate field ${name} in type ${receiver.typeName}`);
    }
    if (isMap(receiver)) {
      if (hasArgs) this.error(node, `${name} is not a method but has arguments`);
      return mapGet(receiver, name);
    }
    this.error(node, `can't evaluate field ${name} in type ${typeOf(receiver)}`);
  }

  private evalFunction(
    dot: unknown,
    name: string,
    node: CommandNode | ArgNode,
    args: ArgNode[],
    final: Final,
  ): unknown {
    const def = this.env.func(name);
    if (!def) this.error(node, `"${name}" is not a defined function`);
    const count = args.length + (final === NO_FINAL ? 0 : 1);
    if (name === 'call' && def === goBuiltins.get('call')) return this.evalCall(dot, node, args, final);
    if (name === 'and' || name === 'or') {
      if (count < 1) this.error(node, `wrong number of args for ${name}: want at least 1 got 0`);
      let v: unknown;
      for (const a of args) {
        v = this.evalArg(dot, a);
        if (isTrue(v) === (name === 'or')) return v;
      }
      return final === NO_FINAL ? v : final;
    }
    if (def.max === Infinity && count < def.min)
      this.error(node, `wrong number of args for ${name}: want at least ${def.min} got ${count}`);
    if (def.max !== Infinity && (count < def.min || count > def.max))
      this.error(
        node,
        `wrong number of args for ${name}: want ${def.min === def.max ? def.min : `${def.min} to ${def.max}`} got ${count}`,
      );
    const values = args.map((a) => this.evalArg(dot, a));
    if (final !== NO_FINAL) values.push(final);
    if (def.params) this.checkParams(def.params, node, args, values);
    try {
      this.budget.call(values, def.cost?.(...values));
      const v = def.fn(...values);
      this.budget.gave(name, v);
      return v;
    } catch (e) {
      return this.callFailed(node, name, e);
    }
  }

  /** Go's argument checks against declared parameter types; `values` converted in place. */
  private checkParams(
    params: readonly GoParam[],
    node: { pos: number },
    args: ArgNode[],
    values: unknown[],
  ): void {
    values.forEach((v, i) => {
      const arg = args[i];
      const literal = arg?.type === 'literal' ? arg : arg?.type === 'nil' ? 'nil' : undefined;
      const c = convertArg(params[Math.min(i, params.length - 1)] ?? 'any', v, literal);
      if (!c.ok) this.error(arg ?? node, c.why);
      values[i] = c.value;
    });
  }

  private callFailed(node: { pos: number }, name: string, e: unknown): never {
    if (e instanceof TemplateBudgetError) throw e;
    if (e instanceof BudgetExceeded) this.stop(node, e.message);
    if (e instanceof RangeError && /call stack/i.test(e.message)) throw e;
    if (e instanceof RangeError && /invalid (string|array) length|allocation failed/i.test(e.message))
      this.stop(node, tooLargeForMemory(name).message);
    const failure = (e as { failure?: unknown } | undefined)?.failure;
    const what = e instanceof Error ? e.message : String(e);
    this.error(node, `error calling ${name}: ${what}`, typeof failure === 'string' ? failure : undefined);
  }
}

function describeNode(node: object): string {
  const n = node as { type?: string };
  switch (n.type) {
    case 'if':
    case 'range':
    case 'with':
      return `{{${n.type} ${nodeString((node as BranchNode).pipe)}}}`;
    case 'template':
      return `{{template ${JSON.stringify((node as TemplateNode).name)}}}`;
    case undefined:
      return '';
    default:
      return nodeString(node as ArgNode | CommandNode);
  }
}

/** What an action writes: `<no value>` for no value (Helm removes it afterwards), else `%v`. */
function printable(v: unknown): string {
  return v === undefined || v === null ? '<no value>' : formatValue(v);
}
