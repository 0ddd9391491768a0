/**
 * Mirror benchmark: airgap against the two ways skopeo mirrors a list of images, on loopback.
 *
 * What is compared. A release-shaped set (default 120 digest-only images in one repository plus 10
 * tagged images in their own repositories; every image has 3 shared base layers of 30, 20 and
 * 10 MiB and 2 unique layers of 1–8 MiB, about 1.2 GiB of unique bytes) is seeded into a source
 * registry and mirrored three ways:
 *   - `airgap mirror -c isc.yaml --workspace file://ws docker://dst/airgap` through the real CLI;
 *   - `skopeo copy --all --preserve-digests` once per image, sequentially, like a shell loop — what
 *     oc-mirror v2 does inside (one copy per image) — into dst/skopeo-copy with oc-mirror's names;
 *   - one `skopeo sync --src yaml --dest docker --all --preserve-digests` into dst/skopeo-sync.
 * Each method runs twice: the first run copies everything, the second finds everything present.
 * A second scenario mirrors one image whose single layer is 2 GiB, for airgap's peak RSS.
 *
 * Why it is fair. All registries are the same real registry (Debian's distribution 2.8) with TLS
 * and htpasswd, on 127.0.0.1, with the access log off. Every method reads from the same source
 * registry (seeded just before, so its blobs are equally warm in the page cache for all) and
 * writes into its own fresh, empty destination registry: no method finds blobs another one left,
 * and skopeo's blob-info cache (/var/lib/containers/cache for root; skopeo 1.9 cannot move it),
 * which remembers where blobs were seen, cannot point it at another method's copies because every
 * destination has a new host:port. Every tool gets the same credentials (one auth file), the same
 * CA, and its default parallelism. Wall time is measured around whole commands, process starts
 * included (node + oclif for airgap, every skopeo process of the loop). Registry CPU is reported
 * too: on a small machine the registries' TLS and hashing compete with the tool for the cores.
 *
 * Usage: node build/bench/mirror.js [--scale 0.1] [--no-big | --big] [--big-mib 2048] [--cli path/to/bin/run.js | path/to/airgap-executable]
 *   --scale   fraction of the image count (0.1 for a quick run; the 2 GiB scenario is then skipped)
 *   --big     run the big-layer scenario even at --scale < 1 (--big-mib sets its size)
 *   --cli     benchmark another airgap build (e.g. a branch checked out elsewhere) against skopeo
 */
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { releaseShapedSpecs, type BuiltImage } from '../lab/images.js';
import { OciLayout } from '../src/mirror/layout/store.js';
import { digestTag } from '../src/mirror/plan.js';
import { refOf, writeIsc } from '../test/helpers/fixtures.js';
import { buildBigImage } from './lib/big-image.js';
import {
  judge,
  ratios,
  render,
  type BenchResult,
  type BigResult,
  type MethodResult,
  type ToolRun,
} from './lib/report.js';
import { airgapMirror } from './lib/airgap.js';
import {
  checkDigestsWithSkopeo,
  log,
  measuredAcross,
  skopeoVersion,
  spread,
  writeResults,
} from './lib/common.js';
import { mergedAuth, push, seed, startBenchRegistry, type BenchRegistry } from './lib/setup.js';
import {
  copyLoop,
  sync,
  writePolicy,
  writeSyncYaml,
  type SkopeoSetup,
  type SyncImages,
} from './lib/skopeo.js';

const MiB = 1024 * 1024;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Images whose digests are read back after a skopeo run (airgap's are all checked). */
const SKOPEO_SAMPLE = 12;

interface Options {
  scale: number;
  big: boolean;
  bigBytes: number;
  /** The airgap CLI entry point (bin/run.js), to compare another build. */
  cli: string;
}

/** Everything one run of the benchmark shares. */
interface Ctx {
  cli: string;
  work: string;
  src: BenchRegistry;
  built: BuiltImage[];
  isc: string;
  policy: string;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: 'string', default: '1' },
      big: { type: 'boolean', default: false },
      'no-big': { type: 'boolean', default: false },
      'big-mib': { type: 'string', default: '2048' },
      cli: { type: 'string', default: join(ROOT, 'bin', 'run.js') },
    },
  });
  const scale = Number(values.scale);
  const bigMiB = Number(values['big-mib']);
  if (!(scale > 0 && scale <= 1)) throw new Error(`--scale must be in (0, 1], got ${values.scale}`);
  if (!(bigMiB >= 1)) throw new Error(`--big-mib must be at least 1, got ${values['big-mib']}`);
  // The big scenario is skipped for quick runs (--scale < 1) unless asked for with --big.
  const big = !values['no-big'] && (values.big || scale >= 1);
  return { scale, big, bigBytes: Math.round(bigMiB * MiB), cli: resolve(values.cli) };
}

/** Start a fresh destination registry, run `fn` against it, stop it (freeing its storage). */
async function withDestination<T>(
  ctx: Ctx,
  name: string,
  fn: (dst: BenchRegistry, authFile: string) => Promise<T>,
): Promise<T> {
  const dst = await startBenchRegistry();
  try {
    const authFile = await mergedAuth(join(ctx.work, `auth-${name}.json`), [ctx.src.reg, dst.reg]);
    return await fn(dst, authFile);
  } finally {
    await dst.reg.stop();
  }
}

