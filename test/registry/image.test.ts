/**
 * The registry image from what a user carried: an OCI layout directory (as `airgap mirror` writes,
 * entries named `<repo>:<tag>`) loaded into a real podman and named as the unit runs it; loaded
 * once (a second look finds it); a name the layout does not hold is podman's error, said.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildRegistryImageArchive,
  podman,
  podmanCleanup,
  podmanEnv,
  type PodmanEnv,
} from '../../lab/podman.js';
import { ensureImage, imageSource } from '../../src/registry/image.js';
import { tempDir } from '../helpers/fixtures.js';

describe('the registry image from an OCI layout', () => {
  let env: PodmanEnv;
  let layout: string;
  const saved = { ...process.env };
  beforeAll(async () => {
    const root = await tempDir('airgap-image-');
    env = podmanEnv(join(root, 'podman'));
    // The product runs podman with its own environment: this process's.
    Object.assign(process.env, env);
    layout = await buildRegistryImageArchive({ env, dir: join(root, 'carried'), format: 'oci-dir' });
    // Named as airgap mirror names layout entries: <repo>:<tag>, with '/' and ':'.
    const indexFile = join(layout, 'index.json');
    const index = JSON.parse(await readFile(indexFile, 'utf8')) as {
      manifests: { annotations?: Record<string, string> }[];
    };
    index.manifests[0]!.annotations = { 'org.opencontainers.image.ref.name': 'mirror/registry:2.8' };
    await writeFile(indexFile, JSON.stringify(index));
  }, 120_000);
  afterAll(async () => {
    await podmanCleanup(env);
    process.env = saved;
  });

  it('loads DIR:NAME once, under the name the unit runs', async () => {
    const ref = 'localhost/bastion/registry:from-layout';
    const source = await imageSource(ref, undefined, `${layout}:mirror/registry:2.8`);
    expect(source).toMatchObject({ kind: 'layout', path: layout, refName: 'mirror/registry:2.8' });
    expect(source!.command).toBe(`podman pull oci:${layout}:mirror/registry:2.8`);
    const step = await ensureImage(ref, source);
    expect(step).toMatchObject({ step: 'image', status: 'changed', message: `loaded ${ref} from ${layout}` });
    expect(await podman(env, ['image', 'inspect', '--format', '{{.Config.Entrypoint}}', ref])).toContain(
      'registry',
    );
    // Only under that name: the link podman read the layout through leaves no name behind.
    expect(await podman(env, ['images', '--format', '{{.Repository}}:{{.Tag}}'])).not.toContain(
      'airgap-layout',
    );
    // podman has it now: nothing to load the second time.
    expect(await imageSource(ref, undefined, `${layout}:mirror/registry:2.8`)).toBeUndefined();
  });

  it('says what podman said when the layout has no such entry, naming the layout', async () => {
    const source = await imageSource('localhost/bastion/registry:other', undefined, `${layout}:no/such:1`);
    await expect(ensureImage('localhost/bastion/registry:other', source)).rejects.toMatchObject({
      code: 'REGISTRY_PODMAN_FAILED',
      message: expect.stringContaining(`podman pull --quiet oci:${layout}:no/such:1 failed`) as unknown,
    });
  });

  it('refuses a layout path that is not there, before podman runs', async () => {
    await expect(imageSource('localhost/x:1', undefined, '/nonexistent/layout:a:b')).rejects.toMatchObject({
      code: 'REGISTRY_IMAGE_SOURCE_INVALID',
      exitCode: 2,
    });
  });
});
