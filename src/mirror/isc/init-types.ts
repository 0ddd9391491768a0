/**
 * The shapes of `airgap mirror init`: the choices it takes (one field per flag) and the
 * ImageSetConfiguration it writes, which holds only the fields that say something.
 */
import type { Preset } from './init-presets.js';
import type { Architecture, ISC_API_VERSION, ISC_KIND } from './types.js';

/** What to put in the image set; each field is one `airgap mirror init` flag. */
export interface InitOptions {
  preset?: Preset;
  /** OpenShift `x.y` or `x.y.z`: the release channel (stable-x.y, pinned to x.y.z) and the catalog tag. */
  version?: string;
  /** Release channels, `<word>-<major>.<minor>` (stable-4.18, eus-4.18, fast-4.18, candidate-4.18). */
  channels?: string[];
  minVersion?: string;
  maxVersion?: string;
  full?: boolean;
  shortestPath?: boolean;
  /** A release image reference, instead of channels. */
  release?: string;
  arches?: string[];
  /** Undefined: the preset's choice (on for hosted-agent), else off. */
  graph?: boolean;
  kubeVirtContainer?: boolean;
  /** Operator catalog; default redhat-operator-index:v<major.minor> when packages are asked for. */
  catalog?: string;
  /** `name` or `name:channel`. */
  packages?: string[];
  /** Additional images, mirrored as they are. */
  images?: string[];
  /** GiB per archive part, a whole number. */
  archiveSize?: number | string;
  /** Add the OpenShift Data Foundation packages of the catalog's minor. */
  withOdf?: boolean;
}

/** A release channel as written (defaults left out). */
export interface InitChannel {
  name: string;
  minVersion?: string;
  maxVersion?: string;
  shortestPath?: boolean;
  full?: boolean;
}

export interface InitPlatform {
  architectures?: Architecture[];
  channels?: InitChannel[];
  release?: string;
  graph?: boolean;
  kubeVirtContainer?: boolean;
}

export interface InitPackage {
  name: string;
  channels?: { name: string }[];
}

export interface InitOperator {
  catalog: string;
  packages?: InitPackage[];
}

/** The ImageSetConfiguration as written: only the fields that say something. */
export interface InitImageSetConfig {
  kind: typeof ISC_KIND;
  apiVersion: typeof ISC_API_VERSION;
  archiveSize?: number;
  mirror: {
    platform?: InitPlatform;
    operators?: InitOperator[];
    additionalImages?: { name: string }[];
  };
}

/** The configuration, and things the person should check that are not errors. */
export interface InitResult {
  config: InitImageSetConfig;
  notes: string[];
}
