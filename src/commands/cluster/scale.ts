import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf, stderrReporter, timeoutFlag, timeoutMs } from '../../cli/cluster-flags.js';
import { scaleCluster } from '../../cluster/index.js';

export default class ClusterScale extends AirgapCommand {
  static override summary =
    'Add or remove bare-metal hosts of a hosted cluster, as the site file lists them.';

  static override description = `The hosts the site file lists are the cluster's nodes. Compared with what the
hub has:
  - a host the site no longer lists leaves first: its CAPI Machine is marked
    for deletion (so that node, and not another, goes), the NodePool is scaled
    down, its Agent is released once its node is drained, then its
    BareMetalHost is deleted (metal3 deprovisions and powers it off) with its
    BMC Secret and NMStateConfig;
  - a host the site adds gets its BareMetalHost (and BMC Secret,
    NMStateConfig), boots the discovery ISO, its Agent is approved and
    validated, then the NodePool is scaled up and the Agent installed.
With --replicas the NodePool is scaled within the Agents already on the hub
(the site file must match the hub's hosts): scaling down keeps the hosts and
their Agents for later.
Before anything changes, a change that would leave the NodePool with no node is
refused (--force allows it), and so is asking for more nodes than there are
Agents that can be picked, with each Agent's reason. Run the same command again
after an interruption and it goes on; --dry-run prints the plan.`;

  static override examples = [
    {
      description: 'After adding a host to (or removing one from) the site file:',
      command: '<%= config.bin %> cluster scale -f site.yaml',
    },
    {
      description: 'What would change, without changing anything:',
      command: '<%= config.bin %> cluster scale -f site.yaml --dry-run',
    },
    {
      description: 'Run on 2 of the hosts already there:',
      command: '<%= config.bin %> cluster scale -f site.yaml --replicas 2',
    },
  ];

  static override flags = {
    site: Flags.string({ char: 'f', description: 'Site file of the hosted cluster.', required: true }),
    replicas: Flags.integer({
      description: 'Nodes of the NodePool, among the Agents on the hub (the site file must match the hub).',
      min: 0,
    }),
    force: Flags.boolean({ description: 'Allow a NodePool with no node.' }),
    'dry-run': Flags.boolean({ description: 'Print the plan; change nothing.' }),
    timeout: timeoutFlag('90m'),
    ...hubFlags,
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ClusterScale);
    const result = await scaleCluster({
      siteFile: flags.site,
      hub: hubOf(flags),
      ...(flags.replicas !== undefined ? { replicas: flags.replicas } : {}),
      force: flags.force,
      dryRun: flags['dry-run'],
      report: stderrReporter,
      phaseTimeoutMs: timeoutMs(flags.timeout),
    });
    if (result.failures.length) process.exitCode = 1;
    if (flags.json) {
      this.printJson(result);
      return;
    }
    const will = result.dryRun;
    const lines = [
      `${result.cluster}: NodePool ${result.nodePool} ${result.replicas.from} → ${result.replicas.to} nodes`,
      ...result.remove.map(
        (r) =>
          `${will ? 'would remove' : 'removed'} ${r.host}${r.inNodePool ? (will ? ': release its Agent, then deprovision it' : ': Agent released, host deprovisioned') : will ? ': deprovision it (not in the NodePool)' : ': deprovisioned (was not in the NodePool)'}`,
      ),
      ...result.join.map(
        (j) =>
          `${will ? 'would add' : 'added'} ${j.host}${j.create ? '' : ' (its BareMetalHost was on the hub)'}`,
      ),
      ...result.failures.map((f) => `failed: ${f}`),
      will
        ? 'nothing was changed (--dry-run)'
        : `${result.cluster} has ${result.ready} Ready node${result.ready === 1 ? '' : 's'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