function skopeoSetup(ctx: Ctx, dst: BenchRegistry, authFile: string): SkopeoSetup {
  return {
    policy: ctx.policy,
    authFile,
    srcCertDir: ctx.src.reg.skopeo.certDir,
    destCertDir: dst.reg.skopeo.certDir,
    scratch: ctx.work,
  };
}

/** oc-mirror v2's destination name of a built image below `prefix`. */
function mirroredRef(dst: BenchRegistry, prefix: string, b: BuiltImage): string {
  return `docker://${dst.reg.host}/${prefix}/${b.repo}:${b.tag ?? digestTag(b.digest)}`;
}

// ---------------------------------------------------------------- airgap

/** One `airgap mirror` through the real CLI; throws unless it exits 0 with no failed image. */
function airgapRun(ctx: Ctx, isc: string, ws: string, dest: string, authFile: string): Promise<ToolRun> {
  return airgapMirror(
    ctx.cli,
    ['-c', isc, '--workspace', `file://${ws}`, dest, '--authfile', authFile, '--ca-file', ctx.src.reg.caFile],
    { scratch: ctx.work, cwd: ROOT },
  );
}

async function benchAirgap(ctx: Ctx): Promise<MethodResult> {
  return withDestination(ctx, 'airgap', async (dst, authFile) => {
    const ws = join(ctx.work, 'airgap-ws');
    const dest = `docker://${dst.reg.host}/airgap`;
    log('airgap: first run');
    const first = await measuredAcross([ctx.src], dst, () => airgapRun(ctx, ctx.isc, ws, dest, authFile));
    log(`airgap: first run ${(first.wallMs / 1000).toFixed(1)} s; checking every digest`);
    const check = await checkDigestsWithSkopeo(
      { policy: ctx.policy, authFile },
      dst,
      ctx.built.map((b) => [mirroredRef(dst, 'airgap', b), b.digest]),
    );
    log('airgap: second run');
    const second = await measuredAcross([ctx.src], dst, () => airgapRun(ctx, ctx.isc, ws, dest, authFile));
    if (second.engine?.bytes !== 0) log(`WARNING: airgap's second run moved ${second.engine?.bytes} bytes`);
    return { method: 'airgap', destination: dest, first, second, check };
  });
}

// ---------------------------------------------------------------- skopeo

async function benchSkopeoCopy(ctx: Ctx): Promise<MethodResult> {
  return withDestination(ctx, 'skopeo-copy', async (dst, authFile) => {
    const s = skopeoSetup(ctx, dst, authFile);
    const jobs = ctx.built.map((b) => ({
      src: `docker://${refOf(ctx.src.reg, b)}`,
      dest: mirroredRef(dst, 'skopeo-copy', b),
    }));
    log(`skopeo copy loop: first run (${jobs.length} processes)`);
    const first = await measuredAcross([ctx.src], dst, () => copyLoop(s, jobs));
    log(`skopeo copy loop: first run ${(first.wallMs / 1000).toFixed(1)} s; checking a sample`);
    const check = await checkDigestsWithSkopeo(
      { policy: ctx.policy, authFile },
      dst,
      spread(ctx.built, SKOPEO_SAMPLE).map((b) => [mirroredRef(dst, 'skopeo-copy', b), b.digest]),
    );
    log('skopeo copy loop: second run');
    const second = await measuredAcross([ctx.src], dst, () => copyLoop(s, jobs));
    return {
      method: 'skopeo copy loop',
      destination: `docker://${dst.reg.host}/skopeo-copy`,
      first,
      second,
      check,
    };
  });
}

/**
 * Where `skopeo sync` puts an image: without --scoped, below the destination under the last path
 * component of the source repository, by tag or by digest as listed.
 */
function syncedRef(dst: BenchRegistry, b: BuiltImage): string {
  const name = b.repo.split('/').at(-1)!;
  return `docker://${dst.reg.host}/skopeo-sync/${name}${b.tag ? `:${b.tag}` : `@${b.digest}`}`;
}

async function benchSkopeoSync(ctx: Ctx): Promise<MethodResult> {
  return withDestination(ctx, 'skopeo-sync', async (dst, authFile) => {
    const s = skopeoSetup(ctx, dst, authFile);
    const images: SyncImages = {};
    for (const b of ctx.built) (images[b.repo] ??= []).push(b.tag ?? b.digest);
    const yamlFile = await writeSyncYaml(s, ctx.src.reg.host, images);
    const dest = `${dst.reg.host}/skopeo-sync`;
    log('skopeo sync: first run');
    const first = await measuredAcross([ctx.src], dst, () => sync(s, yamlFile, dest));
    log(`skopeo sync: first run ${(first.wallMs / 1000).toFixed(1)} s; checking a sample`);
    const check = await checkDigestsWithSkopeo(
      { policy: ctx.policy, authFile },
      dst,
      spread(ctx.built, SKOPEO_SAMPLE).map((b) => [syncedRef(dst, b), b.digest]),
    );
    log('skopeo sync: second run');
    const second = await measuredAcross([ctx.src], dst, () => sync(s, yamlFile, dest));
    return { method: 'skopeo sync', destination: `docker://${dest}`, first, second, check };
  });
}

