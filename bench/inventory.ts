/**
 * Inventory benchmark: `airgap mirror inventory` of a registry holding what a mirror of an OpenShift
 * channel holds, seeded through storage (lab/registry-storage.ts) as the plan bench seeds its
 * source: `--releases` release payloads tagged `4.18.<n>-x86_64` in openshift/release-images, each
 * with `--components` component images tagged `4.18.<n>-x86_64-<component>` in openshift/release
 * (as airgap's release plan tags them at the destination; a component changes every 1 to 4
 * releases, so most tags of a component name a manifest an older release named too), and
 * `--operators` repositories of two multi-arch images each, all sharing RHEL base layers.
 *
 * Measured: airgap's wall time, CPU and peak RSS (GNU time), the requests it sent (a second run
 * through the counting proxy of test/helpers/fault-proxy.ts, not timed), the file's size plain
 * and gzipped; and the peer, `skopeo list-tags` per repository then `skopeo inspect --raw` per tag
 * and per index child, 4 processes at a time, over the same registry (its requests counted on a
 * sample of its processes through the proxy, and scaled).
 *
 * Usage: node build/bench/inventory.js [--releases 20] [--components 150] [--operators 100]
 *                                      [--parallel 16] [--no-peer] [--cli path/to/bin/run.js]
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { buildImages, type ImageSpec } from '../lab/images.js';
import { writeRegistryStorage, type StorageEntry } from '../lab/registry-storage.js';
import { OciLayout } from '../src/mirror/layout/store.js';
import { Limiter } from '../src/util/limit.js';
import { startFaultProxy, type FaultProxy } from '../test/helpers/fault-proxy.js';
import type { TestRegistry } from '../test/helpers/registry.js';
import { writeAuthFile } from '../test/helpers/fixtures.js';
import { testCertificates } from '../test/helpers/tls.js';
import { log, skopeoVersion, writeResults } from './lib/common.js';
import {
  addStats,
  airgapCommand,
  cpuSeconds,
  statsOf,
  timed,
  zeroStats,
  type ProcStats,
} from './lib/proc.js';
import { startBenchRegistry } from './lib/setup.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { values } = parseArgs({
  allowNegative: true,
  options: {
    releases: { type: 'string', default: '20' },
    components: { type: 'string', default: '150' },
    operators: { type: 'string', default: '100' },
    parallel: { type: 'string', default: '16' },
    // --no-peer: airgap alone (the skopeo loop takes minutes per thousand tags).
    peer: { type: 'boolean', default: true },
    cli: { type: 'string', default: resolve(import.meta.dirname, '../../bin/run.js') },
  },
});
const R = Number(values.releases);
const C = Number(values.components);
const O = Number(values.operators);

/** The mirror-shaped set: specs built once, and the tags that name them. */
function mirrorShape(): { specs: ImageSpec[]; tags: { spec: number; repo: string; tag: string }[] } {
  const specs: ImageSpec[] = [];
  const tags: { spec: number; repo: string; tag: string }[] = [];
  const base = [
    { id: 'rhel9-base', size: 2048 },
    { id: 'rhel9-extra', size: 1024 },
  ];
  const add = (spec: ImageSpec) => specs.push(spec) - 1;
  for (let c = 0; c < C; c++) {
    const every = 1 + (c % 4);
    let current = -1;
    for (let n = 1; n <= R; n++) {
      if (current < 0 || (n - 1) % every === 0)
        current = add({ repo: 'ocp/openshift/release', layers: [...base, { size: 512 }, { size: 512 }] });
      tags.push({ spec: current, repo: 'ocp/openshift/release', tag: `4.18.${n}-x86_64-component-${c}` });
    }
  }
  for (let n = 1; n <= R; n++)
    tags.push({
      spec: add({ repo: 'ocp/openshift/release-images', layers: [...base, { size: 768 }] }),
      repo: 'ocp/openshift/release-images',
      tag: `4.18.${n}-x86_64`,
    });
  for (let k = 0; k < O; k++) {
    const repo = `ocp/redhat/operator-${k}`;
    for (const v of ['v1.0', 'v1.1'])
      tags.push({
        spec: add({ repo, layers: [...base, { size: 640 }], arches: ['amd64', 'arm64'] }),
        repo,
        tag: v,
      });
  }
  return { specs, tags };
}

