import { Flags } from '@oclif/core';
import {
  DEFAULT_REGISTRY_DATA_DIR,
  DEFAULT_REGISTRY_IMAGE,
  DEFAULT_REGISTRY_PORT,
  REGISTRY_FILES,
  writeRegistryFiles,
  type RegistryFileKind,
} from '../../certs/index.js';
import { AirgapCommand } from '../../cli/command.js';

const WHAT: Record<RegistryFileKind, string> = {
  htpasswd: 'the user and its bcrypt password hash (0600)',
  certificate: 'the certificate the registry serves',
  key: 'its private key (0600)',
  ca: 'the CA, for clients to trust',
  config: 'the registry configuration (0600: it holds http.secret)',
  unit: 'the systemd unit (podman runs the registry)',
  install: 'how to install the unit and trust the CA',
  description: 'what airgap registry install reads (no secret)',
};

export default class CertsRegistry extends AirgapCommand {
  static override summary =
    "Write the bastion mirror registry's files: htpasswd, TLS, config.yml, and a systemd unit that runs it with podman.";

  static override description = `The disconnected cluster pulls every image from a registry on the bastion.
This command prepares that registry the way the OpenShift disconnected
runbook does by hand, in one directory (--output), checked first:

  auth/htpasswd      the user (--username) with a bcrypt hash of the password
  certs/tls.crt      your server certificate (then the CA, with --ca)
  certs/tls.key      its private key
  certs/ca.crt       the CA (with --ca)
  conf/config.yml    the registry's configuration: TLS, password, storage
  registry.service   a systemd unit that runs the registry with podman
  install.txt        the commands to install it and trust the CA
  registry.json      the registry described for \`airgap registry install\`

The registry is the CNCF distribution image (docker.io/library/registry:2
unless --image says otherwise), run by podman on the host network and
listening on --port (5000) with TLS and a password. Images are stored in
--data-dir on the host. The certificate can come from \`airgap certs issue\`
or from your own CA; a self-signed one (as the runbook makes with openssl)
works too, without --ca.

Before writing anything it checks that the certificate and key belong
together, that the certificate names --hostname (as DNS or IP subject
alternative name: that is what podman and OpenShift check), that it is
valid now, and, with --ca, that the CA signed it. The password is read from
a file (--password-file, one line) so it never shows in the shell history
or the process list, and it is never printed. Files that are already in
--output are not replaced unless you add --force.

Then \`airgap registry install --dir <output>\` installs, starts and checks
it (or follow install.txt by hand, as root: copy the unit to
/etc/systemd/system, \`systemctl daemon-reload\`, \`systemctl enable --now
registry\`, and trust the CA). Next: \`airgap certs pull-secret\` adds the credentials to the pull
secret.`;

  static override examples = [
    {
      description:
        'The registry registry.example.com:5000, with a certificate from `airgap certs issue`, into /opt/registry:',
      command:
        '<%= config.bin %> certs registry --hostname registry.example.com --cert ./pki/registry/tls.crt --key ./pki/registry/tls.key --ca ./pki/ca.crt --username admin --password-file registry.pass --output /opt/registry',
    },
    {
      description:
        'Port 8443 and storage on a data disk; make the password file first, readable by root only (umask 077; openssl rand -base64 18 > registry.pass):',
      command:
        '<%= config.bin %> certs registry --hostname registry.example.com --port 8443 --cert ./pki/registry/tls.crt --key ./pki/registry/tls.key --ca ./pki/ca.crt --username admin --password-file registry.pass --data-dir /data/registry --output /opt/registry',
    },
    {
      description: 'Write the files again (new password, new certificate), replacing the old ones:',
      command:
        '<%= config.bin %> certs registry --hostname registry.example.com --cert ./pki/registry/tls.crt --key ./pki/registry/tls.key --ca ./pki/ca.crt --username admin --password-file registry.pass --output /opt/registry --force',
    },
  ];

  static override flags = {
    hostname: Flags.string({
      description:
        'The name clients use to reach the registry (a DNS name like registry.example.com, or an IP address). The certificate must name it.',
      required: true,
    }),
    port: Flags.integer({
      description: 'The port the registry listens on (on every address of the host).',
      default: DEFAULT_REGISTRY_PORT,
    }),
    cert: Flags.string({
      description: 'The server certificate (PEM), issued for --hostname; may already hold intermediates.',
      required: true,
    }),
    key: Flags.string({ description: 'The private key (PEM, unencrypted) of --cert.', required: true }),
    ca: Flags.string({
      description:
        'The CA (PEM) that issued --cert: served after it, copied to certs/ca.crt for clients to trust. Leave out for a self-signed certificate.',
    }),
    username: Flags.string({ description: 'The registry user.', required: true }),
    'password-file': Flags.string({
      description: 'A file holding the password on one line (a final newline is dropped). At most 72 bytes.',
      required: true,
    }),
    'data-dir': Flags.string({
      description: 'The host directory where the registry stores images (created when the service starts).',
      default: DEFAULT_REGISTRY_DATA_DIR,
    }),
    output: Flags.string({
      char: 'o',
      aliases: ['out'],
      description:
        'The directory to write into (created if missing); the unit refers to files here by absolute path.',
      required: true,
    }),
    force: Flags.boolean({ description: 'Replace files that are already in --output.' }),
    image: Flags.string({
      description:
        'The registry image podman runs (CNCF distribution: registry:2 or registry:3, or a copy of it).',
      default: DEFAULT_REGISTRY_IMAGE,
    }),
    json: Flags.boolean({ description: 'Print the result as JSON (paths and names; never the password).' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(CertsRegistry);
    const result = await writeRegistryFiles({
      hostname: flags.hostname,
      port: flags.port,
      certFile: flags.cert,
      keyFile: flags.key,
      caFile: flags.ca,
      username: flags.username,
      passwordFile: flags['password-file'],
      dataDir: flags['data-dir'],
      outDir: flags.output,
      force: flags.force,
      image: flags.image,
    });
    for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
    if (flags.json) {
      this.printJson(result);
      return;
    }
    const out = process.stdout;
    out.write(`wrote the registry ${result.registry} into ${result.outDir}:\n`);
    const width = Math.max(...Object.values(REGISTRY_FILES).map((f) => f.length));
    for (const kind of Object.keys(result.files) as RegistryFileKind[])
      out.write(`  ${REGISTRY_FILES[kind].padEnd(width)}  ${WHAT[kind]}\n`);
    const c = result.certificate;
    out.write(
      `certificate: ${c.subject}, ${c.selfSigned ? 'self-signed' : `issued by ${c.issuer}`}, valid until ${c.notAfter}` +
        `${c.chainLength > 1 ? ` (served with ${c.chainLength - 1} more certificate(s))` : ''}\n`,
    );
    out.write(`user: ${result.username}; images stored in ${result.dataDir}; image ${result.image}\n`);
    out.write(`next: follow ${result.files.install} (as root): install the service, trust the CA\n`);
  }
}
