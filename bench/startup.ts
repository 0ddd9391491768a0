/**
 * Start-up benchmark: what each command family costs before it does anything, in each form airgap
 * runs in — the checkout (node bin/run.js on the host's Node), the release tarball (bin/airgap on
 * the host's Node) and the single executable (Node 24 inside; what a bastion runs). Every command
 * is run with an argument that makes it answer at once (--version, --help), several times,
 * alternating with the peer (`skopeo --version`, a Go binary that starts in a few milliseconds),
 * and the medians are reported with the peak resident set size. The executable's first start
 * (when it unpacks its modules into the cache) is reported on its own line; the rows are warm
 * starts. The goal of the bastion-ready issue: `airgap --version` in at most 0.15 s, judged on
 * the single executable; the ratio to skopeo is printed because absolute times on a shared
 * machine are noise.
 *
 * The release forms come from `npm run dist` (npm run bench:startup runs it first); a form whose
 * files are missing is skipped with a note.
 *
 * Usage: node build/bench/startup.js [--rounds 9]
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { timed, type TimedResult } from './lib/proc.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' } } });
const rounds = Number(values.rounds);
const root = resolve(import.meta.dirname, '../..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const exeArch = process.arch === 'arm64' ? 'arm64' : 'x64';

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

interface Form {
  name: string;
  cmd: string;
  pre: string[];
}

const FORMS: Form[] = [
  { name: 'checkout', cmd: process.execPath, pre: [join(root, 'bin', 'run.js')] },
  {
    name: 'tarball',
    cmd: process.execPath,
    pre: [join(root, 'build', 'dist', `airgap-${version}`, 'bin', 'airgap')],
  },
  { name: 'executable', cmd: join(root, 'build', 'release', `airgap-${version}-linux-${exeArch}`), pre: [] },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const out = (s: string) => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'airgap-bench-startup-'));
  const timeFile = join(dir, 'time.txt');
  // The executable unpacks here, and the Node versions that keep compiled code keep it here: the
  // first start is a cold one, as after installing.
  const env = { AIRGAP_CACHE_DIR: join(dir, 'cache'), NODE_COMPILE_CACHE: join(dir, 'node-cache') };
  try {
    const run = async (cmd: string, args: string[]): Promise<TimedResult> => {
      const r = await timed(cmd, args, { timeFile, env });
      if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
      return r;
    };
    const forms = FORMS.filter((f) => {
      const file = f.pre[0] ?? f.cmd;
      if (!existsSync(file)) out(`(${f.name}: ${file} is missing; run npm run dist)`);
      return existsSync(file);
    });
    const peer: number[] = [];
    const firsts = new Map<string, number>();
    const rows: { name: string; cells: { ms: number; rssMiB: number }[] }[] = [];
    for (const form of forms) firsts.set(form.name, (await run(form.cmd, [...form.pre, '--version'])).wallMs);
    for (const [name, args] of FAMILIES) {
      const cells: { ms: number; rssMiB: number }[] = [];
      for (const form of forms) {
        const ms: number[] = [];
        let rss = 0;
        for (let i = 0; i < rounds; i++) {
          // Alternate with the peer so both see the same machine.
          peer.push((await run('skopeo', ['--version'])).wallMs);
          const r = await run(form.cmd, [...form.pre, ...args]);
          ms.push(r.wallMs);
          rss = Math.max(rss, r.peakRssKiB / 1024);
        }
        cells.push({ ms: median(ms), rssMiB: rss });
      }
      rows.push({ name, cells });
    }
    const skopeo = median(peer);
    out(
      `start-up, median of ${rounds} warm runs (skopeo --version: ${skopeo.toFixed(0)} ms; host Node ${process.version})`,
    );
    out(`${'command'.padEnd(24)}${forms.map((f) => f.name.padStart(26)).join('')}`);
    out(
      `${''.padEnd(24)}${forms.map(() => `${'ms'.padStart(8)}${'÷ skopeo'.padStart(10)}${'RSS'.padStart(8)}`).join('')}`,
    );
    for (const r of rows)
      out(
        `${r.name.padEnd(24)}${r.cells
          .map(
            (c) =>
              `${c.ms.toFixed(0).padStart(8)}${`${(c.ms / skopeo).toFixed(1)}×`.padStart(10)}${`${c.rssMiB.toFixed(0)}M`.padStart(8)}`,
          )
          .join('')}`,
      );
    out(
      `first start (cold, --version): ${forms.map((f) => `${f.name} ${firsts.get(f.name)!.toFixed(0)} ms`).join(', ')}`,
    );
    const exe = forms.findIndex((f) => f.name === 'executable');
    const judged = exe >= 0 ? exe : 0;
    const v = rows[0]!.cells[judged]!.ms;
    out(
      `airgap --version (${forms[judged]!.name}): ${(v / 1000).toFixed(2)} s (goal ≤ 0.15 s): ${v <= 150 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
