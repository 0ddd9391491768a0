/** Every error code src/server raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const ServerError = {
  /** --arch … is not a CoreOS architecture (server/rhcos/stream.ts) */
  ARCH_INVALID: 'ARCH_INVALID',
  /** cannot use the directory …: … (server/rhcos/fetch.ts) */
  IMAGES_DIR_INVALID: 'IMAGES_DIR_INVALID',
  /** the directory … does not exist (server/rhcos/fetch.ts) */
  IMAGES_DIR_MISSING: 'IMAGES_DIR_MISSING',
  /** … of … boot images could not be fetched:\n … (server/rhcos/fetch.ts) */
  IMAGES_FETCH_FAILED: 'IMAGES_FETCH_FAILED',
  /** … does not hold what … lists: … (server/rhcos/manifest.ts) */
  IMAGES_FILE_MISSING: 'IMAGES_FILE_MISSING',
  /** … is not a boot images manifest: … (server/rhcos/manifest.ts) */
  IMAGES_MANIFEST_INVALID: 'IMAGES_MANIFEST_INVALID',
  /** no boot images have been fetched into … (… does not exist) (server/rhcos/manifest.ts) */
  IMAGES_MANIFEST_MISSING: 'IMAGES_MANIFEST_MISSING',
  /** cannot read …: … (server/rhcos/manifest.ts) */
  IMAGES_MANIFEST_UNREADABLE: 'IMAGES_MANIFEST_UNREADABLE',
  /** no live ISO is served, so there is no osImages entry to write (server/os-images.ts) */
  OS_IMAGES_NONE: 'OS_IMAGES_NONE',
  /** boot image URLs do not answer:\n … (server/os-images.ts) */
  OS_IMAGES_UNREACHABLE: 'OS_IMAGES_UNREACHABLE',
  /** the OpenShift version (x.y) of these boot images is not known (server/os-images.ts) */
  OS_IMAGES_VERSION: 'OS_IMAGES_VERSION',
  /** release … (…) has no coreos-bootimages ConfigMap (server/rhcos/fetch.ts) */
  RELEASE_NO_BOOT_IMAGES: 'RELEASE_NO_BOOT_IMAGES',
  /** cannot listen on …: this host has no IPv6 (server/listen.ts) */
  SERVE_ADDRESS_FAMILY: 'SERVE_ADDRESS_FAMILY',
  /** --address … is neither an IP address nor a host name (server/listen.ts) */
  SERVE_ADDRESS_INVALID: 'SERVE_ADDRESS_INVALID',
  /** … is not an address of this host (server/listen.ts) */
  SERVE_ADDRESS_NOT_LOCAL: 'SERVE_ADDRESS_NOT_LOCAL',
  /** --address …: the host name does not resolve (…) (server/listen.ts) */
  SERVE_ADDRESS_UNKNOWN: 'SERVE_ADDRESS_UNKNOWN',
  /** (server/static/paths.ts) */
  SERVE_DIR_MISSING: 'SERVE_DIR_MISSING',
  /** … is not a directory (server/static/paths.ts) */
  SERVE_DIR_NOT_DIR: 'SERVE_DIR_NOT_DIR',
  /** cannot read the directory …: … (server/static/paths.ts) */
  SERVE_DIR_UNREADABLE: 'SERVE_DIR_UNREADABLE',
  /** cannot listen on …: … (server/listen.ts) */
  SERVE_LISTEN_FAILED: 'SERVE_LISTEN_FAILED',
  /** port … needs privileges on … (server/listen.ts) */
  SERVE_PORT_DENIED: 'SERVE_PORT_DENIED',
  /** --port … is not a port number (server/listen.ts) */
  SERVE_PORT_INVALID: 'SERVE_PORT_INVALID',
  /** port … is already in use on … (server/listen.ts) */
  SERVE_PORT_IN_USE: 'SERVE_PORT_IN_USE',
  /** stream … has no … boot images; it has … (server/rhcos/stream.ts) */
  STREAM_ARCH_MISSING: 'STREAM_ARCH_MISSING',
  /** stream … has no bare-metal artifacts for … (… is missing; platforms: …) (server/rhcos/stream.ts) */
  STREAM_ARTIFACT_MISSING: 'STREAM_ARTIFACT_MISSING',
  /** (server/rhcos/stream.ts) */
  STREAM_INVALID: 'STREAM_INVALID',
  /** … has no stream …; it has … (server/rhcos/stream.ts) */
  STREAM_NOT_FOUND: 'STREAM_NOT_FOUND',
  /** cannot read the stream file …: … (server/rhcos/fetch.ts) */
  STREAM_UNREADABLE: 'STREAM_UNREADABLE',
  /** --tls-cert … expired on … (server/listen.ts) */
  TLS_CERT_EXPIRED: 'TLS_CERT_EXPIRED',
  /** --tls-cert … is not valid before … (server/listen.ts) */
  TLS_CERT_NOT_YET_VALID: 'TLS_CERT_NOT_YET_VALID',
  /** --tls-key … is not the key of --tls-cert … (server/listen.ts) */
  TLS_KEY_MISMATCH: 'TLS_KEY_MISMATCH',
} as const;
export type ServerError = (typeof ServerError)[keyof typeof ServerError];
