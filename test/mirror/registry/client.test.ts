import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AirgapError } from '../../../src/util/errors.js';
import { clientFor, seedRegistry } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoListTags } from '../../helpers/skopeo.js';
import { RegistryClient } from '../../../src/mirror/registry/client.js';
import { MirrorError } from '../../../src/mirror/errors.js';

describe('RegistryClient against a real registry', () => {
  let reg: TestRegistry;

  beforeAll(async () => {
    reg = await startRegistry({ host: '::1' });
    await seedRegistry(
      reg,
      Array.from({ length: 7 }, (_, i) => ({
        repo: 'paged/app',
        tag: `t${i}`,
        layers: [{ id: 'l', size: 2048 }],
      })),
    );
  });

  afterAll(async () => {
    await reg?.stop();
  });

  it('lists every tag across Link-paginated pages (over IPv6), as skopeo does', async () => {
    const client = clientFor(reg);
    const tags = await client.listTags('paged/app', 2);
    await client.close();
    expect(tags.sort()).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    expect((await skopeoListTags(`docker://${reg.skopeoHost}/paged/app`, reg.skopeo)).sort()).toEqual(tags);
  });

  it('refuses an untrusted certificate by default and accepts it only when told to', async () => {
    const strict = new RegistryClient(reg.host, {
      certDirs: [],
      credentials: { authFile: reg.authFile },
      retry: { attempts: 1 },
    });
    await expect(strict.ping()).rejects.toMatchObject({ code: MirrorError.REGISTRY_TLS });
    await strict.close();
    const lax = new RegistryClient(reg.host, {
      certDirs: [],
      insecureSkipVerify: true,
      credentials: { authFile: reg.authFile },
    });
    await expect(lax.ping()).resolves.toBeUndefined();
    await lax.close();
  });

  it('verifies manifests it fetches by digest and reports a missing one clearly', async () => {
    const client = clientFor(reg);
    const m = await client.getManifest('paged/app', 't0');
    const again = await client.getManifest('paged/app', m.digest);
    expect(again.bytes.equals(m.bytes)).toBe(true);
    const missing = `sha256:${'0'.repeat(64)}`;
    const err = await client.getManifest('paged/app', missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AirgapError);
    expect(err).toMatchObject({ code: MirrorError.REGISTRY_NOT_FOUND });
    expect(await client.headManifest('paged/app', 'no-such-tag')).toBeUndefined();
    await client.close();
  });
});
