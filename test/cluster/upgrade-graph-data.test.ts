/**
 * `airgap cluster upgrade` checked against the graph data in the mirror, through the real CLI: the
 * lab site is mirrored with `platform.graph: true`, so its mirror holds the graph image beside the
 * release images, and no update service is given (UPDATE_URL_OVERRIDE empty). The update
 * 4.17.3 → 4.17.5 is judged from the graph data (4.17.5's release metadata lists 4.17.3 as previous,
 * both are in stable-4.17), and the judgement follows the graph data when it is mirrored again: a
 * conditional edge and a blocked one are refused without --force, a channel the data lacks is
 * said so; --graph-url is still asked first; restored, the update goes through.
 */
import { describe, expect, it } from 'vitest';
import type { Hub } from '../../lab/hub/index.js';
import type { UpdateGraph } from '../../src/mirror/openshift/graph.js';
import { airgap } from '../helpers/cli.js';
import { tarGz } from '../helpers/fixtures.js';
import { useLabSite } from '../helpers/lab-site.js';

const HC = {
  apiVersion: 'hypershift.openshift.io/v1beta1',
  kind: 'HostedCluster',
  namespace: 'clusters',
  name: 'lab',
};

const RISK = {
  url: 'https://issues.redhat.com/browse/OCPBUGS-00000',
  name: 'LabRisk',
  message: 'A made-up known issue for clusters with the lab feature enabled.',
  matchingRules: [{ type: 'Always' }],
};

/** Set (or clear) the HostedCluster's spec.channel in the hub simulator. */
function setChannel(hub: Hub, channel: string | undefined): void {
  for (let attempt = 0; ; attempt++) {
    const hc = hub.store.get(HC)!;
    const spec = { ...(hc.spec as Record<string, unknown>) };
    if (channel) spec.channel = channel;
    else delete spec.channel;
    try {
      hub.store.update({ ...hc, spec });
      return;
    } catch (e) {
      if (attempt > 3) throw e; // a controller wrote in between: read again
    }
  }
}

