/**
 * What `--render` writes is what a person would apply by hand: the real kubectl applies the
 * rendered manifests to the hub simulator and waits for the HostedCluster to be Available, and
 * `airgap install cluster` then takes over from there. And the hub preflight: what the hub must
 * have before `airgap install hub` changes anything.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { useLabSite } from '../helpers/lab-site.js';
import { ClusterError } from '../../src/cluster/errors.js';

describe('rendered manifests, kubectl, and the hub preflight', () => {
  const t = useLabSite();

  const kubectl = (args: string[]) =>
    execa(
      'kubectl',
      ['--kubeconfig', t.hub.kubeconfigFile, '--cache-dir', join(t.dir, 'kube-cache'), ...args],
      {
        reject: false,
        env: { HOME: t.dir },
        timeout: 90_000,
      },
    );

  it('--render writes one file per object in apply order; Secrets only with --render-sensitive, 0600', async () => {
    const plain = join(t.dir, 'render-plain');
    const r = await airgap(['install', 'cluster', '-f', t.lab.siteFile, '--render', plain]);
    expect(r.exitCode, r.stderr).toBe(0);
    const files = (await readdir(plain)).sort();
    expect(files[0]).toMatch(/^01-namespace-clusters\.yaml$/);
    expect(files.some((f) => f.includes('-secret-'))).toBe(false);
    expect(r.stdout).toMatch(/Secret\(s\) left out/);
    const all = await Promise.all(files.map((f) => readFile(join(plain, f), 'utf8')));
    expect(all.join('\n')).not.toContain('status:');

    const full = join(t.dir, 'render-full');
    const s = await airgap([
      'install',
      'cluster',
      '-f',
      t.lab.siteFile,
      '--render',
      full,
      '--render-sensitive',
    ]);
    expect(s.exitCode, s.stderr).toBe(0);
    const secrets = (await readdir(full)).filter((f) => f.includes('-secret-'));
    expect(secrets.length).toBeGreaterThanOrEqual(6); // pull (x2), ssh, etcd key, 2 BMC
    for (const f of secrets) expect((await stat(join(full, f))).mode & 0o777, f).toBe(0o600);
  }, 120_000);

  it('kubectl applies the rendered manifests and waits for Available; install cluster then continues from there', async () => {
    const hub = await t.startHub();
    const h = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--kubeconfig', hub.kubeconfigFile]);
    expect(h.exitCode, h.stderr).toBe(0);
    const out = join(t.dir, 'render-apply');
    const r = await airgap([
      'install',
      'cluster',
      '-f',
      t.lab.siteFile,
      '--render',
      out,
      '--render-sensitive',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);

    const apply = await kubectl(['apply', '--server-side', '-f', out]);
    expect(apply.exitCode, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/hostedcluster\.hypershift\.openshift\.io\/lab serverside-applied/);
    const wait = await kubectl([
      'wait',
      '--for=condition=Available',
      '--timeout=60s',
      '-n',
      'clusters',
      'hostedcluster/lab',
    ]);
    expect(wait.exitCode, wait.stderr).toBe(0);

    const i = await airgap([
      'install',
      'cluster',
      '-f',
      t.lab.siteFile,
      '--kubeconfig',
      hub.kubeconfigFile,
      '--kubeconfig-out',
      join(t.dir, 'kc-render'),
      '--json',
    ]);
    expect(i.exitCode, i.stderr).toBe(0);
    const res = JSON.parse(i.stdout) as { applied: { created: boolean }[]; nodes: { ready: boolean }[] };
    expect(res.applied.filter((a) => a.created)).toEqual([]); // kubectl made them all
    expect(res.nodes.filter((x) => x.ready)).toHaveLength(2);
  }, 180_000);

  const registryConfig = () =>
    t.hub.store.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'openshift-config',
      name: 'registry-config',
    });

  it('install hub again changes nothing; when a mirror set changed, the HyperShift operator is restarted', async () => {
    const hub = await t.readyHub();
    const operatorPods = () =>
      hub.store
        .list('v1', 'Pod', { namespace: 'hypershift', labelSelector: 'name=operator' })
        .map((p) => p.metadata.name)
        .sort();
    const before = operatorPods();
    expect(before).toHaveLength(2);

    const again = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--kubeconfig', hub.kubeconfigFile]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/\[mirror\] ImageDigestMirrorSet \S+: unchanged/);
    expect(again.stderr).not.toContain('restarted');
    expect(operatorPods()).toEqual(before);

    // Someone removed the mirror set: it comes back, and the operator must read it again.
    for (const idms of hub.store.list('config.openshift.io/v1', 'ImageDigestMirrorSet', {}))
      hub.store.delete({ apiVersion: idms.apiVersion, kind: idms.kind, name: idms.metadata.name });
    const restored = await airgap([
      'install',
      'hub',
      '-f',
      t.lab.siteFile,
      '--kubeconfig',
      hub.kubeconfigFile,
    ]);
    expect(restored.exitCode, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(/\[mirror\] ImageDigestMirrorSet \S+: created/);
    expect(restored.stderr).toContain('[mirror] Deployment hypershift/operator: restarted (2 pods)');
    const after = operatorPods();
    expect(after).toHaveLength(2);
    expect(after.filter((p) => before.includes(p))).toEqual([]);
  }, 120_000);

  it('install hub stops before changing anything on a hub without the multicluster engine', async () => {
    const hub = await t.startHub();
    hub.store.delete({
      apiVersion: 'multicluster.openshift.io/v1',
      kind: 'MultiClusterEngine',
      name: 'multiclusterengine',
    });
    const r = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--kubeconfig', hub.kubeconfigFile]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(ClusterError.HUB_NO_MCE);
    expect(r.stderr).toContain('install the multicluster engine operator');
    expect(registryConfig()).toBeUndefined();
  }, 60_000);

  it('install hub stops on a storage class the hub does not have, naming those it has', async () => {
    const hub = await t.startHub();
    const site = await t.siteWith((s) => (s.hub.storageClass = 'fast-nvme'));
    const r = await airgap(['install', 'hub', '-f', site, '--kubeconfig', hub.kubeconfigFile]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('the hub has no StorageClass fast-nvme');
    expect(r.stderr).toContain('lvms-vg1');
    expect(registryConfig()).toBeUndefined();
  }, 60_000);

  it('install hub stops on a hub older than hosted control planes on bare metal support', async () => {
    const hub = await t.startHub({ hubVersion: '4.12.40' });
    const r = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--kubeconfig', hub.kubeconfigFile]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(ClusterError.HUB_TOO_OLD);
    expect(r.stderr).toContain('4.12.40');
    expect(registryConfig()).toBeUndefined();
  }, 60_000);
});
