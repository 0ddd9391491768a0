import { Flags } from '@oclif/core';
import { writePullSecret } from '../../certs/index.js';
import { AirgapCommand } from '../../cli/command.js';

export default class CertsPullSecret extends AirgapCommand {
  static override summary = "Add the mirror registry's credentials to a copy of the pull secret.";

  static override description = `OpenShift, podman and skopeo read registry credentials from a pull secret:
JSON with an "auths" object, one entry per registry. The one from
console.redhat.com has Red Hat's registries; the disconnected cluster also
needs the mirror registry on the bastion. This command writes a copy of the
pull secret (--output) with

  "auths": { "<--registry>": { "auth": base64("<user>:<password>"), "email": … } }

added, or replaced if the registry was already there. Every other entry is
kept as it is. The original file is never changed, and --output may not be the
same file. The copy is written with mode 0600 (it is a secret) and is not
replaced unless you add --force.

--registry is the registry as image references name it: host:port, the
same as in \`airgap certs registry\` (registry.example.com:5000), with an
IPv6 address in brackets ([fd00::5]:5000). The password comes from a file
(--password-file, one line), so it never shows in the shell history or the
process list. The output lists the registries the new pull secret holds,
never a credential.

Use the result for \`airgap mirror --authfile\`, \`podman login --authfile\`,
and the pullSecret of install-config.yaml or the hosted cluster.`;

  static override examples = [
    {
      description: 'Add the bastion registry to the pull secret from console.redhat.com:',
      command:
        '<%= config.bin %> certs pull-secret --pull-secret pull-secret.json --registry registry.example.com:5000 --username admin --password-file registry.pass --output pull-secret-mirror.json',
    },
    {
      description: 'With an e-mail address, replacing an earlier result:',
      command:
        '<%= config.bin %> certs pull-secret --pull-secret pull-secret.json --registry registry.example.com:5000 --username admin --password-file registry.pass --email admin@example.com --output pull-secret-mirror.json --force',
    },
    {
      description: 'Then mirror with it:',
      command:
        '<%= config.bin %> mirror -c imageset-config.yaml --authfile pull-secret-mirror.json docker://registry.example.com:5000/ocp',
    },
  ];

  static override flags = {
    'pull-secret': Flags.string({
      description: 'The pull secret to start from (JSON with "auths"); it is only read.',
      required: true,
    }),
    registry: Flags.string({
      description: 'The mirror registry: host:port (or host), IPv6 in brackets.',
      required: true,
    }),
    username: Flags.string({ description: 'The registry user.', required: true }),
    'password-file': Flags.string({
      description: 'A file holding the password on one line (a final newline is dropped).',
      required: true,
    }),
    email: Flags.string({ description: 'An e-mail address stored with the entry (optional).' }),
    output: Flags.string({
      char: 'o',
      aliases: ['out'],
      description: 'The new pull secret (written 0600); not the input file.',
      required: true,
    }),
    force: Flags.boolean({ description: 'Replace --output if it exists.' }),
    json: Flags.boolean({
      description: 'Print the result as JSON (files and registries; never a credential).',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(CertsPullSecret);
    const result = await writePullSecret({
      pullSecretFile: flags['pull-secret'],
      registry: flags.registry,
      username: flags.username,
      passwordFile: flags['password-file'],
      email: flags.email,
      outFile: flags.output,
      force: flags.force,
    });
    if (flags.json) {
      this.printJson(result);
      return;
    }
    process.stdout.write(`wrote ${result.out} (mode 0600): ${result.action} ${result.registry}\n`);
    process.stdout.write(`registries in it (${result.registries.length}):\n`);
    for (const r of result.registries)
      process.stdout.write(`  ${r}${r === result.registry ? `  (${result.action})` : ''}\n`);
    process.stdout.write(`${result.input} is unchanged\n`);
  }
}
