import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { clusterIdFlags, clusterOf, hubFlags, hubOf, siteFlag } from '../../cli/cluster-flags.js';
import { formatStatus, readClusterStatus } from '../../cluster/index.js';

export default class ClusterStatus extends AirgapCommand {
  static override summary =
    'Show a hosted cluster on one screen: control plane conditions, NodePool, ISO, each host and its Agent.';

  static override description = `Reads the HostedCluster, its NodePools, the InfraEnv, the BareMetalHosts
and the Agents, and says where each stands: the HostedCluster's Available,
Progressing, Degraded and validity conditions with their messages; desired
and current nodes; whether the discovery ISO exists; each host's
provisioning state (and error) with its Agent's hostname, role, state and
install stage. An Agent the NodePool does not pick is explained: not
approved, validations failing, not connected, bound elsewhere, or labels
that do not match the NodePool's agentLabelSelector.`;

  static override examples = [
    {
      description: 'The cluster of a site file:',
      command: '<%= config.bin %> cluster status --site site.yaml',
    },
    {
      description: 'By name, as JSON:',
      command: '<%= config.bin %> cluster status --name lab --namespace clusters --json',
    },
  ];

  static override flags = {
    site: siteFlag,
    ...clusterIdFlags,
    ...hubFlags,
    json: Flags.boolean({ description: 'Print the status as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ClusterStatus);
    const status = await readClusterStatus({ hub: hubOf(flags), cluster: clusterOf(flags) });
    if (flags.json) this.printJson(status);
    else process.stdout.write(formatStatus(status));
    if (!status.exists) process.exitCode = 1;
  }
}
