/**
 * What a registry failure is. A RegistryError keeps what the registry said as fields: the HTTP
 * status, the error codes of its body (distribution spec: `{"errors":[{"code":"MANIFEST_UNKNOWN",
 * "message":…}]}`), and whether another attempt may help (`temporary`: 408, 429, 5xx, a network
 * failure), so callers decide on those rather than on message text. It is an AirgapError with the
 * codes (`REGISTRY_NOT_FOUND`, …) and messages people and scripts already know, so handling and
 * exit codes stay as they are.
 */
import type { Dispatcher } from 'undici';
import { isRetryableStatus, isTlsError, netErrorCode } from '../../net/retry.js';
import { readSnippet } from '../../net/body.js';
import { AirgapError, messageOf, type ErrorOptions } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** Error codes of the OCI distribution spec, and those registries add (`TOOMANYREQUESTS`, `UNAVAILABLE`). */
export type DistributionErrorCode =
  | 'BLOB_UNKNOWN'
  | 'BLOB_UPLOAD_INVALID'
  | 'BLOB_UPLOAD_UNKNOWN'
  | 'DIGEST_INVALID'
  | 'MANIFEST_BLOB_UNKNOWN'
  | 'MANIFEST_INVALID'
  | 'MANIFEST_UNKNOWN'
  | 'NAME_INVALID'
  | 'NAME_UNKNOWN'
  | 'SIZE_INVALID'
  | 'UNAUTHORIZED'
  | 'DENIED'
  | 'UNSUPPORTED'
  | 'TOOMANYREQUESTS'
  | 'UNAVAILABLE'
  | 'UNKNOWN';

/** One entry of a registry's error body. */
export interface RegistryErrorEntry {
  /** A {@link DistributionErrorCode}, or whatever else the registry sent. */
  code: DistributionErrorCode | (string & {});
  message?: string;
  detail?: unknown;
}

export interface RegistryErrorOptions extends ErrorOptions {
  /** The registry (host[:port]) that failed. */
  registry: string;
  /** The HTTP status of the answer; undefined when there was none (network, TLS). */
  status?: number;
  /** The error body's entries. */
  registryErrors?: RegistryErrorEntry[];
  /** Whether a later attempt may help; by default, whether the status is one we retry. */
  temporary?: boolean;
}

/** A failure of one registry, with what it answered. */
export class RegistryError extends AirgapError {
  readonly registry: string;
  readonly status?: number;
  readonly registryErrors: readonly RegistryErrorEntry[];
  /** The registry's first error code (`MANIFEST_UNKNOWN`, …), if its answer had one. */
  readonly registryCode?: RegistryErrorEntry['code'];
  /** A later attempt may help: 408, 429, 5xx, or a network failure (not TLS). */
  readonly temporary: boolean;

  constructor(code: string, message: string, options: RegistryErrorOptions) {
    const { registry, status, registryErrors, temporary, ...rest } = options;
    super(code, message, rest);
    this.name = 'RegistryError';
    this.registry = registry;
    this.status = status;
    this.registryErrors = registryErrors ?? [];
    this.registryCode = this.registryErrors[0]?.code;
    this.temporary = temporary ?? (status !== undefined && isRetryableStatus(status));
  }

  /** Whether any entry of the registry's answer has one of `codes`. */
  hasRegistryCode(...codes: RegistryErrorEntry['code'][]): boolean {
    return this.registryErrors.some((e) => codes.includes(e.code));
  }
}

/**
 * Whether `e` is the registry saying "not there": a RegistryError with status 404 (its codes:
 * MANIFEST_UNKNOWN, NAME_UNKNOWN, BLOB_UNKNOWN). A refusal (401, 403), a fault (5xx) or a network or
 * TLS failure is not absence.
 */
export function isRegistryNotFound(e: unknown): e is RegistryError {
  return e instanceof RegistryError && e.status === 404;
}

/**
 * A registry's error body, read once: the entries of `{"errors":[…]}`, and the text for messages
 * (`CODE message; …`, else the first 200 characters; empty when unreadable).
 */
