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
 * connections its peak must stay under 200 MB, and it may grow from the start of the run to its
 * end by no more than the design allows: one chunk per connection (each download has its own
 * buffer), the app's read-ahead buffers, and 10 MB for everything else. CPU seconds per GiB
 * served are reported for both servers.
 *
 * Stalled readers: then, for each server in turn (each round starting with another), 100 clients
 * ask for the large file and never read their answer (a PXE host on a slow link, or a hostile
 * one), and a 6-byte file is fetched 20 times, one new connection each, while they hang. The
 * latencies (median and worst) are compared, airgap ÷ nginx; the goal is every small GET under
 * 100 ms, and every stalled download started (none waits for what another holds). A GET that takes
 * more than 5 s ends that server's series (a server whose downloads share buffers answers only
 * after the stalled clients' idle timeout).
 *
 * Usage: node build/bench/serve.js [--quick] [--rounds 3] [--seconds 10] [--size-mib 1024]
 *                                 [--connections 1,8,64] [--stalled 100] [--gets 20]
 *                                 [--cli path/to/bin/run.js]
 *   --quick   one round of 3 s per connection count, 256 MiB file
 *   --stalled the number of stalled readers (0: no stalled-reader runs)
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createServer, type Socket } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { DEFAULT_CHUNK_BYTES, READ_AHEAD_BUFFERS } from '../src/server/static.js';
import { log, writeResults } from './lib/common.js';
import { startNginx, type BenchNginx } from './lib/nginx.js';
import { table } from './lib/report.js';
import { measured, rssBytes, treeRss, type RssTrace } from './lib/sample.js';
import { runWrk, writeWrkScript, wrkVersion, type WrkRun } from './lib/wrk.js';
import { stalledReaders as stalledReadersAt } from '../test/helpers/stalled-readers.js';

const MiB = 1024 * 1024;
const MB = 1e6;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FILE = 'images/rhcos-bench-live.x86_64.iso';
/** A small file asked for while readers are stalled (a kernel argument file, a checksum). */
const SMALL_FILE = 'images/sha256sum.txt';
const SMALL_BODY = 'hello\n';
/** A small GET slower than this ends the server's series: it waits for a stalled client. */
const GET_GIVE_UP_MS = 5_000;
export const SERVE_TARGETS = { ratio: 0.8, rssMB: 200, stalledGetMs: 100 } as const;

