/**
 * The Bearer token flow of RegistryClient against a real distribution 2.8 registry configured with
 * token auth, and a real (test) token server that signs JWTs the registry verifies against the CA.
 * Nothing of the client or the protocol is mocked; one test moves the client's clock (Date only).
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildImages, type BuiltImage, type ImageSpec } from '../../../lab/images.js';
import { CopyEngine, type CopySummary } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { sha256Digest } from '../../../src/mirror/digest.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { RegistryClient } from '../../../src/mirror/registry/client.js';
import { AirgapError } from '../../../src/util/errors.js';
import { startFaultProxy } from '../../helpers/fault-proxy.js';
import { tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { skopeoDigest } from '../../helpers/skopeo.js';
import { testPki } from '../../helpers/tls.js';
import { startTokenServer, type TokenServer } from '../../helpers/token-server.js';
import { rejection } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const PASSWORDS = {
  mirror: `mirror-${randomBytes(8).toString('hex')}`,
  reader: `reader-${randomBytes(8).toString('hex')}`,
};

/** Layer and config digests of an image manifest. */
function blobDigests(manifest: Buffer): string[] {
  const doc = JSON.parse(manifest.toString('utf8')) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  return [doc.config.digest, ...doc.layers.map((l) => l.digest)];
}

/**
 * Statuses the registry's access log shows for `METHOD path…` requests (path prefix), in order,
 * from the log text after `mark`; waits (up to 2 s, by the real clock: a test may fake Date) until
 * at least `atLeast` have been written.
 */
