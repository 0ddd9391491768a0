/**
 * Install benchmark: applying a hosted cluster's objects to a hub, airgap against kubectl.
 *
 * What is compared. `airgap install cluster --render --render-sensitive` writes the objects of a
 * site with --hosts bare-metal hosts (default 50: about 110 objects — namespaces, secrets, the
 * HostedCluster, NodePool, InfraEnv, a BMC secret and a BareMetalHost per host) one per file. Then,
 * against the hub simulator's HTTPS API (controllers stopped, so only the apply is measured):
 *   - `kubectl apply --server-side -f <dir>` (the runbook's `oc apply`);
 *   - airgap's apply of the same files in a fresh node process (bench/lib/apply-dir.ts: the Kube
 *     client and applyObjects that `airgap install cluster` uses).
 * Each is timed twice on a fresh hub: the first apply creates everything, the second changes
 * nothing (what a re-run of the install costs). Wall time includes process start; airgap's apply
 * alone (after node started and loaded @kubernetes/client-node, about 0.4 s) is reported beside it.
 *
 * Why it is fair. Same objects, same API server, same TLS, one process each, server-side apply for
 * both. Rounds alternate which tool goes first; medians are compared; the ratio is kubectl ÷ airgap
 * (above 1: airgap is faster).
 *
 * Usage: node build/bench/install.js [--rounds 5] [--hosts 50]
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { startHub } from '../lab/hub/index.js';
import { buildLabSite } from '../lab/site.js';
import { log, writeResults } from './lib/common.js';
import { table } from './lib/report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'run.js');
const APPLY = join(ROOT, 'dist', 'bench', 'lib', 'apply-dir.js');

interface Timing {
  create: number;
  unchanged: number;
  /** airgap only: the apply itself, after node started and the client library loaded. */
  applyOnly?: { create: number; unchanged: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timed(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ ms: number; stdout: string }> {
  const start = performance.now();
  const r = await execa(cmd, args, { reject: false, env, timeout: 300_000 });
  const ms = performance.now() - start;
  if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

const applyMs = (stdout: string) =>
  (JSON.parse(stdout.trim().split('\n').pop()!) as { applyMs: number }).applyMs;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '5' }, hosts: { type: 'string', default: '50' } },
  });
  const rounds = Number(values.rounds);
  const hosts = Number(values.hosts);
  const dir = await mkdtemp(join(tmpdir(), 'airgap-bench-install-'));
  try {
    log(`lab site with ${hosts} hosts (mirror, release, site file)`);
    const lab = await buildLabSite({ dir: join(dir, 'site'), stack: 'ipv4', hosts, noCatalog: true });
    const manifests = join(dir, 'manifests');
    await timed('node', [
      CLI,
      'install',
      'cluster',
      '-f',
      lab.siteFile,
      '--render',
      manifests,
      '--render-sensitive',
    ]);
    const objects = (await readdir(manifests)).length;
    log(`${objects} objects rendered`);
    const kubectlVersion = (await execa('kubectl', ['version', '--client', '-o', 'json'], { reject: false }))
      .stdout;

    const results: Record<'airgap' | 'kubectl', Timing[]> = { airgap: [], kubectl: [] };
    for (let r = 0; r < rounds; r++) {
      const order: ('airgap' | 'kubectl')[] = r % 2 === 0 ? ['airgap', 'kubectl'] : ['kubectl', 'airgap'];
      for (const tool of order) {
        const hub = await startHub({ dir: join(dir, `hub-${r}-${tool}`) });
        await hub.controllers.stop();
        try {
          const run =
            tool === 'kubectl'
              ? () =>
                  timed(
                    'kubectl',
                    [
                      '--kubeconfig',
                      hub.kubeconfigFile,
                      '--cache-dir',
                      join(dir, `kc-${r}`),
                      'apply',
                      '--server-side',
                      '-f',
                      manifests,
                    ],
                    {
                      HOME: dir,
                    },
                  )
              : () => timed('node', [APPLY, hub.kubeconfigFile, manifests]);
          const create = await run();
          const unchanged = await run();
          results[tool].push({
            create: create.ms,
            unchanged: unchanged.ms,
            ...(tool === 'airgap'
              ? { applyOnly: { create: applyMs(create.stdout), unchanged: applyMs(unchanged.stdout) } }
              : {}),
          });
          log(
            `round ${r + 1} ${tool}: create ${create.ms.toFixed(0)} ms, unchanged ${unchanged.ms.toFixed(0)} ms`,
          );
        } finally {
          await hub.server.close();
        }
      }
    }
    await lab.stop();
    const med = (tool: 'airgap' | 'kubectl', k: 'create' | 'unchanged') =>
      median(results[tool].map((t) => t[k]));
    const applyOnly = (k: 'create' | 'unchanged') => median(results.airgap.map((t) => t.applyOnly![k]));
    const summary = {
      objects,
      hosts,
      rounds,
      medianMs: {
        airgap: { create: med('airgap', 'create'), unchanged: med('airgap', 'unchanged') },
        airgapApplyOnly: { create: applyOnly('create'), unchanged: applyOnly('unchanged') },
        kubectl: { create: med('kubectl', 'create'), unchanged: med('kubectl', 'unchanged') },
      },
      ratio: {
        create: med('kubectl', 'create') / med('airgap', 'create'),
        unchanged: med('kubectl', 'unchanged') / med('airgap', 'unchanged'),
      },
    };
    process.stdout.write(
      table([
        ['apply', 'airgap (ms)', 'kubectl (ms)', 'kubectl ÷ airgap', 'airgap without start (ms)'],
        ...(['create', 'unchanged'] as const).map((k) => [
          k === 'create' ? `first (creates ${objects})` : 'again (no change)',
          summary.medianMs.airgap[k].toFixed(0),
          summary.medianMs.kubectl[k].toFixed(0),
          `${summary.ratio[k].toFixed(2)}×`,
          summary.medianMs.airgapApplyOnly[k].toFixed(0),
        ]),
      ]) + '\n',
    );
    const file = await writeResults(ROOT, 'install', new Date().toISOString(), {
      ...summary,
      results,
      kubectlVersion,
    });
    log(`results in ${file}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
