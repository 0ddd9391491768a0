/**
 * Day 2 end to end, through the real CLI against real registries (Debian's docker-registry) and
 * the hub simulator: 4.18.1 and 4.18.3 mirrored with their update graph data, a hosted cluster
 * installed on 4.18.1, the mirror checked, the cluster updated to 4.18.3 (the update judged from
 * the graph data in the mirror), scaled 2 → 3 → 2 with `cluster scale` (the host the site file
 * drops is the one that goes), then within its Agents with --replicas, then 4.18.1 deleted from
 * the mirror and the registry garbage-collected, and the mirror checked again (4.18.1 missing,
 * 4.18.3 complete). kubectl reads the hosted cluster at each step, skopeo the mirror at the end.
 * Refused before anything changes: an update to a release the mirror does not hold, or holds
 * without one of its components; a delete of the release the cluster still runs (with the
 * cluster's name), more nodes than Agents, --replicas with a site file that adds a host, and a
 * NodePool left with no node.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { dump } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import type { Hub } from '../../lab/hub/index.js';
import { LAB_RELEASE_REPO } from '../../lab/site.js';
import { airgap } from '../helpers/cli.js';
import { useLabSite } from '../helpers/lab-site.js';
import { skopeoDelete, skopeoDigest } from '../helpers/skopeo.js';

/** kubectl against the hosted cluster: `get <what> -o jsonpath=<path>`. */
async function kubectl(kubeconfig: string, what: string[], jsonpath: string): Promise<string> {
  const r = await execa(
    'kubectl',
    ['--kubeconfig', kubeconfig, 'get', ...what, '-o', `jsonpath=${jsonpath}`],
    {
      reject: false,
    },
  );
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

const AGENT_NS = 'clusters-lab';

/** The BareMetalHosts of the cluster on the hub. */
const hostsOnHub = (hub: Hub): string[] =>
  hub.store
    .list('metal3.io/v1alpha1', 'BareMetalHost', { namespace: AGENT_NS })
    .map((b) => b.metadata.name)
    .sort();

const nodeNames = async (kc: string) =>
  (await kubectl(kc, ['nodes'], '{.items[*].metadata.name}')).split(' ').sort();
const cvVersion = (kc: string) => kubectl(kc, ['clusterversion', 'version'], '{.status.history[0].version}');

describe('day 2: check, upgrade, scale, delete through the mirror', () => {
  const t = useLabSite({ version: '4.18.1', upgradeTo: '4.18.3', hosts: 3, graph: true });

  it('runs the whole life of a disconnected site', async () => {
    const { lab } = t;
    const [w0, w1, w2] = lab.hostNames;
    const releaseOf = (v: string) => lab.up.releases.find((r) => r.version === v)!;
    // assisted-service notices a released Agent a few steps late, as a real one may: the scale down to
    // --replicas 1 must still wait for it and reboot its host (it once read the Agent too early).
    const hub = await t.readyHub({ faults: { slowUnbind: 8 } });
    const onHub = ['--kubeconfig', hub.kubeconfigFile];
    const twoHosts = await t.siteWith((s) => (s.hosts = s.hosts.slice(0, 2)));
    const withoutW1 = await t.siteWith((s) => (s.hosts = s.hosts.filter((h) => h.name !== w1)));
    const ws = `file://${join(lab.dir, 'mirror-workspace')}`;
    const dest = `docker://${lab.mirrorName}`;
    const access = [
      '--authfile',
      join(lab.dir, 'auth.json'),
      '--ca-file',
      lab.upstream.caFile,
      '--ca-file',
      lab.mirror.caFile,
    ];

    // Install on 4.18.1, two hosts.
    const installed = await t.install(hub, [], twoHosts);
    expect(installed.exitCode, installed.stderr).toBe(0);
    const kc = /admin kubeconfig written to (\S+) \(0600\)/.exec(installed.stderr)![1]!;
    expect(await nodeNames(kc)).toEqual([w0, w1]);
    expect(await cvVersion(kc)).toBe('4.18.1');

    // The mirror holds both releases and the cluster resources lead to them.
    const check = await airgap(['mirror', 'check', '--workspace', ws, dest, ...access]);
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain(`${dest} is complete`);

    // 4.18.1 cannot be deleted while the cluster runs it.
    const deleteOld = join(lab.dir, 'delete-4.18.1.yaml');
    await writeFile(
      deleteOld,
      dump({
        kind: 'DeleteImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        delete: {
          platform: { channels: [{ name: lab.up.channel, minVersion: '4.18.1', maxVersion: '4.18.1' }] },
        },
      }),
    );
    const generate = () =>
      airgap([
        'mirror',
        'delete',
        '-c',
        deleteOld,
        '--workspace',
        ws,
        '--generate',
        dest,
        ...onHub,
        ...access,
        '--graph-url',
        lab.up.graph.url,
      ]);
    const inUse = await generate();
    expect(inUse.exitCode, inUse.stdout + inUse.stderr).toBe(2);
    expect(inUse.stderr).toMatch(
      /error \[DELETE_IN_USE\]: refusing to delete what hosted clusters run: .*\(clusters\/lab\)/,
    );

    // A release the mirror does not hold (4.18.2 was never mirrored): refused, with how to mirror it.
    const absent = await airgap(['cluster', 'upgrade', '-f', twoHosts, '--to', '4.18.2', ...onHub]);
    expect(absent.exitCode).toBe(2);
    expect(absent.stderr).toContain(
      `error [RELEASE_NOT_IN_MIRROR]: 4.18.2 is not in the mirror: there is no ${lab.mirrorName}/${LAB_RELEASE_REPO}:4.18.2-x86_64`,
    );

    // A component of 4.18.3 lost from the mirror: the update is refused before anything changes,
    // mirror check names it, and the mirror run again puts it back.
    const only43 = releaseOf('4.18.3').components.find((c) => !releaseOf('4.18.1').components.includes(c))!;
    const lost = `docker://${lab.mirror.skopeoHost}/openshift/release@${only43.split('@')[1]}`;
    await skopeoDelete(lost, lab.mirror.skopeo);
    const incomplete = await airgap(['cluster', 'upgrade', '-f', twoHosts, '--to', '4.18.3', ...onHub]);
    expect(incomplete.exitCode, incomplete.stderr).toBe(2);
    expect(incomplete.stderr).toMatch(
      /error \[RELEASE_INCOMPLETE_IN_MIRROR\]: release 4\.18\.3 is incomplete in the mirror: 1 of \d+ component images are missing: /,
    );
    expect(await cvVersion(kc)).toBe('4.18.1');
    // An install of that release is refused the same way, before anything is applied.
    const install43 = await t.install(
      hub,
      ['--name', 'other', '--release', `${lab.mirrorName}/${LAB_RELEASE_REPO}:4.18.3-x86_64`],
      twoHosts,
    );
    expect(install43.exitCode).toBe(2);
    expect(install43.stderr).toContain(
      'error [RELEASE_INCOMPLETE_IN_MIRROR]: release 4.18.3 is incomplete in the mirror',
    );
    expect(
      hub.store.get({
        apiVersion: 'hypershift.openshift.io/v1beta1',
        kind: 'HostedCluster',
        namespace: 'clusters',
        name: 'other',
      }),
    ).toBeUndefined();
    const gap = await airgap(['mirror', 'check', '--workspace', ws, dest, ...access]);
    expect(gap.exitCode).toBe(1);
    expect(gap.stdout).toMatch(/MISSING +\S+\/openshift\/release:4\.18\.3-x86_64-\S+ \(release 4\.18\.3/);
    expect(gap.stdout).toContain('1 missing');
    await lab.mirrorAgain();

    // Update to 4.18.3 through the mirror: the control plane, then the nodes.
    const up = await airgap([
      'cluster',
      'upgrade',
      '-f',
      twoHosts,
      '--to',
      '4.18.3',
      ...onHub,
      '--timeout',
      '3m',
    ]);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stdout).toContain('clusters/lab: 4.18.1 → 4.18.3');
    // Judged from the graph data the mirror holds: no update service runs at the site.
    expect(up.stdout).toContain(`update: recommended (graph data in ${lab.graphImage}@sha256:`);
    expect(up.stdout).toContain('clusters/lab runs 4.18.3');
    expect(await cvVersion(kc)).toBe('4.18.3');
    expect(await kubectl(kc, ['nodes'], '{.items[*].status.nodeInfo.osImage}')).not.toContain('4.18.1');

    // 2 → 3: the plan first, then the third host is created, provisioned, and joins on 4.18.3.
    const scale = (site: string, ...extra: string[]) =>
      airgap(['cluster', 'scale', '-f', site, ...onHub, '--timeout', '3m', ...extra]);
    const dry = await scale(lab.siteFile, '--dry-run');
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('clusters/lab: NodePool clusters/lab 2 → 3 nodes');
    expect(dry.stdout).toContain(`would add ${w2}`);
    expect(hostsOnHub(hub)).toEqual([w0, w1]);
    // Refused before anything changes: more nodes than Agents, and --replicas with a site that adds a host.
    const tooMany = await scale(twoHosts, '--replicas', '3');
    expect(tooMany.exitCode).toBe(2);
    expect(tooMany.stderr).toContain(
      'error [SCALE_NOT_ENOUGH_AGENTS]: NodePool clusters/lab cannot have 3 nodes: 2 Agents can be picked',
    );
    const mixed = await scale(lab.siteFile, '--replicas', '1');
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain(
      `error [SCALE_SITE_CHANGED]: --replicas scales within the Agents on the hub, but the site file adds ${w2}`,
    );
    const three = await scale(lab.siteFile);
    expect(three.exitCode, three.stderr).toBe(0);
    expect(three.stdout).toContain(`added ${w2}`);
    expect(three.stdout).toContain('clusters/lab has 3 Ready nodes');
    expect(three.stderr).toMatch(new RegExp(`\\[hosts\\] BareMetalHost clusters-lab/${w2}: provisioned`));
    expect(await nodeNames(kc)).toEqual([w0, w1, w2]);
    expect(await kubectl(kc, ['node', w2], '{.status.nodeInfo.osImage}')).toContain('4.18.3');

    // 3 → 2 by dropping the middle host: that node goes (not the newest), and the host is deprovisioned.
    const two = await scale(withoutW1);
    expect(two.exitCode, two.stderr).toBe(0);
    expect(two.stdout).toContain(`removed ${w1}: Agent released, host deprovisioned`);
    expect(two.stderr).toContain(`host ${w1} marked to be removed (cluster.x-k8s.io/delete-machine)`);
    expect(await nodeNames(kc)).toEqual([w0, w2]);
    expect(hostsOnHub(hub)).toEqual([w0, w2]);
    expect(
      hub.store.get({ apiVersion: 'v1', kind: 'Secret', namespace: AGENT_NS, name: `${w1}-bmc-secret` }),
    ).toBeUndefined();
    const again = await scale(withoutW1);
    expect(again.stdout).toContain('clusters/lab: NodePool clusters/lab 2 → 2 nodes');

    // Within the Agents: 1 node, the other host kept and rebooted into discovery for later; then back.
    const one = await scale(withoutW1, '--replicas', '1');
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toContain('clusters/lab has 1 Ready node');
    expect(one.stderr).toMatch(/BareMetalHost clusters-lab\/lab-worker-\d: rebooting into the discovery ISO/);
    expect(hostsOnHub(hub)).toEqual([w0, w2]);
    expect(await nodeNames(kc)).toHaveLength(1);
    // No node left: refused, by --replicas 0 and by a site file that drops every host.
    const zero = await scale(withoutW1, '--replicas', '0');
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain(
      'error [SCALE_LAST_NODE]: --replicas 0 would leave NodePool clusters/lab with no node',
    );
    const none = await scale(await t.siteWith((s) => (s.hosts = [])));
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(
      /error \[SCALE_LAST_NODE\]: removing lab-worker-\d would leave NodePool clusters\/lab with no node/,
    );
    const back = await scale(withoutW1);
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/added lab-worker-\d \(its BareMetalHost was on the hub\)/);
    expect(await nodeNames(kc)).toEqual([w0, w2]);

    // Now 4.18.1 goes: listed, deleted, garbage-collected.
    const listed = await generate();
    expect(listed.exitCode, listed.stdout + listed.stderr).toBe(0);
    const list = join(lab.dir, 'mirror-workspace', 'delete', 'delete-images.yaml');
    const del = await airgap(['mirror', 'delete', '--delete-yaml-file', list, dest, ...access]);
    expect(del.exitCode, del.stdout + del.stderr).toBe(0);
    await lab.mirror.garbageCollect();

    // The workspace's plan (both releases) is no longer complete: 4.18.1 is missing.
    const after = await airgap(['mirror', 'check', '--workspace', ws, dest, ...access, '--json']);
    expect(after.exitCode).toBe(1);
    const report = JSON.parse(after.stdout) as { images: { expected: string; status: string }[] };
    const missing = report.images.filter((i) => i.status === 'missing').map((i) => i.expected);
    expect(missing).toContain(releaseOf('4.18.1').digest);
    expect(missing).not.toContain(releaseOf('4.18.3').digest);
    // 4.18.3 alone is complete.
    const only = join(lab.dir, 'imageset-4.18.3.yaml');
    await writeFile(
      only,
      dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: {
          platform: {
            channels: [{ name: lab.up.channel, minVersion: '4.18.3', maxVersion: '4.18.3' }],
            graph: false,
          },
        },
      }),
    );
    const current = await airgap([
      'mirror',
      'check',
      '-c',
      only,
      '--workspace',
      `file://${join(lab.dir, 'check-4.18.3')}`,
      dest,
      ...access,
      '--graph-url',
      lab.up.graph.url,
    ]);
    expect(current.exitCode, current.stdout + current.stderr).toBe(0);
    const skopeo = (v: string) =>
      skopeoDigest(
        `docker://${lab.mirror.skopeoHost}/${LAB_RELEASE_REPO}@${releaseOf(v).digest}`,
        lab.mirror.skopeo,
      );
    await expect(skopeo('4.18.1')).rejects.toThrow();
    expect(await skopeo('4.18.3')).toBe(releaseOf('4.18.3').digest);
  }, 420_000);
});
