/** The cluster domain as the rest of airgap sees it: everything outside src/cluster/ imports from here. */
export { destroySelectedCluster } from './destroy.js';
export type { ClusterSelector, HubConnection } from './identity.js';
export { installClusterFromSite, installHubFromSite } from './install-from-site.js';
export { writeSelectedKubeconfig } from './kubeconfig.js';
export { lineReporter, parseDuration, type InstallReporter } from './progress.js';
export { formatStatus, readClusterStatus } from './status.js';
export { releasesInUse } from './releases-in-use.js';
export { scaleCluster } from './scale.js';
export { upgradeCluster, type UpgradeResult } from './upgrade.js';
export { applyHubObjects, readHubObject } from './hub-objects.js';
