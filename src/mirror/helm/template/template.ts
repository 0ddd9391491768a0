/**
 * A set of templates sharing one function map, as Go's template.Template with its associated
 * templates: every file parsed into it adds its own tree and the trees it defines; a later
 * definition of a name replaces an earlier one, unless it is empty (Go keeps the non-empty one).
 * A set has one {@link Budget} for everything executed through it (a chart's render), shared with
 * the sets tpl makes.
 */
import { isEmptyTree, type Tree } from './ast.js';
import { Budget, type Call } from './budget.js';
import { goBuiltins } from './builtins.js';
import { executeTemplate, type ExecEnv, type FuncDef } from './exec.js';
import { parseTemplate } from './parser.js';
import { sprigFunctions } from './sprig.js';

/** Go's builtins, then sprig's (sprig's win, as Go prefers a template's own functions). */
function standardFunctions(): Map<string, FuncDef> {
  return new Map([...goBuiltins, ...sprigFunctions()]);
}

export class TemplateSet implements ExecEnv {
  private readonly trees = new Map<string, Tree>();
  private delimiters: { left: string; right: string } = { left: '', right: '' };
  readonly budget: Budget;

  constructor(
    private readonly funcs: Map<string, FuncDef> = standardFunctions(),
    /** A set whose templates this one sees too (tpl's own set sees the chart's). */
    private readonly parent?: TemplateSet,
  ) {
    this.budget = parent ? parent.budget : new Budget();
  }

  /** Add or replace functions (before parsing: the parser checks names). */
  addFunctions(funcs: Iterable<[string, FuncDef]>): this {
    for (const [k, v] of funcs) this.funcs.set(k, v);
    return this;
  }

  func(name: string): FuncDef | undefined {
    return this.funcs.get(name) ?? this.parent?.func(name);
  }

  lookup(name: string): Tree | undefined {
    return this.trees.get(name) ?? this.parent?.lookup(name);
  }

  /** Go's Delims: the action delimiters of the texts parsed from now on (empty: `{{` and `}}`). */
  delims(left: string, right: string): this {
    this.delimiters = { left, right };
    return this;
  }

  /** Parse `text` as the template `name` (its file too), adding what it defines. */
  parse(name: string, text: string): this {
    const { main, defines } = parseTemplate(name, text, (n) => this.func(n) !== undefined, this.delimiters);
    for (const t of [main, ...defines]) {
      const old = this.trees.get(t.name);
      if (old && isEmptyTree(t.root) && !isEmptyTree(old.root)) continue;
      this.trees.set(t.name, t);
    }
    return this;
  }

  /** A set that sees this one's templates and functions and adds its own. */
  child(): TemplateSet {
    return new TemplateSet(new Map(), this);
  }

  /**
   * Execute the template `name` with `data` as dot; its output (with Go's "<no value>" left in).
   * `call`: how it is called (include, tpl), as the budget counts nesting.
   */
  execute(name: string, data: unknown, call?: Call): string {
    return executeTemplate(this, name, data, call);
  }
}