async function logged(reg: TestRegistry, mark: number, request: string, atLeast: number): Promise<number[]> {
  const [method, prefix] = request.split(' ') as [string, string];
  const read = () => {
    const lines = reg
      .logs()
      .slice(mark)
      .matchAll(/"(\w+) (\S+) HTTP\/[\d.]+" (\d{3}) /g);
    return [...lines].filter((m) => m[1] === method && m[2]!.startsWith(prefix)).map((m) => Number(m[3]));
  };
  const deadline = performance.now() + 2000;
  while (read().length < atLeast && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return read();
}

/** Everything an error shows a person or a --json consumer. */
function shown(e: AirgapError): string {
  return `${e.describe()}\n${JSON.stringify(e.toJSON())}`;
}

describe('RegistryClient with Bearer tokens from a token server (real distribution registry)', () => {
  let ts: TokenServer;
  let reg: TestRegistry;
  let dir: string;
  let layout: OciLayout;
  let built: BuiltImage[];
  const auth: Record<'mirror' | 'reader' | 'wrong', string> = { mirror: '', reader: '', wrong: '' };
  const clients: RegistryClient[] = [];
  const app = () => built.find((b) => b.repo === 'dst/app')!;

  const clientWith = (authFile: string): RegistryClient => {
    const c = new RegistryClient(reg.host, {
      caFiles: [reg.caFile],
      certDirs: [],
      credentials: { authFile },
      retry: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    clients.push(c);
    return c;
  };

  const writeAuth = async (name: string, entry: Record<string, string>): Promise<string> => {
    const path = join(dir, `${name}.auth.json`);
    await writeFile(path, JSON.stringify({ auths: { [reg.host]: entry } }), { mode: 0o600 });
    return path;
  };

  /** Push built images from the layout into `reg` with the CopyEngine, each to `repoOf(image)`. */
  const push = async (client: RegistryClient, images: BuiltImage[], repoOf = (b: BuiltImage) => b.repo) => {
    const engine = new CopyEngine({ parallel: 8 });
    return engine.run(
      images.map((b) => ({
        source: { endpoint: new LayoutEndpoint(layout), repo: b.repo, ref: b.tag! },
        dest: { endpoint: new RegistryEndpoint(client), repo: repoOf(b), ref: b.tag! },
        digest: b.digest,
      })),
    );
  };

  beforeAll(async () => {
    ts = await startTokenServer({
      users: {
        mirror: { password: PASSWORDS.mirror, acl: { 'src/*': ['pull'], 'dst/*': ['pull', 'push'] } },
        reader: { password: PASSWORDS.reader, acl: { 'dst/*': ['pull'] } },
      },
    });
    dir = await tempDir('airgap-bearer-');
    const pki = await testPki(join(dir, 'pki'));
    reg = await startRegistry({
      token: { realm: ts.realm, service: ts.service, issuer: ts.issuer, rootCertBundle: pki.caFile },
    });
    const basic = (user: string, password: string) => ({
      auth: Buffer.from(`${user}:${password}`).toString('base64'),
    });
    auth.mirror = await writeAuth('mirror', basic('mirror', PASSWORDS.mirror));
    auth.reader = await writeAuth('reader', basic('reader', PASSWORDS.reader));
    auth.wrong = await writeAuth('wrong', basic('mirror', 'not-the-password-0f1e2d'));

    layout = await OciLayout.open(join(dir, 'layout'));
    const specs: ImageSpec[] = [
      { repo: 'dst/app', tag: 'v1', layers: [{ id: 'bearer-base', size: 400_000 }, { size: 50_000 }] },
      { repo: 'dst/mount-a', tag: 'v1', layers: [{ id: 'bearer-shared', size: 300_000 }, { size: 40_000 }] },
      { repo: 'dst/mount-b', tag: 'v1', layers: [{ id: 'bearer-shared', size: 300_000 }, { size: 60_000 }] },
    ];
    built = await buildImages(layout, specs);
    // dst/app holds the app image for the tests that only read or fail; the first test pushes its own.
    const seeded = await push(clientWith(auth.mirror), [app()]);
    if (seeded.failed) throw new Error(`seeding dst/app failed: ${JSON.stringify(seeded.images)}`);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all([reg?.stop(), ts?.close()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends no password to a token service over plain http: refused before the request, the password unsaid', async () => {
    // The same token service, named by the registry at an http:// realm (a plain proxy in front of it).
    const caFile = join(dir, 'pki', 'ca.crt');
    const proxy = await startFaultProxy({ target: ts.url, caFile });
    const plain = await startRegistry({
      token: {
        realm: `${proxy.url}/token`,
        service: ts.service,
        issuer: ts.issuer,
        rootCertBundle: caFile,
      },
    });
    try {
      const authFile = join(dir, 'plain.auth.json');
      const entry = { auth: Buffer.from(`mirror:${PASSWORDS.mirror}`).toString('base64') };
      await writeFile(authFile, JSON.stringify({ auths: { [plain.host]: entry } }), { mode: 0o600 });
      const client = new RegistryClient(plain.host, {
        caFiles: [plain.caFile],
        certDirs: [],
        credentials: { authFile },
        retry: { baseDelayMs: 20, maxDelayMs: 200 },
      });
      clients.push(client);
      const e = await rejection(client.getManifest('dst/app', 'v1'));
      expect(e.code).toBe(MirrorError.REGISTRY_AUTH_INSECURE);
      expect(e.message).toContain(`http://${proxy.host}/token`);
      expect(shown(e)).not.toContain(PASSWORDS.mirror);
      expect(proxy.stats().requests).toBe(0);
    } finally {
      await Promise.all([plain.stop(), proxy.stop()]);
    }
  });

  it('pushes and pulls through Bearer tokens: ping, uploads, manifests, blobs, tags', async () => {
    ts.clearLog();
    const client = clientWith(auth.mirror);
    await client.ping();

    // A fresh engine and repository: every blob goes up (POST + PUT), then the manifest (PUT).
    const summary: CopySummary = await push(client, [app()], () => 'dst/pushed');
    expect(summary.failed).toBe(0);
    expect(summary.copied).toBe(1);
    expect(summary.blobs.transferred).toBe(3); // config + two layers

    expect(await client.listTags('dst/pushed')).toEqual(['v1']);
    const m = await client.getManifest('dst/pushed', 'v1');
    expect(m.digest).toBe(app().digest);
    for (const d of blobDigests(m.bytes)) expect(await client.hasBlob('dst/pushed', d)).toBe(true);

    // A blob by hand: POST a session, PUT it whole, then read it back.
    const blob = randomBytes(10_000);
    const digest = sha256Digest(blob);
    expect(await client.hasBlob('dst/raw', digest)).toBe(false);
    const session = await client.startUpload('dst/raw', digest);
    expect(session.mounted).toBe(false);
    if (session.mounted) return;
    await client.finishUpload(
      'dst/raw',
      session.location,
      digest,
      (async function* () {
        yield blob;
      })(),
      blob.length,
    );
    expect((await client.getBlobBytes('dst/raw', digest, blob.length)).equals(blob)).toBe(true);

    // Every token came from Basic credentials of `mirror`, with the service the registry named.
    expect(ts.log.length).toBeGreaterThan(0);
    for (const e of ts.log) {
      expect(e).toMatchObject({ method: 'GET', grant: 'basic', user: 'mirror', service: 'airgap-test' });
      expect(e.status).toBe(200);
    }
    // The ping asked for a repository the user has no right to: an empty grant, not an error.
    const ping = ts.log.find((e) => e.scopes.join() === 'repository:library/airgap-ping:pull');
    expect(ping?.claims?.access).toEqual([]);
    const pushToken = ts.log.find((e) => e.scopes.join() === 'repository:dst/pushed:pull,push');
    expect(pushToken?.claims).toMatchObject({
      iss: 'airgap-test-issuer',
      sub: 'mirror',
      aud: 'airgap-test',
      access: [{ type: 'repository', name: 'dst/pushed', actions: ['pull', 'push'] }],
    });
  });

  it('caches tokens: many (concurrent) requests make one token request per scope set', async () => {
    ts.clearLog();
    const client = clientWith(auth.mirror);
    const m = await client.getManifest('dst/app', 'v1');
    const digests = blobDigests(m.bytes);
    // 30 pulls at once, then more one by one, on one repository.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? client.getManifest('dst/app', 'v1')
          : client.hasBlob('dst/app', digests[i % digests.length]!),
      ),
    );
    for (let i = 0; i < 10; i++) await client.listTags('dst/app');
    // And pushes-side checks (another scope set), concurrently too.
    await Promise.all(digests.map((d) => client.hasBlob('dst/app', d, 'pull,push')));

    expect(ts.count(['repository:dst/app:pull'])).toBe(1);
    expect(ts.count(['repository:dst/app:pull,push'])).toBe(1);
    const sets = ts.log.map((e) => [...e.scopes].sort().join(' '));
    expect(sets.length).toBe(new Set(sets).size);
    expect(ts.log.length).toBe(2);
  });

  it('fetches a fresh token when the registry refuses a cached one (401), and the request succeeds', async () => {
    ts.clearLog();
    const client = clientWith(auth.mirror);
    // The token server hands out one token the registry will find expired (exp beyond its leeway),
    // while telling the client it is good for the full lifetime.
    ts.expireNext(1);
    const mark = reg.logs().length;
    expect((await client.getManifest('dst/app', 'v1')).digest).toBe(app().digest);
    // The registry refused the first token and took the second.
    expect(await logged(reg, mark, 'GET /v2/dst/app/manifests/v1', 2)).toEqual([401, 200]);
    const tokens = ts.log.filter((e) => e.scopes.join() === 'repository:dst/app:pull');
    expect(tokens).toHaveLength(2);
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(tokens[0]!.claims!.exp).toBeLessThan(nowSeconds - 60);
    expect(tokens[1]!.claims!.exp).toBeGreaterThan(nowSeconds);
    // The fresh token is cached in place of the refused one.
    await client.listTags('dst/app');
    expect(ts.count(['repository:dst/app:pull'])).toBe(2);

    // The same for a push session (POST), the first request of every upload.
    ts.expireNext(1);
    const blob = randomBytes(1000);
    const s = await client.startUpload('dst/app', sha256Digest(blob));
    expect(s.mounted).toBe(false);
    expect(ts.count(['repository:dst/app:pull,push'])).toBe(2);
    // Cancelling it is refused (distribution wants the `delete` action for DELETE, which a pull,push
    // token lacks): best effort, and the good push token is neither dropped nor fetched again.
    if (!s.mounted) await client.cancelUpload('dst/app', s.location);
    expect(await client.hasBlob('dst/app', sha256Digest(blob), 'pull,push')).toBe(false);
    expect(ts.count(['repository:dst/app:pull,push'])).toBe(2);
  });

  it('refreshes a token on its own when expires_in has passed (client clock moved forward)', async () => {
    ts.setTokenTtl(120);
    try {
      ts.clearLog();
      const client = clientWith(auth.mirror);
      const mark = reg.logs().length;
      await client.listTags('dst/app');
      expect(ts.count(['repository:dst/app:pull'])).toBe(1);
      // Only the client's Date moves; the registry and the token server keep real time.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 60_000);
      await client.listTags('dst/app');
      expect(ts.count(['repository:dst/app:pull'])).toBe(1); // still within expires_in
      vi.setSystemTime(Date.now() + 60_000);
      await client.listTags('dst/app');
      expect(ts.count(['repository:dst/app:pull'])).toBe(2); // 120 s on: refreshed before use
      // ...with no 401 on the way: the registry never saw the old token after its expires_in.
      expect(await logged(reg, mark, 'GET /v2/dst/app/tags/list', 3)).toEqual([200, 200, 200]);
    } finally {
      ts.setTokenTtl(300);
    }
  });

  it('mounts a shared blob across repositories with a token for dst push + from pull', async () => {
    ts.clearLog();
    const client = clientWith(auth.mirror);
    const images = built.filter((b) => b.repo.startsWith('dst/mount-'));
    const mark = reg.logs().length;
    const summary = await push(client, images);
    expect(summary.failed).toBe(0);
    expect(summary.blobs.mounted).toBeGreaterThan(0);

    // Whichever repository got the shared layer first is the one the other mounts from.
    const a = 'dst/mount-a';
    const b = 'dst/mount-b';
    const mountTokens = ts.log.filter((e) => e.scopes.length === 2);
    expect(mountTokens).toHaveLength(1);
    const [e] = mountTokens;
    const [into, from] = e!.scopes[0] === `repository:${a}:pull,push` ? [a, b] : [b, a];
    expect(e!.scopes).toEqual([`repository:${into}:pull,push`, `repository:${from}:pull`]);
    expect(e!.claims!.access).toEqual([
      { type: 'repository', name: into, actions: ['pull', 'push'] },
      { type: 'repository', name: from, actions: ['pull'] },
    ]);
    // The registry took the mount: POST ?mount=&from= answered 201 Created.
    const mounts = await logged(reg, mark, `POST /v2/${into}/blobs/uploads/?mount=`, 1);
    expect(mounts).toContain(201);
    // The shared layer is in both repositories, and was uploaded once.
    const inA = blobDigests((await client.getManifest(a, 'v1')).bytes);
    const inB = blobDigests((await client.getManifest(b, 'v1')).bytes);
    const shared = inA.filter((d) => inB.includes(d));
    expect(shared).toHaveLength(1);
    for (const repo of [a, b]) expect(await client.hasBlob(repo, shared[0]!)).toBe(true);
    expect(summary.blobs.transferred).toBe(inA.length + inB.length - 1);
  });

  it('uses an identity token (auth.json identitytoken) with POST grant_type=refresh_token', async () => {
    // Get one as `docker login` does: the password grant with access_type=offline.
    const agent = new Agent({ connect: { ca: await readFile(reg.caFile, 'utf8') } });
    const res = await request(ts.realm, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'mirror',
        password: PASSWORDS.mirror,
        service: ts.service,
        client_id: 'airgap-test',
        access_type: 'offline',
      }).toString(),
    });
    expect(res.statusCode).toBe(200);
    const doc = (await res.body.json()) as { refresh_token?: string; access_token?: string };
    await agent.close();
    expect(doc.access_token).toBeTruthy();
    expect(doc.refresh_token).toBeTruthy();

    ts.clearLog();
    const authFile = await writeAuth('identity', { identitytoken: doc.refresh_token! });
    const client = clientWith(authFile);
    expect((await client.getManifest('dst/app', 'v1')).digest).toBe(app().digest);
    const blob = randomBytes(2000);
    const digest = sha256Digest(blob);
    const s = await client.startUpload('dst/idt', digest);
    if (s.mounted) throw new Error('unexpected mount');
    await client.finishUpload(
      'dst/idt',
      s.location,
      digest,
      (async function* () {
        yield blob;
      })(),
      blob.length,
    );
    expect(await client.hasBlob('dst/idt', digest)).toBe(true);

    expect(ts.log.length).toBeGreaterThan(0);
    for (const e of ts.log) {
      expect(e).toMatchObject({
        method: 'POST',
        grant: 'refresh_token',
        user: 'mirror',
        service: 'airgap-test',
        clientId: 'airgap',
        status: 200,
      });
    }
    expect(ts.count(['repository:dst/idt:pull,push'])).toBe(1);
  });

  it('a user without push rights gets REGISTRY_DENIED naming the registry and the auth file, no secret', async () => {
    ts.clearLog();
    const client = clientWith(auth.reader);
    // Pulling is allowed...
    expect((await client.getManifest('dst/app', 'v1')).digest).toBe(app().digest);
    // ...pushing is not: the token service grants pull only (a partial grant), the registry refuses.
    const e = await rejection(client.startUpload('dst/app', sha256Digest(randomBytes(100))));
    expect(e.code).toBe(MirrorError.REGISTRY_DENIED);
    expect(e.message).toContain(reg.host);
    expect(e.message).toContain(auth.reader);
    expect(e.message).toContain('repository:dst/app:pull,push');
    expect(e.hint).toMatch(/permission/);
    expect(shown(e)).not.toContain(PASSWORDS.reader);
    const grants = ts.log.filter((x) => x.scopes.join() === 'repository:dst/app:pull,push');
    expect(grants.length).toBeGreaterThan(0);
    for (const g of grants) {
      expect(g.status).toBe(200);
      expect(g.claims!.access).toEqual([{ type: 'repository', name: 'dst/app', actions: ['pull'] }]);
    }
  });

  it('a wrong password is REGISTRY_UNAUTHORIZED from the token service, naming the source, no secret', async () => {
    ts.clearLog();
    const client = clientWith(auth.wrong);
    const e = await rejection(client.getManifest('dst/app', 'v1'));
    expect(e.code).toBe(MirrorError.REGISTRY_UNAUTHORIZED);
    expect(e.message).toContain(reg.host);
    expect(e.message).toContain(ts.url);
    expect(e.message).toContain(auth.wrong);
    expect(shown(e)).not.toContain('not-the-password-0f1e2d');
    expect(shown(e)).not.toContain(PASSWORDS.mirror);
    expect(ts.log.length).toBeGreaterThan(0);
    for (const x of ts.log) expect(x).toMatchObject({ grant: 'basic', user: 'mirror', status: 401 });
  });

  it('skopeo reads back what we pushed, through the same token server', async () => {
    ts.clearLog();
    const digest = await skopeoDigest(`docker://${reg.skopeoHost}/dst/app:v1`, {
      authFile: auth.reader,
      certDir: reg.skopeo.certDir,
    });
    expect(digest).toBe(app().digest);
    expect(ts.log.some((e) => e.user === 'reader' && e.status === 200)).toBe(true);
  });
});
