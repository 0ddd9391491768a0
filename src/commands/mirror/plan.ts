import { Args } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { inventoryFlag, mirrorFlags, mirrorOptions, withProgress } from '../../cli/mirror-flags.js';
import { renderReport, reportFailed, runMirror } from '../../mirror/index.js';

export default class MirrorPlan extends AirgapCommand {
  static override summary =
    'Resolve an ImageSetConfiguration into a digest-pinned plan, measure it, and copy nothing.';

  static override description = `Everything \`airgap mirror\` would do, decided and written down first:
  - releases picked from the update graph (and why: channel head, version range, upgrade path),
    with conditional updates reported as risks, each payload read for its components;
  - operator catalogs filtered (and why each bundle stays), validated like opm would, rebuilt;
  - every tag pinned to the digest it points at now;
  - each source → destination pair with its size, and what the destination already holds.

The plan is written to <workspace>/plan.json (or the archive's working-dir for file:// destinations).
Run it later with \`airgap mirror --plan <workspace>/plan.json …\`: the same digests are copied even if
tags have moved since. Same arguments as \`airgap mirror\`; this is its --dry-run with a longer report.`;

  static override examples = [
    {
      description: 'What would go into the bastion registry, and how much of it is already there:',
      command:
        '<%= config.bin %> mirror plan -c imageset-config.yaml --workspace file://./ws docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'The same as JSON, for review or automation:',
      command:
        '<%= config.bin %> mirror plan -c imageset-config.yaml --workspace file://./ws docker://mirror.example.com:8443/ocp --json',
    },
  ];

  static override args = {
    destination: Args.string({
      description: 'docker://host[:port][/prefix], file://dir or oci:dir, as for `airgap mirror`',
      required: true,
    }),
  };

  static override flags = { ...mirrorFlags, inventory: inventoryFlag };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(MirrorPlan);
    const report = await withProgress(
      flags.json,
      (progress) =>
        runMirror({
          ...mirrorOptions(flags, args.destination),
          version: this.config.version,
          dryRun: true,
          progress,
        }),
      'nothing was copied; run the same command again to plan',
    );
    if (flags.json) this.printJson(report);
    else process.stdout.write(`${renderReport(report)}\n`);
    if (reportFailed(report)) process.exitCode = 1;
  }
}
