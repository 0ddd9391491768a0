/**
 * The air gap, for real: the disk → registry step runs inside a network namespace whose only
 * reachable address is the destination registry's. What crosses is the archive files, the
 * ImageSetConfiguration, and the destination's credentials and CA; nothing of the source side.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { generateSigningKey } from '../../lab/cosign.js';
import { createGpgSigner, type GpgSigner } from '../../lab/gpg.js';
import { buildUpstream, type Upstream } from '../../lab/upstream.js';
import { digestTag } from '../../src/mirror/plan.js';
import { airgap, REPO_ROOT } from '../helpers/cli.js';
import { refOf, seedRegistry, tempDir } from '../helpers/fixtures.js';
import { createIsolatedNamespace, netnsUnavailable, type IsolatedNamespace } from '../helpers/netns.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { nodeSigstoreProblem } from '../helpers/sigstore-node.js';
import { skopeoDigest, skopeoInspect, skopeoRawManifest } from '../helpers/skopeo.js';

const BIN = resolve(REPO_ROOT, 'bin/run.js');
const KiB = 1024;

const unavailable = await netnsUnavailable();
if (unavailable) console.warn(`airgap.test.ts skipped: ${unavailable}`);

/** What the ImageSetConfiguration asks for: releases, the graph image, an operator, images. */
interface ImageSetContent {
  additionalImages: string[];
  upstream?: Upstream;
}

async function writeImageSet(path: string, content: ImageSetContent): Promise<string> {
  const up = content.upstream;
  const doc = {
    kind: 'ImageSetConfiguration',
    apiVersion: 'mirror.openshift.io/v2alpha1',
    mirror: {
      ...(up
        ? {
            platform: {
              channels: [{ name: up.channel, minVersion: '4.18.2' }],
              graph: true,
              kubeVirtContainer: true,
            },
            operators: [{ catalog: up.catalogRef, packages: [{ name: 'lab-operator-001' }] }],
          }
        : {}),
      additionalImages: content.additionalImages.map((name) => ({ name })),
    },
  };
  await writeFile(path, yaml.dump(doc));
  return path;
}

/** Carry an archive across: only its parts and its manifest, never the connected side's working-dir. */
async function carry(from: string, to: string): Promise<string[]> {
  await mkdir(to, { recursive: true });
  const files = (await readdir(from)).filter(
    (f) => /^mirror_\d+\.tar$/.test(f) || f === 'airgap-archive.json',
  );
  for (const f of files) await copyFile(join(from, f), join(to, f));
  return files;
}

/** curl arguments for `GET https://<hostPort>/v2/` that print only the HTTP status. */
function curlV2(hostPort: string, caFile: string): string[] {
  return [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '--max-time',
    '3',
    '--cacert',
    caFile,
    `https://${hostPort}/v2/`,
  ];
}

