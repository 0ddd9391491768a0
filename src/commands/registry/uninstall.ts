import { createInterface } from 'node:readline/promises';
import { Flags } from '@oclif/core';
import { registryDirFlags, stepPrinter } from '../../cli/registry-flags.js';
import { AirgapCommand } from '../../cli/command.js';
import { uninstallRegistry } from '../../registry/index.js';

/** Ask at the terminal (on stderr) and compare the typed line with `expected`. */
async function typed(question: string, expected: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return (await rl.question(question)).trim() === expected;
  } finally {
    rl.close();
  }
}

export default class RegistryUninstall extends AirgapCommand {
  static override summary =
    "Take the bastion's mirror registry off the host: unit, container and trust removed; the data kept unless --delete-data.";

  static override description = `Takes back what \`airgap registry install\` put on the host:

  unit       systemctl disable --now <name>.service, the unit file removed,
             systemctl daemon-reload
  container  the podman container removed, if one is left
  trust      the CA files installed.json lists (the host's trust store,
             /etc/containers/certs.d/<host:port>/), the host bundle rebuilt
  record     <dir>/installed.json

The registry directory (its files, certificate, the CA airgap minted) and the
images are kept: \`airgap registry install\` brings the same registry back.
--delete-data deletes the data directory too, after you type the registry's
address at the terminal, or with --yes; it refuses a directory that may not be
a registry store (/, one holding the registry directory, or a non-empty one
without docker/registry/v2). A second run finds nothing installed and says so.
Where systemd is not PID 1 it stops before changing anything.`;

  static override examples = [
    {
      description: 'Remove the service, keep the images:',
      command: '<%= config.bin %> registry uninstall --dir /opt/registry',
    },
    {
      description: 'Remove everything, the images too, without asking:',
      command: '<%= config.bin %> registry uninstall --dir /opt/registry --delete-data --yes',
    },
    {
      description: 'What it would do:',
      command: '<%= config.bin %> registry uninstall --dir /opt/registry --delete-data --dry-run',
    },
  ];

  static override flags = {
    ...registryDirFlags,
    'delete-data': Flags.boolean({
      description: "Delete the registry's data directory (every image) too.",
    }),
    yes: Flags.boolean({ description: 'Delete the data without asking (with --delete-data).' }),
    'dry-run': Flags.boolean({ description: 'Print every step and command; change nothing.' }),
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RegistryUninstall);
    const json = flags.json;
    const result = await uninstallRegistry({
      dir: flags.dir,
      ...(flags.name ? { name: flags.name } : {}),
      deleteData: flags['delete-data'],
      yes: flags.yes,
      dryRun: flags['dry-run'],
      ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm: typed } : {}),
      report: stepPrinter({ json, dryRun: flags['dry-run'], changedWord: 'removed' }),
    });
    if (json) {
      this.printJson(result);
      return;
    }
    process.stdout.write(
      result.nothingInstalled
        ? `nothing to do: the registry ${result.registry} (${result.name}) is not installed on this host${result.dataKept ? ` (its files in ${result.dir} and data in ${result.dataDir} are kept)` : ''}\n`
        : result.dryRun
          ? 'nothing was changed (--dry-run)\n'
          : `the registry ${result.registry} is uninstalled; kept: ${result.dir}${result.dataKept ? ` and the data in ${result.dataDir}` : ` (the data in ${result.dataDir} is deleted)`}\n`,
    );
  }
}
