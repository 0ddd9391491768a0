import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { hubFlags, hubOf } from '../../cli/cluster-flags.js';
import { formatRegistryStatus, registryStatus } from '../../registry/index.js';

export default class RegistryStatus extends AirgapCommand {
  static override summary =
    "Show the bastion's mirror registry on one screen: running or not, the addresses it answers on, certificate expiry, disk, images and hub trust.";

  static override description = `Reads the registry directory (--dir) and checks every part, changing nothing:

  service    the systemd unit's state (and its last log lines when it does
             not run) and whether the podman container runs
  addresses  every address the certificate names (the host name resolved to
             each IPv4 and IPv6 address, and its IP names), each a TLS
             handshake that trusts only the registry's CA
  certs      expiry of the certificate file, of the one served (a renewal
             without a restart shows here) and of the CA; under 30 days is a
             warning, expired a problem
  storage    bytes under the data directory and free on its filesystem
  images     tags by repository prefix (needs --password-file)
  deletes    whether config.yml lets clients delete (storage.delete.enabled)
  hub        with --kubeconfig: whether the hub's trust ConfigMaps
             (openshift-config/registry-config, <namespace>/user-ca-bundle)
             still hold this CA

Exits 0 when healthy (running, every address answers with a trusted
certificate, nothing expired, the hub's ConfigMaps hold the CA), 1 otherwise;
a certificate expiring within 30 days is a warning only.`;

  static override examples = [
    {
      description: 'The registry installed from /opt/registry:',
      command: '<%= config.bin %> registry status --dir /opt/registry',
    },
    {
      description: 'With the image count and the hub trust check, as JSON:',
      command:
        '<%= config.bin %> registry status --dir /opt/registry --password-file registry.pass --kubeconfig hub.kubeconfig --json',
    },
  ];

  static override flags = {
    dir: Flags.string({ description: 'The registry directory.', default: '/opt/registry' }),
    name: Flags.string({
      description:
        'The systemd unit and podman container name (default: the one install recorded, else registry).',
    }),
    'password-file': Flags.string({
      description: 'The registry password, on one line (never printed): needed to count the images.',
    }),
    ...hubFlags,
    'hosted-cluster-namespace': Flags.string({
      description: "Namespace of the hub ConfigMap user-ca-bundle (the HostedCluster's).",
      default: 'clusters',
    }),
    json: Flags.boolean({ description: 'Print the status as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RegistryStatus);
    const status = await registryStatus({
      dir: flags.dir,
      ...(flags.name ? { name: flags.name } : {}),
      ...(flags['password-file'] ? { passwordFile: flags['password-file'] } : {}),
      ...(flags.kubeconfig || flags.context ? { hub: hubOf(flags) } : {}),
      hostedClusterNamespace: flags['hosted-cluster-namespace'],
    });
    if (flags.json) this.printJson(status);
    else process.stdout.write(formatRegistryStatus(status));
    if (!status.healthy) process.exitCode = 1;
  }
}
