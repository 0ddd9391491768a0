import { Flags } from '@oclif/core';
import { AirgapCommand } from '../cli/command.js';

/** What `airgap version` reports. */
export interface VersionInfo {
  version: string;
  /** The git commit the release was built from (absent in a development checkout). */
  commit?: string;
  /**
   * The Node.js that runs airgap: the one inside the single-file executable, the Node 24 runtime a
   * checkout pins (bin/run.js hands over to it), or the host's for the release tarball.
   */
  node: string;
  /** The Node.js versions airgap runs on (package.json engines): what the tarball needs on a host. */
  nodeRequired: string;
  platform: string;
  arch: string;
  /** `single-file` (the executable with Node inside), `package` (the tarball or a checkout). */
  distribution: 'single-file' | 'package';
}

export default class Version extends AirgapCommand {
  static override summary =
    'Print the version of airgap, the commit it was built from, and the Node.js that runs it.';

  static override description =
    'On a bastion, this is how to tell which airgap was carried across: the release version, the git commit of its build, whether it is the single-file executable (Node.js inside) or the package run by the host Node.js, and the platform.';

  static override examples = [
    { description: 'Human-readable:', command: '<%= config.bin %> version' },
    { description: 'For scripts and support tickets:', command: '<%= config.bin %> version --json' },
  ];

  static override flags = {
    json: Flags.boolean({ description: 'Print the information as one JSON document.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Version);
    const pjson = this.config.pjson as { version: string; gitHead?: string; engines?: { node?: string } };
    const info: VersionInfo = {
      version: pjson.version,
      ...(pjson.gitHead ? { commit: pjson.gitHead } : {}),
      node: process.version,
      nodeRequired: pjson.engines?.node ?? 'any',
      platform: process.platform,
      arch: process.arch,
      distribution: isSingleFile() ? 'single-file' : 'package',
    };
    if (flags.json) return this.printJson(info);
    process.stdout.write(
      `airgap ${info.version}${info.commit ? ` (${info.commit.slice(0, 12)})` : ''}, ${info.distribution === 'single-file' ? 'single-file executable' : 'package'}, Node.js ${info.node} (airgap needs ${info.nodeRequired}), ${info.platform}/${info.arch}\n`,
    );
  }
}

/** True inside a single executable application (node:sea says so; older Node has no such module). */
function isSingleFile(): boolean {
  try {
    return (
      (process as { getBuiltinModule?: (id: string) => { isSea?: () => boolean } | undefined })
        .getBuiltinModule?.('node:sea')
        ?.isSea?.() === true
    );
  } catch {
    // A probe of what the runtime offers: no node:sea (or one that throws) means not a single file.
    return false;
  }
}
