import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { mirrorFlags, mirrorOptions, withProgress } from '../../cli/mirror-flags.js';
import { renderCheckReport, runCheck } from '../../mirror/index.js';

export default class MirrorCheck extends AirgapCommand {
  static override summary = 'Check that a mirror registry holds everything a plan names, at its digest.';

  static override description = `Before an install or an update, prove the mirror is complete:
  - every image of the plan is at its destination tag, at the digest the plan pinned (one
    manifest read per image, no blob is downloaded);
  - every signature the source had is there too (signatures are entries of the plan);
  - the cluster resources of the workspace lead to the images: each image's original name, sent
    through the generated registries.conf as a node sends it, reaches the image;
  - for releases, what an install pulls besides the payload (the KubeVirt disk, the graph image).
The plan is the workspace's plan.json (--workspace, or --from for an archive pushed earlier),
--plan <file>, or -c <ImageSetConfiguration> resolved now (needs the source side, and no
--workspace). Nothing is written. Exit 0 only when the mirror is complete; otherwise the report lists what is missing and
the command that fetches it (running it again resumes and fills the gaps). Only the registry's "not there" (404) is
missing: what it did not answer for (credentials refused, TLS, a 5xx) is UNREADABLE, with the cause, not counted as
missing.`;

  static override examples = [
    {
      description: 'After a registry → registry run, with its workspace:',
      command: '<%= config.bin %> mirror check --workspace file://./ws docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'Whether a mirror holds what an ImageSetConfiguration names (no workspace needed):',
      command: '<%= config.bin %> mirror check -c imageset-config.yaml docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'On the disconnected side, after pushing an archive:',
      command: '<%= config.bin %> mirror check --from file:///media/usb docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'What is missing, as JSON for automation:',
      command:
        '<%= config.bin %> mirror check --workspace file://./ws docker://mirror.example.com:8443/ocp --json',
    },
  ];

  static override args = {
    destination: Args.string({ description: 'The mirror: docker://host[:port][/prefix]', required: true }),
  };

  static override flags = {
    ...mirrorFlags,
    plan: Flags.string({
      description:
        'A plan written by `airgap mirror` or `airgap mirror plan` (default: the workspace’s plan.json).',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(MirrorCheck);
    const report = await withProgress(
      flags.json,
      (progress) =>
        runCheck({ ...mirrorOptions(flags, args.destination), version: this.config.version, progress }),
      'nothing was written; run the same command again',
    );
    if (flags.json) this.printJson(report);
    else process.stdout.write(renderCheckReport(report));
    if (!report.complete) process.exitCode = 1;
  }
}
