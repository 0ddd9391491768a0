import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import {
  clusterIdFlags,
  hubFlags,
  hubOf,
  stderrReporter,
  timeoutFlag,
  timeoutMs,
} from '../../cli/cluster-flags.js';
import { installClusterFromSite } from '../../cluster/index.js';

export default class InstallCluster extends AirgapCommand {
  static override summary =
    'Create a hosted cluster on bare metal (HyperShift, Agent platform) from the mirror, and drive it to Ready nodes and a kubeconfig.';

  static override description = `Reads the site file, checks it, and before anything is applied:
resolves the release to its digest in the mirror (with the site's CA and
pull secret), finds the payload's hypershift image (the control plane
operator pin a disconnected hub needs), and checks the mirror has it.

Then it applies, with server-side apply (field manager airgap), in order:
the namespaces <ns> and <ns>-<name>; the pull secret, SSH key and a new etcd
encryption key; user-ca-bundle; the InfraEnv's pull secret and the CAPI
provider Role in <ns>-<name>; the HostedCluster (release by digest, mirror
image content sources, the registry CA); the NodePool (0 replicas); the
NMStateConfigs of hosts with static addresses and the InfraEnv; and, once
its discovery ISO exists, the BMC secrets and BareMetalHosts.

It then waits, showing each change: the control plane Available; each host
registering → provisioning → provisioned; an Agent per host, approved
(when cluster.approveAgents is true), validated and connected; the NodePool
scaled to the number of ready Agents; every Agent bound and installed; the
version rollout complete; and finally the admin kubeconfig written (0600)
and the hosted cluster's nodes Ready through it. A host that fails does not
stop the others, but the exit code is 1.

Running it again continues where it stopped and creates nothing twice (the
etcd key of an existing cluster is kept). --render writes the manifests
instead of applying them (secrets only with --render-sensitive).`;

  static override examples = [
    {
      description: 'Install the cluster the site file describes, on the hub of ~/.kube/config:',
      command: '<%= config.bin %> install cluster --site site.yaml',
    },
    {
      description:
        'Review the manifests first (no secrets written), then apply them yourself or with this command:',
      command: '<%= config.bin %> install cluster --site site.yaml --render manifests/',
    },
    {
      description: 'A second cluster from the same site file, with its own name:',
      command:
        '<%= config.bin %> install cluster --site site.yaml --name lab2 --kubeconfig hub.kubeconfig --kubeconfig-out lab2.kubeconfig',
    },
  ];

  static override flags = {
    site: Flags.string({ char: 'f', description: 'Site file (docs/site-config.md).', required: true }),
    ...clusterIdFlags,
    release: Flags.string({
      description: 'Release image in the mirror (tag or digest). Default: cluster.release.image of --site.',
    }),
    ...hubFlags,
    render: Flags.string({
      description: 'Write the manifests into this directory instead of applying them.',
    }),
    'render-sensitive': Flags.boolean({
      description: 'With --render, also write the Secrets (0600).',
      dependsOn: ['render'],
    }),
    'kubeconfig-out': Flags.string({
      description:
        "Where to write the hosted cluster's admin kubeconfig (0600). Default: ./<name>.kubeconfig.",
    }),
    'insecure-skip-tls-verify': Flags.boolean({
      description:
        "Do not verify the mirror registry's certificate (preflight only; the cluster still needs the CA).",
    }),
    timeout: timeoutFlag('60m'),
    json: Flags.boolean({ description: 'Print the result as JSON on stdout (progress stays on stderr).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(InstallCluster);
    const limit = timeoutMs(flags.timeout);
    const out = await installClusterFromSite({
      siteFile: flags.site,
      overrides: {
        ...(flags.name ? { name: flags.name } : {}),
        ...(flags.namespace ? { namespace: flags.namespace } : {}),
        ...(flags.release ? { release: flags.release } : {}),
      },
      hub: hubOf(flags),
      renderDir: flags.render,
      renderSensitive: flags['render-sensitive'],
      kubeconfigOut: flags['kubeconfig-out'],
      insecureSkipTlsVerify: flags['insecure-skip-tls-verify'],
      report: stderrReporter,
      phaseTimeoutMs: limit,
    });

    const { release } = out;
    if (out.mode === 'render') {
      if (flags.json) this.printJson({ files: out.files, omittedSecrets: out.omittedSecrets, release });
      else {
        for (const f of out.files) this.log(`wrote ${f}`);
        if (out.omittedSecrets)
          this.log(`${out.omittedSecrets} Secret(s) left out (--render-sensitive writes them, 0600)`);
      }
      return;
    }
    const { result } = out;
    if (flags.json) this.printJson({ ...result, release });
    else {
      this.log(
        `hosted cluster ${result.cluster.namespace}/${result.cluster.name} (${result.releaseVersion ?? release.version}) is installed`,
      );
      for (const n of result.nodes) this.log(`  node ${n.name}: ${n.ready ? 'Ready' : 'NotReady'}`);
      this.log(`kubeconfig: ${result.kubeconfig}   (oc --kubeconfig ${result.kubeconfig} get nodes)`);
      for (const f of result.failures) this.logToStderr(`failed: ${f}`);
    }
    if (result.failures.length) process.exitCode = 1;
  }
}
