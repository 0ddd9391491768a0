/**
 * Putting the image server on the network: one port on several addresses, plain HTTP or TLS, and a
 * graceful stop.
 *
 * - Addresses: by default `::` with IPv6-only off, which takes IPv4 and IPv6 on every interface
 *   with one socket (`0.0.0.0` when the host has no IPv6). Otherwise every `--address`: an IPv4
 *   or IPv6 literal (brackets allowed), or a host name, which is resolved and bound on each of its
 *   addresses. All bindings share the port; with port 0 the first binding picks it.
 * - Problems are errors a person can act on: a port in use is exit 1 naming the port and address,
 *   an address this host does not have (or a name that does not resolve) is exit 2 naming it.
 * - TLS: the certificate file (leaf first, a chain may follow) and its key are read and checked to
 *   belong together (node's X509Certificate.checkPrivateKey) and to be valid now; names the
 *   certificate does not cover are warnings.
 * - close(grace): stop accepting, answer new requests on open connections with 503, let downloads
 *   in flight finish for up to `grace` ms, then cut what is left.
 */
import type { X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { EXPIRY_WARNING_DAYS, readCertificates, readPrivateKeyFile } from '../certs/index.js';
import { AirgapError, usageError } from '../util/errors.js';
import {
  createImageServer,
  resolveServeRoot,
  serverForAnotherAddress,
  type AccessLogEntry,
  type ServerLimits,
} from './static.js';
import { ServerError } from './errors.js';

/** The default port of `airgap serve-images`. */
export const DEFAULT_PORT = 8080;
/** How long downloads in flight may take to finish after a stop is asked for, by default. */
export const DEFAULT_GRACE_MS = 30_000;

export interface ServeImagesOptions {
  /** The directory to serve. */
  dir: string;
  /** Default {@link DEFAULT_PORT}; 0 picks a free port. */
  port?: number;
  /** IP literals or host names; default: IPv4 and IPv6 on every address. */
  addresses?: string[];
  /** PEM certificate (leaf first) and key files: serve HTTPS. */
  tls?: { certFile: string; keyFile: string };
  accessLog?: (line: string) => void;
  onRequestLog?: (entry: AccessLogEntry) => void;
  limits?: Partial<ServerLimits>;
  /** Bytes per read and write, and per download's buffer. */
  chunkBytes?: number;
  /** List directories (HTML or JSON); default off, a directory is 404. */
  directoryListing?: boolean;
}

/** One listening socket. */
export interface Binding {
  address: string;
  family: 'IPv4' | 'IPv6';
  port: number;
  /** `::` with IPv6-only off: IPv4 too. */
  dualStack: boolean;
  /** What was asked for: the --address value, or `default`. */
  requested: string;
}

export interface RunningImageServer {
  /** The served directory (real path). */
  root: string;
  port: number;
  tls: boolean;
  bindings: Binding[];
  /**
   * Base URLs clients can use, ending in `/`: per host name asked for, its name; per IP, the IP;
   * for a wildcard, every address of this host (IPv4 first, loopback last, no link-local).
   */
  urls: string[];
  /** Things a person should know (a name the certificate does not cover, expiry soon). */
  warnings: string[];
  app: FastifyInstance;
  /**
   * Stop: no new connections, 503 for new requests on open ones, downloads in flight get up to
   * `graceMs` (default {@link DEFAULT_GRACE_MS}) to finish. `forced` when some were cut.
   */
  close(graceMs?: number): Promise<{ forced: boolean }>;
}

/** A certificate and key to serve with, read and checked. */
export interface ServerTls {
  /** The whole certificate file (leaf and any chain). */
  cert: Buffer;
  key: Buffer;
  leaf: X509Certificate;
  warnings: string[];
}

/**
 * Read `--tls-cert` and `--tls-key` and check they belong together and that the certificate is
 * valid now. Usage errors (exit 2) name the file.
 */
export async function loadServerTls(certFile: string, keyFile: string, now = new Date()): Promise<ServerTls> {
  const chain = await readCertificates(certFile, '--tls-cert');
  const { key, bytes } = await readPrivateKeyFile(keyFile, '--tls-key');
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(key))
    throw usageError(
      ServerError.TLS_KEY_MISMATCH,
      `--tls-key ${keyFile} is not the key of --tls-cert ${certFile}`,
      {
        where: keyFile,
        hint: 'give the tls.key written together with the certificate (airgap certs issue writes both)',
      },
    );
  const notAfter = new Date(leaf.validTo);
  const notBefore = new Date(leaf.validFrom);
  if (notAfter < now)
    throw usageError(
      ServerError.TLS_CERT_EXPIRED,
      `--tls-cert ${certFile} expired on ${notAfter.toISOString()}`,
      {
        where: certFile,
        hint: 'issue a new one: airgap certs issue --ca <dir> --san <name> -o <dir>',
      },
    );
  if (notBefore > now)
    throw usageError(
      ServerError.TLS_CERT_NOT_YET_VALID,
      `--tls-cert ${certFile} is not valid before ${notBefore.toISOString()}`,
      { where: certFile, hint: "check this host's clock" },
    );
  const warnings: string[] = [];
  const days = Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000);
  if (days < EXPIRY_WARNING_DAYS)
    warnings.push(`the certificate ${certFile} expires in ${days} days (${notAfter.toISOString()})`);
  return { cert: await readFile(certFile), key: bytes, leaf, warnings };
}