export async function readErrorBody(
  res: Dispatcher.ResponseData,
): Promise<{ text: string; registryErrors: RegistryErrorEntry[] }> {
  // An error body is read for its message, never whole: 64 KiB at most.
  const text = await readSnippet(res.body);
  try {
    const doc = JSON.parse(text) as { errors?: { code?: string; message?: string; detail?: unknown }[] };
    if (doc.errors?.length) {
      const registryErrors = doc.errors.map((e) => ({
        code: e.code ?? '',
        ...(e.message !== undefined ? { message: e.message } : {}),
        ...(e.detail !== undefined ? { detail: e.detail } : {}),
      }));
      return {
        text: doc.errors.map((e) => `${e.code ?? ''} ${e.message ?? ''}`.trim()).join('; '),
        registryErrors,
      };
    }
    return { text: text.slice(0, 200), registryErrors: [] };
  } catch {
    // Not JSON: the body is read for the message only, and the status says what failed.
    return { text: '', registryErrors: [] };
  }
}

/** A non-`ok` answer to a request: REGISTRY_NOT_FOUND, _DENIED, _RATE_LIMITED or _ERROR. */
export async function statusError(
  registry: string,
  res: Dispatcher.ResponseData,
  req: { method: string; what: string },
): Promise<RegistryError> {
  const { text, registryErrors } = await readErrorBody(res);
  const s = res.statusCode;
  const facts = { registry, status: s, registryErrors, details: { status: s, registry } };
  if (s === 404)
    return new RegistryError(
      MirrorError.REGISTRY_NOT_FOUND,
      `${req.what} does not exist (${text || '404'})`,
      {
        ...facts,
        hint: 'check the repository, tag or digest',
      },
    );
  if (s === 403)
    return new RegistryError(
      MirrorError.REGISTRY_DENIED,
      `${registry} denied ${req.what} (${text || '403'})`,
      {
        ...facts,
        hint: 'the account lacks permission for this repository (push needs write access)',
      },
    );
  if (s === 429)
    return new RegistryError(
      MirrorError.REGISTRY_RATE_LIMITED,
      `${registry} kept rate-limiting ${req.what}`,
      {
        ...facts,
        hint: 'retry later or lower --parallel',
      },
    );
  return new RegistryError(
    MirrorError.REGISTRY_ERROR,
    `${registry} answered ${s} to ${req.method} for ${req.what}${text ? `: ${text}` : ''}`,
    facts,
  );
}

/** Codes of a registry that cannot be reached at all (as opposed to a connection that broke). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/**
 * A request that got no answer: REGISTRY_TLS (final), REGISTRY_UNREACHABLE or REGISTRY_NETWORK
 * (temporary). An AirgapError passes through as it is.
 */
export function networkError(registry: string, e: unknown, what: string): AirgapError {
  if (e instanceof AirgapError) return e;
  const code = netErrorCode(e);
  if (isTlsError(e)) {
    return new RegistryError(
      MirrorError.REGISTRY_TLS,
      `TLS verification of ${registry} failed: ${code ?? messageOf(e)}`,
      {
        registry,
        temporary: false,
        where: what,
        hint: `trust the registry's CA: install it into the system store (update-ca-trust), or give --ca-file, or put it in /etc/containers/certs.d/${registry}/ca.crt (or, knowingly, turn TLS verification off for it)`,
        cause: e,
      },
    );
  }
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return new RegistryError(MirrorError.REGISTRY_UNREACHABLE, `cannot reach ${registry}: ${code}`, {
      registry,
      temporary: true,
      where: what,
      hint: 'check the host and port, DNS, and that the registry is running',
      cause: e,
    });
  }
  return new RegistryError(
    MirrorError.REGISTRY_NETWORK,
    `network error talking to ${registry}: ${messageOf(e)}`,
    {
      registry,
      temporary: true,
      where: what,
      cause: e,
    },
  );
}
