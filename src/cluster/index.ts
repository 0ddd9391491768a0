/** The cluster domain as the rest of airgap sees it: everything outside src/cluster/ imports from here. */
export { destroyCluster } from './destroy.js';
export {
  clusterPreflight,
  installCluster,
  writeHostedKubeconfig,
  type ClusterIdentity,
} from './install-cluster.js';
export { installHub } from './install-hub.js';
export { Kube } from './kube.js';
export { prepareCluster, prepareHub } from './prepare.js';
export { lineReporter, parseDuration, type InstallReporter } from './progress.js';
export { writeRendered } from './render-out.js';
export { renderCluster, renderHub } from './render/index.js';
export { CPU_ARCHITECTURE } from './site/inputs.js';
export { loadSite } from './site/load.js';
export { clusterStatus, formatStatus } from './status.js';
