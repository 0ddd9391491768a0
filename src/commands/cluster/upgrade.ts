import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf, stderrReporter, timeoutFlag, timeoutMs } from '../../cli/cluster-flags.js';
import { upgradeCluster } from '../../cluster/index.js';

export default class ClusterUpgrade extends AirgapCommand {
  static override summary = 'Update a hosted cluster to another release through the mirror.';

  static override description = `Before anything changes:
  - the target release is resolved to its digest in the mirror (--to 4.18.3 is the site's release
    repository at 4.18.3-<arch>; an image can be given instead), its payload read and its
    control-plane-operator image found in the mirror;
  - a downgrade is refused;
  - the update from the version the cluster runs is checked against the update graph
    (--graph-url, else UPDATE_URL_OVERRIDE: the site's OpenShift Update Service). A recommended
    update goes on; a conditional one, or one the graph does not recommend, needs --force, and its
    risks are printed.
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
        'Update service graph endpoint the update is checked against. Default: $UPDATE_URL_OVERRIDE.',
    }),
    force: Flags.boolean({
      description: 'Update even when the graph does not recommend it (the risks are printed).',
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
      `update: ${result.edge.kind}${result.edge.risks.length ? `, risks: ${result.edge.risks.join('; ')}` : ''}`,
      ...result.patches.map(
        (p) => `${result.dryRun ? 'would patch' : 'patched'} ${p.object}: ${JSON.stringify(p.patch)}`,
      ),
      result.dryRun ? 'nothing was changed (--dry-run)' : `${result.cluster} runs ${result.to.version}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
