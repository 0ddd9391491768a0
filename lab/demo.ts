/**
 * `npm run demo`: a disconnected site on one machine. Two real registries (Debian's
 * docker-registry, TLS with a freshly minted CA, htpasswd auth) stand in for the internet-side
 * source and the bastion's mirror, and a loopback update service stands in for api.openshift.com.
 * The source holds OpenShift content shaped like the real thing (release payloads 4.18.1–4.18.3, a
 * redhat-operator-index with the operators a hosted cluster needs, ubi9). Then the real CLI writes
 * an ImageSetConfiguration with the hosted-agent preset, plans it, mirrors it registry → registry
 * (twice: the second run finds everything there), to an archive on disk, verifies the archive and
 * pushes it into the mirror with no access to the source side, writes the trust ConfigMaps, and
 * installs a hosted cluster from the mirror on a simulated hub (install hub, install cluster,
 * cluster status) — printing what it ran.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytes } from '../src/util/progress.js';
import { generateSigningKey } from './cosign.js';
import {
  buildRegistryImageArchive,
  LAB_REGISTRY_REF,
  loopbackInstallArgs,
  podmanCleanup,
  podmanEnv,
  podmanUsable,
} from './podman.js';
import { createGpgSigner } from './gpg.js';
import { startHub } from './hub/index.js';
import { startRegistry, type TestRegistry } from './registry.js';
import { writeLabSiteFiles } from './site.js';
import { buildUpstream } from './upstream.js';

const MiB = 1024 * 1024;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'bin', 'run.js');

/** Paths of this run, for people: relative to the repository, and the CA files as ca.crt. */
const caFiles = new Set<string>();
function shown(arg: string): string {
  if (caFiles.has(arg)) return 'ca.crt';
  return arg.replaceAll(`${root}/`, '');
}

function say(text: string): void {
  process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);
}

/**
 * Run the real CLI, echoing the command line a person would type. Asynchronously: the registries
 * are children of this process and their log pipes must keep draining while the CLI runs.
 */
async function cli(args: string[]): Promise<number> {
  process.stdout.write(`$ airgap ${args.map(shown).join(' ')}\n`);
  const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code ?? 1;
}

