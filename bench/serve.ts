/**
 * Boot-image serving benchmark: `airgap serve-images` against nginx serving the same file, on
 * loopback, in the same run.
 *
 * What is compared. One 1 GiB file of random bytes (written once into a temporary directory, read
 * once so both servers start from a warm page cache) is served by:
 *   - `airgap serve-images --dir <dir> --address 127.0.0.1 --quiet` through the real CLI
 *     (node bin/run.js: oclif, fastify, our file handling);
 *   - nginx from Debian (nginx-light) with a generated nginx.conf: sendfile and tcp_nopush on,
 *     worker_processes auto, as Debian ships it — the peer the goal is set against;
 *   - the same nginx with sendfile off and two 1 MiB output buffers: read and write through
 *     buffers like airgap, which on loopback is the faster way for nginx too (with sendfile, the
 *     receiver copies out of page-cache fragments). Reported, not judged.
 * `wrk -t<min(c, cpus)> -c<c> -d<seconds>s` downloads the file over and over with c = 1, 8 and 64
 * connections; wrk counts every byte it reads, partial answers included, so the rate is bytes per
 * second of the whole run.
 *
 * Why it is fair. Same file, same page cache, same address (127.0.0.1), same wrk, neither server
 * writes an access log. The machine may be shared: each connection count is run in several rounds,
 * alternating which server goes first, and the medians are compared; the rounds' spread is kept.
 * The throughput ratio is airgap ÷ nginx (≥ 0.8 is the goal), and airgap ÷ nginx without sendfile.
 *
 * Memory: airgap's resident set size is sampled every 100 ms through every run; with 64
 * connections it must stay flat (peak under 200 MB, no growth from the start of the run to its
 * end). CPU seconds per GiB served are reported for both servers.
 *
 * Usage: node build/bench/serve.js [--quick] [--rounds 3] [--seconds 10] [--size-mib 1024]
 *                                 [--connections 1,8,64] [--cli path/to/bin/run.js]
 *   --quick   one round of 3 s per connection count, 256 MiB file
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { log, writeResults } from './lib/common.js';
import { startNginx, type BenchNginx } from './lib/nginx.js';
import { table } from './lib/report.js';
import { measured, rssBytes, type RssTrace } from './lib/sample.js';
import { runWrk, writeWrkScript, wrkVersion, type WrkRun } from './lib/wrk.js';

const MiB = 1024 * 1024;
const MB = 1e6;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILE = 'images/rhcos-bench-live.x86_64.iso';
export const SERVE_TARGETS = { ratio: 0.8, rssMB: 200 } as const;

interface Options {
  rounds: number;
  seconds: number;
  sizeBytes: number;
  connections: number[];
  cli: string;
  quick: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      'size-mib': { type: 'string' },
      connections: { type: 'string', default: '1,8,64' },
      cli: { type: 'string', default: join(ROOT, 'bin', 'run.js') },
    },
  });
  const quick = values.quick!;
  const rounds = Number(values.rounds ?? (quick ? 1 : 3));
  const seconds = Number(values.seconds ?? (quick ? 3 : 10));
  const sizeMiB = Number(values['size-mib'] ?? (quick ? 256 : 1024));
  const connections = values.connections!.split(',').map(Number);
  if (!(rounds >= 1) || !Number.isInteger(rounds)) throw new Error(`--rounds must be a whole number ≥ 1`);
  if (!(seconds >= 1)) throw new Error(`--seconds must be at least 1`);
  if (!(sizeMiB >= 1)) throw new Error(`--size-mib must be at least 1`);
  if (!connections.every((c) => Number.isInteger(c) && c >= 1))
    throw new Error('--connections: whole numbers ≥ 1');
  return {
    rounds,
    seconds,
    sizeBytes: Math.round(sizeMiB * MiB),
    connections,
    cli: resolve(values.cli!),
    quick,
  };
}

/** A free loopback TCP port. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Write `bytes` of random data to `path` (16 MiB at a time), then read it once to warm the page cache. */
async function writeRandomFile(path: string, bytes: number): Promise<void> {
  const fh = await open(path, 'w', 0o644);
  try {
    for (let done = 0; done < bytes;) {
      const n = Math.min(16 * MiB, bytes - done);
      await fh.write(randomBytes(n));
      done += n;
    }
  } finally {
    await fh.close();
  }
  const r = await open(path, 'r');
  const buf = Buffer.allocUnsafe(16 * MiB);
  try {
    while ((await r.read(buf, 0, buf.length, null)).bytesRead > 0);
  } finally {
    await r.close();
  }
}

