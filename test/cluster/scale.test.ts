/**
 * `airgap cluster scale` through the real CLI on the hub simulator: a cluster installed on two of
 * the lab's three hosts gains the third when the site file lists it, loses a chosen one when the
 * site file drops it (that host's node goes, not another, and its BareMetalHost is deprovisioned),
 * and scales within its Agents with --replicas. kubectl reads the hosted cluster's nodes through
 * the kubeconfig the install wrote. What would leave the NodePool with no node, or ask for more
 * Agents than there are, is refused before anything changes.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { useLabSite } from '../helpers/lab-site.js';
import type { Hub } from '../../lab/hub/index.js';

const NP = {
  apiVersion: 'hypershift.openshift.io/v1beta1',
  kind: 'NodePool',
  namespace: 'clusters',
  name: 'lab',
};
const AGENT_NS = 'clusters-lab';

/** The hosted cluster's node names, as kubectl reads them through the admin kubeconfig. */
async function guestNodes(kubeconfig: string): Promise<string[]> {
  const r = await execa('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'name'], {
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^node\//, ''))
    .sort();
}

/** The BareMetalHosts of the cluster on the hub. */
function hostsOnHub(hub: Hub): string[] {
  return hub.store
    .list('metal3.io/v1alpha1', 'BareMetalHost', { namespace: AGENT_NS })
    .map((b) => b.metadata.name)
    .sort();
}

/** The hosts whose Agent the NodePool holds. */
function hostsInPool(hub: Hub): string[] {
  return hub.store
    .list('agent-install.openshift.io/v1beta1', 'Agent', { namespace: AGENT_NS })
    .filter(
      (a) => (a.spec as { clusterDeploymentName?: { name?: string } }).clusterDeploymentName?.name === 'lab',
    )
    .map((a) => a.metadata.labels?.['agent-install.openshift.io/bmh'] ?? '?')
    .sort();
}

describe('airgap cluster scale', () => {
  const t = useLabSite({ hosts: 3 });

  it('adds the host the site file adds, removes the one it drops, and scales within the Agents with --replicas', async () => {
    const [w0, w1, w2] = t.lab.hostNames;
    const twoHosts = await t.siteWith((s) => (s.hosts = s.hosts.slice(0, 2)));
    const threeHosts = t.lab.siteFile;
    const withoutW1 = await t.siteWith((s) => (s.hosts = s.hosts.filter((h) => h.name !== w1)));
    const hub = await t.readyHub();
    const installed = await t.install(hub, [], twoHosts);
    expect(installed.exitCode, installed.stderr).toBe(0);
    const kc = /admin kubeconfig written to (\S+) \(0600\)/.exec(installed.stderr)![1]!;
    expect(await guestNodes(kc)).toEqual([w0, w1]);
    const onHub = ['--kubeconfig', hub.kubeconfigFile];

    // The plan, and nothing changed.
    const dry = await airgap(['cluster', 'scale', '-f', threeHosts, ...onHub, '--dry-run']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('clusters/lab: NodePool clusters/lab 2 → 3 nodes');
    expect(dry.stdout).toContain(`would add ${w2}`);
    expect(hostsOnHub(hub)).toEqual([w0, w1]);

    // More Agents than the hub has: refused with each Agent's reason (both are in the NodePool).
    const tooMany = await airgap(['cluster', 'scale', '-f', twoHosts, ...onHub, '--replicas', '3']);
    expect(tooMany.exitCode).toBe(2);
    expect(tooMany.stderr).toContain(
      'error [SCALE_NOT_ENOUGH_AGENTS]: NodePool clusters/lab cannot have 3 nodes: 2 Agents can be picked',
    );
    // --replicas with a site file that adds a host: refused.
    const mixed = await airgap(['cluster', 'scale', '-f', threeHosts, ...onHub, '--replicas', '1']);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain(
      `error [SCALE_SITE_CHANGED]: --replicas scales within the Agents on the hub, but the site file adds ${w2}`,
    );

    // 2 → 3: the new host is created, provisioned, and joins.
    const up = await airgap(['cluster', 'scale', '-f', threeHosts, ...onHub, '--timeout', '3m']);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stdout).toContain(`added ${w2}`);
    expect(up.stdout).toContain('clusters/lab has 3 Ready nodes');
    expect(up.stderr).toMatch(new RegExp(`\\[hosts\\] BareMetalHost clusters-lab/${w2}: provisioned`));
    expect(await guestNodes(kc)).toEqual([w0, w1, w2]);
    expect(hub.store.get(NP)!.spec).toMatchObject({ replicas: 3 });

    // 3 → 2 by dropping the middle host: that node goes, not the newest, and the host is deprovisioned.
    const down = await airgap(['cluster', 'scale', '-f', withoutW1, ...onHub, '--timeout', '3m']);
    expect(down.exitCode, down.stderr).toBe(0);
    expect(down.stdout).toContain(`removed ${w1}: Agent released, host deprovisioned`);
    expect(down.stderr).toContain(`host ${w1} marked to be removed (cluster.x-k8s.io/delete-machine)`);
    expect(down.stderr).toMatch(new RegExp(`\\[deprovision\\] BareMetalHost clusters-lab/${w1}: deleted`));
    expect(await guestNodes(kc)).toEqual([w0, w2]);
    expect(hostsOnHub(hub)).toEqual([w0, w2]);
    expect(hostsInPool(hub)).toEqual([w0, w2]);
    expect(
      hub.store.get({ apiVersion: 'v1', kind: 'Secret', namespace: AGENT_NS, name: `${w1}-bmc-secret` }),
    ).toBeUndefined();

    // Run again: nothing to do.
    const again = await airgap(['cluster', 'scale', '-f', withoutW1, ...onHub]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('clusters/lab: NodePool clusters/lab 2 → 2 nodes');

    // Within the Agents: 1 node, the other host stays on the hub with its Agent free; then back.
    const one = await airgap([
      'cluster',
      'scale',
      '-f',
      withoutW1,
      ...onHub,
      '--replicas',
      '1',
      '--timeout',
      '3m',
    ]);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toContain('clusters/lab has 1 Ready node');
    // The host let go is rebooted into the discovery ISO, so its Agent is free for later.
    expect(one.stderr).toMatch(/BareMetalHost clusters-lab\/lab-worker-\d: rebooting into the discovery ISO/);
    expect(hostsOnHub(hub)).toEqual([w0, w2]);
    expect(hostsInPool(hub)).toHaveLength(1);
    expect(await guestNodes(kc)).toHaveLength(1);

    // No node left: refused, by --replicas 0 and by a site file that drops the last host in the pool.
    const zero = await airgap(['cluster', 'scale', '-f', withoutW1, ...onHub, '--replicas', '0']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain(
      'error [SCALE_LAST_NODE]: --replicas 0 would leave NodePool clusters/lab with no node',
    );
    const inPool = hostsInPool(hub)[0]!;
    const lastGone = await t.siteWith((s) => (s.hosts = []));
    const last = await airgap(['cluster', 'scale', '-f', lastGone, ...onHub]);
    expect(last.exitCode, last.stdout).toBe(2);
    expect(last.stderr).toContain(
      `error [SCALE_LAST_NODE]: removing ${inPool} would leave NodePool clusters/lab with no node`,
    );
    expect(hostsOnHub(hub)).toEqual([w0, w2]);

    const back = await airgap(['cluster', 'scale', '-f', withoutW1, ...onHub, '--timeout', '3m']);
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/added lab-worker-\d \(its BareMetalHost was on the hub\)/);
    expect(await guestNodes(kc)).toEqual([w0, w2]);
  }, 300_000);
});
