/** Rendering of every Kubernetes object `airgap install hub` and `airgap install cluster` apply. */
export * from './types.js';
export * from './names.js';
export * from './bmc.js';
export * from './hub.js';
export * from './cluster.js';
