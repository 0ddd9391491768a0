/**
 * `airgap install hub` and `airgap install cluster` end to end, through the real CLI, against the
 * hub simulator over HTTPS, for an IPv4, an IPv6 and a dual-stack site. The release comes from a
 * real mirror registry filled by the real mirror engine; kubectl and skopeo check the results
 * independently (the hosted cluster's nodes through the kubeconfig airgap wrote; the pinned control
 * plane operator image in the mirror).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type Hub } from '../../lab/hub/index.js';
import { buildLabSite, type LabSite, type LabStack } from '../../lab/site.js';
import type { KubeObject } from '../../lab/hub/types.js';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { skopeoInspect, type SkopeoInspectResult } from '../helpers/skopeo.js';

// The hub (and the hosted cluster's API) listen on ::1 for the IPv6 site; its mirror listens on
// both families and is named by DNS name, as an IPv6 site must (registry-config keys cannot hold an
// IPv6 literal).
const STACKS: { stack: LabStack; hub: string; registry: string }[] = [
  { stack: 'ipv4', hub: '127.0.0.1', registry: '127.0.0.1' },
  { stack: 'ipv6', hub: '::1', registry: '::' },
  { stack: 'dual', hub: '127.0.0.1', registry: '127.0.0.1' },
];

function list(hub: Hub, apiVersion: string, kind: string, namespace?: string): KubeObject[] {
  return hub.store.list(apiVersion, kind, namespace ? { namespace } : {});
}

describe.each(STACKS)(
  '$stack site: install hub, install cluster, status, destroy',
  ({ stack, hub: hubHost, registry }) => {
    let lab: LabSite;
    let hub: Hub;
    let dir: string;
    let kc: string;
    const hubArgs = () => ['--kubeconfig', hub.kubeconfigFile];

    beforeAll(async () => {
      dir = await tempDir();
      lab = await buildLabSite({
        dir: join(dir, 'site'),
        stack,
        host: registry,
        noCatalog: stack !== 'ipv4',
      });
      hub = await startHub({ dir, host: hubHost });
      kc = join(dir, 'lab.kubeconfig');
    }, 120_000);

    afterAll(async () => {
      await hub?.stop();
      await lab?.stop();
    });

    it('install hub applies trust, mirrors, MCE components and the AgentServiceConfig, and waits for them', async () => {
      const r = await airgap(['install', 'hub', '-f', lab.siteFile, ...hubArgs(), '--json']);
      expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { applied: { object: string; created: boolean }[] };
      expect(out.applied.map((a) => a.object)).toEqual(
        expect.arrayContaining([
          'ConfigMap openshift-config/registry-config',
          'Image cluster',
          'ConfigMap multicluster-engine/custom-registries',
          'AgentServiceConfig agent',
        ]),
      );
      expect(r.stderr).toMatch(/\[mirror\].*nodes Ready/);
      const mce = list(hub, 'multicluster.openshift.io/v1', 'MultiClusterEngine')[0]!;
      const comps = (mce.spec as { overrides: { components: { name: string; enabled: boolean }[] } })
        .overrides.components;
      for (const c of ['assisted-service', 'hypershift', 'hypershift-local-hosting', 'local-cluster'])
        expect(comps.find((x) => x.name === c)?.enabled, c).toBe(true);
      const image = hub.store.get({ apiVersion: 'config.openshift.io/v1', kind: 'Image', name: 'cluster' })!;
      expect((image.spec as { additionalTrustedCA: { name: string } }).additionalTrustedCA).toEqual({
        name: 'registry-config',
      });
      const idms = list(hub, 'config.openshift.io/v1', 'ImageDigestMirrorSet');
      expect(idms.length).toBeGreaterThan(0);
    }, 120_000);

    it('install cluster drives the hosted cluster to Ready nodes and writes its kubeconfig 0600', async () => {
      const r = await airgap([
        'install',
        'cluster',
        '-f',
        lab.siteFile,
        ...hubArgs(),
        '--kubeconfig-out',
        kc,
        '--json',
      ]);
      expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as {
        nodes: { name: string; ready: boolean }[];
        hosts: { name: string; state: string; hostname?: string }[];
        release: { image: string; controlPlaneOperatorImage: string; version: string; resolvedFrom?: string };
        failures: string[];
      };
      expect(out.failures).toEqual([]);
      expect(out.nodes).toHaveLength(2);
      expect(out.nodes.every((n) => n.ready)).toBe(true);
      expect(out.hosts.map((h) => h.state)).toEqual(['provisioned', 'provisioned']);
      // The phases were reported as they happened.
      for (const phase of [
        'apply',
        'control-plane',
        'iso',
        'hosts',
        'agents',
        'scale',
        'install',
        'complete',
        'kubeconfig',
      ])
        expect(r.stderr, phase).toContain(`[${phase}]`);
      expect(r.stderr).toMatch(/\[hosts\] BareMetalHost clusters-lab\/lab-worker-0: provisioning/);
      expect(r.stderr).toContain('The hosted control plane is available');
      expect(r.stderr).not.toContain('IMAGE_AGENT_CAPI_PROVIDER'); // MCE's operator names its CAPI provider image

      expect((await stat(kc)).mode & 0o777).toBe(0o600);
      // An independent client reads the hosted cluster through the kubeconfig airgap wrote.
      const nodes = await execa('kubectl', ['--kubeconfig', kc, 'get', 'nodes', '-o', 'json'], {
        reject: false,
      });
      expect(nodes.exitCode, nodes.stderr).toBe(0);
      const items = (JSON.parse(nodes.stdout) as { items: KubeObject[] }).items;
      expect(items).toHaveLength(2);

      // The release is pinned by digest in the mirror, and the control plane operator image with it.
      expect(out.release.resolvedFrom).toBe(lab.releaseTag);
      expect(out.release.image).toMatch(
        new RegExp(
          `^${lab.mirrorName.replace(/[[\].]/g, '\\$&')}/openshift/release-images@sha256:[0-9a-f]{64}$`,
        ),
      );
      const hc = hub.store.get({
        apiVersion: 'hypershift.openshift.io/v1beta1',
        kind: 'HostedCluster',
        namespace: 'clusters',
        name: 'lab',
      })!;
      const spec = hc.spec as {
        release: { image: string };
        networking: { clusterNetwork: { cidr: string }[] };
      };
      expect(spec.release.image).toBe(out.release.image);
      const cpo = hc.metadata.annotations!['hypershift.openshift.io/control-plane-operator-image']!;
      expect(cpo).toBe(out.release.controlPlaneOperatorImage);
      expect(cpo).toMatch(/\/openshift\/release@sha256:/);
      const digest = cpo.slice(cpo.indexOf('@') + 1);
      const seen = (await skopeoInspect(
        `docker://${lab.mirror.skopeoHost}/openshift/release@${digest}`,
        lab.mirror.skopeo,
      )) as SkopeoInspectResult;
      expect(seen.Digest).toBe(digest);

      // Networking per stack, and IPv6 BMC addresses in brackets.
      const cidrs = spec.networking.clusterNetwork.map((c) => c.cidr);
      expect(cidrs).toEqual(
        stack === 'ipv4'
          ? ['10.132.0.0/14']
          : stack === 'ipv6'
            ? ['fd01::/48']
            : ['10.132.0.0/14', 'fd01::/48'],
      );
      const bmh = list(hub, 'metal3.io/v1alpha1', 'BareMetalHost', 'clusters-lab')[0]!;
      const address = (bmh.spec as { bmc: { address: string } }).bmc.address;
      if (stack === 'dual') {
        // The host with static addresses got its NMStateConfig, and the InfraEnv selects it.
        const nm = list(hub, 'agent-install.openshift.io/v1beta1', 'NMStateConfig', 'clusters-lab');
        expect(nm.map((o) => o.metadata.name)).toEqual(['lab-worker-0']);
        const ie = hub.store.get({
          apiVersion: 'agent-install.openshift.io/v1beta1',
          kind: 'InfraEnv',
          namespace: 'clusters-lab',
          name: 'lab',
        })!;
        const selector = (ie.spec as { nmStateConfigLabelSelector: { matchLabels: Record<string, string> } })
          .nmStateConfigLabelSelector.matchLabels;
        expect(Object.entries(selector).every(([k, v]) => nm[0]!.metadata.labels?.[k] === v)).toBe(true);
      }
      if (stack === 'ipv6') expect(address).toMatch(/^redfish-virtualmedia:\/\/\[fd00:1101::1\]:8000\//);
      else expect(address).toMatch(/^redfish-virtualmedia:\/\/192\.168\.125\.1:8000\//);
    }, 180_000);

    it('running it again continues and creates nothing twice', async () => {
      const before = {
        agents: list(hub, 'agent-install.openshift.io/v1beta1', 'Agent', 'clusters-lab')
          .map((a) => a.metadata.name)
          .sort(),
        key: hub.store.get({
          apiVersion: 'v1',
          kind: 'Secret',
          namespace: 'clusters',
          name: 'lab-etcd-encryption-key',
        })!,
      };
      const r = await airgap([
        'install',
        'cluster',
        '-f',
        lab.siteFile,
        ...hubArgs(),
        '--kubeconfig-out',
        kc,
        '--json',
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { applied: { object: string; created: boolean }[] };
      expect(out.applied.filter((a) => a.created)).toEqual([]);
      expect(r.stderr).toContain('replicas 2 (already)');
      const after = list(hub, 'agent-install.openshift.io/v1beta1', 'Agent', 'clusters-lab')
        .map((a) => a.metadata.name)
        .sort();
      expect(after).toEqual(before.agents);
      const key = hub.store.get({
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: 'clusters',
        name: 'lab-etcd-encryption-key',
      })!;
      expect(key.data).toEqual(before.key.data); // the etcd key of a running cluster is never replaced
    }, 120_000);

    it('cluster status shows the same conditions on one screen, and as JSON', async () => {
      const r = await airgap(['cluster', 'status', '-f', lab.siteFile, ...hubArgs()]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('HostedCluster clusters/lab: Available');
      expect(r.stdout).toMatch(
        /lab-worker-0: provisioned — Agent lab-worker-0 \(worker\): added-to-existing-cluster/,
      );
      const j = await airgap(['cluster', 'status', '--name', 'lab', ...hubArgs(), '--json']);
      const s = JSON.parse(j.stdout) as {
        exists: boolean;
        nodePools: { current: number; desired: number }[];
      };
      expect(s.exists).toBe(true);
      expect(s.nodePools[0]).toMatchObject({ current: 2, desired: 2 });

      // The admin kubeconfig again, on its own: the same file install wrote, 0600, never printed.
      const again = join(dir, 'again.kubeconfig');
      const k = await airgap(['cluster', 'kubeconfig', '--name', 'lab', ...hubArgs(), '-o', again]);
      expect(k.exitCode, k.stderr).toBe(0);
      expect(k.stdout).not.toContain('token');
      expect(await readFile(again, 'utf8')).toBe(await readFile(kc, 'utf8'));
      expect((await stat(again)).mode & 0o777).toBe(0o600);
    }, 60_000);

    it('cluster destroy --dry-run lists, destroy takes it apart in order and releases the hosts', async () => {
      const dry = await airgap(['cluster', 'destroy', '--name', 'lab', ...hubArgs(), '--dry-run']);
      expect(dry.exitCode, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('HostedCluster clusters/lab');
      expect(dry.stdout).toContain('BareMetalHost clusters-lab/lab-worker-0');
      expect(
        hub.store.get({
          apiVersion: 'hypershift.openshift.io/v1beta1',
          kind: 'HostedCluster',
          namespace: 'clusters',
          name: 'lab',
        }),
      ).toBeDefined();

      const r = await airgap(['cluster', 'destroy', '--name', 'lab', ...hubArgs()]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toContain('every Agent released');
      expect(list(hub, 'hypershift.openshift.io/v1beta1', 'HostedCluster')).toEqual([]);
      expect(hub.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'clusters-lab' })).toBeUndefined();
      expect(
        hub.store.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'clusters', name: 'lab-pull-secret' }),
      ).toBeUndefined();
    }, 120_000);
  },
);
