/** What the sprig function files share: how a function is declared and added. */
import type { FuncDef } from './exec.js';

/** A function taking `min` to `max` arguments (V: any number). */
export const f = (min: number, max: number, fn: (...args: never[]) => unknown): FuncDef => ({
  min,
  max,
  fn: fn as (...args: unknown[]) => unknown,
});
export const V = Infinity;

/** Adds a function under one name or several. */
export type Add = (names: string | string[], def: FuncDef) => void;
