import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../../cli/command.js';
import { listFromEnv, mirrorFlags } from '../../../cli/mirror-flags.js';
import { listReleases, renderReleaseListing } from '../../../mirror/index.js';

export default class MirrorListReleases extends AirgapCommand {
  static override summary =
    'List what the OpenShift update graph offers: the channels of a version, the releases of a channel, the architectures.';

  static override description = `Asks the update service (api.openshift.com, or UPDATE_URL_OVERRIDE, or
--graph-url) what to put in an ImageSetConfiguration's platform.channels,
as oc-mirror's list releases does. Give one of:
- --version 4.18: the channels of 4.18 (stable, fast, eus, candidate), each
  with how many 4.18 releases it has and its latest. They are the channels
  the releases of stable-4.18 (else candidate-4.18) name. --version 4.18.3:
  the channels that carry that release, upgrade channels of later minors too.
- --channel stable-4.18: its releases, oldest first, the latest marked, with
  their errata. A channel the graph does not know is an error naming the
  ones it has.
- --arches: the architectures the update service knows (nothing is asked).
--arch picks the payload architecture for --version and --channel (amd64 by
default). With --json the listing is one JSON document on stdout.`;

  static override examples = [
    {
      description: 'The channels of OpenShift 4.18:',
      command: '<%= config.bin %> mirror list releases --version 4.18',
    },
    {
      description: 'The releases of stable-4.18, the latest marked:',
      command: '<%= config.bin %> mirror list releases --channel stable-4.18',
    },
    {
      description: 'The same for arm64, as JSON:',
      command: '<%= config.bin %> mirror list releases --channel stable-4.18 --arch arm64 --json',
    },
    {
      description: 'The architectures the update service knows:',
      command: '<%= config.bin %> mirror list releases --arches',
    },
    {
      description: 'Against a disconnected OpenShift Update Service:',
      command:
        '<%= config.bin %> mirror list releases --channel stable-4.18 --graph-url https://osus.example.com/api/upgrades_info/v1/graph --ca-file ca.crt',
    },
  ];

  static override flags = {
    version: Flags.string({
      description: 'OpenShift version: x.y lists its channels, x.y.z the channels that carry that release.',
      exclusive: ['channel', 'arches'],
    }),
    channel: Flags.string({
      description: 'Release channel, like stable-4.18: lists its releases.',
      exclusive: ['version', 'arches'],
    }),
    arch: Flags.string({
      description:
        'Payload architecture for --version and --channel: amd64 (default), arm64, ppc64le, s390x or multi (x86_64 and aarch64 also understood).',
    }),
    arches: Flags.boolean({
      description: 'List the architectures the update service knows.',
      exclusive: ['version', 'channel', 'arch'],
    }),
    'graph-url': mirrorFlags['graph-url'],
    'ca-file': mirrorFlags['ca-file'],
    'cert-dir': mirrorFlags['cert-dir'],
    json: Flags.boolean({ description: 'Print the listing as JSON on stdout.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(MirrorListReleases);
    const listing = await listReleases({
      version: flags.version,
      channel: flags.channel,
      arch: flags.arch,
      arches: flags.arches,
      graphUrl: flags['graph-url'],
      tls: {
        caFiles: flags['ca-file'] ?? listFromEnv('AIRGAP_CA_FILE'),
        ...(flags['cert-dir'] ? { certDirs: [flags['cert-dir']] } : {}),
      },
    });
    if (flags.json) this.printJson(listing);
    else process.stdout.write(renderReleaseListing(listing));
  }
}
