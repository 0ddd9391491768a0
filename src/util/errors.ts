/**
 * The one error model. Every failure a person can act on is an AirgapError with a stable `code`,
 * a message that says what is wrong and where, an optional `hint` that says how to fix it, and an
 * exit code: 2 for usage errors (bad flags, bad files), 1 for failures (network, registry, disk).
 * Commands render these in one place (src/cli/command.ts); stack traces only with --verbose.
 */
export type ExitCode = 1 | 2;

export interface ErrorOptions {
  /** How to fix it, in one sentence a person can act on. */
  hint?: string;
  /** Where: a file with line and field (`isc.yaml:12 mirror.additionalImages[0].name`), a registry, an image. */
  where?: string;
  exitCode?: ExitCode;
  cause?: unknown;
  /** Extra machine-readable facts for --json output. Never secrets. */
  details?: Record<string, unknown>;
}

export class AirgapError extends Error {
  readonly code: string;
  readonly hint?: string;
  readonly where?: string;
  readonly exitCode: ExitCode;
  readonly details?: Record<string, unknown>;

  constructor(code: string, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AirgapError';
    this.code = code;
    this.hint = options.hint;
    this.where = options.where;
    this.exitCode = options.exitCode ?? 1;
    this.details = options.details;
  }

  /** The text a person reads: what (where). How to fix. */
  describe(): string {
    const where = this.where ? ` (${this.where})` : '';
    const hint = this.hint ? `\n  hint: ${this.hint}` : '';
    return `${this.message}${where}${hint}`;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.where ? { where: this.where } : {}),
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** A usage error: the person gave us something wrong (flag, file, reference). Exit code 2. */
export function usageError(code: string, message: string, options: Omit<ErrorOptions, 'exitCode'> = {}) {
  return new AirgapError(code, message, { ...options, exitCode: 2 });
}

export function isAirgapError(e: unknown): e is AirgapError {
  return e instanceof AirgapError;
}

/** Whether `e` is an AirgapError with one of these codes. */
export function hasCode(e: unknown, ...codes: string[]): e is AirgapError {
  return e instanceof AirgapError && codes.includes(e.code);
}

/** The message of any thrown value, without a stack. */
export function messageOf(e: unknown): string {
  if (e instanceof AirgapError) return e.describe();
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    const code = (e as { code?: unknown }).code;
    const base = typeof code === 'string' && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
    if (cause instanceof Error && !base.includes(cause.message)) return `${base}: ${messageOf(cause)}`;
    return base;
  }
  return String(e);
}

/** Why a file could not be read, in words a person acts on (`it does not exist`, `permission denied`, …). */
export function unreadableReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'it does not exist';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return messageOf(e);
}

/** Error codes raised by more than one domain (flags, files, registries). */
export const CommonError = {
  /** A failure that is not an AirgapError: a bug, reported with --verbose for the stack (cli/command.ts) */
  INTERNAL: 'INTERNAL',
  /** cannot open the access log …: … (commands/serve-images.ts) */
  ACCESS_LOG_UNWRITABLE: 'ACCESS_LOG_UNWRITABLE',
  /** cannot read the …… (certs/inspect.ts) */
  FILE_UNREADABLE: 'FILE_UNREADABLE',
  /** --cluster-resources cannot be combined with --idms or --itms (certs/configmaps.ts) */
  FLAG_CONFLICT: 'FLAG_CONFLICT',
  /** --hosted-cluster-namespace … is not a namespace name (certs/configmaps.ts) */
  FLAG_INVALID: 'FLAG_INVALID',
  /** which hosted cluster? give --name (and --namespace) or --site (cluster/identity.ts) */
  FLAG_MISSING: 'FLAG_MISSING',
  /** … already exists (certs/inspect.ts) */
  OUTPUT_EXISTS: 'OUTPUT_EXISTS',
  /** … is on a read-only file system (util/fs-errors.ts) */
  FS_READ_ONLY: 'FS_READ_ONLY',
  /** permission denied: cannot … (util/fs-errors.ts) */
  FS_PERMISSION: 'FS_PERMISSION',
  /** no space left on the device holding … (util/fs-errors.ts) */
  FS_NO_SPACE: 'FS_NO_SPACE',
  /** … does not exist, is not a directory, or is a directory (util/fs-errors.ts) */
  FS_PATH: 'FS_PATH',
  /** too many open files (util/fs-errors.ts) */
  FS_TOO_MANY_FILES: 'FS_TOO_MANY_FILES',
  /** an I/O error on the device holding … (util/fs-errors.ts) */
  FS_IO: 'FS_IO',
  /** …: "…" cannot name a file: it holds a path separator (util/path-segment.ts) */
  PATH_SEGMENT_INVALID: 'PATH_SEGMENT_INVALID',
  /** … resolved to … (cluster/release.ts) */
  RELEASE_DIGEST_MISMATCH: 'RELEASE_DIGEST_MISMATCH',
  /** another airgap run (pid …) is using … (util/lock.ts) */
  WORKSPACE_BUSY: 'WORKSPACE_BUSY',
  /** …: its aliases expand it to …, it is … bytes of YAML, it nests deeper than … (config/yaml-load.ts) */
  YAML_LIMIT: 'YAML_LIMIT',
} as const;
export type CommonError = (typeof CommonError)[keyof typeof CommonError];
