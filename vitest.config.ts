import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (about a minute each in a CI run on two cores), longest first. A
 * fresh clone has no timings from an earlier run, and vitest then starts large files first, so
 * these small but slow ones (a whole demo, a whole site's life) ran last, one worker idle beside
 * them. Started first, the short files fill in around them. Once vitest has timings of its own
 * (a second run in the same checkout), those decide.
 */
export const LONGEST_FIRST = [
  'test/lab/demo-clone.test.ts',
  'test/cluster/faults.test.ts',
  'test/registry/status.test.ts',
  'test/registry/renew.test.ts',
  'test/cluster/install.test.ts',
  'test/registry/gc.test.ts',
  'test/cluster/day2.test.ts',
  'test/commands/mirror.test.ts',
  'test/cluster/upgrade.test.ts',
  'test/mirror/list.test.ts',
  'test/mirror/hostile-surfaces.test.ts',
  'test/certs/registry.test.ts',
  'test/cluster/upgrade-graph-data.test.ts',
  'test/lab/systemd-sim.test.ts',
  'test/mirror/signatures/mirror-signatures.test.ts',
  'test/registry/install.test.ts',
  'test/registry/uninstall.test.ts',
  'test/mirror/inventory-delta.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    if (files.every((f) => this.ctx.cache.getTestSpecificationResult(f))) return sorted;
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(f.project.config.root, f.moduleId));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
