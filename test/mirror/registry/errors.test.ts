/**
 * RegistryError as a real registry (Debian's docker-registry) produces it: the distribution error
 * code of the answer body, the HTTP status and `temporary` as fields, with the AirgapError code,
 * message and JSON output unchanged. Temporary failures (503, 429, a reset) are injected by the
 * fault proxy in front of the same registry.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RegistryError } from '../../../src/mirror/index.js';
import { RegistryClient } from '../../../src/mirror/registry/client.js';
import { AirgapError } from '../../../src/util/errors.js';
import { startFaultProxy, type FaultProxy } from '../../helpers/fault-proxy.js';
import { clientFor, seedRegistry, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { testCertificates } from '../../helpers/tls.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const MISSING = `sha256:${'0'.repeat(64)}`;

async function failure(p: Promise<unknown>): Promise<RegistryError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(RegistryError);
  return e as RegistryError;
}

describe('RegistryError from a real registry', () => {
  let reg: TestRegistry;
  let proxy: FaultProxy;
  let proxied: RegistryClient;

  beforeAll(async () => {
    reg = await startRegistry();
    await seedRegistry(reg, [{ repo: 'err/app', tag: 'v1', layers: [{ size: 1024 }] }]);
    proxy = await startFaultProxy({ target: reg.url, caFile: reg.caFile, tls: testCertificates().server });
    const authFile = join(await tempDir(), 'auth.json');
    const auth = Buffer.from(`${reg.username}:${reg.password}`).toString('base64');
    await writeFile(authFile, JSON.stringify({ auths: { [proxy.host]: { auth } } }), { mode: 0o600 });
    proxied = new RegistryClient(proxy.host, {
      caFiles: [reg.caFile],
      certDirs: [],
      credentials: { authFile },
      retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 },
    });
  });

  afterAll(async () => {
    await proxied?.close();
    await Promise.all([proxy?.stop(), reg?.stop()]);
  });

  beforeEach(() => proxy.setRules([]));

  it('a manifest that does not exist: MANIFEST_UNKNOWN, 404, not temporary; code and output as before', async () => {
    const client = clientFor(reg);
    const e = await failure(client.getManifest('err/app', MISSING));
    await client.close();
    expect(e).toBeInstanceOf(AirgapError);
    expect(e.registryCode).toBe('MANIFEST_UNKNOWN');
    expect(e.hasRegistryCode('MANIFEST_UNKNOWN')).toBe(true);
    expect(e.status).toBe(404);
    expect(e.temporary).toBe(false);
    expect(e.registry).toBe(reg.host);
    expect(e.code).toBe(MirrorError.REGISTRY_NOT_FOUND);
    expect(e.exitCode).toBe(1);
    expect(e.message).toMatch(
      new RegExp(`^manifest ${reg.host}/err/app@${MISSING} does not exist \\(MANIFEST_UNKNOWN .+\\)$`),
    );
    // The --json output carries what it carried before: no new keys.
    expect(Object.keys(e.toJSON()).sort()).toEqual(['code', 'details', 'hint', 'message']);
    expect(e.details).toEqual({ status: 404, registry: reg.host });
  });

  it('tags of a repository that does not exist: NAME_UNKNOWN; a missing blob: BLOB_UNKNOWN', async () => {
    const client = clientFor(reg);
    const name = await failure(client.listTags('err/none'));
    const blob = await failure(client.openBlob('err/app', MISSING));
    await client.close();
    expect(name).toMatchObject({ registryCode: 'NAME_UNKNOWN', status: 404, temporary: false });
    expect(blob).toMatchObject({ registryCode: 'BLOB_UNKNOWN', status: 404, temporary: false });
    expect(blob.code).toBe(MirrorError.REGISTRY_NOT_FOUND);
  });

  it('a 503 that outlasts the retries is temporary, with the registry code of the answer', async () => {
    proxy.setRules([{ match: { path: /\/manifests\// }, fault: 'status', status: 503, times: Infinity }]);
    const e = await failure(proxied.getManifest('err/app', 'v1'));
    expect(e).toMatchObject({
      code: MirrorError.REGISTRY_ERROR,
      status: 503,
      temporary: true,
      registryCode: 'UNAVAILABLE',
    });
    expect(e.message).toContain(`${proxy.host} answered 503 to GET for manifest ${proxy.host}/err/app:v1`);
    expect(proxy.stats().byRule[0]).toBe(2); // both attempts were answered 503
  });

  it('a 429 (with Retry-After) that outlasts the retries is temporary: REGISTRY_RATE_LIMITED', async () => {
    proxy.setRules([
      { match: { path: /\/manifests\// }, fault: 'retry-after', retryAfterSeconds: 0, times: Infinity },
    ]);
    const e = await failure(proxied.getManifest('err/app', 'v1'));
    expect(e).toMatchObject({
      code: MirrorError.REGISTRY_RATE_LIMITED,
      status: 429,
      temporary: true,
      registryCode: 'TOOMANYREQUESTS',
    });
  });

  it('a connection reset on every attempt is temporary, without a status', async () => {
    proxy.setRules([{ match: { path: /\/manifests\// }, fault: 'reset', times: Infinity }]);
    const e = await failure(proxied.getManifest('err/app', 'v1'));
    expect(e).toMatchObject({ code: MirrorError.REGISTRY_NETWORK, temporary: true, status: undefined });
    expect(e.registryErrors).toEqual([]);
  });

  it('the same request succeeds once the faults stop', async () => {
    expect((await proxied.getManifest('err/app', 'v1')).digest).toMatch(/^sha256:/);
  });

  it('a certificate that does not verify is final (not temporary)', async () => {
    const strict = new RegistryClient(reg.host, { certDirs: [], retry: { attempts: 1 } });
    const e = await failure(strict.ping());
    await strict.close();
    expect(e).toMatchObject({ code: MirrorError.REGISTRY_TLS, temporary: false, status: undefined });
  });
});