interface Airgap {
  url: string;
  pid: number;
  proc: ResultPromise;
  stop(): Promise<number | undefined>;
}

/** `airgap serve-images` through the real CLI on 127.0.0.1, access log off (nginx has it off too). */
async function startAirgap(cli: string, dir: string, port: number): Promise<Airgap> {
  const proc = execa(
    process.execPath,
    [
      cli,
      'serve-images',
      '--dir',
      dir,
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--quiet',
      '--json',
    ],
    { reject: false, stdin: 'ignore', cwd: ROOT },
  );
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serve-images: running')) resolve();
    });
    void proc.then((r) => reject(new Error(`airgap serve-images exited ${r.exitCode}: ${err}`)));
  });
  const doc = JSON.parse(out) as { urls: string[] };
  return {
    url: doc.urls[0]!.replace(/\/$/, ''),
    pid: proc.pid!,
    proc,
    stop: async () => {
      proc.kill('SIGTERM');
      return (await proc).exitCode;
    },
  };
}

/** One wrk run against one server, with the server's memory and CPU meanwhile. */
type ServerName = 'nginx' | 'nginx-copy' | 'airgap';

export interface ServerRun {
  server: ServerName;
  round: number;
  wrk: WrkRun;
  /** Server CPU seconds (all threads, all worker processes) during the run. */
  cpuS: number;
  rss: Omit<RssTrace, 'samples'>;
}

export interface ConnectionResult {
  connections: number;
  threads: number;
  runs: ServerRun[];
  /** Medians over the rounds, bytes per second. */
  nginx: number;
  nginxCopy: number;
  airgap: number;
  /** airgap ÷ nginx of the medians, and of each round. */
  ratio: number;
  roundRatios: number[];
  /** airgap ÷ nginx with sendfile off, of the medians. */
  ratioCopy: number;
  /** Peak RSS of airgap over the rounds, bytes. */
  airgapPeakRss: number;
  /** RSS of airgap at the end of the runs minus at their start (growth), bytes; the largest of the rounds. */
  airgapRssGrowth: number;
  /** Server CPU seconds per GiB served (medians). */
  cpuPerGiB: { airgap: number; nginx: number; nginxCopy: number };
}

