/**
 * The bastion registry's config.yml: CNCF distribution configuration with TLS, htpasswd auth and
 * filesystem storage, the paths as the container sees them.
 */
import { IN_CONTAINER } from './layout.js';

/**
 * The registry's config.yml (CNCF distribution, version 0.1), with the paths as the container sees
 * them. `http.secret` signs upload state; it is random, and makes this file a secret.
 */
export function registryConfig(opts: {
  port: number;
  secret: string;
  realm: string;
}): Record<string, unknown> {
  return {
    version: 0.1,
    log: { fields: { service: 'registry' } },
    storage: {
      filesystem: { rootdirectory: IN_CONTAINER.storage },
      delete: { enabled: true },
      cache: { blobdescriptor: 'inmemory' },
    },
    http: {
      addr: `:${opts.port}`,
      secret: opts.secret,
      headers: { 'X-Content-Type-Options': ['nosniff'] },
      tls: { certificate: IN_CONTAINER.certificate, key: IN_CONTAINER.key },
    },
    auth: { htpasswd: { realm: opts.realm, path: IN_CONTAINER.htpasswd } },
    health: { storagedriver: { enabled: true, interval: '10s', threshold: 3 } },
    // distribution 3 (registry:3) accepts an index whose platform manifests are not all pushed
    // (a mirror keeps only the architectures it needs); distribution 2 ignores this key.
    validation: { manifests: { indexes: { platforms: 'none' } } },
  };
}
