/**
 * The real kubectl against the hub API server: discovery, get (built-in, CRD, short names),
 * server-side and client-side apply of the real `hcp create cluster agent --render` sample, wait on a
 * condition the test flips in the store, and delete. Written for kubectl 1.20 (Debian) to 1.33: only
 * `--kubeconfig`, `--cache-dir`, `-o json`/`-o name` and flags 1.20 has.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigYaml } from '../../../lab/hub/kubeconfig.js';
import type { KubeObject } from '../../../lab/hub/types.js';
import { testCertificates } from '../../helpers/tls.js';
import { withRealdata, withRealdataAndCrds } from '../../helpers/realdata.js';
import { sampleObjects, startHub, TOKEN, type Hub } from './fixture.js';

function which(cmd: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const KUBECTL = which('kubectl');
/** Versioned kubectl binaries beside the gcloud dispatcher, when present (kubectl.1.27 ... kubectl.1.33). */
const GCLOUD_BIN = '/usr/lib/google-cloud-sdk/bin';
const VERSIONED = existsSync(GCLOUD_BIN)
  ? readdirSync(GCLOUD_BIN)
      .filter((f) => /^kubectl\.1\.\d+$/.test(f))
      .map((f) => join(GCLOUD_BIN, f))
  : [];

let hub: Hub;
let dir: string;
let kubeconfig: string;

async function kubectl(args: string[], bin = KUBECTL!, cacheDir = join(dir, 'cache')) {
  return execa(bin, ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], {
    reject: false,
    env: { HOME: dir, KUBECONFIG: kubeconfig },
    timeout: 60_000,
  });
}