/** Run `args` of skopeo `n` at a time; the summed process stats, and the wall time of the lot. */
async function skopeoRuns(
  calls: string[][],
  scratch: string,
  n: number,
): Promise<ProcStats & { outputs: string[] }> {
  const limit = new Limiter(n);
  let stats = zeroStats;
  const outputs: string[] = [];
  const started = Date.now();
  let i = 0;
  await Promise.all(
    calls.map((args, j) =>
      limit.run(async () => {
        const r = await timed('skopeo', args, { timeFile: join(scratch, `time-${i++}.txt`) });
        if (r.exitCode !== 0) throw new Error(`skopeo ${args.join(' ')}: ${r.stderr.slice(-500)}`);
        stats = addStats(stats, statsOf(r));
        outputs[j] = r.stdout;
      }),
    ),
  );
  return { ...stats, wallMs: Date.now() - started, outputs };
}

/** The peer: list-tags per repository, inspect --raw per tag and per index child. */
async function skopeoPeer(
  host: string,
  repos: string[],
  flags: string[],
  scratch: string,
): Promise<ProcStats & { processes: number }> {
  const lists = await skopeoRuns(
    repos.map((r) => ['list-tags', ...flags, `docker://${host}/${r}`]),
    scratch,
    4,
  );
  const refs = repos.flatMap((r, i) =>
    ((JSON.parse(lists.outputs[i]!) as { Tags?: string[] }).Tags ?? []).map((t) => [r, `${r}:${t}`] as const),
  );
  const inspect = (ref: string) => ['inspect', '--raw', ...flags, `docker://${host}/${ref}`];
  const tops = await skopeoRuns(
    refs.map(([, ref]) => inspect(ref)),
    scratch,
    4,
  );
  const children = [
    ...new Set(
      refs.flatMap(([repo], i) =>
        ((JSON.parse(tops.outputs[i]!) as { manifests?: { digest: string }[] }).manifests ?? []).map(
          (m) => `${repo}@${m.digest}`,
        ),
      ),
    ),
  ];
  const kids = await skopeoRuns(children.map(inspect), scratch, 4);
  const all = [lists, tops, kids].reduce<ProcStats>((a, b) => addStats(a, statsOf(b)), zeroStats);
  const processes = repos.length + refs.length + children.length;
  return { ...all, wallMs: lists.wallMs + tops.wallMs + kids.wallMs, processes };
}

/** Build the mirror-shaped set and write it into the registry's storage. */
async function seedMirror(reg: TestRegistry, work: string): Promise<{ tags: number; repos: string[] }> {
  log(`seeding: ${R} releases × ${C} components, ${O} operators (multi-arch)…`);
  const seeded = Date.now();
  const layout = await OciLayout.open(join(work, 'layout'));
  const shape = mirrorShape();
  const built = await buildImages(layout, shape.specs);
  const entries: StorageEntry[] = shape.tags.map((t) => ({
    repo: t.repo,
    ref: t.tag,
    digest: built[t.spec]!.digest,
  }));
  await writeRegistryStorage(reg.storageDir, layout, entries);
  const repos = [...new Set(shape.tags.map((t) => t.repo))].sort();
  log(
    `seeded ${entries.length} tags, ${built.length} images in ${repos.length} repositories in ${((Date.now() - seeded) / 1000).toFixed(0)} s`,
  );
  return { tags: entries.length, repos };
}