// ---------------------------------------------------------------- the 2 GiB layer

async function benchBig(ctx: Ctx, bytes: number): Promise<BigResult> {
  log(`big: generating one image with a ${(bytes / MiB).toFixed(0)} MiB layer`);
  const layoutDir = join(ctx.work, 'big-layout');
  const layout = await OciLayout.open(layoutDir);
  const built = await buildBigImage(layout, 'bench/big', 'v1', bytes);
  log('big: seeding the source registry');
  await push(ctx.src.reg, layout, [built]);
  await rm(layoutDir, { recursive: true, force: true });
  const dir = join(ctx.work, 'big');
  await mkdir(dir, { recursive: true });
  const isc = await writeIsc(dir, [refOf(ctx.src.reg, built)]);
  return withDestination(ctx, 'big', async (dst, authFile) => {
    log('big: airgap');
    const airgap = await measuredAcross([ctx.src], dst, () =>
      airgapRun(ctx, isc, join(dir, 'ws'), `docker://${dst.reg.host}/airgap`, authFile),
    );
    log(
      `big: airgap ${(airgap.wallMs / 1000).toFixed(1)} s, peak RSS ${(airgap.peakRssKiB / 1024).toFixed(0)} MiB; skopeo copy`,
    );
    const s = skopeoSetup(ctx, dst, authFile);
    const job = {
      src: `docker://${refOf(ctx.src.reg, built)}`,
      dest: mirroredRef(dst, 'skopeo-copy', built),
    };
    const skopeoCopy = await measuredAcross([ctx.src], dst, () => copyLoop(s, [job]));
    const check = await checkDigestsWithSkopeo({ policy: ctx.policy, authFile }, dst, [
      [mirroredRef(dst, 'airgap', built), built.digest],
      [job.dest, built.digest],
    ]);
    return { layerBytes: bytes, airgap, skopeoCopy, check };
  });
}

// ---------------------------------------------------------------- the run

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) total += (await stat(join(dir, f))).size;
  return total;
}

async function seedReleaseSet(
  ctx: Pick<Ctx, 'work' | 'src'>,
  scale: number,
): Promise<{ built: BuiltImage[]; uniqueBytes: number }> {
  const byDigest = Math.max(1, Math.round(120 * scale));
  const tagged = Math.max(1, Math.round(10 * scale));
  const specs = releaseShapedSpecs({
    byDigest,
    tagged,
    shared: [30 * MiB, 20 * MiB, 10 * MiB],
    unique: 2,
    uniqueMin: 1 * MiB,
    uniqueMax: 8 * MiB,
  });
  const layoutDir = join(ctx.work, 'seed-layout');
  log(
    `building ${specs.length} images (${byDigest} by digest, ${tagged} tagged) and seeding the source registry`,
  );
  const built = await seed(ctx.src.reg, await OciLayout.open(layoutDir), specs);
  const uniqueBytes = await dirBytes(join(layoutDir, 'blobs', 'sha256'));
  await rm(layoutDir, { recursive: true, force: true });
  return { built, uniqueBytes };
}

const FAIRNESS =
  'each method into its own fresh destination registry; same source, TLS, credentials; wall time includes process starts';

async function run(opts: Options, work: string): Promise<BenchResult> {
  const date = new Date().toISOString();
  const src = await startBenchRegistry();
  try {
    const { built, uniqueBytes } = await seedReleaseSet({ work, src }, opts.scale);
    const iscDir = join(work, 'isc');
    await mkdir(iscDir, { recursive: true });
    const isc = await writeIsc(
      iscDir,
      built.map((b) => refOf(src.reg, b)),
    );
    const ctx: Ctx = { cli: opts.cli, work, src, built, isc, policy: await writePolicy(work) };
    const methods = [await benchAirgap(ctx), await benchSkopeoCopy(ctx), await benchSkopeoSync(ctx)];
    const big = opts.big ? await benchBig(ctx, opts.bigBytes) : undefined;
    const r = ratios(methods);
    const targets = judge(methods, r, big);
    return {
      date,
      machine: { cpus: cpus().length, node: process.version, skopeo: await skopeoVersion() },
      options: opts,
      set: {
        images: built.length,
        byDigest: built.filter((b) => !b.tag).length,
        tagged: built.filter((b) => b.tag).length,
        uniqueBytes,
      },
      fairness: FAIRNESS,
      methods,
      ratios: r,
      ...(big ? { big } : {}),
      targets,
      pass: targets.every((t) => t.pass),
    };
  } finally {
    await src.reg.stop();
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const work = await mkdtemp(join(tmpdir(), 'airgap-bench-'));
  // Registries die with this process (test/helpers/registry.ts); the work dir must go too.
  process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  try {
    const res = await run(opts, work);
    process.stdout.write(`\n${render(res)}\n`);
    log(`results written to ${await writeResults(ROOT, 'mirror', res.date, res)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
