/** The bastion registry domain as the rest of airgap sees it: everything outside src/registry/ imports from here. */
export { BastionError } from './errors.js';
export { installRegistry, type InstallOptions, type InstallResult, type InstallStep } from './install.js';
export { renewRegistry, type RenewOptions, type RenewResult, type RenewStep } from './renew.js';
export { gcRegistry, type GcOptions, type GcResult, type GcPrediction, type StorageStats } from './gc.js';
export {
  uninstallRegistry,
  type UninstallOptions,
  type UninstallResult,
  type UninstallStep,
} from './uninstall.js';
export { registryStatus, type RegistryStatus, type StatusOptions } from './status.js';
export { formatRegistryStatus } from './status-render.js';
