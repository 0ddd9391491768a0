/**
 * A kubeconfig for the hub simulator's API server: one cluster (server URL and the CA that signed its
 * certificate, inline as certificate-authority-data), one user with a bearer token, one context
 * (with a default namespace when given), current.
 */
import { dump } from 'js-yaml';

export interface KubeconfigOptions {
  /** `https://127.0.0.1:6443` */
  server: string;
  /** PEM of the CA that signed the server certificate. */
  caPem: string;
  token: string;
  /** The name of the cluster, user and context. */
  name: string;
  namespace?: string;
}

/** The kubeconfig YAML (see the file comment). */
export function kubeconfigYaml(opts: KubeconfigOptions): string {
  return dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: opts.name,
          cluster: {
            server: opts.server,
            'certificate-authority-data': Buffer.from(opts.caPem, 'utf8').toString('base64'),
          },
        },
      ],
      users: [{ name: opts.name, user: { token: opts.token } }],
      contexts: [
        {
          name: opts.name,
          context: {
            cluster: opts.name,
            user: opts.name,
            ...(opts.namespace ? { namespace: opts.namespace } : {}),
          },
        },
      ],
      'current-context': opts.name,
      preferences: {},
    },
    { lineWidth: -1 },
  );
}
