/**
 * Go's checks of an argument against a function's parameter type, for functions that declare
 * their Go parameters ({@link FuncDef.params}): a constant written in the template is converted
 * to the parameter's type when Go's evalArg would convert it (`3` to a float64, `2.0` to an int),
 * any other value must already have the type (validateType). The messages are Go's.
 */
import type { LiteralNode } from './ast.js';
import { typeOf } from './values.js';

/** The Go parameter types a function may declare; `any` takes everything (interface{}). */
export type GoParam = 'string' | 'int' | 'float64' | 'bool' | 'any';

export type Converted = { ok: true; value: unknown } | { ok: false; why: string };

const KIND_OF: Record<Exclude<GoParam, 'any'>, string> = {
  string: 'string',
  int: 'bigint',
  float64: 'number',
  bool: 'boolean',
};

/** A constant as Go's evalBool/evalString/evalInteger/evalFloat take it; `nil`: the nil literal. */
function convertLiteral(type: Exclude<GoParam, 'any'>, node: LiteralNode | 'nil'): Converted {
  if (node === 'nil') return { ok: false, why: `cannot assign nil to ${type}` };
  const v = node.value;
  const found = (what: string): Converted => ({ ok: false, why: `expected ${what}; found ${node.text}` });
  switch (type) {
    case 'string':
      return typeof v === 'string' ? { ok: true, value: v } : found('string');
    case 'bool':
      return typeof v === 'boolean' ? { ok: true, value: v } : found('bool');
    case 'int':
      if (typeof v === 'bigint') return { ok: true, value: v };
      return typeof v === 'number' && Number.isInteger(v) ? { ok: true, value: BigInt(v) } : found('integer');
    case 'float64':
      return typeof v === 'number' || typeof v === 'bigint' ? { ok: true, value: Number(v) } : found('float');
  }
}

/**
 * `value` for a parameter of Go type `type`. `literal`: the argument as written when it is a
 * constant or nil (else the value was computed: a field, a variable, a call, the pipeline's).
 */
export function convertArg(type: GoParam, value: unknown, literal?: LiteralNode | 'nil'): Converted {
  if (type === 'any') return { ok: true, value };
  if (literal !== undefined) return convertLiteral(type, literal);
  if (value === undefined) return { ok: false, why: `invalid value; expected ${type}` };
  if (typeof value === KIND_OF[type]) return { ok: true, value };
  const got = value === null ? 'interface {}' : typeOf(value);
  return { ok: false, why: `wrong type for value; expected ${type}; got ${got}` };
}
