import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../cli/command.js';
import { inventoryFlag, mirrorFlags, mirrorOptions, withProgress } from '../../cli/mirror-flags.js';
import { renderReport, reportFailed, runMirror } from '../../mirror/index.js';

export default class Mirror extends AirgapCommand {
  static override summary =
    'Mirror the images of an ImageSetConfiguration: registry → registry, registry → disk, disk → registry.';

  static override description = `The argument shape is oc-mirror v2's:
  mirror to mirror:  airgap mirror -c isc.yaml --workspace file://<dir> docker://<registry>[/prefix]
  mirror to disk:    airgap mirror -c isc.yaml file://<dir>
  disk to mirror:    airgap mirror -c isc.yaml --from file://<dir> docker://<registry>[/prefix]
  to an OCI layout:  airgap mirror -c isc.yaml oci:<dir>   (a plain layout other tools can read; no archive)

What is mirrored: the OpenShift releases of mirror.platform (picked from the update graph, each
payload and all its components, the KubeVirt container disk, the update-graph data image), the
operator catalogs of mirror.operators (filtered, validated and rebuilt without a container runtime,
with every kept bundle and its related images), and mirror.additionalImages. Every tag is pinned to
a digest first and the plan is written to the workspace (see \`airgap mirror plan\`); an archive
carries its plan, so the disk → mirror step needs nothing from the source side (and no -c).

Every unique layer is read once and uploaded once per destination registry (other repositories
mount it). A run that is interrupted resumes where it stopped; images already at the destination
are skipped. One failing image never stops the others; the exit code is 1 if any failed.
Destination names follow oc-mirror v2: releases at <prefix>/openshift/release-images:<version>-<arch>,
components at <prefix>/openshift/release:<version>-<arch>-<name>, other images at
<prefix>/<source path>:<tag> (digest-only images tagged sha256-<hex>). Registry runs write
IDMS, ITMS, CatalogSource, ClusterCatalog, UpdateService and registries.conf to
<workspace>/cluster-resources/.

Credentials are read like podman does: --authfile, REGISTRY_AUTH_FILE,
$XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json, then ~/.docker/config.json
(credential helpers included). CAs come from --ca-file, --cert-dir or /etc/containers/certs.d/<host:port>/.`;

  static override examples = [
    {
      description: 'Mirror straight into the bastion registry, keeping a workspace for resume and outputs:',
      command:
        '<%= config.bin %> mirror -c imageset-config.yaml --workspace file://./ws docker://mirror.example.com:8443/ocp',
    },
    {
      description: 'Connected side: write archive parts of at most 4 GiB to carry across the air gap:',
      command: '<%= config.bin %> mirror -c imageset-config.yaml --archive-size 4 file:///media/usb',
    },
    {
      description: 'Disconnected side: push the archive into the mirror registry:',
      command:
        '<%= config.bin %> mirror -c imageset-config.yaml --from file:///media/usb docker://mirror.example.com:8443/ocp',
    },
    {
      description:
        'Connected side, next time: carry only what the disconnected registry lacks, by the inventory taken there (`airgap mirror inventory`):',
      command:
        '<%= config.bin %> mirror -c imageset-config.yaml --inventory inventory.json.gz file:///media/usb',
    },
  ];

  static override args = {
    destination: Args.string({
      description:
        'docker://host[:port][/prefix] (a registry), file://dir (an archive directory) or oci:dir (an OCI layout)',
      required: true,
    }),
  };

  static override flags = {
    ...mirrorFlags,
    plan: Flags.string({
      description:
        'Run a plan written by `airgap mirror plan` instead of resolving -c again (same pinned digests).',
    }),
    'archive-size': Flags.string({
      description:
        'Largest archive part: GiB as a number (4) or with a unit (500M). Default: archiveSize from the config, else 500.',
    }),
    since: Flags.string({
      description:
        'Mirror → disk: carry again what earlier archives of this workspace carried since this date (yyyy-mm-dd, or an RFC 3339 time); what they carried before it is taken to be at the destination. Without it, nothing an earlier archive carried is carried again.',
    }),
    inventory: inventoryFlag,
    'dry-run': Flags.boolean({
      description: 'Plan only: resolve, pin and measure, write plan.json and mapping.txt, copy nothing.',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Mirror);
    const report = await withProgress(flags.json, (progress) =>
      runMirror({ ...mirrorOptions(flags, args.destination), version: this.config.version, progress }),
    );
    if (flags.json) this.printJson(report);
    else process.stdout.write(`${renderReport(report)}\n`);
    if (reportFailed(report)) process.exitCode = 1;
  }
}
