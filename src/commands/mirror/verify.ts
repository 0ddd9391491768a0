import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { usageError } from '../../util/errors.js';
import { renderProgress } from '../../util/progress.js';
import { verifyArchive } from '../../mirror/index.js';

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
    const dir = args.archive.startsWith('file://') ? args.archive.slice('file://'.length) : args.archive;
    if (!dir) throw usageError('FLAG_INVALID', 'the archive path is empty');
    const progress = renderProgress(process.stderr, flags.json ? { tty: false, intervalMs: 10_000 } : {});
    let report;
    try {
      report = await verifyArchive(dir, progress.sink);
    } finally {
      progress.stop();
    }
    if (flags.json) this.printJson(report);
    else {
      for (const p of report.parts)
        process.stdout.write(
          `${p.ok ? 'ok     ' : 'BROKEN '} ${p.file}${p.problem ? `: ${p.problem}` : ''}\n`,
        );
      for (const p of report.problems.filter((x) => !report.parts.some((q) => q.problem === x)))
        process.stdout.write(`BROKEN  ${p}\n`);
      process.stdout.write(
        report.ok
          ? `archive is complete: ${report.parts.length} part(s), ${report.blobs} blob(s), ${report.images} image(s)\n`
          : `archive is damaged: ${report.problems.length} problem(s); copy the broken parts again\n`,
      );
    }
    if (!report.ok) process.exitCode = 1;
  }
}
