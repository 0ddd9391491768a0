/**
 * How the bastion runs the registry: a systemd unit in which podman runs the registry image with
 * the files mounted where config.yml expects them, and install.txt, the steps to install the unit
 * and trust the CA. Paths go unquoted into the unit, so only safe characters are allowed in them.
 */
import { join } from 'node:path';
import { usageError, CommonError } from '../../util/errors.js';
import type { CheckedHost } from '../names.js';
import { IN_CONTAINER, REGISTRY_FILES } from './layout.js';

/** Characters a path may hold to go unquoted into a systemd ExecStart line and a `podman -v` spec. */
const SAFE_PATH_RE = /^\/[\w./+@-]*$/;

/** `path`, when it may go into the systemd unit; else a usage error naming `flag`. */
export function checkUnitPath(path: string, flag: string): string {
  if (!SAFE_PATH_RE.test(path)) {
    throw usageError(
      CommonError.FLAG_INVALID,
      `${flag} ${path} cannot go into the systemd unit: use only letters, digits and . _ - + @ /`,
      {
        hint: 'spaces, ":", ",", "%" and "$" have meanings of their own in a systemd unit or in podman -v; choose another directory',
      },
    );
  }
  return path;
}

/** The podman volumes of the registry container: its files from `outDir`, its storage in `dataDir`. */
export function registryMounts(outDir: string, dataDir: string): string[] {
  return [
    `${join(outDir, 'auth')}:/auth:z`,
    `${join(outDir, 'certs')}:/certs:z`,
    `${join(outDir, REGISTRY_FILES.config)}:${IN_CONTAINER.config}:z`,
    `${join(outDir, REGISTRY_FILES.config)}:${IN_CONTAINER.configV3}:z`,
    `${dataDir}:${IN_CONTAINER.storage}:z`,
  ];
}

/** The command the unit's ExecStart runs: podman runs the image, never pulling it. */
export function registryRunCommand(opts: {
  name: string;
  outDir: string;
  dataDir: string;
  image: string;
}): string[] {
  return [
    '/usr/bin/podman',
    'run',
    '--rm',
    '--pull',
    'never',
    '--name',
    opts.name,
    '--net',
    'host',
    ...registryMounts(opts.outDir, opts.dataDir).flatMap((m) => ['-v', m]),
    opts.image,
  ];
}

/** The systemd unit that runs the registry with podman (`systemctl enable --now <name>`). */
export function registryUnit(opts: {
  name?: string;
  outDir: string;
  dataDir: string;
  image: string;
  address: string;
}): string {
  const { outDir, dataDir, image, address } = opts;
  const name = opts.name ?? 'registry';
  const run = registryRunCommand({ name, outDir, dataDir, image });
  const head = run.slice(0, run.indexOf('-v'));
  const volumes = run.slice(head.length, -1);
  return [
    `# The mirror registry ${address}, written by airgap certs registry.`,
    `# Install: see ${join(outDir, REGISTRY_FILES.install)}.`,
    `# The config is mounted twice: registry:2 reads ${IN_CONTAINER.config}, registry:3 ${IN_CONTAINER.configV3}.`,
    '[Unit]',
    `Description=Mirror registry ${address} (CNCF distribution in podman)`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStartPre=/usr/bin/mkdir -p ${dataDir}`,
    // A container left behind by a crash would block the name; "-" ignores "no such container".
    `ExecStartPre=-/usr/bin/podman rm --force ${name}`,
    // --pull never: the bastion has no way to the image's registry; it is loaded, never pulled.
    `ExecStart=${head.join(' ')} \\`,
    ...volumes.flatMap((v, i) => (i % 2 ? [`  -v ${v} \\`] : [])),
    `  ${image}`,
    `ExecStop=/usr/bin/podman stop --time 10 ${name}`,
    // podman run --rm may be stopped before it removes the container: the name is freed here.
    `ExecStopPost=-/usr/bin/podman rm --force --ignore ${name}`,
    // The registry has no SIGTERM handler: stopped, it exits 2 (or podman run 143). That is a stop, not a failure.
    'SuccessExitStatus=2 143',
    'Restart=always',
    'RestartSec=5',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** install.txt: the commands to install the unit and trust the CA on the bastion. */
export function installText(opts: {
  outDir: string;
  dataDir: string;
  address: string;
  host: CheckedHost;
  port: number;
  username: string;
  image: string;
  /** The file to trust: certs/ca.crt, or the self-signed tls.crt; undefined when neither applies. */
  trustFile?: string;
}): string {
  const { outDir, address, port, username } = opts;
  const anchor = `/etc/pki/ca-trust/source/anchors/${opts.host.host.replace(/[^\w.-]/g, '_')}-registry-ca.crt`;
  const certsD = `/etc/containers/certs.d/${address}`;
  const trust = opts.trustFile
    ? [
        `  cp ${opts.trustFile} ${anchor}`,
        '  update-ca-trust extract',
        '',
        '  or, for this registry only (containers tools and airgap read it; curl does not):',
        '',
        `  mkdir -p ${certsD} && cp ${opts.trustFile} ${certsD}/ca.crt`,
      ]
    : [
        '  The certificate was not self-signed and no --ca was given: copy the CA that signed',
        `  ${join(outDir, REGISTRY_FILES.certificate)} to ${anchor}, then run: update-ca-trust extract`,
      ];
  return [
    `The mirror registry ${address}`,
    '='.repeat(`The mirror registry ${address}`.length),
    '',
    `Written by airgap certs registry into ${outDir}. Run these as root on the bastion.`,
    '',
    '1. Install and start the service (podman runs the registry image; it listens on',
    `   port ${port} of every address of this host, with TLS and a password):`,
    '',
    `  cp ${join(outDir, REGISTRY_FILES.unit)} /etc/systemd/system/registry.service`,
    '  systemctl daemon-reload',
    '  systemctl enable --now registry',
    '',
    '2. Trust the registry CA on this bastion (airgap, podman, skopeo, curl and oc read the system trust):',
    '',
    ...trust,
    '',
    '3. Check it (asks for the password; {"repositories":[…]} means it works):',
    '',
    `  curl -u ${username} https://${address}/v2/_catalog`,
    `  systemctl status registry        # logs: journalctl -u registry`,
    '',
    'Notes:',
    `- Images are stored in ${opts.dataDir} (created on start); give it room (hundreds of GB).`,
    `- Open the port if firewalld runs: firewall-cmd --permanent --add-port=${port}/tcp && firewall-cmd --reload`,
    `- podman never pulls ${opts.image} (--pull never): load it first (airgap registry install --image-archive does):`,
    `  on a connected host: podman pull ${opts.image} && podman save -o registry.tar ${opts.image}`,
    `  here:                podman load -i registry.tar`,
    `- Add the credentials to the pull secret: airgap certs pull-secret --pull-secret pull-secret.json \\`,
    `    --registry ${address} --username ${username} --password-file <file> --out pull-secret-mirror.json`,
    `- ${REGISTRY_FILES.htpasswd}, ${REGISTRY_FILES.key} and ${REGISTRY_FILES.config} are secrets (mode 0600).`,
    '',
  ].join('\n');
}
