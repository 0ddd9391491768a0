/** The certs domain as the rest of airgap sees it: everything outside src/certs/ imports from here. */
export {
  CUSTOM_REGISTRIES,
  DEFAULT_HOSTED_CLUSTER_NAMESPACE,
  buildTrustObjects,
  readCaFile,
  registryConfigKey,
  trustConfigMaps,
  trustConfigMapsYaml,
  type TrustConfigMaps,
} from './configmaps.js';
export {
  EXPIRY_WARNING_DAYS,
  describeCertificate,
  readCertificates,
  readPrivateKeyFile,
  verifyCertificate,
} from './inspect.js';
export { createCaFiles, issueServerFiles } from './issue.js';
export { KEY_TYPES, MAX_LEAF_DAYS, type KeyType } from './mint.js';
export { isBareRegistry, parseHostPort, readClusterResourcesDir, scopeProblem } from './mirror-mapping.js';
export { hostNameProblem } from './names.js';
export { writePullSecret } from './pull-secret.js';
export {
  DEFAULT_REGISTRY_DATA_DIR,
  DEFAULT_REGISTRY_IMAGE,
  DEFAULT_REGISTRY_PORT,
  IN_CONTAINER,
  REGISTRY_FILES,
  checkHost,
  checkUnitPath,
  registryMounts,
  registryRunCommand,
  registryUnit,
  writeRegistryFiles,
  type RegistryFileKind,
} from './registry.js';
export { renderCertificate, renderInfo } from './render.js';
