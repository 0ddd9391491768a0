/** The mirror domain as the rest of airgap sees it: everything outside src/mirror/ imports from here. */
export { normalizeAuthKey } from './auth/credentials.js';
export {
  HOSTED_AGENT_PACKAGES,
  PRESETS,
  initImageSetConfigChecked,
  renderImageSetConfig,
  summarizeImageSetConfig,
  writeImageSetConfigFile,
} from './isc/init.js';
export { ARCHITECTURES } from './isc/types.js';
export { compareSemver, parseSemver } from './isc/semver.js';
export { fetchGraph, graphEndpoint } from './openshift/graph.js';
export { decideEdge } from './openshift/graph-edges.js';
export { graphImageRepo, readMirroredGraph, type MirroredGraph } from './openshift/graph-mirrored.js';
export { listOperators, renderOperatorListing } from './list/operators.js';
export { listReleases, renderReleaseListing } from './list/releases.js';
export {
  componentsOf,
  parseBootImages,
  readReleasePayload,
  type BootImages,
  type CoreosStream,
} from './openshift/payload.js';
export {
  buildRegistriesConfFromMappings,
  registriesConfToml,
  type MirrorMapping,
} from './outputs/registries-conf.js';
export { formatReference, parseReference, type ImageReference } from './reference.js';
export { RegistryClient, type RegistryClientOptions } from './registry/client.js';
export { RegistryError } from './registry/errors.js';
export { sha256Digest } from './digest.js';
export { renderReport, reportFailed } from './report.js';
export { runMirror, type MirrorOptions } from './run.js';
export { runCheck } from './check.js';
export { runDelete } from './delete.js';
export { renderDeletion } from './delete.js';
export { renderCheckReport } from './check.js';
export { renderVerifyReport, verifyArchiveAt } from './verify.js';
export { MirrorError } from './errors.js';
export { DEFAULT_INVENTORY_FILE, renderInventory, runInventory, verifyInventory } from './inventory/run.js';
