import { Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import { usageError, CommonError } from '../../util/errors.js';
import { tlsFlag } from '../../cli/mirror-flags.js';
import { formatBytes, renderProgress } from '../../util/progress.js';
import { fetchBootImages, type BootImagesSource, type FetchBootImagesResult } from '../../server/index.js';

/** The text summary: one line per file, then the manifest. */
function summary(r: FetchBootImagesResult): string {
  const version = r.openshiftVersion ? ` (OpenShift ${r.openshiftVersion})` : '';
  const lines = [`stream ${r.stream}${version} from ${r.source}`];
  const width = Math.max(...r.files.map((f) => f.file.length));
  for (const f of r.files) {
    const how = f.downloaded
      ? f.resumedFrom > 0
        ? 'downloaded (resumed)'
        : 'downloaded'
      : 'present, verified';
    lines.push(
      `  ${f.arch.padEnd(7)} ${f.artifact.padEnd(9)} ${f.file.padEnd(width)}  ${formatBytes(f.size).padStart(9)}  ${how}  sha256:${f.sha256.slice(0, 12)}…`,
    );
  }
  lines.push(`wrote ${r.manifestPath}`);
  if (!r.openshiftVersion)
    lines.push(
      `note: the OpenShift version of stream ${r.stream} is not known; give it when you write the osImages entries`,
    );
  return lines.join('\n');
}

export default class ImagesFetch extends AirgapCommand {
  static override summary =
    'Download the RHCOS live ISO and rootfs (and PXE files) a release boots from, verified, into <dir>/images.';

  static override description = `Hosts that join a hosted cluster through the Agent platform boot the
RHCOS live ISO (or PXE: kernel, initramfs and the live rootfs), and
assisted-service downloads the ISO from a URL you give it in the
AgentServiceConfig osImages. On a disconnected site that URL must be a
server on the bastion. This command puts the right files there.

Which files: the CoreOS stream metadata names them, with their sha256.
It is read from one of:

--release <image>: the release payload's coreos-bootimages ConfigMap,
through the registry (credentials and CAs as for airgap mirror). Give the
release as mirrored to your registry, and you get exactly the RHCOS build
that release was made with. OpenShift x.y is taken from the release.

--stream-file <file>: the JSON of \`openshift-install coreos
print-stream-json\`, or the ConfigMap itself (oc get configmap
coreos-bootimages -n openshift-machine-config-operator -o yaml).
OpenShift x.y is taken from a stream named rhcos-x.y.

--stream-url <url>: the same, over http(s).

A release that ships several streams (rhel-9, rhel-10) gives its default
one; pick another with --os-stream.

The files themselves come from the locations the metadata names
(rhcos.mirror.openshift.com for RHCOS): run this where they can be
reached, directly or through HTTPS_PROXY, or on the connected side, and
carry <dir>/images across (a run on the bastion with the same source then
verifies the files and downloads nothing).

What is fetched, per --arch (default x86_64; amd64/arm64 understood;
"all" for every architecture of the stream): the live ISO and the live
rootfs; with --pxe also the kernel and initramfs. File names are those
of the URLs in the metadata, unchanged.

How: every byte goes through sha256 while it downloads, into a hidden
.<name>.partial file; only a file that matches is renamed to its name.
A file that does not match is deleted and the command fails (exit 1).
A broken connection is resumed with an HTTP Range request; network
errors, 5xx and 429 are retried with backoff. Run the same command again
after a failure or Ctrl-C: verified files are not downloaded again, and
a partial file continues where it stopped. <dir> must exist; <dir>/images
is created. <dir>/images/airgap-images.json records stream, release,
architecture, file and sha256 of each file (merged across runs), for
the file server and the osImages entries.

The downloads honour HTTPS_PROXY/NO_PROXY. TLS: --ca-file, --cert-dir
(containers certs.d layout) or /etc/containers/certs.d/<host:port>/;
--tls-verify=false only for a server you cannot give a CA for.`;

  static override examples = [
    {
      description: 'The RHCOS of a release already mirrored to the bastion registry, x86_64 and arm64:',
      command:
        '<%= config.bin %> images fetch --release mirror.example.com:8443/ocp/openshift/release-images:4.18.3-x86_64 --arch x86_64 --arch aarch64 --dir /srv/airgap',
    },
    {
      description:
        'On the connected side, with PXE files, from the stream the installer pins (openshift-install coreos print-stream-json > stream.json), to carry across:',
      command: '<%= config.bin %> images fetch --stream-file stream.json --pxe --dir /media/usb',
    },
    {
      description: 'From a stream URL, every architecture, through a TLS-intercepting proxy with its own CA:',
      command:
        '<%= config.bin %> images fetch --stream-url https://mirror.example.com/rhcos-4.18.json --arch all --ca-file proxy-ca.crt --dir /srv/airgap',
    },
    {
      description: 'Check what is there (nothing is downloaded when every file verifies), as JSON:',
      command: '<%= config.bin %> images fetch --stream-file stream.json --dir /srv/airgap --json',
    },
  ];

  static override flags = {
    release: Flags.string({
      description:
        'Release payload image whose coreos-bootimages stream to use (host/path:tag or @sha256:…).',
    }),
    'stream-file': Flags.string({
      description: 'CoreOS stream JSON file (openshift-install coreos print-stream-json), or the ConfigMap.',
    }),
    'stream-url': Flags.string({ description: 'http(s) URL of CoreOS stream JSON.' }),
    'os-stream': Flags.string({
      description: 'Stream to use when the release ships several (rhel-9, rhel-10). Default: its default.',
    }),
    arch: Flags.string({
      description:
        'Architecture: x86_64, aarch64, ppc64le, s390x (amd64, arm64), or all; repeatable. Default x86_64.',
      ...REPEATABLE,
    }),
    pxe: Flags.boolean({ description: 'Also fetch the PXE kernel and initramfs.' }),
    dir: Flags.string({
      description: 'Existing directory; the files go to <dir>/images (created).',
      required: true,
    }),
    authfile: Flags.string({
      description: 'Auth file (containers auth.json or docker config.json) for --release.',
    }),
    'ca-file': Flags.string({
      description: 'PEM CA to trust for the registry, the stream URL and the download server (repeatable).',
      ...REPEATABLE,
    }),
    'cert-dir': Flags.string({
      description: 'Directory laid out like /etc/containers/certs.d (<host:port>/ca.crt).',
    }),
    'tls-verify': Flags.string({
      description: 'Verify TLS certificates (registry, stream URL, downloads).',
      options: ['true', 'false'],
    }),
    'retry-times': Flags.integer({
      description: 'Retries of a request that fails without progress (network error, 5xx, 429).',
      default: 5,
      min: 0,
      max: 20,
    }),
    json: Flags.boolean({ description: 'Print the result as JSON on stdout.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ImagesFetch);
    const given = (['release', 'stream-file', 'stream-url'] as const).filter((f) => flags[f] !== undefined);
    if (given.length !== 1)
      throw usageError(
        CommonError.FLAG_INVALID,
        given.length === 0
          ? 'say where the stream metadata comes from'
          : `give only one of ${given.map((g) => `--${g}`).join(', ')}`,
        { hint: 'use one of --release <image>, --stream-file <file> or --stream-url <url>' },
      );
    const insecure = tlsFlag('tls-verify', flags['tls-verify']) === false;
    const tls = {
      ...(flags['ca-file'] ? { caFiles: flags['ca-file'] } : {}),
      ...(flags['cert-dir'] ? { certDirs: [flags['cert-dir']] } : {}),
      ...(insecure ? { insecureSkipVerify: true } : {}),
    };
    const source: BootImagesSource =
      flags.release !== undefined
        ? {
            release: flags.release,
            client: {
              ...tls,
              credentials: { authFile: flags.authfile },
              retry: { attempts: flags['retry-times'] + 1 },
            },
          }
        : flags['stream-file'] !== undefined
          ? { file: flags['stream-file'] }
          : { url: flags['stream-url']! };
    const progress = renderProgress(process.stderr, flags.json ? { tty: false, intervalMs: 10_000 } : {});
    let r: FetchBootImagesResult;
    try {
      r = await fetchBootImages({
        source,
        dir: flags.dir,
        arches: flags.arch,
        pxe: flags.pxe,
        ...(flags['os-stream'] !== undefined ? { osStream: flags['os-stream'] } : {}),
        tls,
        retries: flags['retry-times'],
        progress: progress.sink,
      });
    } finally {
      progress.stop();
    }
    if (flags.json) {
      this.printJson(r);
      return;
    }
    process.stdout.write(`${summary(r)}\n`);
  }
}
