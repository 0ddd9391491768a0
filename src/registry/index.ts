/** The bastion registry domain as the rest of airgap sees it: everything outside src/registry/ imports from here. */
export { installRegistry } from './install.js';
export { renewRegistry } from './renew.js';
export { gcRegistry, type GcResult } from './gc.js';
export { uninstallRegistry } from './uninstall.js';
export { registryStatus } from './status.js';
export { formatRegistryStatus } from './status-render.js';
