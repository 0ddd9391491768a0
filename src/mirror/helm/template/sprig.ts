/**
 * Sprig's functions (Helm's function map, minus include/tpl/required/fail/lookup, which the chart
 * renderer adds): strings, lists, dicts, math, conversions, encodings, hashes, regular
 * expressions, types, semver, dates, paths and URLs, bcrypt, keys and certificates (real ones, as
 * `helm template` makes), and getHostByName (offline: nothing resolves).
 */
import type { FuncDef } from './exec.js';
import { addCollectionFunctions } from './sprig-collections.js';
import { addCertFunctions } from './sprig-certs.js';
import { addCryptoFunctions } from './sprig-crypto.js';
import { addDateFunctions } from './sprig-dates.js';
import { addPathFunctions } from './sprig-paths.js';
import { addStringFunctions } from './sprig-strings.js';
import { addTextFunctions } from './sprig-text.js';
import { addValueFunctions } from './sprig-values.js';

/** Every sprig function airgap knows, by name (must* variants share their implementation). */
export function sprigFunctions(): Map<string, FuncDef> {
  const m = new Map<string, FuncDef>();
  const add = (names: string | string[], def: FuncDef) => {
    for (const n of Array.isArray(names) ? names : [names]) m.set(n, def);
  };
  addStringFunctions(add);
  addCollectionFunctions(add);
  addValueFunctions(add);
  addTextFunctions(add);
  addDateFunctions(add);
  addPathFunctions(add);
  addCryptoFunctions(add);
  addCertFunctions(add);
  return m;
}
