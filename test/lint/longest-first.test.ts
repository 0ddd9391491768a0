import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONGEST_FIRST } from '../../vitest.config.js';
import { REPO_ROOT } from '../helpers/cli.js';

describe('the slow files vitest starts first', () => {
  it('names only test files that exist (a renamed file would silently run last again)', () => {
    expect(LONGEST_FIRST.length).toBeGreaterThan(0);
    for (const f of LONGEST_FIRST) {
      expect(f).toMatch(/^test\/.+\.test\.ts$/);
      expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
    }
  });
});
