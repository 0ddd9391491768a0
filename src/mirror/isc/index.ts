/**
 * ImageSetConfiguration / DeleteImageSetConfiguration (mirror.openshift.io/v2alpha1): parsing,
 * oc-mirror's validation, and source positions for every field.
 */
export { parseImageSetConfig, loadImageSetConfig, type ParseOptions } from './parse.js';
export { positionOf, describeUnsupported, assertSupported, pathPattern } from './describe.js';
export { IscErrorCode, type IscProblem } from './errors.js';
export { compileGoRegexp } from './regexp.js';
export { parseSemver, compareSemver } from './semver.js';
export * from './types.js';