async function main(): Promise<void> {
  const work = join(root, '.work', 'demo');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  say('Starting two registries: the "internet" source and the bastion mirror (TLS + htpasswd)');
  const [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
  const stop: (() => Promise<void>)[] = [() => src.stop(), () => dst.stop()];
  caFiles.add(src.caFile).add(dst.caFile);
  let failed = 0;
  try {
    process.stdout.write(`source ${src.host}, mirror ${dst.host}\n`);
    const auth = join(work, 'auth.json');
    const b64 = (r: TestRegistry) => Buffer.from(`${r.username}:${r.password}`).toString('base64');
    await writeFile(
      auth,
      JSON.stringify({ auths: { [src.host]: { auth: b64(src) }, [dst.host]: { auth: b64(dst) } } }),
      { mode: 0o600 },
    );

    say(
      'Building OpenShift content on the source side: releases, an operator catalog, ubi9, the update service',
    );
    // Signed as the real content is: a cosign signature next to every image, and GPG signatures of
    // every release (made with skopeo standalone-sign) in a signature store.
    const gpg = await createGpgSigner('airgap demo release signer');
    stop.push(() => gpg.stop());
    const keyring = join(work, 'release-key.asc');
    await writeFile(keyring, gpg.publicKey);
    const up = await buildUpstream({
      signing: { key: generateSigningKey().privateKey },
      releaseSigner: gpg,
      registry: { host: src.host, caFile: src.caFile, authFile: auth },
      dir: join(work, 'upstream'),
      versions: ['4.18.1', '4.18.2', '4.18.3'],
      components: 12,
      baseBytes: [6 * MiB, 2 * MiB],
      componentBytes: MiB / 2,
      packages: 6,
      packageNames: ['multicluster-engine', 'lvms-operator', 'local-storage-operator', 'metallb-operator'],
      operatorBytes: MiB / 4,
    });
    stop.push(() => up.stop());
    process.stdout.write(
      `${formatBytes(up.bytes)} pushed: releases ${up.releases.map((r) => r.version).join(', ')} in channel ` +
        `${up.channel}, catalog ${up.catalogRef}; update service at ${up.graph.url}\n`,
    );

    const isc = join(work, 'imageset-config.yaml');
    say('Write the ImageSetConfiguration: what a disconnected agent-based hosted cluster needs');
    failed += await cli([
      'mirror',
      'init',
      '--preset',
      'hosted-agent',
      '--version',
      '4.18',
      '--catalog',
      up.catalogRef,
      '--graph-url',
      up.graph.url,
      '-o',
      isc,
    ]);
    const common = [
      '-c',
      isc,
      '--authfile',
      auth,
      '--ca-file',
      src.caFile,
      '--graph-url',
      up.graph.url,
      '--graph-base-image',
      up.ubiRef,
      '--signature-url',
      up.signatureStore.url,
      '--release-keyring',
      keyring,
    ];
    const ws = ['--workspace', `file://${work}/ws`];

    say('Plan: which releases and bundles, every tag pinned to a digest, how much will move');
    failed += await cli(['mirror', 'plan', ...common, ...ws, `docker://${dst.host}/ocp4`]);

    say('Mirror to mirror');
    failed += await cli(['mirror', ...common, ...ws, `docker://${dst.host}/ocp4`]);
    const resources = await readdir(join(work, 'ws', 'cluster-resources'));
    process.stdout.write(`cluster resources in .work/demo/ws/cluster-resources: ${resources.join(', ')}\n`);

    say('The same again: everything is already there');
    failed += await cli(['mirror', ...common, ...ws, `docker://${dst.host}/ocp4`]);

    say('Mirror to disk, in archive parts of at most 40 MiB (the plan travels inside)');
    failed += await cli(['mirror', ...common, '--archive-size', '40M', `file://${work}/archive`]);

    say('Verify the archive before carrying it across the air gap');
    failed += await cli(['mirror', 'verify', `file://${work}/archive`]);

    say('Disk to mirror, on the disconnected side: no source registry, no update service, no -c');
    const d2m = ['--authfile', auth, '--ca-file', dst.caFile, '--from', `file://${work}/archive`];
    failed += await cli(['mirror', ...d2m, `docker://${dst.host}/from-archive`]);

    say('Check the mirror: every image at its digest, and the cluster resources lead to them');
    failed += await cli(['mirror', 'check', ...d2m, `docker://${dst.host}/from-archive`]);

    say('Trust and mirror ConfigMaps for the hub, the hosted cluster and assisted-service');
    failed += await cli([
      'certs',
      'configmaps',
      '--ca',
      dst.caFile,
      '--registry',
      dst.host,
      '--cluster-resources',
      join(work, 'ws', 'cluster-resources'),
      '-o',
      join(work, 'trust'),
    ]);

    say(
      'The hub: a simulated OpenShift management cluster with the multicluster engine (HTTPS API, real CRDs)',
    );
    const hub = await startHub({ dir: join(work, 'hub'), controllers: { hubVersion: '4.18.3' } });
    stop.unshift(() => hub.stop());
    const site = await writeLabSiteFiles({
      dir: join(work, 'site'),
      stack: 'ipv4',
      name: 'demo',
      hosts: 2,
      mirror: { host: dst.host, caFile: dst.caFile, auths: { [dst.host]: { auth: b64(dst) } } },
      releaseTag: `${dst.host}/ocp4/openshift/release-images:4.18.3-x86_64`,
      releaseVersion: '4.18.3',
      clusterResources: join(work, 'ws', 'cluster-resources'),
    });
    process.stdout.write(
      `hub API ${hub.url} (kubeconfig .work/demo/hub/hub.kubeconfig); site file .work/demo/site/site.yaml: ` +
        `hosted cluster "demo", 2 bare-metal hosts with Redfish BMCs\n`,
    );
    const onHub = ['-f', site.siteFile, '--kubeconfig', hub.kubeconfigFile];

    say('Prepare the hub: registry trust, mirror sets, catalogs, MCE components, assisted-service');
    failed += await cli(['install', 'hub', ...onHub]);

    say('Install the hosted cluster from the mirror, to Ready nodes and a kubeconfig');
    failed += await cli(['install', 'cluster', ...onHub, '--kubeconfig-out', join(work, 'demo.kubeconfig')]);

    say('The hosted cluster on one screen');
    failed += await cli(['cluster', 'status', ...onHub]);

    failed += await bastionRegistry(work);
  } finally {
    await Promise.all(stop.map((f) => f()));
  }
  say(failed === 0 ? 'Demo complete' : 'Demo finished with failures');
  process.exitCode = failed === 0 ? 0 : 1;
}

/**
 * The bastion's own registry, installed with podman under systemd: the registry image carried as an
 * OCI archive (built here from Debian's distribution binary), the dry run, then the install. Where
 * podman is missing, or systemd is not PID 1 (a container), it says so plainly; nothing fails.
 */
async function bastionRegistry(work: string): Promise<number> {
  say("The bastion's own registry: installed with podman under systemd, trusted, checked from outside");
  const reason = await podmanUsable();
  if (reason) {
    process.stdout.write(
      `podman cannot run containers on this machine (${reason}): the registry install is skipped here\n`,
    );
    return 0;
  }
  const dir = join(work, 'bastion');
  // Built in a podman of its own (then cleaned up): what a user carries across is only the archive.
  const build = podmanEnv(join(dir, 'build'));
  const archive = await buildRegistryImageArchive({ env: build, dir: join(dir, 'carried') }).finally(() =>
    podmanCleanup(build),
  );
  await writeFile(join(dir, 'registry.pass'), `${randomBytes(15).toString('base64url')}\n`, { mode: 0o600 });
  const args = loopbackInstallArgs({
    dir: join(dir, 'registry'),
    name: 'airgap-demo-registry',
    port: 5443,
    username: 'demo',
    passwordFile: join(dir, 'registry.pass'),
    dataDir: join(dir, 'data'),
    image: LAB_REGISTRY_REF,
    imageArchive: archive,
  });
  const dry = await cli([...args, '--dry-run']);
  if (dry !== 0) return dry;
  const systemd = await new Promise<boolean>((res) =>
    execFile('systemctl', ['is-system-running'], (_e, out) =>
      res(/^(running|degraded|starting|initializing)\s*$/.test(String(out))),
    ),
  );
  const code = await cli(args);
  if (code === 0)
    process.stdout.write(
      'installed; remove it with: airgap registry uninstall --dir .work/demo/bastion/registry --name airgap-demo-registry --delete-data --yes\n',
    );
  else if (!systemd)
    process.stdout.write(
      'not installed on this machine: systemd is not PID 1 here (a container), and install stopped before changing anything, as it said\n',
    );
  return systemd ? code : 0;
}

main().catch((e: unknown) => {
  process.stderr.write(`demo failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
