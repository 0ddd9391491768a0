/** What the sprig function files share: how a function is declared and added. */
import type { FuncDef } from './exec.js';

/**
 * A function taking `min` to `max` arguments (V: any number); `cost`: the list items and map
 * entries a call walks beyond reading its arguments, paid from the budget before it runs.
 */
export const f = (
  min: number,
  max: number,
  fn: (...args: never[]) => unknown,
  cost?: (...args: never[]) => number,
): FuncDef => ({
  min,
  max,
  fn: fn as (...args: unknown[]) => unknown,
  ...(cost ? { cost: cost as (...args: unknown[]) => number } : {}),
});
export const V = Infinity;

/** Adds a function under one name or several. */
export type Add = (names: string | string[], def: FuncDef) => void;
