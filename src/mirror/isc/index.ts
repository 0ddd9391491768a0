/**
 * ImageSetConfiguration / DeleteImageSetConfiguration (mirror.openshift.io/v2alpha1): parsing,
 * oc-mirror's validation, and source positions for every field.
 */
export { parseImageSetConfig, loadImageSetConfig, type ParseOptions } from './parse.js';
export {
  positionOf,
  describeUnsupported,
  unsupportedFields,
  assertSupported,
  pathPattern,
  type FieldLocation,
  type SetField,
} from './describe.js';
export { IscErrorCode, type IscProblem } from './errors.js';
export { sourceOf, type ConfigSource } from './source.js';
export {
  loadYamlWithPositions,
  type SourcePosition,
  type FieldPositions,
  type PositionMap,
  type FieldPart,
} from '../../config/positions.js';
export { compileGoRegexp, type GoRegexpResult } from './regexp.js';
export { parseSemver, parseVersion, compareSemver, type SemVer } from './semver.js';
export * from './types.js';