interface Options {
  rounds: number;
  seconds: number;
  sizeBytes: number;
  connections: number[];
  /** Clients that ask for the large file and never read (0: none). */
  stalled: number;
  /** Small GETs per server and round while they hang. */
  gets: number;
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
      stalled: { type: 'string', default: '100' },
      gets: { type: 'string', default: '20' },
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
  const stalled = Number(values.stalled);
  const gets = Number(values.gets);
  if (!Number.isInteger(stalled) || stalled < 0 || stalled > 900)
    throw new Error('--stalled must be a whole number from 0 to 900 (nginx takes 1024 connections)');
  if (!Number.isInteger(gets) || gets < 1) throw new Error('--gets must be a whole number ≥ 1');
  return {
    rounds,
    seconds,
    sizeBytes: Math.round(sizeMiB * MiB),
    connections,
    stalled,
    gets,
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

/** One server's small GETs while readers were stalled, in one round. */
export interface StalledRun {
  server: ServerName;
  round: number;
  /** Stalled downloads whose answer had started (headers sent) within 10 s. */
  started: number;
  /** Milliseconds per small GET; the series ends at the first one slower than GET_GIVE_UP_MS. */
  latenciesMs: number[];
  /** GETs that took longer than GET_GIVE_UP_MS (0 or 1) or failed. */
  gaveUp: number;
  /** Server RSS with the readers stalled minus before they came, bytes. */
  rssGrowth: number;
}

/** Per server over every round: median and worst small-GET latency (null when one gave up). */
export interface StalledSummary {
  p50Ms: number | null;
  maxMs: number | null;
  gaveUp: number;
  /** The fewest stalled downloads that started in a round. */
  started: number;
  rssGrowth: number;
}

export interface StalledResult {
  clients: number;
  gets: number;
  runs: StalledRun[];
  servers: Record<ServerName, StalledSummary>;
  /** airgap ÷ nginx of the median and of the worst latency (null when one gave up). */
  ratioP50: number | null;
  ratioMax: number | null;
  ratioCopyP50: number | null;
}

export interface ServeBenchResult {
  date: string;
  machine: { cpus: number; node: string; nginx: string; wrk: string };
  options: Options;
  fileBytes: number;
  fairness: string;
  airgapIdleRss: number;
  results: ConnectionResult[];
  stalled?: StalledResult;
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

/** `n` clients that ask for `path` and never read the answer (test/helpers/stalled-readers.ts), for 10 s at most. */
function stalledReaders(
  url: string,
  path: string,
  n: number,
): Promise<{ sockets: Socket[]; started: number }> {
  const { hostname, port } = new URL(url);
  return stalledReadersAt(hostname, Number(port), `/${path}`, n, 10_000);
}

/** One GET of the small file on a new connection: milliseconds, or undefined after GET_GIVE_UP_MS or a wrong answer. */
function smallGet(url: string): Promise<number | undefined> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(`${url}/${SMALL_FILE}`, { agent: false, timeout: GET_GIVE_UP_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        resolve(res.statusCode === 200 && body === SMALL_BODY ? performance.now() - t0 : undefined),
      );
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
  });
}

/** Small GETs against each server while `opts.stalled` readers hang on the large file. */
async function benchStalled(opts: Options, servers: Record<ServerName, Peer>): Promise<StalledResult> {
  const names: ServerName[] = ['nginx', 'airgap', 'nginx-copy'];
  const runs: StalledRun[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order = names.map((_, i) => names[(i + round - 1) % names.length]!);
    for (const name of order) {
      const s = servers[name];
      const rss0 = await treeRss(s.pid);
      const { sockets, started } = await stalledReaders(s.url, FILE, opts.stalled);
      // Let the server fill every stalled socket, so that each of its writes is stuck.
      await new Promise((r) => setTimeout(r, 500));
      const latenciesMs: number[] = [];
      let gaveUp = 0;
      for (let i = 0; i < opts.gets; i++) {
        const ms = await smallGet(s.url);
        if (ms === undefined) {
          gaveUp++;
          break;
        }
        latenciesMs.push(ms);
      }
      const rssGrowth = (await treeRss(s.pid)) - rss0;
      for (const sock of sockets) sock.destroy();
      runs.push({ server: name, round, started, latenciesMs, gaveUp, rssGrowth });
      const sorted = [...latenciesMs].sort((a, b) => a - b);
      log(
        `stalled ${opts.stalled} round ${round} ${name}: ${started} downloads started; small GET ` +
          (gaveUp
            ? `gave up after ${GET_GIVE_UP_MS / 1000} s (${latenciesMs.length} answered before)`
            : `median ${median(sorted).toFixed(1)} ms, worst ${sorted.at(-1)!.toFixed(1)} ms`) +
          `; RSS +${mb(rssGrowth)}`,
      );
      // The server sees every stalled client go before the next one is measured.
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const summary = (name: ServerName): StalledSummary => {
    const mine = runs.filter((r) => r.server === name);
    const all = mine.flatMap((r) => r.latenciesMs);
    const gaveUp = mine.reduce((n, r) => n + r.gaveUp, 0);
    return {
      p50Ms: gaveUp || !all.length ? null : median(all),
      maxMs: gaveUp || !all.length ? null : Math.max(...all),
      gaveUp,
      started: Math.min(...mine.map((r) => r.started)),
      rssGrowth: Math.max(...mine.map((r) => r.rssGrowth)),
    };
  };
  const summaries = {
    nginx: summary('nginx'),
    'nginx-copy': summary('nginx-copy'),
    airgap: summary('airgap'),
  };
  const ratio = (a: number | null, b: number | null) => (a === null || b === null ? null : a / b);
  return {
    clients: opts.stalled,
    gets: opts.gets,
    runs,
    servers: summaries,
    ratioP50: ratio(summaries.airgap.p50Ms, summaries.nginx.p50Ms),
    ratioMax: ratio(summaries.airgap.maxMs, summaries.nginx.maxMs),
    ratioCopyP50: ratio(summaries.airgap.p50Ms, summaries['nginx-copy'].p50Ms),
  };
}

/**
 * What airgap's memory may grow by while `c` downloads run: each has its own buffer of one chunk,
 * a few borrow a read-ahead buffer, and 10 MB for the rest (sockets, requests, the heap).
 */
function growthBound(c: number): number {
  return (c + READ_AHEAD_BUFFERS) * DEFAULT_CHUNK_BYTES + 10 * MB;
}

function judge(results: ConnectionResult[], stalled?: StalledResult): ServeBenchResult['targets'] {
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
    goal: `< ${mb(growthBound(busiest.connections))} (a chunk per connection, read-ahead, 10 MB)`,
    pass: busiest.airgapRssGrowth < growthBound(busiest.connections),
  });
  if (stalled) {
    const a = stalled.servers.airgap;
    targets.push({
      name: `airgap downloads started with ${stalled.clients} stalled readers`,
      measured: `${a.started} of ${stalled.clients}`,
      goal: 'all (none waits for another)',
      pass: a.started === stalled.clients,
    });
    targets.push({
      name: `airgap small GET with ${stalled.clients} stalled readers, worst of ${stalled.gets * stalled.runs.filter((r) => r.server === 'airgap').length}`,
      measured: a.maxMs === null ? `> ${GET_GIVE_UP_MS / 1000} s` : `${a.maxMs.toFixed(1)} ms`,
      goal: `< ${SERVE_TARGETS.stalledGetMs} ms`,
      pass: a.maxMs !== null && a.maxMs < SERVE_TARGETS.stalledGetMs,
    });
  }
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
  if (res.stalled) {
    const st = res.stalled;
    const ms = (x: number | null) => (x === null ? `> ${GET_GIVE_UP_MS / 1000} s` : `${x.toFixed(1)} ms`);
    const times = (x: number | null) => (x === null ? '-' : `${x.toFixed(2)}×`);
    out.push(
      `A ${SMALL_BODY.length}-byte GET (new connection each, ${st.gets} per server and round) while ${st.clients} clients hang on the large file without reading:`,
    );
    const srows = [['server', 'downloads started', 'small GET median', 'worst', 'RSS growth']];
    for (const name of ['nginx', 'nginx-copy', 'airgap'] as const) {
      const x = st.servers[name];
      srows.push([
        name === 'nginx-copy' ? 'nginx, sendfile off' : name,
        `${x.started} of ${st.clients}`,
        ms(x.p50Ms),
        ms(x.maxMs),
        mb(x.rssGrowth),
      ]);
    }
    out.push(table(srows));
    out.push(
      `airgap ÷ nginx: median ${times(st.ratioP50)}, worst ${times(st.ratioMax)}; airgap ÷ nginx sendfile off: median ${times(st.ratioCopyP50)}`,
    );
    out.push('');
  }
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
  await writeFile(join(www, SMALL_FILE), SMALL_BODY, { mode: 0o644 });
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
    const stalled = opts.stalled > 0 ? await benchStalled(opts, peers) : undefined;
    const stopped = await airgap.stop();
    airgap = undefined;
    if (stopped !== 0) throw new Error(`airgap serve-images exited ${stopped} on SIGTERM`);
    const targets = judge(results, stalled);
    return {
      date,
      machine: { cpus: cpus().length, node: process.version, nginx: nginx.version, wrk: await wrkVersion() },
      options: opts,
      fileBytes: opts.sizeBytes,
      fairness: FAIRNESS,
      airgapIdleRss,
      results,
      ...(stalled ? { stalled } : {}),
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
