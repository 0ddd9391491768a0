import { Flags } from '@oclif/core';
import { stepPrinter } from '../../cli/registry-flags.js';
import { AirgapCommand, REPEATABLE } from '../../cli/command.js';
import { installRegistry } from '../../registry/index.js';

export default class RegistryInstall extends AirgapCommand {
  static override summary =
    "Install the bastion's mirror registry: podman runs it under systemd, the host trusts its CA, and it is checked from outside.";

  static override description = `Installs the registry the disconnected cluster pulls from, on this host, as
root, without SSH or Ansible:

  files    the registry directory (--dir): the files \`airgap certs registry\`
           wrote there, or written now from --hostname, --san, --username and
           --password-file (the certificate is then issued by a CA airgap keeps
           in <dir>/pki, or give your own with --cert, --key and --ca)
  image    the registry image loaded into podman from what you carried across
           (--image-archive, an OCI archive; or --image-layout, an OCI layout
           directory), never pulled: the bastion has no internet
  unit     /etc/systemd/system/<name>.service (podman run --net host)
  trust    the CA in the host's trust store (RHEL /etc/pki/ca-trust/source/
           anchors + update-ca-trust; Debian /usr/local/share/ca-certificates +
           update-ca-certificates) and in /etc/containers/certs.d/<host:port>/
  service  systemctl enable --now
  checks   from outside: TLS verified with the host's trust and the name
           clients use, the password required, a small image
           (airgap/registry-check) pushed and read back

Every check that changes nothing runs first. Run it again and it changes
nothing, and says so; --dry-run prints every step and command. Where systemd
is not PID 1 (a container), it stops before changing anything and prints the
command the unit would run.`;

  static override examples = [
    {
      description:
        'Files from airgap certs registry in /opt/registry, the image carried across as an OCI archive:',
      command:
        '<%= config.bin %> registry install --dir /opt/registry --password-file registry.pass --image-archive /media/registry-2.tar',
    },
    {
      description:
        'Everything from scratch: a CA and certificate for the name and addresses, the files, the service:',
      command:
        '<%= config.bin %> registry install --dir /opt/registry --hostname registry.example.com --san 192.168.10.5 --san fd00::5 --username admin --password-file registry.pass --image-archive /media/registry-2.tar',
    },
    {
      description: 'What it would do:',
      command:
        '<%= config.bin %> registry install --dir /opt/registry --password-file registry.pass --dry-run',
    },
  ];

  static override flags = {
    dir: Flags.string({
      description: 'The registry directory (files of airgap certs registry, or where to write them).',
      default: '/opt/registry',
    }),
    name: Flags.string({ description: 'The systemd unit and podman container name.', default: 'registry' }),
    'password-file': Flags.string({
      description:
        'The registry password, on one line (never printed): used for the checks, and for the htpasswd when the files are written.',
      required: true,
    }),
    hostname: Flags.string({ description: 'The name clients use (only when the files are written now).' }),
    san: Flags.string({
      description: 'Another name or IP address (IPv4, IPv6) for the certificate; repeat it.',
      ...REPEATABLE,
    }),
    port: Flags.integer({
      description: 'The port (only when the files are written now).',
      min: 1,
      max: 65535,
    }),
    username: Flags.string({ description: 'The registry user (only when the files are written now).' }),
    'data-dir': Flags.string({
      description:
        'Where the images are stored (only when the files are written now; default /var/lib/registry).',
    }),
    cert: Flags.string({
      description: 'Your own server certificate (PEM) instead of one airgap issues.',
      dependsOn: ['key'],
    }),
    key: Flags.string({ description: 'Its private key (PEM).', dependsOn: ['cert'] }),
    ca: Flags.string({ description: 'The CA that issued --cert.', dependsOn: ['cert'] }),
    image: Flags.string({
      description:
        'The registry image the unit runs (CNCF distribution; default docker.io/library/registry:2).',
    }),
    'image-archive': Flags.string({
      description: 'An OCI or docker archive of the image, loaded when podman does not have it.',
      exclusive: ['image-layout'],
    }),
    'image-layout': Flags.string({
      description: 'An OCI layout directory holding the image (DIR or DIR:NAME).',
      exclusive: ['image-archive'],
    }),
    'no-trust-host': Flags.boolean({ description: "Leave the host's trust store alone." }),
    'no-trust-podman': Flags.boolean({ description: 'Leave /etc/containers/certs.d alone.' }),
    timeout: Flags.integer({
      description: 'Seconds the registry may take to answer after it starts.',
      default: 60,
      min: 1,
    }),
    'dry-run': Flags.boolean({ description: 'Print every step and command; change nothing.' }),
    json: Flags.boolean({ description: 'Print the result as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RegistryInstall);
    const json = flags.json;
    const result = await installRegistry({
      dir: flags.dir,
      name: flags.name,
      passwordFile: flags['password-file'],
      ...(flags.hostname ? { hostname: flags.hostname } : {}),
      ...(flags.san ? { sans: flags.san } : {}),
      ...(flags.port ? { port: flags.port } : {}),
      ...(flags.username ? { username: flags.username } : {}),
      ...(flags['data-dir'] ? { dataDir: flags['data-dir'] } : {}),
      ...(flags.cert ? { cert: flags.cert, key: flags.key } : {}),
      ...(flags.ca ? { ca: flags.ca } : {}),
      ...(flags.image ? { image: flags.image } : {}),
      ...(flags['image-archive'] ? { imageArchive: flags['image-archive'] } : {}),
      ...(flags['image-layout'] ? { imageLayout: flags['image-layout'] } : {}),
      trustHost: !flags['no-trust-host'],
      trustPodman: !flags['no-trust-podman'],
      dryRun: flags['dry-run'],
      readyTimeoutMs: flags.timeout * 1000,
      report: stepPrinter({ json, dryRun: flags['dry-run'] }),
    });
    if (json) {
      this.printJson(result);
      return;
    }
    process.stdout.write(
      result.dryRun
        ? 'nothing was changed (--dry-run)\n'
        : result.changed
          ? `the registry ${result.registry} is installed and answers (unit ${result.name}.service)\n`
          : `nothing changed: the registry ${result.registry} was installed already and answers\n`,
    );
  }
}
