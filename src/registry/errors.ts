/** Every error code src/registry raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const BastionError = {
  /** systemd is not running as PID 1 here (…); nothing was changed (registry/systemd.ts) */
  NO_SYSTEMD: 'REGISTRY_NO_SYSTEMD',
  /** airgap registry … changes the host: run it as root (registry/install.ts) */
  NOT_ROOT: 'REGISTRY_NOT_ROOT',
  /** systemctl … failed: … (registry/systemd.ts) */
  SYSTEMCTL_FAILED: 'REGISTRY_SYSTEMCTL_FAILED',
  /** podman is not installed / podman … failed: … (registry/podman.ts) */
  PODMAN_FAILED: 'REGISTRY_PODMAN_FAILED',
  /** the image … is not in podman's storage and no --image-archive or --image-layout was given (registry/install.ts) */
  IMAGE_MISSING: 'REGISTRY_IMAGE_MISSING',
  /** --image-archive …: … (registry/image.ts) */
  IMAGE_SOURCE_INVALID: 'REGISTRY_IMAGE_SOURCE_INVALID',
  /** … holds no registry installed by airgap (no registry.json) (registry/state.ts) */
  NOT_INSTALLED: 'REGISTRY_NOT_INSTALLED',
  /** …/registry.json: … (registry/state.ts) */
  STATE_INVALID: 'REGISTRY_STATE_INVALID',
  /** --name …: not a unit name (registry/state.ts) */
  NAME_INVALID: 'REGISTRY_NAME_INVALID',
  /** the registry … did not answer within … (registry/probe.ts) */
  NOT_READY: 'REGISTRY_NOT_READY',
  /** the registry … answered, but …: … (registry/probe.ts) */
  CHECK_FAILED: 'REGISTRY_CHECK_FAILED',
  /** update-ca-trust … failed: … (registry/trust.ts) */
  TRUST_FAILED: 'REGISTRY_TRUST_FAILED',
  /** the new certificate would not be trusted by … (registry/renew.ts) */
  RENEW_UNTRUSTED: 'REGISTRY_RENEW_UNTRUSTED',
  /** --delete-data removes …: give --yes (registry/uninstall.ts) */
  CONFIRM_REQUIRED: 'REGISTRY_CONFIRM_REQUIRED',
  /** --password-file …: cannot be read / must hold the password on one line (registry/status.ts) */
  PASSWORD_FILE_INVALID: 'REGISTRY_PASSWORD_FILE_INVALID',
  /** garbage-collect failed: … (registry/gc.ts) */
  GC_FAILED: 'REGISTRY_GC_FAILED',
  /** the registry … did not come back after the garbage collection: … (registry/gc.ts) */
  GC_RESTART_FAILED: 'REGISTRY_GC_RESTART_FAILED',
  /** --delete-yaml-file …: not what airgap mirror delete --generate writes (registry/gc.ts) */
  GC_PREDICTION_INVALID: 'REGISTRY_GC_PREDICTION_INVALID',
  /** --delete-data: … may not be a registry store / is / or holds the registry directory (registry/uninstall.ts) */
  DATA_DIR_UNSAFE: 'REGISTRY_DATA_DIR_UNSAFE',
} as const;
export type BastionError = (typeof BastionError)[keyof typeof BastionError];