describe('airgap cluster upgrade against the graph data in the mirror', () => {
  const t = useLabSite({ upgradeTo: '4.17.5', graph: true });

  it('judges the update from the mirrored graph image: recommended goes on; conditional, blocked or an unknown channel is refused', async () => {
    const hub = await t.readyHub();
    const installed = await t.install(hub);
    expect(installed.exitCode, installed.stderr).toBe(0);
    const graphImage = t.lab.graphImage!;
    expect(graphImage).toBe(`${t.lab.mirrorName}/openshift/graph-image:latest`);
    const byGraphData = new RegExp(`graph data in ${graphImage.replace(/[.]/g, '\\.')}@sha256:[0-9a-f]{64}`);
    const upgrade = (extra: string[] = [], env: Record<string, string> = { UPDATE_URL_OVERRIDE: '' }) =>
      airgap(
        [
          'cluster',
          'upgrade',
          '-f',
          t.lab.siteFile,
          '--to',
          '4.17.5',
          '--kubeconfig',
          hub.kubeconfigFile,
          ...extra,
        ],
        { env },
      );

    // No update service at all: the graph data in the mirror recommends the update.
    const dry = await upgrade(['--dry-run']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('clusters/lab: 4.17.3 → 4.17.5');
    expect(dry.stdout).toMatch(new RegExp(`^update: recommended \\(${byGraphData.source}\\)$`, 'm'));
    // The graph image comes before UPDATE_URL_OVERRIDE (the helper's default is a closed port).
    const overridden = await upgrade(['--dry-run', '--json'], {});
    expect(overridden.exitCode, overridden.stderr).toBe(0);
    const json = JSON.parse(overridden.stdout) as { edge: { kind: string; source: string } };
    expect(json.edge.kind).toBe('recommended');
    expect(json.edge.source).toMatch(new RegExp(`^${byGraphData.source}$`));

    // A channel the graph data does not have: refused, and it says which it has.
    setChannel(hub, 'fast-4.17');
    const noChannel = await upgrade();
    expect(noChannel.exitCode, noChannel.stderr).toBe(2);
    expect(noChannel.stderr).toMatch(
      new RegExp(
        `error \\[UPGRADE_NOT_RECOMMENDED\\]: cannot check 4\\.17\\.3 → 4\\.17\\.5: the ${byGraphData.source} has no channel fast-4\\.17 \\(it has stable-4\\.17\\)`,
      ),
    );
    setChannel(hub, undefined);

    // The upstream now declares a risk on 4.17.3 → 4.17.5; mirrored again, the update is conditional.
    const graph = t.lab.up.graph.graphs[`${t.lab.up.channel}/amd64`] as UpdateGraph;
    const plainEdges = graph.edges;
    graph.edges = [];
    graph.conditionalEdges = [{ edges: [{ from: '4.17.3', to: '4.17.5' }], risks: [RISK] }];
    await t.lab.mirrorAgain();
    const conditional = await upgrade();
    expect(conditional.exitCode, conditional.stderr).toBe(2);
    expect(conditional.stderr).toMatch(
      new RegExp(
        `error \\[UPGRADE_NOT_RECOMMENDED\\]: the update 4\\.17\\.3 → 4\\.17\\.5 is conditional in stable-4\\.17 \\(${byGraphData.source}\\): LabRisk: A made-up known issue`,
      ),
    );
    const forced = await upgrade(['--force', '--dry-run']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(
      new RegExp(
        `^update: conditional \\(${byGraphData.source}\\), risks: LabRisk: A made-up known issue for clusters with the lab feature enabled\\. \\(https://issues\\.redhat\\.com/browse/OCPBUGS-00000\\)$`,
        'm',
      ),
    );
    expect(forced.stderr).toContain('update risk: LabRisk');

    // A blocked edge (no matchingRules): not recommended at all.
    t.lab.up.graph.graphData = tarGz({
      version: '1.1.0\n',
      'channels/stable-4.17.yaml': 'name: stable-4.17\nversions:\n- 4.17.3\n- 4.17.5\n',
      'blocked-edges/4.17.5.yaml': 'to: 4.17.5\nfrom: .*\n',
    });
    await t.lab.mirrorAgain();
    const blocked = await upgrade();
    expect(blocked.exitCode, blocked.stderr).toBe(2);
    expect(blocked.stderr).toMatch(
      new RegExp(
        `error \\[UPGRADE_NOT_RECOMMENDED\\]: stable-4\\.17 recommends no update 4\\.17\\.3 → 4\\.17\\.5 \\(${byGraphData.source}\\): blocked by blocked-edges/4\\.17\\.5\\.yaml \\(from: \\.\\*\\)`,
      ),
    );

    // --graph-url is asked before the mirror's graph data.
    graph.edges = plainEdges;
    graph.conditionalEdges = [];
    const service = await upgrade(['--dry-run', '--graph-url', t.lab.up.graph.url]);
    expect(service.exitCode, service.stderr).toBe(0);
    expect(service.stdout).toContain(`update: recommended (update-service ${t.lab.up.graph.url})`);

    // The graph data mirrored again as it was: the update goes through.
    delete t.lab.up.graph.graphData;
    await t.lab.mirrorAgain();
    const up = await upgrade(['--timeout', '3m']);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(up.stdout).toMatch(new RegExp(`^update: recommended \\(${byGraphData.source}\\)$`, 'm'));
    expect(up.stdout).toContain('clusters/lab runs 4.17.5');
    const hc = hub.store.get(HC)!;
    const history = (hc.status as { version: { history: { version: string; state: string }[] } }).version
      .history;
    expect(history[0]).toMatchObject({ version: '4.17.5', state: 'Completed' });
  }, 300_000);
});
