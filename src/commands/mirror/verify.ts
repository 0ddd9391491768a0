import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { withProgress } from '../../cli/mirror-flags.js';
import { renderVerifyReport, verifyArchiveAt } from '../../mirror/index.js';

export default class MirrorVerify extends AirgapCommand {
  static override summary =
    'Check an archive before carrying it across the air gap: every part present, sized and checksummed.';

  static override examples = [
    {
      description: 'Verify the archive a mirror-to-disk run wrote:',
      command: '<%= config.bin %> mirror verify file:///media/usb',
    },
  ];

  static override args = {
    archive: Args.string({
      description: 'file://dir (or a plain path) holding airgap-archive.json and mirror_*.tar',
      required: true,
    }),
  };

  static override flags = {
    json: Flags.boolean({ description: 'Print the report as JSON.' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(MirrorVerify);
    const report = await withProgress(
      flags.json,
      (progress) => verifyArchiveAt(args.archive, progress),
      'the archive was not changed; run the same command again to verify it',
    );
    if (flags.json) this.printJson(report);
    else process.stdout.write(renderVerifyReport(report));
    if (!report.ok) process.exitCode = 1;
  }
}
