import { Flags } from '@oclif/core';
import { stepPrinter } from '../../cli/registry-flags.js';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import { renewRegistry } from '../../registry/index.js';

export default class RegistryRenew extends AirgapCommand {
  static override summary =
    "Renew the bastion registry's certificate: a new leaf (same names, the CA kept or a new one), the registry restarted on it with its data, the trust ConfigMaps re-emitted.";

  static override description = `Issues a new server certificate for the registry \`airgap registry install\`
put on this host, and switches the registry to it:

  plan        the names of the current certificate (plus --san), signed by
              the directory's own CA (<dir>/pki, minted by install), by the
              CA in certs/ca.crt with --ca-key, or by a new CA (--new-ca);
              the new certificate is verified against the CAs clients will
              trust before anything changes, and renew refuses (exit 2,
              nothing changed) when it would not be trusted: a --ca-key that
              is not the key of certs/ca.crt, a CA clients do not trust, a CA
              expiring within 30 days, --new-ca without --kubeconfig (the
              hub would stop trusting the registry; --no-hub when no hub
              trusts it yet)
  trust       the CA(s) in the host's trust store and in
              /etc/containers/certs.d/<host:port>/; with --new-ca both the
              new and the old CA, before the registry switches
  configmaps  registry-config (openshift-config) and user-ca-bundle written
              under --output, and applied to the hub with --kubeconfig
              (custom-registries too, when the hub has it: only its
              ca-bundle.crt changes); other registries' entries are kept
  files       certs/tls.crt, tls.key, ca.crt (and pki/ca.crt, ca.key with
              --new-ca; the old CA kept as pki/ca-previous.crt), as one set;
              the password (auth/htpasswd) and config.yml are not touched
  service     systemctl restart <name>.service
  checks      the new certificate served (its SHA-256 fingerprint), the
              password asked for, an image pushed and read back

A renew stopped after the files changed is finished by running it again.`;

  static override examples = [
    {
      description: 'A new certificate from the CA airgap keeps in /opt/registry/pki:',
      command: '<%= config.bin %> registry renew --dir /opt/registry --password-file registry.pass',
    },
    {
      description: 'Add an address, and update the hub:',
      command:
        '<%= config.bin %> registry renew --dir /opt/registry --password-file registry.pass --san 192.168.10.6 --kubeconfig hub.kubeconfig',
    },
    {
      description: 'A new CA (both trusted while clients move to it); first see what would change:',
      command:
        '<%= config.bin %> registry renew --dir /opt/registry --password-file registry.pass --new-ca --kubeconfig hub.kubeconfig --dry-run',
    },
  ];

  static override flags = {
    dir: Flags.string({ description: 'The registry directory install used.', default: '/opt/registry' }),
    name: Flags.string({ description: 'The unit name (default: the one install recorded).' }),
    'password-file': Flags.string({
      description: 'The registry password, on one line (never printed), for the checks.',
      required: true,
    }),
    san: Flags.string({
      description:
        'Another name or IP address for the new certificate (added to the current ones); repeat it.',
      ...REPEATABLE,
    }),
    days: Flags.integer({ description: 'Validity of the new certificate in days (at most 825).', min: 1 }),
    'new-ca': Flags.boolean({
      description: 'Mint a new CA (kept in <dir>/pki) and sign with it.',
      exclusive: ['ca-key'],
    }),
    'no-hub': Flags.boolean({
      description:
        'With --new-ca and no --kubeconfig: no hub trusts this registry yet (else renew refuses, as the hub would stop trusting it).',
      dependsOn: ['new-ca'],
      exclusive: ['kubeconfig'],
    }),
    'ca-key': Flags.string({
      description: 'The private key of the CA in certs/ca.crt, when airgap did not mint it.',
    }),
    kubeconfig: Flags.string({ description: "The hub's kubeconfig: apply the trust ConfigMaps there." }),
    output: Flags.string({ description: 'Directory for the ConfigMap files (default <dir>/configmaps).' }),
    'hosted-cluster-namespace': Flags.string({
      description: 'Namespace of user-ca-bundle (the HostedCluster’s).',
      default: 'clusters',
    }),
    timeout: Flags.integer({
      description: 'Seconds the registry may take to answer after the restart.',
      default: 60,
      min: 1,
    }),
    'dry-run': Flags.boolean({
      description: 'Print what would change (names, validity, CAs trusted); change nothing.',
    }),
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RegistryRenew);
    const json = flags.json;
    const r = await renewRegistry({
      dir: flags.dir,
      passwordFile: flags['password-file'],
      ...(flags.name ? { name: flags.name } : {}),
      ...(flags.san ? { sans: flags.san } : {}),
      ...(flags.days ? { days: flags.days } : {}),
      newCa: flags['new-ca'],
      noHub: flags['no-hub'],
      ...(flags['ca-key'] ? { caKey: flags['ca-key'] } : {}),
      ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
      ...(flags.output ? { output: flags.output } : {}),
      hostedClusterNamespace: flags['hosted-cluster-namespace'],
      dryRun: flags['dry-run'],
      readyTimeoutMs: flags.timeout * 1000,
      report: stepPrinter({ json, dryRun: flags['dry-run'] }),
    });
    if (json) {
      this.printJson(r);
      return;
    }
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    process.stdout.write(
      r.dryRun
        ? 'nothing was changed (--dry-run)\n'
        : `the registry ${r.registry} serves its new certificate (serial ${r.certificate.serial}, until ${r.certificate.notAfter.slice(0, 10)}; was serial ${r.previous.serial})\n`,
    );
  }
}
