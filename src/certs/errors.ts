/** Every error code src/certs raises: one place to read them all, and the names tests use. Each says what went wrong and where it is raised. */
export const CertsError = {
  /** the CA … expired on … (certs/configmaps.ts) */
  CA_EXPIRED: 'CA_EXPIRED',
  /** no CA given: --ca is required (certs/configmaps.ts) */
  CA_MISSING: 'CA_MISSING',
  /** … is not a CA certificate (it lacks basicConstraints CA:true) (certs/configmaps.ts) */
  CA_NOT_CA: 'CA_NOT_CA',
  /** the CA … is not valid before … (certs/configmaps.ts) */
  CA_NOT_YET_VALID: 'CA_NOT_YET_VALID',
  /** the certificate --cert … was not signed by the CA --ca … (issuer …) (certs/registry/server-cert.ts) */
  CERT_CHAIN_INVALID: 'CERT_CHAIN_INVALID',
  /** the CA … expired on … (certs/inspect.ts) */
  CERT_EXPIRED: 'CERT_EXPIRED',
  /** the certificate --cert … is not valid for … (its subject alternative names: …) (certs/registry/server-cert.ts) */
  CERT_HOST_MISMATCH: 'CERT_HOST_MISMATCH',
  /** … holds no PEM certificate… (certs/inspect.ts) */
  CERT_INVALID: 'CERT_INVALID',
  /** the private key --key … does not belong to the certificate --cert … (certs/registry/server-cert.ts) */
  CERT_KEY_MISMATCH: 'CERT_KEY_MISMATCH',
  /** … is not a CA certificate (basicConstraints CA:FALSE or missing) (certs/inspect.ts) */
  CERT_NOT_CA: 'CERT_NOT_CA',
  /** the private key … is encrypted (certs/inspect.ts) */
  KEY_INVALID: 'KEY_INVALID',
  /** … is not the key of the CA … (certs/inspect.ts) */
  KEY_MISMATCH: 'KEY_MISMATCH',
  /** --mirror …: … (certs/mirror-mapping.ts) */
  MIRROR_FLAG_INVALID: 'MIRROR_FLAG_INVALID',
  /** … needs at least one mirror mapping (certs/configmaps.ts) */
  MIRROR_MAPPING_MISSING: 'MIRROR_MAPPING_MISSING',
  /** … … … (certs/mirror-mapping.ts) */
  MIRROR_SET_INVALID: 'MIRROR_SET_INVALID',
  /** … takes …, but this document is… (certs/mirror-mapping.ts) */
  MIRROR_SET_KIND: 'MIRROR_SET_KIND',
  /** no ImageDigestMirrorSet or ImageTagMirrorSet in the directory (looked in … YAML file(s)) (certs/mirror-mapping.ts) */
  MIRROR_SET_MISSING: 'MIRROR_SET_MISSING',
  /** --output … exists and is not a directory (certs/configmaps.ts) */
  OUTPUT_NOT_DIRECTORY: 'OUTPUT_NOT_DIRECTORY',
  /** the password in --password-file … is longer than … bytes; bcrypt would ignore the rest (certs/registry.ts) */
  PASSWORD_INVALID: 'PASSWORD_INVALID',
  /** the pull secret … is … (certs/pull-secret.ts) */
  PULL_SECRET_INVALID: 'PULL_SECRET_INVALID',
  /** …: … (certs/configmaps.ts) */
  REGISTRY_INVALID: 'REGISTRY_INVALID',
  /** … …: a certificate cannot carry an IPv6 zone (…) (certs/issue.ts) */
  SAN_INVALID: 'SAN_INVALID',
  /** a server certificate needs at least one name (…) (certs/issue.ts) */
  SAN_MISSING: 'SAN_MISSING',
} as const;
export type CertsError = (typeof CertsError)[keyof typeof CertsError];