export interface ServeBenchResult {
  date: string;
  machine: { cpus: number; node: string; nginx: string; wrk: string };
  options: Options;
  fileBytes: number;
  fairness: string;
  airgapIdleRss: number;
  results: ConnectionResult[];
  targets: { name: string; measured: string; goal: string; pass: boolean }[];
  pass: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const rate = (bps: number) => `${(bps / 1e9).toFixed(2)} GB/s`;
const mb = (b: number) => `${(b / MB).toFixed(0)} MB`;

interface Peer {
  url: string;
  pid: number;
}

async function benchConnections(
  opts: Options,
  c: number,
  servers: Record<ServerName, Peer>,
  script: string,
): Promise<ConnectionResult> {
  const threads = Math.min(c, cpus().length);
  const runs: ServerRun[] = [];
  const names: ServerName[] = ['nginx', 'airgap', 'nginx-copy'];
  for (let round = 1; round <= opts.rounds; round++) {
    // Each round starts with another server, so that drift in the machine's load hits all alike.
    const order = names.map((_, i) => names[(i + round - 1) % names.length]!);
    for (const name of order) {
      const s = servers[name];
      const m = await measured(s.pid, () =>
        runWrk({ url: `${s.url}/${FILE}`, connections: c, threads, seconds: opts.seconds, script }),
      );
      const { samples: _samples, ...rss } = m.rss;
      runs.push({ server: name, round, wrk: m.result, cpuS: m.cpuS, rss });
      log(
        `c=${c} round ${round} ${name}: ${rate(m.result.bytesPerSecond)}, ${m.result.requests} whole answers, ` +
          `CPU ${m.cpuS.toFixed(1)} s, RSS peak ${mb(m.rss.peak)}`,
      );
      const e = m.result.errors;
      if (e.connect + e.read + e.write + e.status > 0) log(`  wrk errors: ${JSON.stringify(e)}`);
    }
  }
  const of = (name: ServerName) => runs.filter((r) => r.server === name);
  const med = (name: ServerName) => median(of(name).map((r) => r.wrk.bytesPerSecond));
  const perGiB = (r: ServerRun) => r.cpuS / (r.wrk.bytes / 1024 ** 3);
  const nginx = med('nginx');
  const airgap = med('airgap');
  return {
    connections: c,
    threads,
    runs,
    nginx,
    nginxCopy: med('nginx-copy'),
    airgap,
    ratio: airgap / nginx,
    roundRatios: Array.from({ length: opts.rounds }, (_, i) => {
      const a = of('airgap').find((r) => r.round === i + 1)!;
      const n = of('nginx').find((r) => r.round === i + 1)!;
      return a.wrk.bytesPerSecond / n.wrk.bytesPerSecond;
    }),
    ratioCopy: airgap / med('nginx-copy'),
    airgapPeakRss: Math.max(...of('airgap').map((r) => r.rss.peak)),
    airgapRssGrowth: Math.max(...of('airgap').map((r) => r.rss.last - r.rss.first)),
    cpuPerGiB: {
      airgap: median(of('airgap').map(perGiB)),
      nginx: median(of('nginx').map(perGiB)),
      nginxCopy: median(of('nginx-copy').map(perGiB)),
    },
  };
}

function judge(results: ConnectionResult[]): ServeBenchResult['targets'] {
  const targets: ServeBenchResult['targets'] = results.map((r) => ({
    name: `throughput airgap ÷ nginx, ${r.connections} connection${r.connections > 1 ? 's' : ''}`,
    measured: `${r.ratio.toFixed(2)}×`,
    goal: `≥ ${SERVE_TARGETS.ratio}×`,
    pass: r.ratio >= SERVE_TARGETS.ratio,
  }));
  const busiest = results.reduce((a, b) => (b.connections > a.connections ? b : a));
  targets.push({
    name: `airgap peak RSS, ${busiest.connections} connections`,
    measured: mb(busiest.airgapPeakRss),
    goal: `< ${SERVE_TARGETS.rssMB} MB`,
    pass: busiest.airgapPeakRss < SERVE_TARGETS.rssMB * MB,
  });
  targets.push({
    name: `airgap RSS growth during a ${busiest.connections}-connection run`,
    measured: mb(busiest.airgapRssGrowth),
    goal: '< 20 MB (flat)',
    pass: busiest.airgapRssGrowth < 20 * MB,
  });
  return targets;
}

function render(res: ServeBenchResult): string {
  const out: string[] = [];
  out.push(
    `airgap serve-images vs nginx ${res.machine.nginx} — one ${(res.fileBytes / 1024 ** 3).toFixed(2)} GiB file on 127.0.0.1, ` +
      `wrk ${res.machine.wrk}, ${res.options.rounds} round(s) of ${res.options.seconds} s per server and connection count`,
  );
  out.push(`${res.machine.cpus} CPUs, node ${res.machine.node}; airgap CLI ${res.options.cli}`);
  out.push(res.fairness);
  out.push(`airgap RSS when idle: ${mb(res.airgapIdleRss)}`);
  out.push('');
  const rows = [
    [
      'connections',
      'nginx',
      'nginx, sendfile off',
      'airgap',
      'airgap ÷ nginx (rounds)',
      'airgap ÷ nginx sendfile off',
      'CPU s/GiB nginx / sendfile off / airgap',
      'airgap peak RSS',
      'RSS growth',
    ],
  ];
  for (const r of res.results) {
    rows.push([
      String(r.connections),
      rate(r.nginx),
      rate(r.nginxCopy),
      rate(r.airgap),
      `${r.ratio.toFixed(2)}× (${r.roundRatios.map((x) => x.toFixed(2)).join(' ')})`,
      `${r.ratioCopy.toFixed(2)}×`,
      `${r.cpuPerGiB.nginx.toFixed(2)} / ${r.cpuPerGiB.nginxCopy.toFixed(2)} / ${r.cpuPerGiB.airgap.toFixed(2)}`,
      mb(r.airgapPeakRss),
      mb(r.airgapRssGrowth),
    ]);
  }
  out.push(table(rows));
  out.push('');
  const trows = [['target', 'measured', 'goal', 'result']];
  for (const t of res.targets) trows.push([t.name, t.measured, t.goal, t.pass ? 'PASS' : 'FAIL']);
  out.push(table(trows));
  return out.join('\n');
}

const FAIRNESS =
  'same file and page cache, all on 127.0.0.1, no access logs; nginx: sendfile + tcp_nopush, worker_processes auto ' +
  '(and a second nginx with sendfile off, output_buffers 2 1m); each round starts with another server; medians compared';

async function run(opts: Options, work: string): Promise<ServeBenchResult> {
  const date = new Date().toISOString();
  const www = join(work, 'www');
  await mkdir(join(www, 'images'), { recursive: true });
  // nginx's workers run as nobody: the files must be readable by others.
  for (const d of [work, www, join(www, 'images')]) await chmod(d, 0o755);
  log(`writing ${(opts.sizeBytes / MiB).toFixed(0)} MiB of random bytes to ${join(www, FILE)}`);
  await writeRandomFile(join(www, FILE), opts.sizeBytes);
  const script = await writeWrkScript(work);
  const nginx = await startNginx({ root: www, port: await freePort(), dir: join(work, 'nginx') });
  let nginxCopy: BenchNginx | undefined;
  let airgap: Airgap | undefined;
  try {
    nginxCopy = await startNginx({
      root: www,
      port: await freePort(),
      dir: join(work, 'nginx-copy'),
      sendfile: false,
    });
    airgap = await startAirgap(opts.cli, www, await freePort());
    // Every server must serve the whole file before anything is measured.
    for (const [name, url] of [
      ['nginx', nginx.url],
      ['nginx-copy', nginxCopy.url],
      ['airgap', airgap.url],
    ] as const) {
      const r = await fetch(`${url}/${FILE}`, { method: 'HEAD' });
      if (r.status !== 200 || Number(r.headers.get('content-length')) !== opts.sizeBytes)
        throw new Error(`${name} does not serve ${FILE}: ${r.status} ${r.headers.get('content-length')}`);
    }
    await new Promise((r) => setTimeout(r, 500));
    const airgapIdleRss = await rssBytes(airgap.pid);
    log(
      `nginx ${nginx.version} at ${nginx.url} (sendfile off: ${nginxCopy.url}), airgap at ${airgap.url} (idle RSS ${mb(airgapIdleRss)})`,
    );
    const peers = { nginx, 'nginx-copy': nginxCopy, airgap };
    const results: ConnectionResult[] = [];
    for (const c of opts.connections) results.push(await benchConnections(opts, c, peers, script));
    const stopped = await airgap.stop();
    airgap = undefined;
    if (stopped !== 0) throw new Error(`airgap serve-images exited ${stopped} on SIGTERM`);
    const targets = judge(results);
    return {
      date,
      machine: { cpus: cpus().length, node: process.version, nginx: nginx.version, wrk: await wrkVersion() },
      options: opts,
      fileBytes: opts.sizeBytes,
      fairness: FAIRNESS,
      airgapIdleRss,
      results,
      targets,
      pass: targets.every((t) => t.pass),
    };
  } finally {
    await airgap?.stop();
    await nginxCopy?.stop();
    await nginx.stop();
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const wrk = await execa('wrk', ['--version'], { reject: false });
  if ((wrk as { code?: string }).code === 'ENOENT')
    throw new Error('wrk is not installed: run bash scripts/test-deps.sh (as root)');
  const work = await mkdtemp(join(tmpdir(), 'airgap-bench-serve-'));
  // The servers die with this process (execa kills children on exit); the 1 GiB file must go too.
  process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  try {
    const res = await run(opts, work);
    process.stdout.write(`\n${render(res)}\n`);
    log(`results written to ${await writeResults(ROOT, 'serve', res.date, res)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
