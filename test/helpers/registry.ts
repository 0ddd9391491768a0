/** The registry starter lives in lab/ (the demo uses it too); tests import it from here. */
export * from '../../lab/registry.js';