/** Where to bind: an IP, with what was asked for. */
export interface BindTarget {
  address: string;
  /** For `::`: take IPv4 too (when no IPv4 address is bound on its own). */
  dualStack: boolean;
  requested: string;
  /** The host name it came from, if any. */
  hostname?: string;
}

/**
 * The addresses to bind for `--address` values: IP literals as they are (brackets removed), host
 * names resolved to every address they have. No values: `::` dual-stack. Duplicates go.
 */
async function resolveBindAddresses(values: string[] = []): Promise<BindTarget[]> {
  if (values.length === 0) return [{ address: '::', dualStack: true, requested: 'default' }];
  const targets: BindTarget[] = [];
  for (const raw of values) {
    const value = raw.trim();
    const unbracketed = /^\[(.*)\]$/.exec(value)?.[1] ?? value;
    if (isIP(unbracketed)) {
      targets.push({ address: unbracketed, dualStack: false, requested: raw });
      continue;
    }
    if (!/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/.test(value))
      throw usageError(
        ServerError.SERVE_ADDRESS_INVALID,
        `--address ${raw} is neither an IP address nor a host name`,
        {
          where: `--address ${raw}`,
          hint: 'give an IPv4 address (192.168.126.1), an IPv6 address (2620:52::1 or [2620:52::1]) or a host name',
        },
      );
    let found: { address: string; family: number }[];
    try {
      found = await lookup(value, { all: true, verbatim: true });
    } catch (e) {
      throw usageError(
        ServerError.SERVE_ADDRESS_UNKNOWN,
        `--address ${raw}: the host name does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        {
          where: `--address ${raw}`,
          hint: 'check the name in /etc/hosts or DNS, or give the IP address',
        },
      );
    }
    for (const f of found)
      targets.push({ address: f.address, dualStack: false, requested: raw, hostname: value });
  }
  const seen = new Set<string>();
  const unique = targets.filter((t) => !seen.has(t.address) && seen.add(t.address));
  // `::` takes IPv4 too unless an IPv4 address is bound on its own (that would collide).
  const anyV4 = unique.some((t) => isIP(t.address) === 4);
  for (const t of unique) if (t.address === '::') t.dualStack = !anyV4;
  return unique;
}

function hostPart(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

function urlOf(scheme: 'http' | 'https', host: string, port: number): string {
  const standard = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  return `${scheme}://${host}${standard ? '' : `:${port}`}/`;
}

/** This host's addresses for a wildcard binding: IPv4 first, then IPv6, loopback last, no link-local. */
function localAddresses(v4: boolean, v6: boolean): string[] {
  const all = Object.values(networkInterfaces()).flatMap((l) => l ?? []);
  const pick = (family: 'IPv4' | 'IPv6', internal: boolean) =>
    all
      .filter(
        (a) => a.family === family && a.internal === internal && !a.address.toLowerCase().startsWith('fe80:'),
      )
      .map((a) => a.address);
  return [
    ...(v4 ? pick('IPv4', false) : []),
    ...(v6 ? pick('IPv6', false) : []),
    ...(v4 ? pick('IPv4', true) : []),
    ...(v6 ? pick('IPv6', true) : []),
  ];
}

/** Turn a listen error into one a person can act on. */
function listenError(e: unknown, t: BindTarget, port: number): AirgapError {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${hostPart(t.address)}:${port}`;
  const named =
    t.requested === 'default'
      ? `every address (${hostPart(t.address)})`
      : t.hostname
        ? `${t.address} (from ${t.hostname})`
        : t.address;
  switch (code) {
    case 'EADDRINUSE':
      return new AirgapError(ServerError.SERVE_PORT_IN_USE, `port ${port} is already in use on ${named}`, {
        where,
        hint: `stop what listens there (\`ss -ltnp 'sport = :${port}'\` shows it) or choose another --port`,
        cause: e,
      });
    case 'EADDRNOTAVAIL':
      return usageError(ServerError.SERVE_ADDRESS_NOT_LOCAL, `${named} is not an address of this host`, {
        where: `--address ${t.requested}`,
        hint: "give an address of one of this host's interfaces (`ip -br addr` lists them), or leave out --address to listen on all of them",
        cause: e,
      });
    case 'EAFNOSUPPORT':
      return usageError(
        ServerError.SERVE_ADDRESS_FAMILY,
        `cannot listen on ${named}: this host has no IPv6`,
        {
          where: `--address ${t.requested}`,
          hint: 'give an IPv4 address',
          cause: e,
        },
      );
    case 'EACCES':
    case 'EPERM':
      return usageError(ServerError.SERVE_PORT_DENIED, `port ${port} needs privileges on ${named}`, {
        where,
        hint: 'run as root (or with CAP_NET_BIND_SERVICE), or choose a --port above 1023',
        cause: e,
      });
    default:
      return new AirgapError(
        ServerError.SERVE_LISTEN_FAILED,
        `cannot listen on ${where}: ${(e as Error).message}`,
        {
          where,
          cause: e,
        },
      );
  }
}

function listenOn(server: http.Server, t: BindTarget, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen({ host: t.address, port, ipv6Only: t.address === '::' && !t.dualStack }, () => {
      server.removeListener('error', onError);
      resolve((server.address() as { port: number }).port);
    });
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/**
 * Serve `opts.dir` read-only on every address asked for. Resolves once every binding listens; the
 * returned server's `urls` say where. Errors: {@link AirgapError}s naming the directory, file,
 * address or port (exit 2 for what the person gave wrong, 1 for a port in use).
 */
export async function serveImages(opts: ServeImagesOptions): Promise<RunningImageServer> {
  const port = opts.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError(ServerError.SERVE_PORT_INVALID, `--port ${port} is not a port number`, {
      hint: 'give a number from 1 to 65535 (0 picks a free port)',
    });
  const root = await resolveServeRoot(opts.dir);
  const tls = opts.tls ? await loadServerTls(opts.tls.certFile, opts.tls.keyFile) : undefined;
  let targets = await resolveBindAddresses(opts.addresses);
  const warnings = [...(tls?.warnings ?? [])];
  if (tls) {
    for (const t of targets) {
      const name = t.hostname ?? t.address;
      if (t.address === '::' || t.address === '0.0.0.0') continue;
      const covered = isIP(name) ? tls.leaf.checkIP(name) : tls.leaf.checkHost(name);
      if (covered === undefined)
        warnings.push(
          `the certificate does not cover ${name}: clients that reach the server by it will refuse it`,
        );
    }
  }
  const app = createImageServer({
    root,
    ...(opts.accessLog ? { accessLog: opts.accessLog } : {}),
    ...(opts.onRequestLog ? { onRequestLog: opts.onRequestLog } : {}),
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.chunkBytes ? { chunkBytes: opts.chunkBytes } : {}),
    ...(opts.directoryListing ? { directoryListing: true } : {}),
  });
  const extra: http.Server[] = [];
  const bindings: Binding[] = [];
  let bound = port;
  try {
    await app.ready();
    for (const [i, t] of targets.entries()) {
      const server = i === 0 ? app.server : serverForAnotherAddress(app);
      try {
        bound = await listenOn(server, t, bound);
      } catch (e) {
        // A host without IPv6: the default falls back to IPv4 on every address.
        const code = (e as NodeJS.ErrnoException).code;
        if (t.requested === 'default' && (code === 'EAFNOSUPPORT' || code === 'EADDRNOTAVAIL')) {
          targets = [{ address: '0.0.0.0', dualStack: false, requested: 'default' }];
          bound = await listenOn(server, targets[0]!, bound).catch((e2: unknown) => {
            throw listenError(e2, targets[0]!, bound);
          });
          bindings.push({
            address: '0.0.0.0',
            family: 'IPv4',
            port: bound,
            dualStack: false,
            requested: 'default',
          });
          break;
        }
        throw listenError(e, t, bound);
      }
      if (i > 0) extra.push(server);
      bindings.push({
        address: t.address,
        family: isIP(t.address) === 6 ? 'IPv6' : 'IPv4',
        port: bound,
        dualStack: t.address === '::' && t.dualStack,
        requested: t.requested,
      });
    }
  } catch (e) {
    await Promise.all([closeServer(app.server), ...extra.map(closeServer)]);
    await app.close().catch(() => undefined); // the bind failure below is the one to report
    throw e;
  }

  const scheme = tls ? 'https' : 'http';
  const urls: string[] = [];
  for (const b of bindings) {
    const t = targets.find((x) => x.address === b.address);
    if (t?.hostname) urls.push(urlOf(scheme, t.hostname.replace(/\.$/, ''), b.port));
    else if (b.address === '::' || b.address === '0.0.0.0')
      for (const a of localAddresses(b.address === '0.0.0.0' || b.dualStack, b.address === '::'))
        urls.push(urlOf(scheme, hostPart(a), b.port));
    else urls.push(urlOf(scheme, hostPart(b.address), b.port));
  }

  let closing: Promise<{ forced: boolean }> | undefined;
  let cutNow = () => undefined as void;
  const close = (graceMs = DEFAULT_GRACE_MS) => {
    if (closing) {
      // Asked again with no grace: cut what is left now.
      if (graceMs <= 0) cutNow();
      return closing;
    }
    closing = (async () => {
      const servers = [app.server, ...extra];
      let forced = false;
      cutNow = () => {
        forced = true;
        for (const s of servers) s.closeAllConnections();
      };
      const cut = setTimeout(cutNow, graceMs);
      // Connections that go idle once their download ends are closed at once.
      const sweep = setInterval(() => {
        for (const s of servers) s.closeIdleConnections();
      }, 100);
      try {
        // fastify first: from now on a new request on an open connection gets 503 and a close.
        await app.close();
        await Promise.all(servers.map(closeServer));
      } finally {
        clearTimeout(cut);
        clearInterval(sweep);
      }
      return { forced };
    })();
    return closing;
  };

  return { root, port: bound, tls: Boolean(tls), bindings, urls: [...new Set(urls)], warnings, app, close };
}
