/**
 * The reference material for tests, through lab/realdata.ts (the one module that knows where it is):
 * `realdata(...parts)` for a path in it, and tests that need it. `withRealdata` (the real samples)
 * and `withRealCrds` (the real CRDs) give `it` and `describe` that run when it is here and are
 * skipped when it is not, with a marker in the skipped test's name (`[needs realdata: <where>]`,
 * see {@link REALDATA_MARK}) by which scripts/test.sh counts them. Read the material inside the
 * tests, never when a test file loads: a file must load without it.
 */
import { describe, it, type TestFunction } from 'vitest';
import { AirgapError } from '../../src/util/errors.js';
import { CRD_DIR_ENV, crdWhere, hasRealCrds, hasRealdata, realdataWhere } from '../../lab/realdata.js';

export { crdDir, realdata } from '../../lab/realdata.js';

/**
 * The marker a skipped test's name ends with when the realdata it needs is not here, followed by
 * where it was looked for and `]`. Only the wrappers below add it; scripts/test.sh counts on it.
 */
const REALDATA_MARK = '[needs realdata: ';

type TestFn = TestFunction;
type SuiteFn = () => void;

export interface RealdataTests {
  /** Whether what these tests need is here. */
  present(): boolean;
  /** `it`, skipped (and marked) when what it needs is not here. */
  it(name: string, fn: TestFn, timeout?: number): void;
  /** `describe`, skipped (and marked) when what it needs is not here. */
  describe(name: string, fn: SuiteFn): void;
}

/** Where the real CRDs were looked for: the realdata, unless AIRGAP_CRD_DIR names another place. */
function crdsWhere(): string {
  return process.env[CRD_DIR_ENV] ? crdWhere() : realdataWhere();
}

function realdataTests(present: () => boolean, where: () => string): RealdataTests {
  const name = (n: string) => (present() ? n : `${n} ${REALDATA_MARK}${where()}]`);
  return {
    present,
    it: (n, fn, timeout) => it.skipIf(!present())(name(n), fn, timeout),
    describe: (n, fn) => describe.skipIf(!present())(name(n), fn),
  };
}

/** Tests that read the real samples (`realdata('samples', …)`). */
export const withRealdata = realdataTests(hasRealdata, realdataWhere);
/** Tests that validate against the real CRDs (test/helpers/crd.ts, or the hub with the real CRDs). */
export const withRealCrds = realdataTests(hasRealCrds, crdsWhere);
/** Tests that need both the real samples and the real CRDs. */
export const withRealdataAndCrds = realdataTests(
  () => hasRealdata() && hasRealCrds(),
  () => (hasRealdata() ? crdsWhere() : realdataWhere()),
);

/** The AirgapError `f` throws (anything else, or no throw, fails the test). */
export function thrown(f: () => unknown): AirgapError {
  try {
    f();
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected an AirgapError');
}

/** The AirgapError a promise rejects with (anything else, or no rejection, fails the test). */
export async function rejection(p: Promise<unknown>): Promise<AirgapError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected an AirgapError');
}

/** `f`'s value, computed on the first call (for material a test file reads: never when it loads). */
export function lazy<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}
