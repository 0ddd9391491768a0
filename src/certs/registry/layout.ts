/**
 * Where the bastion registry's files go: on the host, relative to --out, and inside the container
 * (what config.yml and the podman mounts of the systemd unit must agree on).
 */

export const DEFAULT_REGISTRY_PORT = 5000;
export const DEFAULT_REGISTRY_IMAGE = 'docker.io/library/registry:2';
export const DEFAULT_REGISTRY_DATA_DIR = '/var/lib/registry';

/** Where each file goes, relative to --out. */
export const REGISTRY_FILES = {
  htpasswd: 'auth/htpasswd',
  certificate: 'certs/tls.crt',
  key: 'certs/tls.key',
  ca: 'certs/ca.crt',
  config: 'conf/config.yml',
  unit: 'registry.service',
  install: 'install.txt',
  description: 'registry.json',
} as const;
export type RegistryFileKind = keyof typeof REGISTRY_FILES;

/** The paths the registry sees inside its container. */
export const IN_CONTAINER = {
  htpasswd: '/auth/htpasswd',
  certificate: '/certs/tls.crt',
  key: '/certs/tls.key',
  storage: '/var/lib/registry',
  /** registry:2 (distribution 2.x) reads this one… */
  config: '/etc/docker/registry/config.yml',
  /** …and registry:3 (distribution 3.x) this one. */
  configV3: '/etc/distribution/config.yml',
} as const;
