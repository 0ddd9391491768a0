import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf, stderrReporter, timeoutFlag, timeoutMs } from '../../cli/cluster-flags.js';
import { upgradeCluster, type UpgradeResult } from '../../cluster/index.js';

/** `update: conditional (graph data in …), risks: …`: the judgement, what made it, and why. */
function updateLine(edge: UpgradeResult['edge']): string {
  return [
    `update: ${edge.kind}`,
    edge.source ? ` (${edge.source})` : '',
    edge.reason ? `: ${edge.reason}` : '',
    edge.risks.length ? `, risks: ${edge.risks.join('; ')}` : '',
  ].join('');
}

export default class ClusterUpgrade extends AirgapCommand {
  static override summary = 'Update a hosted cluster to another release through the mirror.';

  static override description = `Before anything changes:
  - the target release is resolved to its digest in the mirror (--to 4.18.3 is the site's release
    repository at 4.18.3-<arch>; an image can be given instead), its payload read and every
    component image it names found in the mirror (a node that cannot pull one would stop the
    update half-way);
  - a downgrade is refused;
  - the update from the version the cluster runs is checked in the cluster's channel (its
    spec.channel, else stable-<major.minor> of the target), against, in this order:
      1. the OpenShift Update Service --graph-url names;
      2. the graph data in the mirror: the graph image airgap mirror pushes beside the release
         images when the ImageSetConfiguration says platform.graph: true
         (<mirror>/<prefix>/openshift/graph-image:latest). The update is decided from its channel
         file and blocked edges and the target's release metadata, as the update service would:
         the target must list the running version among its previous releases, both must be in
         the channel, and a blocked edge makes it conditional (with matchingRules) or removes it;
      3. the update service UPDATE_URL_OVERRIDE names.
    A recommended update goes on; a conditional one, one the graph does not recommend, or one
    nothing could check needs --force, and its risks are printed. The output says what judged it.
Then the HostedCluster's release (and its control-plane-operator pin) is patched and its version
history followed until the update completes, then each NodePool, until all its nodes run the new
version. Each step looks at what is there first: run the same command again after an
interruption and it goes on. --dry-run prints the patches and changes nothing.`;

  static override examples = [
    {
      description: 'Update the cluster of a site file to 4.18.3, checked against the site update service:',
      command:
        '<%= config.bin %> cluster upgrade -f site.yaml --to 4.18.3 --graph-url https://osus.example.com/api/upgrades_info/v1/graph',
    },
    {
      description:
        'Update checked against the graph data the mirror holds (airgap mirror with platform.graph: true):',
      command: '<%= config.bin %> cluster upgrade -f site.yaml --to 4.18.3',
    },
    {
      description: 'What would be patched, without changing anything:',
      command: '<%= config.bin %> cluster upgrade -f site.yaml --to 4.18.3 --force --dry-run',
    },
  ];

  static override flags = {
    site: Flags.string({ char: 'f', description: 'Site file of the hosted cluster.', required: true }),
    to: Flags.string({
      description: 'Target release: a version (x.y.z) or a release image.',
      required: true,
    }),
    'graph-url': Flags.string({
      description:
        'Update service graph endpoint the update is checked against. Default: the graph image in the mirror, else $UPDATE_URL_OVERRIDE.',
    }),
    force: Flags.boolean({
      description:
        'Update even when the graph does not recommend it, or nothing could check it (the risks are printed).',
    }),
    'dry-run': Flags.boolean({ description: 'Print the patches; change nothing.' }),
    timeout: timeoutFlag('90m'),
    ...hubFlags,
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ClusterUpgrade);
    const result = await upgradeCluster({
      siteFile: flags.site,
      to: flags.to,
      hub: hubOf(flags),
      force: flags.force,
      dryRun: flags['dry-run'],
      graphUrl: flags['graph-url'],
      report: stderrReporter,
      phaseTimeoutMs: timeoutMs(flags.timeout),
    });
    if (flags.json) {
      this.printJson(result);
      return;
    }
    const lines = [
      `${result.cluster}: ${result.from || '?'} → ${result.to.version} (${result.to.image})`,
      updateLine(result.edge),
      ...result.patches.map((p) =>
        p.change
          ? `${result.dryRun ? 'would patch' : 'patched'} ${p.object}: ${JSON.stringify(p.patch)}`
          : `${p.object} is already at ${result.to.version}: left as it is`,
      ),
      result.dryRun
        ? 'nothing was changed (--dry-run)'
        : result.patches.some((p) => p.change)
          ? `${result.cluster} runs ${result.to.version}`
          : `${result.cluster} already runs ${result.to.version}: nothing was changed`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
