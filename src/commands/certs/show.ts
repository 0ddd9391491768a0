import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { describeCertificate, readCertificates } from '../../certs/index.js';
import { renderInfo } from '../../certs/index.js';

export default class CertsShow extends AirgapCommand {
  static override summary =
    'Show what a certificate covers and until when (every certificate of a chain file).';

  static override examples = [
    {
      description: 'What names does the registry certificate cover?',
      command: '<%= config.bin %> certs show ./pki/registry/tls.crt',
    },
  ];

  static override args = {
    file: Args.string({ description: 'A PEM file with one or more certificates.', required: true }),
  };

  static override flags = {
    json: Flags.boolean({ description: 'Print the details as JSON.' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(CertsShow);
    const infos = (await readCertificates(args.file)).map((x) => describeCertificate(x));
    if (flags.json) this.printJson(infos);
    else
      process.stdout.write(
        `${infos.map((i, n) => renderInfo(i, infos.length > 1 ? `certificate ${n + 1}` : undefined)).join('\n\n')}\n`,
      );
  }
}
