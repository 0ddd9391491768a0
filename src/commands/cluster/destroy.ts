import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import {
  clusterIdFlags,
  clusterOf,
  hubFlags,
  hubOf,
  siteFlag,
  stderrReporter,
  timeoutFlag,
  timeoutMs,
} from '../../cli/cluster-flags.js';
import { destroySelectedCluster } from '../../cluster/index.js';

export default class ClusterDestroy extends AirgapCommand {
  static override summary = 'Take a hosted cluster apart and release its hosts, in the right order.';

  static override description = `1. scales its NodePools to 0 and waits until no Agent is bound to it;
2. deletes the NodePools and the HostedCluster, and waits until they are
   gone (HyperShift removes the control plane);
3. deletes, in the agent namespace, the BareMetalHosts, Agents,
   NMStateConfigs, InfraEnv, BMC secrets, the InfraEnv pull secret and the
   CAPI provider Role, then the namespace;
4. deletes the cluster's pull secret, SSH key, etcd key and user-ca-bundle
   from the HostedCluster namespace (the namespace stays).
--dry-run lists what would go and changes nothing. Released hosts must boot
the discovery image again before another cluster can use them.`;

  static override examples = [
    {
      description: 'See what would be deleted:',
      command: '<%= config.bin %> cluster destroy --name lab --dry-run',
    },
    {
      description: 'Destroy the cluster of a site file:',
      command: '<%= config.bin %> cluster destroy --site site.yaml',
    },
  ];

  static override flags = {
    site: siteFlag,
    ...clusterIdFlags,
    ...hubFlags,
    'dry-run': Flags.boolean({ description: 'List what would be deleted; delete nothing.' }),
    timeout: timeoutFlag('30m'),
    json: Flags.boolean({ description: 'Print what was (or would be) deleted as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ClusterDestroy);
    const limit = timeoutMs(flags.timeout);
    const { cluster, destroyed } = await destroySelectedCluster({
      hub: hubOf(flags),
      cluster: clusterOf(flags),
      dryRun: flags['dry-run'],
      report: flags['dry-run'] && !flags.json ? (e) => this.log(`${e.object}`) : stderrReporter,
      phaseTimeoutMs: limit,
    });
    if (flags.json) this.printJson(destroyed);
    else if (!destroyed.dryRun)
      this.log(`destroyed ${cluster.namespace}/${cluster.name}: ${destroyed.objects.length} objects deleted`);
  }
}
