import { Args, Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import { verifyCertificate } from '../../certs/index.js';
import { renderInfo } from '../../certs/index.js';

export default class CertsVerify extends AirgapCommand {
  static override summary =
    'Check that a certificate, its key and its CA belong together, cover the names, and are in date.';

  static override description = `Exit 0 when everything holds, 1 with the reasons when not. A certificate that expires within 30 days is a warning, not a failure.`;

  static override examples = [
    {
      description: 'Before starting the registry with these files:',
      command:
        '<%= config.bin %> certs verify ./pki/registry/tls.crt --key ./pki/registry/tls.key --ca ./pki/ca.crt --host registry.example.com --host 192.168.126.1',
    },
  ];

  static override args = {
    cert: Args.string({ description: 'The certificate (or a chain file, leaf first).', required: true }),
  };

  static override flags = {
    key: Flags.string({ description: 'Its private key.' }),
    ca: Flags.string({ description: 'The CA that should have issued it.' }),
    host: Flags.string({
      description: 'A DNS name or IP address it must cover (repeatable).',
      ...REPEATABLE,
    }),
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(CertsVerify);
    const r = await verifyCertificate({
      certFile: args.cert,
      ...(flags.key ? { keyFile: flags.key } : {}),
      ...(flags.ca ? { caFile: flags.ca } : {}),
      ...(flags.host ? { hosts: flags.host } : {}),
    });
    if (flags.json) this.printJson(r);
    else {
      const lines = [renderInfo(r.certificate)];
      for (const p of r.problems) lines.push(`FAIL     ${p}`);
      for (const w of r.warnings) lines.push(`warning  ${w}`);
      lines.push(r.ok ? 'ok: certificate, key and CA belong together' : `${r.problems.length} problem(s)`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (!r.ok) process.exitCode = 1;
  }
}
