/** The test PKI lives in lab/ (the demo uses it too); tests import it from here. */
export * from '../../lab/pki.js';
