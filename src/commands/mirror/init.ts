import { Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import {
  HOSTED_AGENT_PACKAGES,
  PRESETS,
  initImageSetConfigChecked,
  renderImageSetConfig,
  summarizeImageSetConfig,
  writeImageSetConfigFile,
} from '../../mirror/index.js';
import { ARCHITECTURES } from '../../mirror/index.js';

/** Flags that say where the file goes, not what is in it; left out of the file's header comment. */
const OUTPUT_FLAGS = new Set(['--output', '-o', '--force', '--json']);

/** The command line that made the file, for its first line (values quoted for a POSIX shell). */
function commandLine(argv: string[]): string {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [name] = argv[i].split('=', 1);
    if (OUTPUT_FLAGS.has(name)) {
      if ((name === '--output' || name === '-o') && !argv[i].includes('=')) i++;
      continue;
    }
    kept.push(/^[\w@%+=:,./-]+$/.test(argv[i]) ? argv[i] : `'${argv[i].replaceAll("'", `'\\''`)}'`);
  }
  return ['airgap', 'mirror', 'init', ...kept].join(' ');
}

export default class MirrorInit extends AirgapCommand {
  static override summary = 'Write an ImageSetConfiguration (what to mirror) from a few flags.';

  static override description = `Writes the file that \`airgap mirror\` (like oc-mirror v2) reads to know
what to carry into the disconnected network: OpenShift releases, operators
and single images. It is plain oc-mirror v2 YAML, which you can read, keep
and edit by hand later. Every value is checked here, so a typo shows up now,
not an hour into a download.

Which release:
- --version 4.18 is the latest 4.18 (channel stable-4.18).
- --version 4.18.3 is exactly that release.
- --channel with --min-version/--max-version is a range (an upgrade path).
- --release <image> is one release image, without a channel.
Operators (--package) come from Red Hat's catalog of the same minor
(registry.redhat.io/redhat/redhat-operator-index:v4.18) unless --catalog
names another one.

--preset hosted-agent is what a disconnected agent-based hosted cluster
(hosted control planes on bare metal, with the multicluster engine) needs:
- the release: stable-<x.y> of --version, amd64, with its update graph
${HOSTED_AGENT_PACKAGES.map((p) => `- ${p.name}: ${p.purpose}`).join('\n')}
- with --with-odf: OpenShift Data Foundation, odf-operator and its parts
The operators come from redhat-operator-index:v<x.y>. Flags given with the
preset add to it (--package, --image, --with-odf) or replace its choices
(--channel, --arch, --catalog, --no-graph). --package <name>:<channel>
picks the channel of a preset package.

Release channels are checked against the update graph when it answers
(within 5 s): a channel it does not know is an error naming the ones it has.
With no network, a note says so and the names are checked by their form.

Without --output the YAML goes to stdout. --output never replaces an
existing file unless you add --force.`;

  static override examples = [
    {
      description: 'Everything for a disconnected hosted cluster on bare metal, latest 4.18, into a file:',
      command: '<%= config.bin %> mirror init --preset hosted-agent --version 4.18 -o imageset-config.yaml',
    },
    {
      description: 'The same pinned to one release, with ODF storage, in archive parts of 4 GiB:',
      command:
        '<%= config.bin %> mirror init --preset hosted-agent --version 4.18.3 --with-odf --archive-size 4 -o imageset-config.yaml',
    },
    {
      description: 'An upgrade path from 4.17.10 to 4.18.3, only the releases on the way:',
      command:
        '<%= config.bin %> mirror init --channel stable-4.17 --channel stable-4.18 --min-version 4.17.10 --max-version 4.18.3 --shortest-path',
    },
    {
      description: 'One operator on a chosen channel, plus a tool image, no OpenShift release:',
      command:
        '<%= config.bin %> mirror init --catalog registry.redhat.io/redhat/redhat-operator-index:v4.18 --package multicluster-engine:stable-2.8 --image registry.redhat.io/ubi9/ubi:latest',
    },
    {
      description: 'Then mirror it to disk (connected side):',
      command: '<%= config.bin %> mirror -c imageset-config.yaml file:///media/usb',
    },
  ];

  static override flags = {
    output: Flags.string({
      char: 'o',
      description: 'Write the ImageSetConfiguration to this file (default: stdout).',
    }),
    force: Flags.boolean({ description: 'Replace --output if it exists.' }),
    preset: Flags.string({
      description: 'Start from a ready-made set (see DESCRIPTION); other flags add to it or override it.',
      options: [...PRESETS],
    }),
    version: Flags.string({
      description:
        'OpenShift version: x.y for the latest x.y (channel stable-x.y), x.y.z for exactly that release. Also picks the operator catalog tag.',
    }),
    channel: Flags.string({
      description: 'Release channel, like stable-4.18, fast-4.18, eus-4.18 or candidate-4.19 (repeatable).',
      ...REPEATABLE,
      delimiter: ',',
    }),
    'min-version': Flags.string({
      description:
        'Lowest release to mirror (x.y.z); with channels of several minors, on the one of its minor.',
    }),
    'max-version': Flags.string({
      description:
        'Highest release to mirror (x.y.z); with channels of several minors, on the one of its minor.',
    }),
    'shortest-path': Flags.boolean({
      description: 'Only the releases on the shortest upgrade path from --min-version to --max-version.',
    }),
    full: Flags.boolean({
      description: 'Every release of each channel (within the range), not only the latest.',
    }),
    release: Flags.string({
      description:
        'One release image instead of channels, e.g. quay.io/openshift-release-dev/ocp-release:4.18.3-x86_64.',
    }),
    arch: Flags.string({
      description: `Release payload architecture: ${ARCHITECTURES.join(', ')} (repeatable; default amd64 with channels).`,
      ...REPEATABLE,
      delimiter: ',',
    }),
    graph: Flags.boolean({
      description:
        'Also mirror the update graph data, for an OpenShift Update Service in the disconnected network.',
      allowNo: true,
    }),
    'kubevirt-container': Flags.boolean({
      description:
        'Also mirror the RHCOS KubeVirt container disk (hosted clusters on OpenShift Virtualization).',
    }),
    catalog: Flags.string({
      description:
        'Operator catalog image. Default with --package: registry.redhat.io/redhat/redhat-operator-index:v<x.y> of the release.',
    }),
    package: Flags.string({
      description: 'Operator package to mirror, name or name:channel (repeatable).',
      ...REPEATABLE,
      delimiter: ',',
    }),
    image: Flags.string({ description: 'Additional image to mirror as it is (repeatable).', ...REPEATABLE }),
    'with-odf': Flags.boolean({
      description: 'Add the OpenShift Data Foundation operators of the catalog minor.',
    }),
    'archive-size': Flags.string({
      description: 'Largest archive part in GiB (archiveSize), a whole number.',
    }),
    json: Flags.boolean({ description: 'Print the configuration as JSON on stdout instead of YAML.' }),
    'graph-url': Flags.string({
      description:
        'Update service graph endpoint that release channels are checked against. Default: $UPDATE_URL_OVERRIDE, else https://api.openshift.com/api/upgrades_info/v1/graph.',
    }),
    offline: Flags.boolean({
      description:
        'Do not ask the update graph whether the channels exist (they are still checked by their form).',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(MirrorInit);
    const { config, notes } = await initImageSetConfigChecked(
      {
        preset: flags.preset as (typeof PRESETS)[number] | undefined,
        version: flags.version,
        channels: flags.channel,
        minVersion: flags['min-version'],
        maxVersion: flags['max-version'],
        shortestPath: flags['shortest-path'],
        full: flags.full,
        release: flags.release,
        arches: flags.arch,
        graph: flags.graph,
        kubeVirtContainer: flags['kubevirt-container'],
        catalog: flags.catalog,
        packages: flags.package,
        images: flags.image,
        withOdf: flags['with-odf'],
        archiveSize: flags['archive-size'],
      },
      { offline: flags.offline, graphUrl: flags['graph-url'] },
    );
    for (const note of notes) process.stderr.write(`note: ${note}\n`);
    const text = renderImageSetConfig(config, { comment: [commandLine(this.argv)] });
    if (flags.output) await writeImageSetConfigFile(flags.output, text, { force: flags.force });
    if (flags.json) {
      this.printJson(config);
    } else if (!flags.output) {
      process.stdout.write(text);
    } else {
      process.stdout.write(`wrote ${flags.output}\n`);
      for (const line of summarizeImageSetConfig(config)) process.stdout.write(`  ${line}\n`);
      process.stdout.write(
        `next: airgap mirror -c ${flags.output} file://<archive dir>  (or docker://<registry>)\n`,
      );
    }
  }
}