describe.skipIf(unavailable)('the disconnected side needs nothing from the source side', () => {
  let ns: IsolatedNamespace;
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];
  let extra: BuiltImage;
  let dir: string;
  let content: ImageSetContent;
  let up: Upstream;
  let gpg: GpgSigner;
  let keyring: string;
  /** The destination as the disconnected side names it: the host side of the veth pair. */
  const destination = () => `docker://${dst.host}/mirror`;

  /** `GET https://<hostPort>/v2/` with curl inside the namespace: status, and exit code (7: no connection). */
  const curlInNs = async (hostPort: string) => {
    const r = await ns.exec('curl', curlV2(hostPort, dst.caFile), { reject: false, stdin: 'ignore' });
    return { exitCode: r.exitCode, status: Number(r.stdout) };
  };

  /** `airgap mirror …` inside the namespace, with the destination's credentials and CA only. */
  const diskToMirrorInNs = (isc: string, archive: string, ...rest: string[]) =>
    ns.exec(
      process.execPath,
      [
        BIN,
        'mirror',
        '-c',
        isc,
        '--authfile',
        dst.authFile,
        '--cert-dir',
        dst.certsDir,
        '--from',
        `file://${archive}`,
        destination(),
        ...rest,
      ],
      { reject: false, stdin: 'ignore', timeout: 20_000, env: { NO_COLOR: '1' } },
    );

  beforeAll(async () => {
    ns = await createIsolatedNamespace();
    [src, dst] = await Promise.all([startRegistry(), startRegistry({ host: ns.hostIp })]);
    [extra, ...built] = await seedRegistry(src, [
      { repo: 'tools/extra', tag: 'v1', layers: [{ size: 10 * KiB }] },
      { repo: 'apps/web', tag: 'v1', layers: [{ id: 'base', size: 600 * KiB }, { size: 100 * KiB }] },
      { repo: 'apps/api', layers: [{ id: 'base', size: 600 * KiB }, { size: 150 * KiB }] },
      { repo: 'ocp/release', layers: [{ size: 80 * KiB }] },
      {
        repo: 'tools/multi',
        tag: 'latest',
        arches: ['amd64', 'arm64'],
        layers: [{ id: 'base', size: 600 * KiB }, { size: 20 * KiB }],
      },
    ]);
    dir = await tempDir();
    // OpenShift content on the source side too: releases in an update graph, a catalog, ubi9, every
    // image signed in cosign's format and every release GPG-signed in the signature store.
    gpg = await createGpgSigner();
    keyring = join(dir, 'lab-release-key.asc');
    await writeFile(keyring, gpg.publicKey);
    up = await buildUpstream({
      registry: { host: src.host, caFile: src.caFile, authFile: src.authFile },
      dir: join(dir, 'upstream'),
      versions: ['4.18.1', '4.18.2', '4.18.3'],
      components: 3,
      signing: { key: generateSigningKey().privateKey },
      releaseSigner: gpg,
    });
    // Two by tag, two by digest.
    content = { additionalImages: built.map((b) => refOf(src, b)), upstream: up };
  });

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), up?.stop(), gpg?.stop()]);
    await ns?.close();
  });

  it('from inside the namespace the source registry is unreachable and the destination answers', async () => {
    // The namespace has its /30 and nothing else: no default route out.
    const routes = await ns.exec('ip', ['-4', 'route', 'show'], { stdin: 'ignore' });
    expect(routes.stdout.trim().split('\n')).toEqual([expect.stringContaining(ns.nsIp)]);
    // The source answers from the connected side ...
    const connected = await execa('curl', curlV2(src.host, src.caFile), { reject: false, stdin: 'ignore' });
    expect(Number(connected.stdout)).toBe(401);
    // ... but not from inside: neither as the ISC names it, nor through the host's veth address.
    const byName = await curlInNs(src.host);
    expect(byName.status).toBe(0);
    expect(byName.exitCode).toBe(7); // couldn't connect
    const viaVeth = await curlInNs(`${ns.hostIp}:${src.host.split(':')[1]}`);
    expect(viaVeth.exitCode).toBe(7);
    // The destination, on the host side of the veth pair, asks for credentials.
    const dest = await curlInNs(dst.host);
    expect(dest).toEqual({ exitCode: 0, status: 401 });
  });

  it('mirror → disk outside, disk → registry inside: every image arrives with its digest', async () => {
    const connectedIsc = await writeImageSet(join(dir, 'isc.yaml'), content);
    const out = join(dir, 'out');
    const m2d = await airgap([
      'mirror',
      '-c',
      connectedIsc,
      '--authfile',
      src.authFile,
      '--cert-dir',
      src.certsDir,
      '--graph-url',
      up.graph.url,
      '--graph-base-image',
      up.ubiRef,
      '--signature-url',
      up.signatureStore.url,
      '--release-keyring',
      keyring,
      `file://${out}`,
      '--json',
    ]);
    expect(m2d.exitCode, m2d.stderr).toBe(0);
    const planned = JSON.parse(m2d.stdout);
    expect(planned.summary, m2d.stderr).toMatchObject({ failed: 0 });
    expect(planned.releases.map((r: { version: string }) => r.version)).toEqual(['4.18.2', '4.18.3']);

    const archive = join(dir, 'carried');
    const files = await carry(out, archive);
    expect(files).toContain('airgap-archive.json');
    expect(files.some((f) => f.endsWith('.tar'))).toBe(true);
    const isc = await writeImageSet(join(archive, 'isc.yaml'), content);

    const d2m = await diskToMirrorInNs(isc, archive, '--json');
    expect(d2m.timedOut).toBe(false);
    expect(d2m.exitCode, String(d2m.stderr)).toBe(0);
    const report = JSON.parse(String(d2m.stdout));
    expect(report.mode).toBe('diskToMirror');
    expect(report.summary.failed).toBe(0);
    expect(report.summary.copied).toBe(planned.summary.copied);
    // The releases, the graph-data image and the filtered catalog came out of the archive, and the
    // cluster resources were written without asking the update service or the source registry.
    expect(
      await skopeoDigest(
        `docker://${dst.skopeoHost}/mirror/openshift/release-images:4.18.3-x86_64`,
        dst.skopeo,
      ),
    ).toBe(up.releases[2]!.digest);
    await skopeoDigest(`docker://${dst.skopeoHost}/mirror/openshift/graph-image:latest`, dst.skopeo);
    const resources = report.clusterResources.map((f: string) => f.slice(f.lastIndexOf('/') + 1)).sort();
    expect(resources).toEqual(
      [
        'cc-redhat-operator-index-v4-18.yaml',
        'clusterimagepolicy-example.yaml',
        'cs-redhat-operator-index-v4-18.yaml',
        'idms-oc-mirror.yaml',
        'itms-oc-mirror.yaml',
        'mapping.txt',
        'registries.conf',
        'signature-configmap.json',
        'signature-configmap.yaml',
        'updateService.yaml',
        `${dst.host}.yaml`,
      ].sort(),
    );

    // The trust chain crossed with the archive. Every release GPG signature in the ConfigMap written
    // inside is accepted by skopeo standalone-verify for the release's digest and the lab key ...
    const resourceDir = report.clusterResources[0].slice(0, report.clusterResources[0].lastIndexOf('/'));
    const cm = yaml.load(await readFile(join(resourceDir, 'signature-configmap.yaml'), 'utf8')) as {
      binaryData: Record<string, string>;
    };
    for (const rel of up.releases.slice(1)) {
      const key = `${rel.digest.replace(':', '-')}-1`;
      expect(Object.keys(cm.binaryData), rel.version).toContain(key);
      const manifest = await skopeoRawManifest(
        `docker://${dst.skopeoHost}/mirror/openshift/release-images:${rel.version}-x86_64`,
        dst.skopeo,
      );
      const check = await gpg.verify(
        manifest,
        `${src.host}/openshift-release-dev/ocp-release:${rel.version}-x86_64`,
        Buffer.from(cm.binaryData[key]!, 'base64'),
      );
      expect(check.ok, check.output).toBe(true);
    }
    // ... and every signed image, read by its original by-digest reference through the generated
    // registries.conf (the source registry out of reach), verifies as a node checks it.
    const registriesConf = await readFile(join(resourceDir, 'registries.conf'), 'utf8');
    const signedOrigins = planned.plan
      .filter((p: { signed?: boolean }) => p.signed)
      .map((p: { source: string }) => p.source);
    expect(signedOrigins.length).toBeGreaterThan(10);
    for (const original of signedOrigins.filter((s: string) => s.includes('/openshift-release-dev/'))) {
      const problem = await nodeSigstoreProblem({
        registriesConf,
        original,
        publicKeyPem: up.signing!.publicKey,
        ...dst.skopeo,
      });
      expect(problem, original).toBeUndefined();
    }

    // An independent client on the connected side reads back exactly what was archived.
    for (const b of built) {
      const ref = `docker://${dst.skopeoHost}/mirror/${b.repo}:${b.tag ?? digestTag(b.digest)}`;
      expect(await skopeoDigest(ref, dst.skopeo), ref).toBe(b.digest);
    }
    const multi = built.find((b) => b.repo === 'tools/multi')!;
    const arm = await skopeoInspect(
      `docker://${dst.skopeoHost}/mirror/tools/multi@${multi.children!.arm64}`,
      dst.skopeo,
    );
    expect(arm.Architecture).toBe('arm64');
  });

  it('an archive made for another configuration is refused at once, before anything is pushed', async () => {
    const archive = join(dir, 'carried');
    const isc = await writeImageSet(join(dir, 'isc-more.yaml'), {
      additionalImages: [...content.additionalImages, refOf(src, extra)],
    });
    const started = Date.now();
    const r = await diskToMirrorInNs(isc, archive);
    const output = `${String(r.stdout)}\n${String(r.stderr)}`;
    expect(r.timedOut, output).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.exitCode, output).not.toBe(0);
    // The user is told the archive was made for another configuration, before anything is pushed.
    expect(r.exitCode, output).toBe(2);
    expect(output).toMatch(/archive .* was made from a different ImageSetConfiguration/);
    expect(output).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
    // The images the archive holds are at the destination either way.
    for (const b of built) {
      const ref = `docker://${dst.skopeoHost}/mirror/${b.repo}:${b.tag ?? digestTag(b.digest)}`;
      expect(await skopeoDigest(ref, dst.skopeo), ref).toBe(b.digest);
    }
  });
});
