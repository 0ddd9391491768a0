/**
 * The install's pinning of the mirrored default catalogs (HyperShift takes them only by digest),
 * against a real registry: a tag is pinned to its digest, a catalog the mirror does not hold is
 * left out, and a mirror that refuses the pull secret is an error naming the catalog image (an
 * install), or a line saying what was left unpinned (a render without the hub) — never a catalog
 * silently left unpinned.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { pinCatalogImages } from '../../src/cluster/prepare.js';
import { ClusterError } from '../../src/cluster/errors.js';
import type { CatalogOverrides } from '../../src/cluster/site/types.js';
import { seedRegistry, tempDir } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

describe('pinCatalogImages', () => {
  let reg: TestRegistry;
  let dir: string;
  let built: BuiltImage[];
  let overrides: CatalogOverrides;

  const pullSecret = async (name: string, password: string) => {
    const file = join(dir, name);
    const auth = Buffer.from(`${reg.username}:${password}`).toString('base64');
    await writeFile(file, JSON.stringify({ auths: { [reg.host]: { auth } } }), { mode: 0o600 });
    return file;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    dir = await tempDir('airgap-pin-');
    built = await seedRegistry(reg, [
      { repo: 'redhat/redhat-operator-index', tag: 'v4.18', layers: [{ size: 2000 }] },
      { repo: 'redhat/certified-operator-index', tag: 'v4.18', layers: [{ size: 2000 }] },
    ]);
    overrides = {
      images: {
        'redhat-operators': `${reg.host}/redhat/redhat-operator-index:v4.18`,
        'certified-operators': `${reg.host}/redhat/certified-operator-index:v4.18`,
        // Not mirrored: the registry says it is not there (404).
        'community-operators': `${reg.host}/redhat/community-operator-index:v4.18`,
      },
      registryOverrides: [{ source: 'registry.redhat.io/redhat', mirror: `${reg.host}/redhat` }],
    };
  }, 60_000);
  afterAll(async () => {
    await reg?.stop();
  });

  it('pins each tag to its digest and leaves out a catalog the mirror does not hold', async () => {
    const file = await pullSecret('good.json', reg.password);
    const { overrides: pinned, unpinned } = await pinCatalogImages(overrides, file, {
      caFiles: [reg.caFile],
    });
    expect(pinned.images).toEqual({
      'redhat-operators': `${reg.host}/redhat/redhat-operator-index@${built[0]!.digest}`,
      'certified-operators': `${reg.host}/redhat/certified-operator-index@${built[1]!.digest}`,
    });
    expect(pinned.registryOverrides).toEqual(overrides.registryOverrides);
    expect(unpinned).toEqual([]);
  });

  it('a mirror that refuses the pull secret: an error naming the catalog image and the cause', async () => {
    const file = await pullSecret('refused.json', 'not-the-password');
    const failure = await pinCatalogImages(overrides, file, { caFiles: [reg.caFile] }).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message: string; cause?: unknown },
    );
    expect(failure, 'the catalog was left unpinned without a word').toBeDefined();
    expect(failure!.code).toBe(ClusterError.PULL_SECRET_REFUSED);
    expect(failure!.message).toContain(`the mirrored catalog ${reg.host}/redhat/redhat-operator-index:v4.18`);
    expect(failure!.message).toMatch(/refused the pull secret's credentials/);
    expect(failure!.cause).toBeDefined();
  });

  it('a render without the hub goes on, and says which catalog it left unpinned and why', async () => {
    const file = await pullSecret('refused-render.json', 'not-the-password');
    const { overrides: pinned, unpinned } = await pinCatalogImages(
      overrides,
      file,
      { caFiles: [reg.caFile] },
      true,
    );
    expect(pinned.images).toBeUndefined();
    expect(unpinned).toHaveLength(3);
    expect(unpinned[0]).toContain(`${reg.host}/redhat/redhat-operator-index:v4.18 cannot be pinned`);
  });
});
