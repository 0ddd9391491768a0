/**
 * `airgap cluster upgrade` through the real CLI: a hosted cluster installed from the lab mirror on
 * 4.17.3 is updated to 4.17.5 (also in the mirror) on the hub simulator: the preflight refuses an
 * update the graph cannot confirm, --dry-run changes nothing, the update completes for the control
 * plane and then the NodePool, and a downgrade is refused before anything changes.
 */
import { describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { useLabSite } from '../helpers/lab-site.js';

const HC = {
  apiVersion: 'hypershift.openshift.io/v1beta1',
  kind: 'HostedCluster',
  namespace: 'clusters',
  name: 'lab',
};
const NP = { ...HC, kind: 'NodePool' };

describe('airgap cluster upgrade', () => {
  const t = useLabSite({ upgradeTo: '4.17.5' });

  it('updates the control plane, then the NodePool, to a release in the mirror; refuses what it cannot confirm and a downgrade', async () => {
    const hub = await t.readyHub();
    const installed = await t.install(hub);
    expect(installed.exitCode, installed.stderr).toBe(0);
    const kc = ['--kubeconfig', hub.kubeconfigFile];
    const before = hub.store.get(HC)!;
    const oldImage = (before.spec as { release: { image: string } }).release.image;

    // No update graph to confirm the update: refused, nothing changed.
    const unchecked = await airgap(['cluster', 'upgrade', '-f', t.lab.siteFile, '--to', '4.17.5', ...kc], {
      env: { UPDATE_URL_OVERRIDE: '' },
    });
    expect(unchecked.exitCode, unchecked.stderr).toBe(2);
    expect(unchecked.stderr).toContain(
      'error [UPGRADE_NOT_RECOMMENDED]: no update graph to check 4.17.3 → 4.17.5 against',
    );

    const graph = ['--graph-url', t.lab.up.graph.url];
    const dry = await airgap([
      'cluster',
      'upgrade',
      '-f',
      t.lab.siteFile,
      '--to',
      '4.17.5',
      ...graph,
      ...kc,
      '--dry-run',
    ]);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('clusters/lab: 4.17.3 → 4.17.5');
    expect(dry.stdout).toContain('update: recommended');
    expect(dry.stdout).toMatch(
      /would patch HostedCluster clusters\/lab: \{"spec":\{"release":\{"image":".*release-images@sha256:[0-9a-f]{64}"\}\}/,
    );
    expect((hub.store.get(HC)!.spec as { release: { image: string } }).release.image).toBe(oldImage);

    const up = await airgap([
      'cluster',
      'upgrade',
      '-f',
      t.lab.siteFile,
      '--to',
      '4.17.5',
      ...graph,
      ...kc,
      '--timeout',
      '3m',
    ]);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stdout).toContain('clusters/lab runs 4.17.5');
    const hc = hub.store.get(HC)!;
    const history = (hc.status as { version: { history: { version: string; state: string }[] } }).version
      .history;
    expect(history[0]).toMatchObject({ version: '4.17.5', state: 'Completed' });
    expect(history[1]).toMatchObject({ version: '4.17.3' });
    const np = hub.store.get(NP)!;
    expect((np.spec as { release: { image: string } }).release.image).toBe(
      (hc.spec as { release: { image: string } }).release.image,
    );
    expect((np.status as { version: string }).version).toBe('4.17.5');

    // Run again: nothing left to do, and it says so by finishing at once.
    const again = await airgap([
      'cluster',
      'upgrade',
      '-f',
      t.lab.siteFile,
      '--to',
      '4.17.5',
      ...graph,
      ...kc,
    ]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain('HostedCluster clusters/lab is already at 4.17.5: left as it is');
    expect(again.stdout).toContain('clusters/lab already runs 4.17.5: nothing was changed');
    expect(again.stdout).not.toContain('patched');

    const down = await airgap([
      'cluster',
      'upgrade',
      '-f',
      t.lab.siteFile,
      '--to',
      '4.17.3',
      ...graph,
      ...kc,
    ]);
    expect(down.exitCode).toBe(2);
    expect(down.stderr).toContain(
      'error [UPGRADE_DOWNGRADE]: clusters/lab runs 4.17.5; 4.17.3 would be a downgrade',
    );
    expect((hub.store.get(HC)!.spec as { release: { image: string } }).release.image).not.toBe(oldImage);
  }, 240_000);

  /** A hub with `faults`, the cluster installed on 4.17.3, then `cluster upgrade --to 4.17.5` with a short limit. */
  async function upgradeWith(faults: Record<string, unknown>) {
    const hub = await t.readyHub({ faults });
    const installed = await t.install(hub);
    expect(installed.exitCode, installed.stderr).toBe(0);
    const run = await airgap([
      'cluster',
      'upgrade',
      '-f',
      t.lab.siteFile,
      '--to',
      '4.17.5',
      '--graph-url',
      t.lab.up.graph.url,
      '--kubeconfig',
      hub.kubeconfigFile,
      '--timeout',
      '8s',
    ]);
    return { hub, run };
  }

  it('explains a control plane update that does not complete, and leaves the nodes alone', async () => {
    const { hub, run } = await upgradeWith({ controlPlaneUpdateStuck: true });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      'error [WAIT_TIMEOUT]: timed out after 8 s waiting for HostedCluster clusters/lab to complete its update to 4.17.5; last seen: version 4.17.5 Partial',
    );
    expect(run.stderr).toContain('not succeeding: Cluster operator kube-apiserver is degraded');
    expect(run.stderr).toMatch(
      /\[control-plane\] warning: HostedCluster clusters\/lab: .*kube-apiserver is degraded/,
    );
    // The NodePool was not touched: the control plane goes first.
    const np = hub.store.get(NP)!;
    expect((np.status as { version: string }).version).toBe('4.17.3');
    expect((np.spec as { release: { image: string } }).release.image).not.toBe(
      (hub.store.get(HC)!.spec as { release: { image: string } }).release.image,
    );
  }, 120_000);

  it('names the node that does not come back from its update', async () => {
    const { hub, run } = await upgradeWith({ nodeNotReturning: ['lab-worker-0'] });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      'error [WAIT_TIMEOUT]: timed out after 8 s waiting for NodePool clusters/lab to run 4.17.5 on all its nodes',
    );
    expect(run.stderr).toMatch(/Node lab-worker-0 .*NotReady/);
    expect(run.stderr).toContain('Updating version in progress. Target version: 4.17.5');
    // The control plane is done; the NodePool still reports the version all its nodes ran.
    const history = (hub.store.get(HC)!.status as { version: { history: { state: string }[] } }).version
      .history;
    expect(history[0]!.state).toBe('Completed');
    expect((hub.store.get(NP)!.status as { version: string }).version).toBe('4.17.3');
    // cluster status shows the update stalled on that node.
    const status = await airgap([
      'cluster',
      'status',
      '-f',
      t.lab.siteFile,
      '--kubeconfig',
      hub.kubeconfigFile,
    ]);
    expect(status.stdout).toMatch(
      /NodePool clusters\/lab: 1\/2 nodes on 4\.17\.3; Ready=False .*; Updating version in progress\. Target version: 4\.17\.5; node lab-worker-0/,
    );
  }, 120_000);
});
