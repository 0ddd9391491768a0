/**
 * Start-up benchmark: what each command family costs before it does anything. Every command is
 * run through the real CLI (node bin/run.js) with an argument that makes it answer at once
 * (--version, --help), several times, alternating with the peer (`skopeo --version`, a Go binary
 * that starts in a few milliseconds), and the medians are reported with the peak resident set
 * size. The goal of the bastion-ready issue: `airgap --version` in at most 0.15 s; the ratio to
 * skopeo is printed because absolute times on a shared machine are noise.
 *
 * Usage: node build/bench/startup.js [--rounds 9] [--cli path/to/bin/run.js]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { timed, type TimedResult } from './lib/proc.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    cli: { type: 'string', default: resolve(import.meta.dirname, '../../bin/run.js') },
  },
});
const rounds = Number(values.rounds);

/** The commands measured: one per family, each answering at once. */
const FAMILIES: [name: string, args: string[]][] = [
  ['--version', ['--version']],
  ['--help', ['--help']],
  ['mirror --help', ['mirror', '--help']],
  ['certs ca --help', ['certs', 'ca', '--help']],
  ['serve-images --help', ['serve-images', '--help']],
  ['images fetch --help', ['images', 'fetch', '--help']],
  ['install cluster --help', ['install', 'cluster', '--help']],
  ['cluster status --help', ['cluster', 'status', '--help']],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'airgap-bench-startup-'));
  const timeFile = join(dir, 'time.txt');
  try {
    const run = async (cmd: string, args: string[]): Promise<TimedResult> => {
      const r = await timed(cmd, args, { timeFile });
      if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
      return r;
    };
    const peer: number[] = [];
    const rows: { name: string; ms: number; rssMiB: number }[] = [];
    for (const [name, args] of FAMILIES) {
      const ms: number[] = [];
      let rss = 0;
      for (let i = 0; i < rounds; i++) {
        // Alternate with the peer so both see the same machine.
        peer.push((await run('skopeo', ['--version'])).wallMs);
        const r = await run(process.execPath, [values.cli!, ...args]);
        ms.push(r.wallMs);
        rss = Math.max(rss, r.peakRssKiB / 1024);
      }
      rows.push({ name, ms: median(ms), rssMiB: rss });
    }
    const skopeo = median(peer);
    process.stdout.write(`start-up, median of ${rounds} runs (skopeo --version: ${skopeo.toFixed(0)} ms)\n`);
    process.stdout.write(
      `${'command'.padEnd(26)} ${'ms'.padStart(6)} ${'÷ skopeo'.padStart(9)} ${'peak RSS'.padStart(9)}\n`,
    );
    for (const r of rows)
      process.stdout.write(
        `${r.name.padEnd(26)} ${r.ms.toFixed(0).padStart(6)} ${(r.ms / skopeo).toFixed(1).padStart(8)}× ${`${r.rssMiB.toFixed(0)} MiB`.padStart(9)}\n`,
      );
    const version = rows[0]!.ms;
    process.stdout.write(
      `airgap --version: ${(version / 1000).toFixed(2)} s (goal ≤ 0.15 s): ${version <= 150 ? 'met' : 'NOT met'}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
