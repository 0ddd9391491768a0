/**
 * The stable error codes of an image set configuration, and its problems: the YAML kit's one
 * problem type (src/config/problems.ts) carrying these codes.
 */
import type { DecodeCodes } from '../../config/decode.js';
import type { Problem, Problems } from '../../config/problems.js';

/** The stable error codes of this module. */
export const IscErrorCode = {
  /** The file could not be read. */
  Read: 'ISC_READ',
  /** The YAML itself does not parse. */
  Yaml: 'ISC_YAML',
  /** `kind` is missing or not one we read. */
  Kind: 'ISC_KIND',
  /** `apiVersion` is missing or not one we read. */
  ApiVersion: 'ISC_API_VERSION',
  /** A key oc-mirror does not know (it decodes with DisallowUnknownFields). */
  UnknownField: 'ISC_UNKNOWN_FIELD',
  /** A required field is missing or empty. */
  Required: 'ISC_REQUIRED',
  /** A wrong type or a bad value (semver, regexp, path component, enum). */
  Invalid: 'ISC_INVALID',
  /** The same catalog, package, or channel twice. */
  Duplicate: 'ISC_DUPLICATE',
  /** Two settings that cannot be used together. */
  Conflict: 'ISC_CONFLICT',
  /** Content this release of airgap does not handle yet. */
  Unsupported: 'ISC_UNSUPPORTED',
} as const;

export type IscErrorCode = (typeof IscErrorCode)[keyof typeof IscErrorCode];

/** One problem in an image set configuration. `where` is `file:line:column`. */
export type IscProblem = Problem<IscErrorCode>;

/** The problems collected while an image set configuration is decoded and validated. */
export type IscProblems = Problems<IscErrorCode>;

/** The codes the YAML kit's decoders give the problems they find in an image set configuration. */
export const ISC_DECODE_CODES: DecodeCodes<IscErrorCode> = {
  invalid: IscErrorCode.Invalid,
  required: IscErrorCode.Required,
  unknownField: IscErrorCode.UnknownField,
};
