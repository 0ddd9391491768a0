/**
 * Progress on a real terminal: `airgap mirror` run by script(1) in a pseudo-terminal of 80
 * columns. The bar is one line redrawn in place; it never reaches the last column (where a
 * terminal wraps it into a scrolling log).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, airgap } from '../helpers/cli.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const MiB = 1024 * 1024;

describe.skipIf(!existsSync('/usr/bin/script'))('progress on an 80-column terminal', () => {
  let src: TestRegistry;
  let dir: string;
  let isc: string;

  beforeAll(async () => {
    src = await startRegistry();
    const built = await seedRegistry(
      src,
      Array.from({ length: 10 }, (_, i) => ({
        repo: `tty/app${i}`,
        tag: 'v1',
        layers: [{ size: 16 * MiB + i }],
      })),
    );
    dir = await tempDir('airgap-tty-');
    isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
  }, 60_000);
  afterAll(async () => {
    await src?.stop();
  });

  it('draws one line that fits, never wrapping into a log', async () => {
    const cmd = [
      'stty cols 80 rows 24;',
      process.execPath,
      BIN,
      'mirror',
      '-c',
      isc,
      `oci:${join(dir, 'out')}`,
      '--authfile',
      src.authFile,
      '--ca-file',
      src.caFile,
    ].join(' ');
    const r = await execa('script', ['-qfec', cmd, '/dev/null'], { reject: false, env: { NO_COLOR: '1' } });
    expect(r.exitCode, r.stdout).toBe(0);
    // Every redraw starts with a carriage return; what it draws must fit in 79 columns.
    const draws = r.stdout
      .split('\r')
      .map((d) => d.replace(/\n[\s\S]*$/, ''))
      .filter((d) => /\/s|MiB \//.test(d));
    expect(draws.length).toBeGreaterThan(0);
    for (const d of draws) expect(d.trimEnd().length, d).toBeLessThanOrEqual(79);
  }, 60_000);

  it('disk → registry: the total is the bytes the summary reports, from the first draw on', async () => {
    const archive = join(dir, 'archive');
    const toDisk = await airgap([
      'mirror',
      '-c',
      isc,
      `file://${archive}`,
      '--authfile',
      src.authFile,
      '--ca-file',
      src.caFile,
    ]);
    expect(toDisk.exitCode, toDisk.stderr).toBe(0);
    const dest = await startRegistry();
    try {
      const cmd = [
        'stty cols 100 rows 24;',
        process.execPath,
        BIN,
        'mirror',
        '-c',
        isc,
        '--from',
        `file://${archive}`,
        `docker://${dest.host}/tty`,
        '--authfile',
        dest.authFile,
        '--ca-file',
        dest.caFile,
      ].join(' ');
      const r = await execa('script', ['-qfec', cmd, '/dev/null'], { reject: false, env: { NO_COLOR: '1' } });
      expect(r.exitCode, r.stdout).toBe(0);
      const moved = /copied 10 · already present 0 · failed 0 · ([\d.]+ [KMG]?i?B) in/.exec(r.stdout);
      expect(moved, r.stdout).not.toBeNull();
      // Copy draws once every image is resolved show the whole total: the summary's bytes. Before
      // that (a few ms here) the total says "so far" and has no ETA.
      const copyDraws = [
        ...r.stdout.matchAll(/copy: \[[= ]+\] ([\d.]+ [KMG]?i?B) \/ ([\d.]+ [KMG]?i?B)( so far)?(.*)/g),
      ];
      const whole = copyDraws.filter((d) => d[3] === undefined);
      expect(whole.length, r.stdout).toBeGreaterThan(0);
      for (const d of whole) expect(d[2]).toBe(moved![1]);
      for (const d of copyDraws.filter((d) => d[3] !== undefined)) expect(d[4]).not.toContain('ETA');
    } finally {
      await dest.stop();
    }
  }, 120_000);
});
