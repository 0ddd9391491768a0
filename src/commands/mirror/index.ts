import { Args, Flags } from '@oclif/core';
import { AirgapCommand } from '../../util/command.js';
import { usageError } from '../../util/errors.js';
import { renderProgress } from '../../util/progress.js';
import { renderReport } from '../../mirror/report.js';
import { runMirror, type MirrorReport } from '../../mirror/run.js';

/** `4` (GiB, like archiveSize), `500M`, `2G`, `100K`. */
export function parseSize(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B?)?$/i.exec(v.trim());
  if (!m) {
    throw usageError('FLAG_INVALID', `--archive-size "${v}" is not a size`, {
      hint: 'give GiB as a number (4), or a number with K, M, G or T (500M)',
    });
  }
  const unit = (m[2] ?? 'G').toUpperCase()[0] as 'K' | 'M' | 'G' | 'T';
  const mult = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[unit];
  const n = Math.floor(Number(m[1]) * mult);
  if (n <= 0) throw usageError('FLAG_INVALID', '--archive-size must be more than 0');
  return n;
}

function tlsFlag(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw usageError('FLAG_INVALID', `--${name} takes true or false, got "${v}"`);
}

export default class Mirror extends AirgapCommand {
  static override summary =
    'Mirror the images of an ImageSetConfiguration: registry → registry, registry → disk, disk → registry.';

  static override description = `The argument shape is oc-mirror v2's:
  mirror to mirror:  airgap mirror -c isc.yaml --workspace file://<dir> docker://<registry>[/prefix]
  mirror to disk:    airgap mirror -c isc.yaml file://<dir>
  disk to mirror:    airgap mirror -c isc.yaml --from file://<dir> docker://<registry>[/prefix]
  to an OCI layout:  airgap mirror -c isc.yaml oci:<dir>   (a plain layout other tools can read; no archive)

Every unique layer is read once and uploaded once per destination registry (other repositories
mount it). A run that is interrupted resumes where it stopped; images already at the destination
are skipped. One failing image never stops the others; the exit code is 1 if any failed.
Destination names follow oc-mirror v2: <registry>/<prefix>/<source path>:<tag>, and digest-only
images are tagged sha256-<hex>.

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
  ];

  static override args = {
    destination: Args.string({
      description:
        'docker://host[:port][/prefix] (a registry), file://dir (an archive directory) or oci:dir (an OCI layout)',
      required: true,
    }),
  };

  static override flags = {
    config: Flags.string({
      char: 'c',
      description: 'ImageSetConfiguration file (mirror.openshift.io/v2alpha1).',
      required: true,
    }),
    from: Flags.string({ description: 'file://dir holding an archive written by a mirror-to-disk run.' }),
    workspace: Flags.string({
      description: 'file://dir for the journal and outputs of a registry-to-registry run.',
    }),
    authfile: Flags.string({
      description: 'Auth file (containers auth.json or docker config.json) to use first.',
    }),
    'ca-file': Flags.string({ description: 'PEM CA to trust for registries (repeatable).', multiple: true }),
    'cert-dir': Flags.string({
      description: 'Directory laid out like /etc/containers/certs.d (<host:port>/ca.crt).',
    }),
    'src-tls-verify': Flags.string({
      description: "Verify source registries' TLS certificates.",
      options: ['true', 'false'],
    }),
    'dest-tls-verify': Flags.string({
      description: "Verify the destination registry's TLS certificate.",
      options: ['true', 'false'],
    }),
    arch: Flags.string({
      description: 'Copy only these architectures of multi-arch images (repeatable).',
      multiple: true,
    }),
    parallel: Flags.integer({
      description: 'Blob transfers in flight at once, across all images.',
      default: 10,
      min: 1,
      max: 64,
    }),
    'retry-times': Flags.integer({
      description: 'Retries per request after a network error, 5xx or 429.',
      default: 5,
      min: 0,
      max: 20,
    }),
    'archive-size': Flags.string({
      description:
        'Largest archive part: GiB as a number (4) or with a unit (500M). Default: archiveSize from the config, else 500.',
    }),
    'dry-run': Flags.boolean({
      description: 'Plan only: print and write the source → destination mapping, copy nothing.',
    }),
    json: Flags.boolean({ description: 'Print the report as JSON on stdout (one entry per image).' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Mirror);
    const progress = renderProgress(process.stderr, flags.json ? { tty: false, intervalMs: 10_000 } : {});
    let report: MirrorReport;
    try {
      report = await runMirror({
        config: flags.config,
        destination: args.destination,
        from: flags.from,
        workspace: flags.workspace,
        authFile: flags.authfile,
        caFiles: flags['ca-file'],
        certDir: flags['cert-dir'],
        srcTlsVerify: tlsFlag('src-tls-verify', flags['src-tls-verify']),
        destTlsVerify: tlsFlag('dest-tls-verify', flags['dest-tls-verify']),
        arches: flags.arch,
        parallel: flags.parallel,
        archiveSize: flags['archive-size'] ? parseSize(flags['archive-size']) : undefined,
        dryRun: flags['dry-run'],
        retry: { attempts: flags['retry-times'] + 1 },
        progress: progress.sink,
      });
    } finally {
      progress.stop();
    }
    if (flags.json) this.printJson(report);
    else process.stdout.write(`${renderReport(report)}\n`);
    if (report.summary && report.summary.failed > 0) process.exitCode = 1;
  }
}
