/** The bastion registry domain as the rest of airgap sees it: everything outside src/registry/ imports from here. */
export { BastionError } from './errors.js';
export { installRegistry, type InstallOptions, type InstallResult, type InstallStep } from './install.js';
export { registryStatus, type RegistryStatus, type StatusOptions } from './status.js';
export { formatRegistryStatus } from './status-render.js';
