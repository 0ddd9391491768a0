/** The site configuration file: schema, loading, local inputs, and the resolved site. */
export * from './types.js';
export * from './load.js';
export * from './inputs.js';
export { applySiteOverrides } from './overrides.js';