async function json(args: string[]): Promise<Record<string, unknown>> {
  const r = await kubectl([...args, '-o', 'json']);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe.skipIf(!KUBECTL)('kubectl against the hub API server', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hub-kubectl-'));
    hub = await startHub();
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      kubeconfigYaml({
        server: hub.api.url,
        caPem: testCertificates().ca.certPem,
        token: TOKEN,
        name: 'hub',
        namespace: 'default',
      }),
    );
    // The real hcp render (the tests from applying it on need the realdata).
    if (withRealdata.present())
      writeFileSync(
        join(dir, 'sample.yaml'),
        sampleObjects()
          .map((o) => `---\n${dump(o)}`)
          .join(''),
      );
  });
  afterAll(async () => {
    await hub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gets built-in objects and reports a missing CRD object as NotFound', async () => {
    const list = await json(['get', 'namespaces']);
    expect((list.items as KubeObject[]).map((o) => o.metadata.name)).toEqual([
      'default',
      'kube-public',
      'kube-system',
    ]);
    const missing = await kubectl(['get', 'hostedcluster', 'nope', '-n', 'default']);
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stderr).toContain('hostedclusters.hypershift.openshift.io "nope" not found');
  });

  it('prints nodes with the STATUS, ROLES, AGE and VERSION kube-apiserver computes', async () => {
    const node = (
      name: string,
      labels: Record<string, string>,
      ready: string,
      version: string,
      ip: string,
    ) => {
      const created = hub.store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
      hub.store.updateStatus({
        ...created,
        status: {
          conditions: [
            { type: 'MemoryPressure', status: 'False' },
            { type: 'Ready', status: ready, reason: ready === 'True' ? 'KubeletReady' : 'KubeletNotReady' },
          ],
          addresses: [{ type: 'InternalIP', address: ip }],
          nodeInfo: {
            kubeletVersion: version,
            osImage: 'RHCOS',
            kernelVersion: '5.14.0',
            containerRuntimeVersion: 'cri-o://1.31.4',
          },
        },
      });
    };
    node(
      'worker-0',
      { 'node-role.kubernetes.io/worker': '', 'kubernetes.io/os': 'linux' },
      'True',
      'v1.31.6',
      '10.0.0.10',
    );
    node('worker-1', { 'kubernetes.io/os': 'linux' }, 'False', 'v1.30.4', '10.0.0.11');

    const rows = async (args: string[]) => {
      const r = await kubectl(['get', 'nodes', ...args]);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      return r.stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/));
    };
    const plain = await rows([]);
    expect(plain[0]).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(plain.slice(1)).toEqual([
      ['worker-0', 'Ready', 'worker', expect.stringMatching(/^\d+s$/), 'v1.31.6'],
      ['worker-1', 'NotReady', '<none>', expect.stringMatching(/^\d+s$/), 'v1.30.4'],
    ]);
    const wide = await rows(['-o', 'wide']);
    expect(wide[0]).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    expect(wide[1]!.slice(5)).toEqual(['10.0.0.10', '<none>', 'RHCOS', '5.14.0', 'cri-o://1.31.4']);
  });

  withRealdata.it('applies the rendered cluster server-side; a second apply changes nothing', async () => {
    const first = await kubectl(['apply', '--server-side', '-f', join(dir, 'sample.yaml')]);
    expect(first.stderr).toBe('');
    expect(first.stdout.split('\n')).toEqual([
      'namespace/clusters serverside-applied',
      'secret/example-pull-secret serverside-applied',
      'secret/example-etcd-encryption-key serverside-applied',
      'hostedcluster.hypershift.openshift.io/example serverside-applied',
      'nodepool.hypershift.openshift.io/example serverside-applied',
    ]);
    const hc = await json(['get', 'hc', 'example', '-n', 'clusters']);
    const stored = hub.store.get({
      apiVersion: 'hypershift.openshift.io/v1beta1',
      kind: 'HostedCluster',
      namespace: 'clusters',
      name: 'example',
    })!;
    expect((stored.metadata.managedFields as { manager: string }[]).map((m) => m.manager)).toEqual([
      'kubectl',
    ]);
    expect(hc.spec).toMatchObject({
      release: { image: expect.stringContaining('ocp-release') },
      platform: { type: 'Agent' },
    });

    const rvBefore = hub.store.resourceVersion();
    const second = await kubectl(['apply', '--server-side', '-f', join(dir, 'sample.yaml')]);
    expect(second.exitCode).toBe(0);
    expect(hub.store.resourceVersion()).toBe(rvBefore);
    // short names resolve through discovery
    const nps = await json(['get', 'nps', '-n', 'clusters']);
    expect((nps.items as KubeObject[]).map((o) => o.metadata.name)).toEqual(['example']);
    const secret = await json(['get', 'secret', 'example-pull-secret', '-n', 'clusters']);
    expect(secret.data).toEqual({ '.dockerconfigjson': 'ZmFrZQ==' });
  });

  withRealdata.it('applies client-side: creates, then patches a change', async () => {
    const file = join(dir, 'cm.yaml');
    const cm = (v: string) =>
      dump({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cfg', namespace: 'clusters' },
        data: { v },
      });
    writeFileSync(file, cm('1'));
    const created = await kubectl(['apply', '-f', file]);
    expect(created.stdout.trim()).toBe('configmap/cfg created');
    writeFileSync(file, cm('2'));
    const configured = await kubectl(['apply', '-f', file]);
    expect(configured.stdout.trim()).toBe('configmap/cfg configured');
    expect(
      hub.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'clusters', name: 'cfg' })!.data,
    ).toEqual({ v: '2' });
  });

  withRealdata.it('waits for condition=Available while the condition flips in the store', async () => {
    const started = Date.now();
    const waiting = kubectl([
      'wait',
      '--for=condition=Available',
      '--timeout=30s',
      'hostedcluster/example',
      '-n',
      'clusters',
    ]);
    await new Promise((r) => setTimeout(r, 700));
    const hc = hub.store.get({
      apiVersion: 'hypershift.openshift.io/v1beta1',
      kind: 'HostedCluster',
      namespace: 'clusters',
      name: 'example',
    })!;
    hub.store.updateStatus({
      ...hc,
      status: {
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'AsExpected',
            message: 'The hosted control plane is available',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            observedGeneration: hc.metadata.generation,
          },
        ],
      },
    });
    const r = await waiting;
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe('hostedcluster.hypershift.openshift.io/example condition met');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  withRealdata.it('times out a wait on a condition that never comes', async () => {
    const r = await kubectl([
      'wait',
      '--for=condition=Degraded',
      '--timeout=1s',
      'hostedcluster/example',
      '-n',
      'clusters',
    ]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/timed out waiting for the condition/);
  });

  withRealdataAndCrds.it('rejects an invalid object with the API server message', async () => {
    const file = join(dir, 'bad.yaml');
    const np = sampleObjects().find((o) => o.kind === 'NodePool')!;
    np.metadata.name = 'bad';
    (np.spec!.management as Record<string, unknown>).upgradeType = 'Sometimes';
    writeFileSync(file, dump(np));
    const r = await kubectl(['apply', '--server-side', '-f', file]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(
      'spec.management.upgradeType: Unsupported value: "Sometimes": supported values: "Replace", "InPlace"',
    );
  });

  withRealdata.it('deletes a CRD object', async () => {
    const r = await kubectl(['delete', 'nodepool', 'example', '-n', 'clusters']);
    expect(r.stdout.trim()).toBe('nodepool.hypershift.openshift.io "example" deleted');
    const names = await kubectl(['get', 'nodepools', '-n', 'clusters', '-o', 'name']);
    expect(names.stdout.trim()).toBe('');
  });

  // After the rendered cluster is applied: it needs the realdata too.
  (VERSIONED.length === 0 ? it.skip : withRealdata.it)(
    'works with every kubectl version installed beside the dispatcher',
    async () => {
      const file = join(dir, 'multi.yaml');
      for (const bin of VERSIONED) {
        const v = bin.split('kubectl.')[1]!.replace('.', '-');
        const cache = join(dir, `cache-${v}`);
        writeFileSync(
          file,
          dump({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `v${v}`, namespace: 'clusters' },
            data: { a: 'b' },
          }),
        );
        const applied = await kubectl(['apply', '--server-side', '-f', file], bin, cache);
        expect(`${bin}: ${applied.stderr}${applied.stdout.trim()}`).toBe(
          `${bin}: configmap/v${v} serverside-applied`,
        );
        const got = await kubectl(['get', 'hcs', '-n', 'clusters', '-o', 'name'], bin, cache);
        expect(`${bin}: ${got.stdout.trim()}`).toBe(`${bin}: hostedcluster.hypershift.openshift.io/example`);
      }
    },
  );
});
