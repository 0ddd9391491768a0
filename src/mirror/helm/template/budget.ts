/**
 * What one render of a chart may spend. Charts come from repositories nobody here controls, and a
 * template is a program: `{{ range until 100000000 }}`, three nested ranges, a template that
 * includes itself or a `repeat` of a billion would otherwise hold the machine for minutes, take
 * gigabytes or end in a JavaScript error that names nothing. One {@link Budget} per template set
 * (per chart render) counts:
 *
 * - steps: every node executed, range iteration and function call, plus the data functions read
 *   and build (a step per list item or map entry, and per {@link CHARS_PER_STEP} characters), so a
 *   loop that copies a growing list pays for every copy. As nothing is kept without a step, the
 *   steps bound memory too (about 16 bytes a step, a map entry or int {@link OBJECT_STEPS});
 * - output: the text templates write;
 * - nesting: template calls (`template`, `include`, `tpl`) inside one another; a loop of them is
 *   named once (`include "a" → "b" → "a" recurses`).
 *
 * One list or string is limited too, checked before it is built: functions whose result grows
 * with an argument (`until`, `repeat`, `indent`, `randAlphaNum`, `append`, …) call
 * {@link checkItems} or {@link checkChars} first. Whatever runs out is a {@link BudgetExceeded};
 * the executor adds the template and line and makes it a {@link TemplateBudgetError}.
 */
import { AirgapError } from '../../../util/errors.js';
import { MirrorError } from '../../errors.js';
import { clip } from './errors.js';
import { GoStruct, isMap } from './values.js';

/**
 * The limits. No real chart comes near them: kube-prometheus-stack with its four subcharts (131
 * manifests, 650 KB) renders in about 60 thousand steps; a Kubernetes object is at most about
 * 1.5 MiB (etcd's request limit), so no string of 16 MiB belongs in one. The hostile charts of
 * test/mirror/helm/budget.test.ts stop within a second or so; the worst found (a dict grown a key
 * at a time, random strings of 10 MiB in a loop) within 4 s, and none needs over a 160 MB heap.
 */
export const LIMITS = {
  /** Nodes executed, range iterations and function calls, with what functions read and build. */
  steps: 10_000_000,
  /** Characters the templates of one chart write, includes counted where they are written. */
  output: 64 * 1024 * 1024,
  /** Template calls nested (Go allows 100000, Helm 1000 includes of a name; charts nest a dozen). */
  depth: 100,
  /** Items in one list a function builds (or a range over an int). */
  items: 1_000_000,
  /** Characters in one string a function builds or a value prints as. */
  chars: 16 * 1024 * 1024,
} as const;

/**
 * Reading or building this many characters costs a step: about the time of one (50 ns), and the
 * memory of a list item (16 bytes).
 */
const CHARS_PER_STEP = 16;
/** What a map entry or an int built costs: the memory of several list items (each is an object). */
export const OBJECT_STEPS = 4;

const STOPPED = 'the template engine stopped:';

/** The budget ran out: what was exceeded, without where (the executor knows the node). */
export class BudgetExceeded extends Error {}

/** A budget that ran out, with the template and line where it did. */
export class TemplateBudgetError extends AirgapError {
  constructor(
    /** `<file>:<line>` of the node that ran out. */
    readonly location: string,
    why: string,
  ) {
    super(MirrorError.HELM_TEMPLATE_BUDGET, `${location}: ${why}`, {
      exitCode: 2,
      hint: "no real chart needs this much: fix the chart's templates, or leave the chart out of mirror.helm",
    });
  }
}

/** Stop before a function builds a list of `n` items (`what`: the call, e.g. `until 100000000`). */
export function checkItems(what: string, n: number | bigint): void {
  if (n > LIMITS.items)
    throw new BudgetExceeded(
      `${STOPPED} ${what} would build a list of ${n} items, over the limit of ${LIMITS.items}`,
    );
}

/** Stop before a function builds a string of `n` characters. */
export function checkChars(what: string, n: number | bigint): void {
  if (n > LIMITS.chars)
    throw new BudgetExceeded(
      `${STOPPED} ${what} would build a string of ${n} characters, over the limit of ${LIMITS.chars}`,
    );
}

/** Stop before printing a list or map (%v, YAML, JSON) that would print as too long a string. */
export function checkPrinted(what: string, v: unknown): void {
  if (measure(v) > LIMITS.chars)
    throw new BudgetExceeded(`${STOPPED} ${what} would print over ${LIMITS.chars} characters`);
}

/** Stop before a range over an int runs more iterations than a list could hold. */
export function checkRange(n: bigint): void {
  if (n > LIMITS.items)
    throw new BudgetExceeded(`${STOPPED} range over ${n} items is over the limit of ${LIMITS.items} items`);
}

/** What JavaScript's own limit on a string or list says, when a function reached it first. */
export function tooLargeForMemory(what: string): BudgetExceeded {
  return new BudgetExceeded(`${STOPPED} ${what} would build a value larger than memory allows`);
}

