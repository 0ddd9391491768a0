/**
 * The stable error codes of the site file, and its problems: the YAML kit's one problem type
 * (src/config/problems.ts) carrying these codes. All problems are collected, then thrown as one
 * usage error (exit 2), the way image set configurations are checked.
 */
import type { DecodeCodes } from '../../config/decode.js';
import type { Problem, Problems } from '../../config/problems.js';

/** The stable error codes of the site file. */
export const SiteErrorCode = {
  /** The file could not be read. */
  Read: 'SITE_READ',
  /** The YAML itself does not parse. */
  Yaml: 'SITE_YAML',
  /** `apiVersion` or `kind` is missing or not a Site. */
  Kind: 'SITE_KIND',
  /** A key the schema does not know. */
  UnknownField: 'SITE_UNKNOWN_FIELD',
  /** A required field is missing or empty. */
  Required: 'SITE_REQUIRED',
  /** A wrong type or a bad value. */
  Invalid: 'SITE_INVALID',
  /** The same host name or MAC address twice. */
  Duplicate: 'SITE_DUPLICATE',
  /** Two settings that cannot be used together. */
  Conflict: 'SITE_CONFLICT',
  /** A file the site names is missing or unreadable. */
  File: 'SITE_FILE',
} as const;
export type SiteErrorCode = (typeof SiteErrorCode)[keyof typeof SiteErrorCode];

/** One problem in a site file. `where` is `file:line:column`. */
export type SiteProblem = Problem<SiteErrorCode>;

/** The problems collected while a site file is decoded and checked. */
export type SiteProblems = Problems<SiteErrorCode>;

/** The codes the YAML kit's decoders give the problems they find in a site file. */
export const SITE_DECODE_CODES: DecodeCodes<SiteErrorCode> = {
  invalid: SiteErrorCode.Invalid,
  required: SiteErrorCode.Required,
  unknownField: SiteErrorCode.UnknownField,
};
