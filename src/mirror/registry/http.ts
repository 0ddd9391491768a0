import { readdirSync, readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { join } from 'node:path';
import { Agent } from 'undici';
import { usageError } from '../../util/errors.js';

/**
 * The one HTTP layer: an undici Agent per endpoint, configured from CA files, containers-style
 * `certs.d/<host:port>/` directories and an explicit opt-out of TLS verification. Registry, update
 * graph and boot-image clients all get their dispatcher here.
 */
export interface TlsOptions {
  /** Extra PEM CA files trusted in addition to the system roots (--ca-file). */
  caFiles?: string[];
  /**
   * Directories laid out like /etc/containers/certs.d: `<dir>/<host:port>/*.crt` are CAs,
   * `*.cert` + `*.key` a client certificate. Defaults to the containers and docker system dirs.
   */
  certDirs?: string[];
  /** Skip TLS verification (--src-tls-verify=false / --dest-tls-verify=false). */
  insecureSkipVerify?: boolean;
}

export interface AgentOptions extends TlsOptions {
  /** Concurrent connections to one origin. */
  connections?: number;
}

export const DEFAULT_CERT_DIRS = ['/etc/containers/certs.d', '/etc/docker/certs.d'];

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw usageError('TLS_FILE_UNREADABLE', `cannot read ${what} ${path}: ${(e as Error).message}`, {
      hint: 'check the path and its permissions',
    });
  }
}

/** What certs.d holds for one host: CA PEMs and an optional client certificate. */
export function certsDirMaterial(
  host: string,
  dirs: string[],
): { cas: string[]; cert?: string; key?: string } {
  const cas: string[] = [];
  let cert: string | undefined;
  let key: string | undefined;
  for (const dir of dirs) {
    const hostDir = join(dir, host);
    let names: string[];
    try {
      names = readdirSync(hostDir).sort();
    } catch {
      continue;
    }
    for (const n of names) {
      if (n.endsWith('.crt')) cas.push(readPem(join(hostDir, n), 'CA file'));
      else if (n.endsWith('.cert')) {
        cert = readPem(join(hostDir, n), 'client certificate');
        key = readPem(join(hostDir, n.replace(/\.cert$/, '.key')), 'client key');
      }
    }
  }
  return { cas, cert, key };
}

const contexts = new Map<string, SecureContext>();

/** A TLS context for a set of extra CAs (and client certificate), built once per process. */
function contextFor(cas: string[], cert?: string, key?: string): SecureContext | undefined {
  if (cas.length === 0 && !cert) return undefined; // node's default context: the system roots
  const id = JSON.stringify([cas, cert ?? '', key ?? '']);
  let ctx = contexts.get(id);
  if (!ctx) {
    ctx = createSecureContext({
      ...(cas.length > 0 ? { ca: [...rootCertificates, ...cas] } : {}),
      ...(cert ? { cert, key } : {}),
    });
    contexts.set(id, ctx);
  }
  return ctx;
}

/** An undici Agent for one host. */
export function createAgent(host: string, opts: AgentOptions = {}): Agent {
  const extra = (opts.caFiles ?? []).map((f) => readPem(f, 'CA file'));
  const fromDirs = certsDirMaterial(host, opts.certDirs ?? DEFAULT_CERT_DIRS);
  const custom = [...extra, ...fromDirs.cas];
  // One TLS context per agent: building it parses every root certificate, which costs more CPU
  // than the handshake itself if done per connection.
  const secureContext = contextFor(custom, fromDirs.cert, fromDirs.key);
  return new Agent({
    connections: opts.connections ?? 8,
    keepAliveTimeout: 30_000,
    headersTimeout: 120_000,
    bodyTimeout: 300_000,
    connect: {
      rejectUnauthorized: !opts.insecureSkipVerify,
      ...(secureContext ? { secureContext } : {}),
    },
  });
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** The error code of a network error (undici wraps the socket error in `cause`). */
export function netErrorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('UND_ERR')) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  const top = (e as { code?: unknown })?.code;
  return typeof top === 'string' ? top : undefined;
}

export function isTlsError(e: unknown): boolean {
  const code = netErrorCode(e);
  return (
    code !== undefined && (TLS_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL'))
  );
}
