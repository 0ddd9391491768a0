/**
 * Which cluster a cluster command talks to, said plainly when it cannot be found: no kubeconfig
 * at all (client-node would quietly try http://localhost:8080), and a --context the kubeconfig
 * does not have. Through the real CLI; nothing is contacted.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: hub
    cluster: { server: 'https://127.0.0.1:1' }
users:
  - name: admin
    user: { token: not-a-real-token }
contexts:
  - name: hub-admin
    context: { cluster: hub, user: admin }
current-context: hub-admin
`;

describe('the kubeconfig of cluster commands', () => {
  it('none anywhere: "no kubeconfig", exit 2, not a connection error to localhost:8080', async () => {
    const home = await tempDir('airgap-home-');
    const r = await airgap(['cluster', 'status', '--name', 'hosted', '--namespace', 'clusters'], {
      env: { HOME: home, KUBECONFIG: '' },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error [KUBECONFIG_MISSING]: no kubeconfig: set KUBECONFIG or --kubeconfig');
    expect(r.stderr).not.toMatch(/localhost|8080|ECONNREFUSED/);
  });

  it('an unknown --context is named, with the contexts there are', async () => {
    const dir = await tempDir('airgap-kubeconfig-');
    const file = join(dir, 'hub.kubeconfig');
    await writeFile(file, KUBECONFIG, { mode: 0o600 });
    const r = await airgap([
      'cluster',
      'status',
      '--name',
      'hosted',
      '--namespace',
      'clusters',
      '--kubeconfig',
      file,
      '--context',
      'hub-admim',
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'error [KUBECONFIG_NO_CONTEXT]: the kubeconfig has no context named hub-admim',
    );
    expect(r.stderr).toContain('its contexts: hub-admin');
    expect(r.stderr).not.toContain('not-a-real-token');
  });
});
