import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { clusterIdFlags, clusterOf, hubFlags, hubOf, siteFlag } from '../../cli/cluster-flags.js';
import { writeSelectedKubeconfig } from '../../cluster/index.js';

export default class ClusterKubeconfig extends AirgapCommand {
  static override summary = "Write a hosted cluster's admin kubeconfig to a file (0600).";

  static override description = `Reads the Secret the HostedCluster names in status.kubeconfig (in the
HostedCluster's namespace, key kubeconfig) and writes it to --output with
mode 0600. It is never printed: a kubeconfig is a credential.`;

  static override examples = [
    { description: 'By name:', command: '<%= config.bin %> cluster kubeconfig --name lab -o lab.kubeconfig' },
    {
      description: 'The cluster of a site file, then use it:',
      command:
        '<%= config.bin %> cluster kubeconfig --site site.yaml -o lab.kubeconfig && oc --kubeconfig lab.kubeconfig get nodes',
    },
  ];

  static override flags = {
    site: siteFlag,
    ...clusterIdFlags,
    ...hubFlags,
    output: Flags.string({ char: 'o', description: 'File to write (0600).', required: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ClusterKubeconfig);
    const { cluster, file } = await writeSelectedKubeconfig({
      hub: hubOf(flags),
      cluster: clusterOf(flags),
      out: flags.output,
    });
    this.log(`wrote ${file} (0600): the admin kubeconfig of ${cluster.namespace}/${cluster.name}`);
  }
}
