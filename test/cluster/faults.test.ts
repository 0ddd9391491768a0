/**
 * What goes wrong at a real site, against the hub simulator through the real CLI: a host that fails
 * provisioning, a discovery ISO that cannot be built, a busy API server (500s, 409s, dropped
 * watches), an interrupted run, the legacy HyperShift RBAC, Agents nobody approves, and bad input
 * caught in preflight before anything is applied.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA } from '../../src/certs/mint.js';
import { startHub, type Hub } from '../../lab/hub/index.js';
import { airgap, spawnAirgap } from '../helpers/cli.js';
import { useLabSite } from '../helpers/lab-site.js';
import { ClusterError } from '../../src/cluster/errors.js';

describe('install cluster when things go wrong', () => {
  const t = useLabSite();

  it('a host that fails provisioning is reported; the other host still joins; exit code 1', async () => {
    const h = await t.readyHub({ faults: { failProvisioning: ['lab-worker-1'] } });
    const r = await t.install(h, ['--json']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/lab-worker-1: .*provisioning error/);
    const out = JSON.parse(r.stdout) as { nodes: unknown[]; failures: string[] };
    expect(out.nodes).toHaveLength(1);
    expect(out.failures.join('\n')).toContain('host lab-worker-1: provisioning error');
  }, 120_000);

  it('an ISO that cannot be built fails at once with the InfraEnv message, before any host is touched', async () => {
    const h = await t.readyHub({ faults: { isoCreationFailure: true } });
    const r = await t.install(h);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(ClusterError.ISO_CREATION_FAILED);
    expect(r.stderr).toMatch(/InfraEnv clusters-lab\/lab: .*Failed to create image/);
    expect(h.store.list('metal3.io/v1alpha1', 'BareMetalHost', {})).toEqual([]);
  }, 120_000);

  it('survives API 500s, optimistic-lock 409s and dropped watches', async () => {
    const h = await t.readyHub();
    h.server.faults.failNext({ status: 500, times: 4 });
    h.server.faults.failNext({ method: 'PATCH', status: 409, times: 3 });
    h.server.faults.dropWatchesEvery(300);
    const r = await t.install(h);
    expect(r.exitCode, r.stderr).toBe(0);
    const failed = h.server.requests().filter((q) => q.status === 500 || q.status === 409);
    expect(failed.length).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it('an interrupted run continues where it stopped, creating nothing twice', async () => {
    const h = await t.readyHub();
    const child = spawnAirgap([
      'install',
      'cluster',
      '-f',
      t.lab.siteFile,
      '--kubeconfig',
      h.kubeconfigFile,
      '--kubeconfig-out',
      t.fresh('kc'),
    ]);
    const deadline = Date.now() + 60_000;
    while (h.store.list('metal3.io/v1alpha1', 'BareMetalHost', {}).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGKILL');
    await child;
    const r = await t.install(h);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(h.store.list('agent-install.openshift.io/v1beta1', 'Agent', {})).toHaveLength(2);
    expect(h.store.list('hypershift.openshift.io/v1beta1', 'HostedCluster', {})).toHaveLength(1);
  }, 120_000);

  it('a root device hint that matches no disk fails that host with the Agent message; the other joins', async () => {
    const h = await t.readyHub();
    const site = await t.siteWith((s) => (s.hosts[1].rootDeviceHints = { deviceName: '/dev/nvme9n1' }));
    const r = await t.install(h, ['--json'], site);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/lab-worker-1: .*installation disk/);
    const out = JSON.parse(r.stdout) as { nodes: unknown[]; failures: string[] };
    expect(out.nodes).toHaveLength(1);
    expect(out.failures.join('\n')).toContain('host lab-worker-1');
  }, 120_000);

  it('works with a HyperShift operator not installed by MCE: legacy capi-provider-role, and a warning about the CAPI provider image', async () => {
    const h = await t.readyHub({ hypershift: 'legacy' });
    // Installed by hand (hypershift install), the operator has no IMAGE_AGENT_CAPI_PROVIDER.
    const ho = h.store.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'hypershift',
      name: 'operator',
    })!;
    const spec = ho.spec as { template: { spec: { containers: { env?: unknown[] }[] } } };
    for (const c of spec.template.spec.containers) delete c.env;
    h.store.update(ho);
    const r = await t.install(h);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /\[preflight\] warning: the HyperShift operator has no IMAGE_AGENT_CAPI_PROVIDER/,
    );
    expect(r.stderr).toContain('hypershift.openshift.io/capi-provider-agent-image');
    expect(
      h.store.get({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        namespace: 'clusters-lab',
        name: 'capi-provider-role',
      }),
    ).toBeDefined();
  }, 120_000);

  it('an Agent nobody approves stalls with an explanation; approveAgents: true approves it', async () => {
    const h = await t.readyHub({ bmacAutoApprove: false });
    const stalled = await t.install(h, ['--timeout', '8s']);
    expect(stalled.exitCode).toBe(1);
    expect(stalled.stderr).toContain(ClusterError.WAIT_TIMEOUT);
    expect(stalled.stderr).toMatch(/not approved \(set cluster\.approveAgents: true/);
    const approving = await t.siteWith((s) => (s.cluster.approveAgents = true));
    const r = await t.install(h, [], approving);
    expect(r.exitCode, r.stderr).toBe(0);
    const agents = h.store.list('agent-install.openshift.io/v1beta1', 'Agent', { namespace: 'clusters-lab' });
    expect(agents.map((a) => (a.spec as { approved?: boolean }).approved)).toEqual([true, true]);
  }, 120_000);

  it('a hub without an osImage for the release, or with the name taken, is refused before any apply', async () => {
    const site = await t.siteWith((s) => {
      for (const o of s.hub.osImages ?? []) o.openshiftVersion = '4.16';
    });
    const hub = await t.startHub();
    const prepared = await airgap(['install', 'hub', '-f', site, '--kubeconfig', hub.kubeconfigFile]);
    expect(prepared.exitCode, prepared.stderr).toBe(0);
    const r = await t.install(hub, [], site);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(ClusterError.HUB_NO_OS_IMAGE);
    expect(r.stderr).toContain('no osImage for OpenShift 4.17 x86_64 (it has: 4.16 x86_64)');
    expect(hub.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'clusters-lab' })).toBeUndefined();

    // The same name in another namespace: hosted cluster names are unique across the hub.
    const h = await t.readyHub();
    h.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    h.store.create({
      apiVersion: 'hypershift.openshift.io/v1beta1',
      kind: 'HostedCluster',
      metadata: { name: 'lab', namespace: 'team-b' },
      spec: {
        release: { image: `${t.lab.mirrorName}/openshift/release-images@sha256:${'a'.repeat(64)}` },
        platform: { type: 'Agent', agent: { agentNamespace: 'team-b-lab' } },
        networking: {
          networkType: 'OVNKubernetes',
          clusterNetwork: [{ cidr: '10.132.0.0/14' }],
          serviceNetwork: [{ cidr: '172.31.0.0/16' }],
        },
        etcd: {
          managementType: 'Managed',
          managed: { storage: { type: 'PersistentVolume', persistentVolume: { size: '8Gi' } } },
        },
        services: [],
        pullSecret: { name: 'lab-pull-secret' },
        dns: { baseDomain: 'example.com' },
      },
    });
    const taken = await t.install(h);
    expect(taken.exitCode).toBe(2);
    expect(taken.stderr).toContain(ClusterError.CLUSTER_NAME_TAKEN);
    expect(taken.stderr).toContain('already exists in namespace team-b');
    expect(h.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'clusters-lab' })).toBeUndefined();
  }, 120_000);

  describe('bad input is caught in preflight and nothing is applied', () => {
    let h: Hub;
    beforeAll(async () => {
      h = await startHub({ dir: t.fresh('hub-preflight') });
    });
    afterAll(async () => {
      await h?.stop();
    });
    const nothingApplied = () => {
      expect(h.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'clusters-lab' })).toBeUndefined();
      expect(h.store.list('hypershift.openshift.io/v1beta1', 'HostedCluster', {})).toEqual([]);
    };
    const run = (site: string, extra: string[] = []) =>
      airgap(['install', 'cluster', '-f', site, '--kubeconfig', h.kubeconfigFile, ...extra]);

    it('a hub that install hub has not prepared', async () => {
      const r = await run(t.lab.siteFile);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(ClusterError.HUB_NOT_READY);
      expect(r.stderr).toContain('run airgap install hub first');
      nothingApplied();
    });

    it('a release tag the mirror does not have', async () => {
      const r = await run(t.lab.siteFile, [
        '--release',
        `${t.lab.mirror.host}/openshift/release-images:4.99.0-x86_64`,
      ]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(ClusterError.RELEASE_NOT_IN_MIRROR);
      expect(r.stderr).toContain('4.99.0-x86_64');
      nothingApplied();
    });

    it('a CA that does not verify the mirror', async () => {
      const other = await createCA({ commonName: 'some other CA', days: 30, keyType: 'ecdsa-p256' });
      const caFile = join(t.lab.dir, 'other-ca.crt');
      await writeFile(caFile, other.certPem);
      const site = await t.siteWith((s) => (s.mirror.caFiles = [caFile]));
      const r = await run(site);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(ClusterError.MIRROR_CA_MISMATCH);
      nothingApplied();
    });

    it('a pull secret without the mirror credentials', async () => {
      const ps = join(t.lab.dir, 'quay-only.json');
      await writeFile(
        ps,
        JSON.stringify({ auths: { 'quay.io': { auth: Buffer.from('a:b').toString('base64') } } }),
        { mode: 0o600 },
      );
      const site = await t.siteWith((s) => (s.cluster.pullSecretFile = ps));
      const r = await run(site);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/no credentials for the mirror|has no entry for the mirror/);
      expect(r.stderr).not.toContain(Buffer.from('a:b').toString('base64'));
      nothingApplied();
    });

    it('a cluster named clusters, or not an RFC 1123 label', async () => {
      for (const name of ['clusters', 'Lab_1']) {
        const r = await run(t.lab.siteFile, ['--name', name]);
        expect(r.exitCode, name).toBe(2);
        expect(r.stderr).toContain('--name');
      }
      nothingApplied();
    });

    it('duplicate MACs and host names, and an unbracketed IPv6 BMC address, with file and line', async () => {
      const site = await t.siteWith((s) => {
        s.hosts[1].bootMACAddress = s.hosts[0].bootMACAddress.toUpperCase();
        s.hosts.push({ ...s.hosts[0], bootMACAddress: '52:54:00:aa:01:09' });
        s.hosts[0].bmc = {
          url: 'redfish-virtualmedia://fd00:1101::1:8000/redfish/v1/Systems/1',
          credentialsFile: s.hosts[0].bmc.credentialsFile,
          disableCertificateVerification: true,
        };
      });
      const r = await run(site);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/site-\d+\.yaml:\d+/);
      expect(r.stderr).toMatch(/hosts\[1\]\.bootMACAddress/);
      expect(r.stderr).toMatch(/hosts\[2\]\.name/);
      expect(r.stderr).toMatch(/hosts\[0\]\.bmc\.url/);
      nothingApplied();
    });
  });
});
