import { describe, expect, it } from 'vitest';
import { commandOf, strayHintFlags } from './hint-flags.js';

describe('the hint check every CLI test runs', () => {
  it('finds the command an argv runs', () => {
    expect(commandOf(['mirror', 'plan', '-c', 'x'])).toBe('mirror:plan');
    expect(commandOf(['mirror', '-c', 'x', 'docker://h'])).toBe('mirror');
    expect(commandOf(['--help'])).toBeUndefined();
  });

  it('flags a hint that sends the user to a flag the command does not have', () => {
    expect(strayHintFlags(['certs', 'ca'], 'error [X]: no\n  hint: pass --ca-file ca.crt\n')).toHaveLength(1);
    expect(strayHintFlags(['mirror', 'plan'], '  hint: retry with\n    --no-such-flag\n')).toHaveLength(1);
    expect(strayHintFlags(['mirror'], 'warning: use --workspace file://ws\n')).toEqual([]);
  });

  it('takes flags of an airgap command the line names, and leaves other programs’ flags alone', () => {
    const named = '  hint: run `airgap certs ca --out pki` first, then give --ca pki\n';
    expect(strayHintFlags(['certs', 'issue'], named)).toEqual([]);
    expect(
      strayHintFlags(['install', 'cluster'], '  hint: check with skopeo inspect --raw docker://x\n'),
    ).toEqual([]);
    // Named for another command, but a flag neither has.
    expect(strayHintFlags(['certs', 'issue'], '  hint: see `airgap certs ca` and --bogus\n')).toHaveLength(1);
  });
});
