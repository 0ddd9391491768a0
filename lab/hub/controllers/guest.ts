/**
 * The default guest (hosted cluster) API: a second HTTPS API server over its own store of built-in
 * types (Nodes, Namespaces, ClusterVersion, ...; not the hub's Machines), with a certificate from the lab's test CA for
 * localhost, 127.0.0.1, ::1 and the listen address, and a random bearer token.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { testCertificates, testServerCertificate } from '../../pki.js';
import { HUB_ONLY_GROUPS, builtinTypes } from '../builtin.js';
import { startApiServer, type ApiServer } from '../server.js';
import { createStore } from '../store.js';
import type { HubStore } from '../types.js';
import type { GuestApi } from './context.js';

/**
 * An API server over `store` on `host` (a free port), with a certificate from the lab CA naming
 * localhost, 127.0.0.1, ::1 and the listen address, and a fresh random bearer token. The hub and
 * every guest API start this way.
 */
export async function startLabApi(
  store: HubStore,
  host: string,
): Promise<{ server: ApiServer; token: string; caPem: string }> {
  const token = `sha256~${randomBytes(32).toString('base64url')}`;
  const extra = isIP(host) && host !== '0.0.0.0' && host !== '::' ? [host] : [];
  const cert = await testServerCertificate(extra);
  const server = await startApiServer({
    store,
    host,
    port: 0,
    token,
    tls: { cert: cert.certPem, key: cert.keyPem },
  });
  return { server, token, caPem: testCertificates().ca.certPem };
}

/** Start a guest API server listening on `host` (default 127.0.0.1) on a free port. */
export async function startGuestApi(host = '127.0.0.1'): Promise<GuestApi> {
  const store = createStore(builtinTypes().filter((t) => !HUB_ONLY_GROUPS.includes(t.group)));
  const { server, token, caPem } = await startLabApi(store, host);
  return { url: server.url, caPem, token, store, close: () => server.close() };
}
