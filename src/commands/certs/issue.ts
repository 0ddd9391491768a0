import { join } from 'node:path';
import { Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import { usageError, CommonError } from '../../util/errors.js';
import { issueServerFiles } from '../../certs/index.js';
import { KEY_TYPES, MAX_LEAF_DAYS, type KeyType } from '../../certs/index.js';
import { renderCertificate } from '../../certs/index.js';

export default class CertsIssue extends AirgapCommand {
  static override summary =
    'Issue a TLS server certificate from your CA, for the mirror registry or the boot image web server.';

  static override description = `Writes into --output: tls.crt, tls.key (mode 0600), ca.crt and fullchain.crt (tls.crt then ca.crt, what a server should present). Give every name clients use with --san: DNS names and IPv4/IPv6 addresses (IPv6 without brackets). The certificate is for server authentication, valid at most ${MAX_LEAF_DAYS} days (what TLS clients accept) and never past the CA's own expiry.`;

  static override examples = [
    {
      description: 'The bastion registry, reached by name and by its IPv4 and IPv6 addresses:',
      command:
        '<%= config.bin %> certs issue --ca ./pki --san registry.example.com --san 192.168.126.1 --san 2620:52:0:1306::1 --output ./pki/registry',
    },
  ];

  static override flags = {
    ca: Flags.string({ description: 'Directory holding ca.crt and ca.key (written by `airgap certs ca`).' }),
    'ca-cert': Flags.string({ description: 'The CA certificate (instead of --ca).' }),
    'ca-key': Flags.string({ description: 'The CA key (instead of --ca).' }),
    san: Flags.string({
      description: 'A DNS name or IP address the certificate covers (repeatable, or comma-separated).',
      ...REPEATABLE,
      required: true,
    }),
    'common-name': Flags.string({ description: 'Subject CN (default: the first --san).' }),
    days: Flags.integer({
      description: `Validity in days (at most ${MAX_LEAF_DAYS}).`,
      default: MAX_LEAF_DAYS,
    }),
    'key-type': Flags.string({
      description: 'Key algorithm and size.',
      options: [...KEY_TYPES],
      default: 'rsa-2048',
    }),
    output: Flags.string({
      char: 'o',
      aliases: ['out'],
      description: 'Directory for tls.crt, tls.key, ca.crt and fullchain.crt.',
      required: true,
    }),
    force: Flags.boolean({ description: 'Replace the files if they exist.' }),
    json: Flags.boolean({ description: 'Print what was written as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(CertsIssue);
    const caCert = flags['ca-cert'] ?? (flags.ca ? join(flags.ca, 'ca.crt') : undefined);
    const caKey = flags['ca-key'] ?? (flags.ca ? join(flags.ca, 'ca.key') : undefined);
    if (!caCert || !caKey)
      throw usageError(CommonError.FLAG_MISSING, 'say which CA signs the certificate', {
        hint: 'give --ca <dir> (holding ca.crt and ca.key from `airgap certs ca`), or --ca-cert and --ca-key',
      });
    const r = await issueServerFiles({
      caCert: caCert!,
      caKey: caKey!,
      names: flags.san,
      ...(flags['common-name'] ? { commonName: flags['common-name'] } : {}),
      days: flags.days,
      keyType: flags['key-type'] as KeyType,
      out: flags.output,
      force: flags.force,
    });
    if (flags.json) this.printJson(r);
    else process.stdout.write(`${renderCertificate(r)}\n`);
  }
}
