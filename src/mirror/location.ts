/**
 * Where a mirror run reads and writes, as oc-mirror v2's arguments name it: the destination
 * argument, --from and --workspace of `airgap mirror` (and `airgap mirror plan`), and the archive
 * of `airgap mirror verify`. Each argument is parsed here, once, into a Location; which workflow a
 * run is follows from the kinds it was given (workflow.ts). Paths are kept as written: the run
 * resolves them against its working directory.
 */
import { usageError, CommonError } from '../util/errors.js';
import { parseTransport } from './reference.js';
import { MirrorError } from './errors.js';

/** One argument of a mirror run, parsed. */
export type Location = RegistryLocation | DirectoryLocation | LayoutLocation;

/** `docker://host[:port][/prefix]`: a registry, images below `prefix`. */
export interface RegistryLocation {
  kind: 'registry';
  /** Host as used on the wire: `mirror.example.com:8443`, `[::1]:5000`, `localhost`. */
  registry: string;
  /** Repository path prefix, without slashes at either end; empty for none. */
  prefix: string;
}

/**
 * `file://<dir>`: a directory on disk. As the destination or --from it holds an archive (the parts
 * and their manifest, with the run's state in `<dir>/working-dir`); as --workspace it holds the
 * state of a registry → registry run.
 */
export interface DirectoryLocation {
  kind: 'directory';
  path: string;
}

/** `oci:<dir>` or `oci://<dir>` (optionally `:<ref>`, which a run ignores): a plain OCI image layout. */
export interface LayoutLocation {
  kind: 'layout';
  path: string;
  refName?: string;
}

/**
 * Which argument is parsed: they accept different forms. The destination takes any Location;
 * --from and --workspace only `file://<dir>`; `mirror verify`'s archive `file://<dir>` or a plain path.
 */
export type LocationRole = 'destination' | '--from' | '--workspace' | 'archive';

/**
 * The kind of Location an argument names, from its scheme alone (`oci:`, `file://`, anything else
 * is a registry). Enough to tell the workflow, and so to report a conflict of flags before the
 * argument itself is checked.
 */
export function locationKind(input: string): Location['kind'] {
  requireScheme(input);
  if (input.startsWith('oci:')) return 'layout';
  if (input.startsWith('file://')) return 'directory';
  return 'registry';
}

/**
 * Parse a destination, --from, --workspace or archive argument. Usage errors (exit 2):
 * LOCATION_INVALID for a destination (no directory after `file://` or `oci:`, no registry host,
 * an invalid path prefix), FLAG_INVALID for --from and --workspace (not `file://`, no directory)
 * and for an empty archive path.
 */
export function parseLocation(input: string, role: 'destination'): Location;
export function parseLocation(input: string, role: Exclude<LocationRole, 'destination'>): DirectoryLocation;
export function parseLocation(input: string, role: LocationRole): Location {
  switch (role) {
    case 'destination':
      return parseDestination(input);
    case 'archive':
      return parseArchive(input);
    default:
      return parseDirectoryFlag(role, input);
  }
}

/** A registry location as it is written: `docker://host[:port][/prefix]`. */
export function registryLocationText(l: Pick<RegistryLocation, 'registry' | 'prefix'>): string {
  return `docker://${l.registry}${l.prefix ? `/${l.prefix}` : ''}`;
}

/** The schemes a destination is written with; without one, what was meant is a guess, so none is made. */
const SCHEMES = ['docker://', 'file://', 'oci:'] as const;

/**
 * A destination says what it is: `/srv/arch` was taken for a registry (and reported as needing
 * --workspace), `registry.example.com/x` silently was one. Without a scheme the error names the
 * likely meaning: a path for what starts with /, ., ~ or has no host-like first part, else a registry.
 */
function requireScheme(input: string): void {
  if (SCHEMES.some((s) => input.startsWith(s))) return;
  const hint =
    'a destination is docker://host[:port][/prefix] (a registry), file://<dir> (an archive) or oci:<dir> (an OCI layout)';
  const other = /^([a-z][a-z0-9+.-]*):\/\//i.exec(input);
  if (other)
    throw usageError(
      MirrorError.LOCATION_INVALID,
      `the destination "${input}" has the scheme ${other[1]}://, which is not one airgap writes to`,
      { hint },
    );
  const first = input.split('/')[0] ?? '';
  const pathLike =
    /^[/.~]/.test(input) || (!/[.:]/.test(first) && first !== 'localhost' && !first.startsWith('['));
  const meant = pathLike
    ? `file://${input} for an archive directory (or oci:${input} for an OCI layout)`
    : `docker://${input} for a registry`;
  throw usageError(MirrorError.LOCATION_INVALID, `the destination "${input}" has no scheme; write ${meant}`, {
    hint,
  });
}

function parseDestination(input: string): Location {
  requireScheme(input);
  const t = parseTransport(input, 'destination');
  switch (t.transport) {
    case 'file':
      return { kind: 'directory', path: t.path };
    case 'oci':
      return { kind: 'layout', path: t.path, ...(t.refName !== undefined ? { refName: t.refName } : {}) };
    case 'docker-prefix':
      return { kind: 'registry', registry: t.registry, prefix: t.prefix };
    default:
      // A destination is never parsed as one image.
      throw usageError(MirrorError.LOCATION_INVALID, `unsupported destination ${input}`);
  }
}

/** --from and --workspace: `file://<dir>` only. */
function parseDirectoryFlag(flag: '--from' | '--workspace', input: string): DirectoryLocation {
  if (!input.startsWith('file://')) {
    throw usageError(CommonError.FLAG_INVALID, `${flag} must be a file:// path, got "${input}"`, {
      hint: `write it as ${flag} file:///path/to/dir or ${flag} file://relative/dir`,
    });
  }
  const path = input.slice('file://'.length);
  if (!path) throw usageError(CommonError.FLAG_INVALID, `${flag} names no directory`);
  return { kind: 'directory', path };
}

/** `mirror verify`'s argument: `file://<dir>` or a plain path (any other text is a path too). */
function parseArchive(input: string): DirectoryLocation {
  const path = input.startsWith('file://') ? input.slice('file://'.length) : input;
  if (!path) throw usageError(CommonError.FLAG_INVALID, 'the archive path is empty');
  return { kind: 'directory', path };
}
