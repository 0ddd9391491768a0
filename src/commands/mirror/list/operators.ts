import { Flags } from '@oclif/core';
import { AirgapCommand } from '../../../cli/command.js';
import { listFromEnv, mirrorFlags, tlsFlag, withProgress } from '../../../cli/mirror-flags.js';
import { listOperators, renderOperatorListing } from '../../../mirror/index.js';

export default class MirrorListOperators extends AirgapCommand {
  static override summary =
    'List operator catalogs, the packages of a catalog, the channels of a package and the bundles of a channel.';

  static override description = `What to put in an ImageSetConfiguration's mirror.operators, as oc-mirror's
list operators does:
- --version 4.18: Red Hat's catalogs for 4.18 (redhat-operator-index,
  certified-operator-index, community-operator-index, redhat-marketplace-index
  at registry.redhat.io/redhat/<name>:v4.18), with the CatalogSource each
  becomes on a cluster. Nothing is asked of the registry.
- --catalog <image>: its packages, with their display name, default channel
  and the version at the head of the default channel.
- --catalog <image> --package <name>: its channels, each with its head (the
  bundle nothing in the channel replaces or skips), the default marked.
- ... --channel <name>: the bundles of that channel, oldest first, the head
  marked, with what each replaces.
The catalog is read from its registry as it streams (its file-based catalog
only, in memory, no container runtime, nothing written to disk), with
credentials looked up as for \`airgap mirror\`; oci:<dir> reads one from an
OCI layout. A package or channel that is not there is an error naming the
closest ones. With --json the listing is one JSON document on stdout.`;

  static override examples = [
    {
      description: "Red Hat's catalogs for OpenShift 4.18:",
      command: '<%= config.bin %> mirror list operators --version 4.18',
    },
    {
      description: 'The packages of the Red Hat catalog, with their default channels:',
      command:
        '<%= config.bin %> mirror list operators --catalog registry.redhat.io/redhat/redhat-operator-index:v4.18',
    },
    {
      description: 'The channels of multicluster-engine, with their heads:',
      command:
        '<%= config.bin %> mirror list operators --catalog registry.redhat.io/redhat/redhat-operator-index:v4.18 --package multicluster-engine',
    },
    {
      description: 'The bundles of one channel, as JSON:',
      command:
        '<%= config.bin %> mirror list operators --catalog registry.redhat.io/redhat/redhat-operator-index:v4.18 --package multicluster-engine --channel stable-2.8 --json',
    },
  ];

  static override flags = {
    version: Flags.string({
      description: "OpenShift version (x.y): lists Red Hat's operator catalogs for it.",
      exclusive: ['catalog'],
    }),
    catalog: Flags.string({
      description: 'Operator catalog image (registry/path:tag, or oci:<dir> on disk): lists its packages.',
    }),
    package: Flags.string({ description: 'A package of --catalog: lists its channels and their heads.' }),
    channel: Flags.string({ description: 'A channel of --package: lists its bundles.' }),
    authfile: mirrorFlags.authfile,
    'ca-file': mirrorFlags['ca-file'],
    'cert-dir': mirrorFlags['cert-dir'],
    'src-tls-verify': mirrorFlags['src-tls-verify'],
    'registries-conf': mirrorFlags['registries-conf'],
    json: Flags.boolean({ description: 'Print the listing as JSON on stdout.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(MirrorListOperators);
    const listing = await withProgress(
      flags.json,
      (progress) =>
        listOperators({
          version: flags.version,
          catalog: flags.catalog,
          package: flags.package,
          channel: flags.channel,
          authFile: flags.authfile,
          caFiles: flags['ca-file'] ?? listFromEnv('AIRGAP_CA_FILE'),
          certDir: flags['cert-dir'],
          tlsVerify: tlsFlag('src-tls-verify', flags['src-tls-verify']),
          registriesConf: flags['registries-conf'],
          progress,
        }),
      'nothing was written; run the same command again',
    );
    if (listing.kind === 'catalogs')
      for (const note of listing.notes) process.stderr.write(`note: ${note}\n`);
    if (flags.json) this.printJson(listing);
    else process.stdout.write(renderOperatorListing(listing));
  }
}
