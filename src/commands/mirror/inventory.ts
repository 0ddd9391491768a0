import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { mirrorFlags, mirrorOptions, withProgress } from '../../cli/mirror-flags.js';
import { CommonError, usageError } from '../../util/errors.js';
import {
  DEFAULT_INVENTORY_FILE,
  renderInventory,
  runInventory,
  verifyInventory,
} from '../../mirror/index.js';

export default class MirrorInventory extends AirgapCommand {
  static override summary =
    'Write down what a mirror registry holds, so the next archive carries only what is missing.';

  static override description = `Run it on the disconnected side, where the mirror registry is. It reads every repository
at or below the prefix (the registry's catalog), every tag, each tag's manifest (and each
architecture's of a multi-arch image), and writes one file listing the manifests and blobs
(digest and size, each listed once): a few MB gzipped, even for a full OpenShift channel.
Carry that file back to the connected side: \`airgap mirror --inventory <file>\` then leaves
out of the next archive everything the registry already holds.

The file is written whole or not at all. When a read fails (a 5xx, a manifest that cannot be read),
the file is still written, says complete: false and names each failed read: what it lists is
there, but not all that is there is listed; the command then exits 1. A registry that does not
list its repositories (the catalog refused) is walked through the repositories of the plan that
mirrored to it (--workspace, or --plan), and the output says so.

--verify <file> reads an inventory back and says what it covers (destination, when and by what
it was taken, complete or not, counts, bytes, sha256); a file that is not one exits 2 naming the
field, and one that says it is incomplete exits 1.`;

  static override examples = [
    {
      description: 'On the bastion: inventory the mirror, gzipped, to carry back on a USB stick:',
      command:
        '<%= config.bin %> mirror inventory docker://mirror.example.com:8443/ocp -o /media/usb/inventory.json.gz',
    },
    {
      description: 'Back on the connected side: an archive of only what the mirror lacks:',
      command:
        '<%= config.bin %> mirror -c isc.yaml --inventory /media/usb/inventory.json.gz file:///media/usb',
    },
    {
      description: 'Check a file before carrying it (what it covers, and that it reads back whole):',
      command: '<%= config.bin %> mirror inventory --verify /media/usb/inventory.json.gz',
    },
    {
      description: 'A registry that refuses to list its repositories: read the ones the workspace mirrored:',
      command:
        '<%= config.bin %> mirror inventory docker://mirror.example.com:8443/ocp --workspace file://./ws -o inventory.json',
    },
  ];

  static override args = {
    destination: Args.string({
      description: 'The mirror: docker://host[:port][/prefix] (not with --verify).',
      required: false,
    }),
  };

  static override flags = {
    output: Flags.string({
      char: 'o',
      description: `File to write (ending in .gz: gzip-compressed). Default: ${DEFAULT_INVENTORY_FILE} in the working directory.`,
      exclusive: ['verify'],
    }),
    verify: Flags.string({
      description: 'Read this inventory file back and say what it covers; nothing is read from a registry.',
    }),
    parallel: Flags.integer({
      description: 'Registry requests in flight at once.',
      default: 16,
      env: 'AIRGAP_PARALLEL',
      min: 1,
      max: 64,
    }),
    workspace: mirrorFlags.workspace,
    plan: Flags.string({
      description:
        'A plan written by `airgap mirror` or `airgap mirror plan`: its repositories are read where the registry does not list them (default: the workspace’s plan.json).',
    }),
    authfile: mirrorFlags.authfile,
    'ca-file': mirrorFlags['ca-file'],
    'cert-dir': mirrorFlags['cert-dir'],
    'dest-tls-verify': mirrorFlags['dest-tls-verify'],
    'max-nested-paths': mirrorFlags['max-nested-paths'],
    'retry-times': mirrorFlags['retry-times'],
    'stall-timeout': mirrorFlags['stall-timeout'],
    json: Flags.boolean({ description: 'Print what the inventory covers as JSON on stdout.' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(MirrorInventory);
    if (flags.verify) {
      if (args.destination)
        throw usageError(CommonError.FLAG_INVALID, '--verify reads a file: give no registry with it', {
          hint: 'airgap mirror inventory --verify inventory.json',
        });
      const report = await verifyInventory(flags.verify);
      if (flags.json) this.printJson(report);
      else process.stdout.write(renderInventory(report, 'read'));
      if (!report.complete) process.exitCode = 1;
      return;
    }
    if (!args.destination)
      throw usageError(CommonError.FLAG_MISSING, 'name the registry to inventory', {
        hint: 'airgap mirror inventory docker://mirror.example.com:8443/ocp -o inventory.json.gz (or --verify <file> to read one back)',
      });
    const report = await withProgress(
      flags.json,
      (progress) =>
        runInventory({
          ...mirrorOptions(flags, args.destination!),
          output: flags.output ?? DEFAULT_INVENTORY_FILE,
          version: this.config.version,
          progress,
        }),
      'nothing was written; run the same command again',
    );
    if (flags.json) this.printJson(report);
    else process.stdout.write(renderInventory(report, 'wrote'));
    if (!report.complete) process.exitCode = 1;
  }
}
