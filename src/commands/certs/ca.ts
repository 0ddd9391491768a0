import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { createCaFiles } from '../../certs/index.js';
import { KEY_TYPES, type KeyType } from '../../certs/index.js';
import { renderCertificate } from '../../certs/index.js';

export default class CertsCa extends AirgapCommand {
  static override summary =
    'Create the certificate authority (CA) that signs your registry and web server certificates.';

  static override description = `Writes ca.crt and ca.key (mode 0600) into --output. Keep ca.key on the bastion; ca.crt is what every client must trust: the hub's registry-config, the hosted cluster's user-ca-bundle, the assisted-service custom-registries ConfigMap (see \`airgap certs configmaps\`), and the bastion itself (/etc/pki/ca-trust/source/anchors, then update-ca-trust). Existing files are never replaced without --force.`;

  static override examples = [
    {
      description: 'A CA for the disconnected site, valid 10 years, RSA 4096:',
      command: '<%= config.bin %> certs ca --output ./pki --common-name "Example Lab CA"',
    },
    {
      description: 'A smaller, faster ECDSA P-256 CA valid 5 years:',
      command:
        '<%= config.bin %> certs ca --output ./pki --common-name "Lab CA" --key-type ecdsa-p256 --days 1825',
    },
  ];

  static override flags = {
    output: Flags.string({
      char: 'o',
      aliases: ['out'],
      description: 'Directory for ca.crt and ca.key.',
      required: true,
    }),
    'common-name': Flags.string({ description: 'Subject CN of the CA.', default: 'airgap CA' }),
    organization: Flags.string({ description: 'Subject O of the CA.' }),
    days: Flags.integer({ description: 'Validity in days.', default: 3650 }),
    'key-type': Flags.string({
      description: 'Key algorithm and size.',
      options: [...KEY_TYPES],
      default: 'rsa-4096',
    }),
    force: Flags.boolean({ description: 'Replace ca.crt and ca.key if they exist.' }),
    json: Flags.boolean({ description: 'Print what was written as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(CertsCa);
    const r = await createCaFiles({
      out: flags.output,
      commonName: flags['common-name'],
      ...(flags.organization ? { organization: flags.organization } : {}),
      days: flags.days,
      keyType: flags['key-type'] as KeyType,
      force: flags.force,
    });
    if (flags.json) this.printJson(r);
    else process.stdout.write(`${renderCertificate(r)}\n`);
  }
}
