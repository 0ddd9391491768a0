/** The mirror domain as the rest of airgap sees it: everything outside src/mirror/ imports from here. */
export { normalizeAuthKey } from './auth/credentials.js';
export {
  HOSTED_AGENT_PACKAGES,
  PRESETS,
  initImageSetConfig,
  initImageSetConfigChecked,
  renderImageSetConfig,
  summarizeImageSetConfig,
  writeImageSetConfigFile,
} from './isc/init.js';
export { ARCHITECTURES } from './isc/types.js';
export { compareSemver, parseSemver } from './isc/semver.js';
export { fetchGraph, graphEndpoint } from './openshift/graph.js';
export {
  decideEdge,
  type BlockedEdge,
  type EdgeDecision,
  type EdgeReleaseMetadata,
  type GraphChannel,
} from './openshift/graph-edges.js';
export { graphImageRepo, readMirroredGraph, type MirroredGraph } from './openshift/graph-mirrored.js';
export {
  listOperators,
  renderOperatorListing,
  type ListOperatorsOptions,
  type OperatorListing,
} from './list/operators.js';
export {
  listReleases,
  renderReleaseListing,
  type ListReleasesOptions,
  type ReleaseListing,
} from './list/releases.js';
export {
  componentsOf,
  parseBootImages,
  readReleasePayload,
  type BootImages,
  type CoreosStream,
} from './openshift/payload.js';
export {
  clusterImagePolicyExample,
  clusterImagePolicyExampleYaml,
  type ClusterImagePolicyExampleOptions,
  type ClusterImagePolicyObject,
} from './outputs/image-policy.js';
export {
  buildRegistriesConfFromMappings,
  registriesConfToml,
  type MirrorMapping,
} from './outputs/registries-conf.js';
export { formatReference, parseReference, type ImageReference } from './reference.js';
export { RegistryClient, type RegistryClientOptions } from './registry/client.js';
export { RegistryError, type DistributionErrorCode, type RegistryErrorEntry } from './registry/errors.js';
export { renderReport, reportFailed } from './report.js';
export { runMirror, type MirrorOptions, type MirrorReport } from './run.js';
export { runCheck } from './check.js';
export { runDelete } from './delete.js';
export { renderDeletion } from './delete.js';
export { renderCheckReport, type CheckReport } from './check.js';
export { renderVerifyReport, verifyArchiveAt } from './verify.js';
export { MirrorError } from './errors.js';