/** The peer timed over the registry, its requests counted on a sample of repositories through the proxy. */
async function peerMeasure(reg: TestRegistry, proxy: FaultProxy, repos: string[], work: string) {
  const flags = (auth: string, certDir: string) => ['--authfile', auth, '--cert-dir', certDir];
  log('peer: skopeo list-tags + inspect --raw per tag and child, 4 at a time…');
  const peer = await skopeoPeer(reg.host, repos, flags(reg.authFile, join(reg.certsDir, reg.host)), work);
  const proxyCerts = join(work, 'proxy-certs');
  await mkdir(proxyCerts, { recursive: true });
  await writeFile(join(proxyCerts, 'ca.crt'), await readFile(reg.caFile));
  const proxyAuth = await writeAuthFile(join(work, 'proxy-auth.json'), [{ ...reg, host: proxy.host }]);
  const before = proxy.stats().requests;
  const sampled = await skopeoPeer(proxy.host, repos.slice(0, 2), flags(proxyAuth, proxyCerts), work);
  const perProcess = (proxy.stats().requests - before) / sampled.processes;
  return {
    version: await skopeoVersion(),
    wallS: peer.wallMs / 1000,
    cpuS: peer.userS + peer.sysS,
    peakRssMiB: peer.peakRssKiB / 1024,
    processes: peer.processes,
    requestsEstimated: Math.round(perProcess * peer.processes),
    requestsPerProcessSampled: perProcess,
  };
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'airgap-bench-inventory-'));
  const reg = await startBenchRegistry();
  const proxy = await startFaultProxy({
    target: reg.reg.url,
    caFile: reg.reg.caFile,
    tls: testCertificates().server,
  });
  try {
    const { tags, repos } = await seedMirror(reg.reg, work);
    const [cmd, pre] = airgapCommand(values.cli!);
    const file = join(work, 'inventory.json');
    const args = (host: string, out: string, auth: string) => [
      ...pre,
      ...['mirror', 'inventory', `docker://${host}/ocp`, '-o', out],
      ...['--authfile', auth, '--ca-file', reg.reg.caFile, '--parallel', values.parallel!, '--json'],
    ];
    const cpuBefore = await cpuSeconds(reg.pid);
    const r = await timed(cmd, args(reg.reg.host, file, reg.reg.authFile), {
      timeFile: join(work, 'time.txt'),
    });
    const registryCpu = (await cpuSeconds(reg.pid)) - cpuBefore;
    if (r.exitCode !== 0) throw new Error(`mirror inventory exited ${r.exitCode}: ${r.stderr.slice(-2000)}`);
    const report = JSON.parse(r.stdout) as Record<string, number | boolean>;
    const plain = (await stat(file)).size;
    const gz = gzipSync(await readFile(file), { level: 9 }).length;

    // The same again through the counting proxy (not timed): the requests airgap sends.
    const proxyAuth = await writeAuthFile(join(work, 'proxy-auth.json'), [{ ...reg.reg, host: proxy.host }]);
    const counted = await timed(cmd, args(proxy.host, join(work, 'counted.json.gz'), proxyAuth), {
      timeFile: join(work, 'time.txt'),
    });
    if (counted.exitCode !== 0)
      throw new Error(`counted run exited ${counted.exitCode}: ${counted.stderr.slice(-2000)}`);
    const airgapRequests = proxy.stats().requests;
    const skopeo = values.peer ? await peerMeasure(reg.reg, proxy, repos, work) : undefined;

    const res = {
      date: new Date().toISOString(),
      cores: cpus().length,
      shape: { releases: R, components: C, operators: O, tags, repositories: repos.length },
      airgap: {
        wallS: r.wallMs / 1000,
        cpuS: r.userS + r.sysS,
        peakRssMiB: r.peakRssKiB / 1024,
        registryCpuS: registryCpu,
        requests: airgapRequests,
        fileBytes: plain,
        gzipBytes: gz,
        parallel: Number(values.parallel),
        report,
      },
      ...(skopeo
        ? {
            skopeo,
            ratio: {
              wall: skopeo.wallS / (r.wallMs / 1000),
              requests: skopeo.requestsEstimated / airgapRequests,
            },
          }
        : {}),
    };
    process.stdout.write(
      [
        `mirror inventory of ${tags} tags in ${repos.length} repositories: ${String(report.manifests)} manifests, ${String(report.blobs)} blobs, complete: ${String(report.complete)}`,
        `  airgap: wall ${res.airgap.wallS.toFixed(1)} s, CPU ${res.airgap.cpuS.toFixed(1)} s, peak RSS ${res.airgap.peakRssMiB.toFixed(0)} MiB, ${airgapRequests} requests (--parallel ${values.parallel}), registry CPU ${registryCpu.toFixed(1)} s`,
        `  file: ${(plain / 1024).toFixed(0)} KiB plain, ${(gz / 1024).toFixed(0)} KiB gzip`,
        ...(skopeo && res.ratio
          ? [
              `  skopeo ${skopeo.version} (list-tags + inspect --raw, 4 at a time): wall ${skopeo.wallS.toFixed(1)} s, CPU ${skopeo.cpuS.toFixed(1)} s, ${skopeo.processes} processes, ~${skopeo.requestsEstimated} requests (${skopeo.requestsPerProcessSampled.toFixed(1)} per process, sampled)`,
              `  skopeo / airgap: wall ${res.ratio.wall.toFixed(1)}×, requests ${res.ratio.requests.toFixed(1)}× (${cpus().length} cores)`,
            ]
          : []),
        '',
      ].join('\n'),
    );
    log(`results written to ${await writeResults(ROOT, 'inventory', res.date, res)}`);
  } finally {
    await proxy.stop();
    await reg.reg.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
