/**
 * A release signature store on loopback, laid out as the real one
 * (`<url>/sha256=<hex>/signature-<n>`; 404 for anything it does not hold, or 403 as GCS-hosted
 * stores answer), over HTTP or HTTPS (the lab PKI's server certificate), with a request log and
 * fault switches: answer an error status to the next N requests, or stop (connections refused).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { CertKeyPair } from '../src/certs/mint.js';

export interface SignatureStoreOptions {
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Serve HTTPS with this certificate (e.g. lab/pki.ts testServerCertificate()). */
  tls?: CertKeyPair;
  /** The status of a missing signature: 404 (default) or 403, as a GCS bucket answers. */
  absentStatus?: 404 | 403;
}

export interface SignatureStore {
  /** The store's base URL (what --signature-url takes). */
  url: string;
  /** Add signatures of a release digest (numbered after those it already has). */
  put(digest: string, ...signatures: Uint8Array[]): void;
  /** Paths requested, in order (below the host, e.g. `/signatures/sha256=…/signature-1`). */
  requests: string[];
  /** Answer `status` (default 500) to the next `n` requests. */
  failNext(n: number, status?: number): void;
  /** Stop listening: the URL then refuses connections. */
  stop(): Promise<void>;
}

const SIGNATURE_PATH = /^\/signatures\/(sha256)=([0-9a-f]{64})\/signature-(\d+)$/;

export async function startSignatureStore(o: SignatureStoreOptions = {}): Promise<SignatureStore> {
  const host = o.host ?? '127.0.0.1';
  const held = new Map<string, Uint8Array[]>();
  const requests: string[] = [];
  let failures = 0;
  let failStatus = 500;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    if (failures > 0) {
      failures--;
      res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('injected failure');
      return;
    }
    const m = SIGNATURE_PATH.exec(path);
    const sig = m ? held.get(`${m[1]}:${m[2]}`)?.[Number(m[3]) - 1] : undefined;
    if (!sig || req.method !== 'GET') {
      res.writeHead(sig ? 405 : (o.absentStatus ?? 404), { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': sig.length }).end(sig);
  };
  const server = o.tls
    ? createHttpsServer({ cert: o.tls.certPem, key: o.tls.keyPem }, handle)
    : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const scheme = o.tls ? 'https' : 'http';
  return {
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}/signatures`,
    put: (digest, ...signatures) => held.set(digest, [...(held.get(digest) ?? []), ...signatures]),
    requests,
    failNext: (n, status = 500) => {
      failures = n;
      failStatus = status;
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
