/**
 * Planning benchmark: `airgap mirror plan` of a whole channel with `full: true`, on loopback
 * registries. The upstream holds `--releases` release payloads of `--components` components each
 * (the real stable channel of one minor holds about 100 releases of about 150 images), in one
 * channel of a loopback update service; the destination is an empty registry, so every entry is
 * looked up there too. Planning is mostly waiting for answers (payload manifests, configs and
 * layers, the destination's presence checks), so what is measured is the wall time of the plan
 * command against its CPU time, and the entries it planned. The goal of the bastion-ready issue:
 * a 100-release channel planned in at most 15 s on loopback.
 *
 * The source authenticates the way quay.io and registry.redhat.io do, with bearer tokens from a
 * token server (`--source-auth token`, the default); `--source-auth htpasswd` makes distribution
 * check a bcrypt hash on every request instead, which costs it more CPU per manifest than serving
 * it (the plan then takes about half as long again on two cores).
 *
 * Usage: node build/bench/plan.js [--releases 101] [--components 147] [--source-auth token|htpasswd]
 *                                 [--cli path/to/bin/run.js | path/to/airgap-executable]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildUpstream } from '../lab/upstream.js';
import { airgapCommand, cpuSeconds, timed } from './lib/proc.js';
import { writeMirrorConfig } from '../test/helpers/fixtures.js';
import { testPki } from '../test/helpers/tls.js';
import { startTokenServer } from '../test/helpers/token-server.js';
import { mergedAuth, startBenchRegistry } from './lib/setup.js';

const { values } = parseArgs({
  options: {
    releases: { type: 'string', default: '101' },
    components: { type: 'string', default: '147' },
    'source-auth': { type: 'string', default: 'token' },
    cli: { type: 'string', default: resolve(import.meta.dirname, '../../bin/run.js') },
  },
});
const releases = Number(values.releases);
const GOAL_S = 15;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'airgap-bench-plan-'));
  const password = randomBytes(12).toString('hex');
  const tokens =
    values['source-auth'] === 'token'
      ? await startTokenServer({ users: { bench: { password, acl: { '*': ['pull'] } } } })
      : undefined;
  const pki = await testPki(join(work, 'pki'));
  const src = await startBenchRegistry(
    tokens
      ? {
          token: {
            realm: tokens.realm,
            service: tokens.service,
            issuer: tokens.issuer,
            rootCertBundle: pki.caFile,
          },
        }
      : {},
  );
  const dst = await startBenchRegistry();
  let stopUpstream = async (): Promise<void> => undefined;
  try {
    const versions = Array.from({ length: releases }, (_, i) => `4.18.${i + 1}`);
    process.stderr.write(`plan bench: building ${releases} releases × ${values.components} components…\n`);
    const seeded = Date.now();
    const up = await buildUpstream({
      // Written into the registry's storage: pushing 15k images would take longer than the plan.
      registry: {
        host: src.reg.host,
        caFile: src.reg.caFile,
        authFile: src.reg.authFile,
        storageDir: src.reg.storageDir,
      },
      dir: join(work, 'upstream'),
      versions,
      components: Number(values.components),
      componentBytes: 256,
      baseBytes: [1024],
      packages: 1,
      channelsPerPackage: 1,
      bundlesPerChannel: 1,
      risk: false,
    });
    stopUpstream = () => up.stop();
    process.stderr.write(`plan bench: seeded in ${((Date.now() - seeded) / 1000).toFixed(0)} s; planning…\n`);
    const isc = await writeMirrorConfig(join(work, 'isc.yaml'), {
      platform: { channels: [{ name: up.channel, full: true }] },
    });
    const authFile = await mergedAuth(join(work, 'auth.json'), [src.reg, dst.reg], {
      ...(tokens ? { [src.reg.host]: { auth: Buffer.from(`bench:${password}`).toString('base64') } } : {}),
    });
    const [cmd, pre] = airgapCommand(values.cli!);
    // The registries' CPU over the plan: on a small machine they, not airgap, may be the floor.
    const cpuBefore = [await cpuSeconds(src.pid), await cpuSeconds(dst.pid)];
    const r = await timed(
      cmd,
      [
        ...pre,
        ...['mirror', 'plan', '-c', isc, '--workspace', `file://${join(work, 'ws')}`],
        `docker://${dst.reg.host}/ocp`,
        ...['--authfile', authFile, '--ca-file', src.reg.caFile, '--graph-url', up.graph.url],
        // The lab's signature store (empty without a signer): nothing is asked of the internet.
        ...['--signature-url', up.signatureStore.url],
        '--remove-signatures',
        '--json',
      ],
      { timeFile: join(work, 'time.txt') },
    );
    if (r.exitCode !== 0) throw new Error(`mirror plan exited ${r.exitCode}: ${r.stderr.slice(-2000)}`);
    const plan = JSON.parse(r.stdout) as { plan: unknown[]; releases: unknown[] };
    const secs = r.wallMs / 1000;
    const [srcCpu, dstCpu] = [
      (await cpuSeconds(src.pid)) - cpuBefore[0]!,
      (await cpuSeconds(dst.pid)) - cpuBefore[1]!,
    ];
    process.stdout.write(
      [
        `mirror plan, channel ${up.channel} with full: true: ${plan.releases.length} releases, ${plan.plan.length} entries (source auth: ${values['source-auth']})`,
        `  wall ${secs.toFixed(1)} s, CPU ${(r.userS + r.sysS).toFixed(1)} s, peak RSS ${(r.peakRssKiB / 1024).toFixed(0)} MiB`,
        `  registry CPU meanwhile: source ${srcCpu.toFixed(1)} s, destination ${dstCpu.toFixed(1)} s (${cpus().length} cores)`,
        `  goal ≤ ${GOAL_S} s: ${secs <= GOAL_S ? 'met' : 'NOT met'}`,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all([src.reg.stop(), dst.reg.stop(), stopUpstream(), tokens?.close()]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