/**
 * About how many characters `v` prints as (%v, YAML, JSON): its strings and keys, and a few for
 * every other value, counted until `cap` is passed. Shared values count each time they appear,
 * as they print.
 */
export function measure(v: unknown, cap: number = LIMITS.chars): number {
  let n = 0;
  const todo: unknown[] = [v];
  while (todo.length > 0 && n <= cap) {
    const x = todo.pop();
    if (typeof x === 'string') n += x.length;
    else if (Array.isArray(x)) {
      n += 2 + x.length;
      if (n <= cap) for (const y of x) todo.push(y);
    } else if (x instanceof Uint8Array) n += 4 * x.length;
    else if (isMap(x) || x instanceof GoStruct) {
      const m = x instanceof GoStruct ? (x.entries ?? x.fields) : x;
      n += 5;
      for (const k in m) {
        n += k.length + 2;
        todo.push(m[k]);
        if (n > cap) break;
      }
    } else n += 8;
  }
  return n;
}

/** How many list items and map entries `v` holds, deeply, counted until `cap` is passed. */
export function countItems(v: unknown, cap: number = LIMITS.steps): number {
  let n = 0;
  const todo: unknown[] = [v];
  while (todo.length > 0 && n <= cap) {
    const x = todo.pop();
    if (Array.isArray(x)) {
      n += x.length;
      if (n <= cap) for (const y of x) if (typeof y === 'object' && y !== null) todo.push(y);
    } else if (isMap(x)) {
      for (const k in x) {
        n++;
        if (typeof x[k] === 'object' && x[k] !== null) todo.push(x[k]);
      }
    }
  }
  return n;
}

/** What a value costs to read or build, in steps (strings by length, lists by items). */
function weight(v: unknown): number {
  if (typeof v === 'string') return v.length / CHARS_PER_STEP;
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length;
  return 0;
}

/** A template call: how it was called and what (a template's name, or the text given to tpl). */
export interface Call {
  kind: 'execute' | 'template' | 'include' | 'tpl';
  name: string;
}

/** The budget of one render: one per template set, shared by its tpl sets. */
export class Budget {
  private steps = 0;
  private output = 0;
  private readonly calls: Call[] = [];

  /** What has been spent so far. */
  spent(): { steps: number; output: number } {
    return { steps: Math.ceil(this.steps), output: this.output };
  }

  /** Spend `n` steps. */
  step(n = 1): void {
    this.steps += n;
    if (this.steps > LIMITS.steps)
      throw new BudgetExceeded(
        `${STOPPED} over ${LIMITS.steps} steps (template actions, range iterations, function calls and the data they handle)`,
      );
  }

  /** Count `n` characters written. */
  wrote(n: number): void {
    this.output += n;
    if (this.output > LIMITS.output)
      throw new BudgetExceeded(
        `${STOPPED} the templates wrote over ${LIMITS.output / 1024 / 1024} MiB (${LIMITS.output} characters)`,
      );
  }

  /** A function or method call with these arguments, before it runs; `work`: items it walks beyond them. */
  call(args: readonly unknown[], work = 0): void {
    let n = 1 + work;
    for (const a of args) n += weight(a);
    this.step(n);
  }

  /** What a function or method (`what`) gave: within the limits of one value, and paid for. */
  gave(what: string, v: unknown): void {
    if (typeof v === 'string') checkChars(what, v.length);
    else if (Array.isArray(v)) checkItems(what, v.length);
    this.step(weight(v));
  }

  /** Enter a template call; a call past the nesting limit stops, naming the loop it closes. */
  enter(call: Call): void {
    if (this.calls.length >= LIMITS.depth) throw new BudgetExceeded(nesting(this.calls, call));
    this.calls.push(call);
  }

  leave(): void {
    this.calls.pop();
  }
}

const callKey = (c: Call) => (c.kind === 'tpl' ? `tpl\0${c.name}` : c.name);

/** `include "a" → "b" → "a" recurses (nesting over 100 levels)`: the loop once, names clipped. */
function nesting(calls: readonly Call[], next: Call): string {
  const from = calls.map(callKey).lastIndexOf(callKey(next));
  let chain: (Call | undefined)[] = [...calls.slice(Math.max(0, from)), next];
  if (chain.length > 5) chain = [chain[0], chain[1], undefined, chain.at(-2), chain.at(-1)];
  let kind = '';
  const text = chain
    .map((c) => {
      if (!c) return '…';
      const label = JSON.stringify(clip(c.name, 40));
      const shown = c.kind === kind || c.kind === 'execute' ? label : `${c.kind} ${label}`;
      kind = c.kind;
      return shown;
    })
    .join(' → ');
  return from >= 0
    ? `${text} recurses (nesting over ${LIMITS.depth} levels)`
    : `templates nest over ${LIMITS.depth} levels: ${text}`;
}
