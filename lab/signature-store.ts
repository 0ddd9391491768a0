/**
 * A release signature store on loopback, laid out as the real one
 * (`/sha256=<hex>/signature-<n>`; 404 for anything it does not hold), with a request log and a
 * fault switch (answer 500 to the next N requests).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SignatureStore {
  /** The store's base URL (what --signature-url takes). */
  url: string;
  /** Add signatures of a release digest (numbered after those it already has). */
  put(digest: string, ...signatures: Uint8Array[]): void;
  /** Paths requested, in order. */
  requests: string[];
  /** Answer 500 to the next `n` requests. */
  failNext(n: number): void;
  stop(): Promise<void>;
}

export async function startSignatureStore(host = '127.0.0.1'): Promise<SignatureStore> {
  const held = new Map<string, Uint8Array[]>();
  const requests: string[] = [];
  let failures = 0;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    if (failures > 0) {
      failures--;
      res.writeHead(500).end('injected failure');
      return;
    }
    const m = /^\/signatures\/(sha256)=([0-9a-f]{64})\/signature-(\d+)$/.exec(path);
    const sig = m ? held.get(`${m[1]}:${m[2]}`)?.[Number(m[3]) - 1] : undefined;
    if (!sig) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': sig.length }).end(sig);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/signatures`,
    put: (digest, ...signatures) => held.set(digest, [...(held.get(digest) ?? []), ...signatures]),
    requests,
    failNext: (n) => {
      failures = n;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
