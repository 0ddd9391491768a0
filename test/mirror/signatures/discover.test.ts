import { parseDigest } from '../../../src/mirror/digest.js';
/**
 * Finding a plan's Sigstore signatures at the source, against a real registry (Debian's
 * docker-registry) seeded with images and `.sig` tags the lab signer made. The fault proxy in front
 * of it records every request, so the cost is checked as a user would notice it: one tag listing
 * per repository (every page of it), and manifest and blob reads only for signatures that exist.
 * Last, the lab upstream with signing on: every image it serves is signed and found.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey, signImage, signImageNamingAnotherDigest } from '../../../lab/cosign.js';
import { buildUpstream, type Upstream } from '../../../lab/upstream.js';
import type { BuiltImage } from '../../../lab/images.js';
import type { PlanEntry } from '../../../src/mirror/plan.js';
import { parseReference } from '../../../src/mirror/reference.js';
import { RegistryClient } from '../../../src/mirror/registry/client.js';
import {
  cosignTag,
  readCosignSignatures,
  verifyCosignSignature,
} from '../../../src/mirror/signatures/cosign.js';
import { discoverSignatures } from '../../../src/mirror/signatures/discover.js';
import { startFaultProxy, type FaultProxy, type ProxyLogEntry } from '../../helpers/fault-proxy.js';
import { clientFor, seedRegistry, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { testCertificates } from '../../helpers/tls.js';

/** A plan entry for an image of `host`, as resolve.ts writes them (source pinned by digest). */
function planned(host: string, b: { repo: string; digest: string }, destRepo = b.repo): PlanEntry {
  return {
    kind: 'additional',
    origin: `${host}/${b.repo}@${b.digest}`,
    source: `${host}/${b.repo}@${b.digest}`,
    digest: b.digest === '' ? '' : parseDigest(b.digest, 'test'),
    destRepo,
    destTag: `sha256-${b.digest.slice(7)}`,
    byTag: false,
    byDigest: true,
    context: `additionalImages ${b.repo}`,
  };
}

/**
 * Debian's docker-registry (distribution 2.8) ignores `n` on tag lists and answers every tag at
 * once; quay.io and distribution 3 page them. This HTTPS front pages the real registry's tag lists
 * as the distribution spec says (sorted, `n`, `last`, a `Link: <…>; rel="next"` header while more
 * remain) and forwards every other request untouched. It records the paths it is asked for.
 */
async function startPagingFront(
  reg: TestRegistry,
): Promise<{ host: string; paths: string[]; stop(): Promise<void> }> {
  const ca = await readFile(reg.caFile, 'utf8');
  const target = new URL(reg.url);
  const paths: string[] = [];
  const forward = (req: { method?: string; url?: string; headers: Record<string, unknown> }) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const headers = { ...req.headers, host: target.host };
      https
        .request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, ca },
          resolve,
        )
        .on('error', reject)
        .end();
    });
  const { certPem, keyPem } = testCertificates().server;
  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    paths.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'https://front');
    const tagList = /^\/v2\/(.+)\/tags\/list$/.exec(url.pathname);
    void (async () => {
      if (req.method === 'GET' && tagList && url.searchParams.has('n')) {
        const whole = await forward({ method: 'GET', url: url.pathname, headers: req.headers });
        const chunks: Buffer[] = [];
        for await (const c of whole) chunks.push(c as Buffer);
        if (whole.statusCode !== 200) {
          res.writeHead(whole.statusCode ?? 502, whole.headers).end(Buffer.concat(chunks));
          return;
        }
        const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { name: string; tags: string[] };
        const n = Number(url.searchParams.get('n'));
        const last = url.searchParams.get('last');
        const rest = [...doc.tags].sort().filter((t) => last === null || t > last);
        const page = rest.slice(0, n);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (rest.length > n)
          headers.link = `<${url.pathname}?n=${n}&last=${encodeURIComponent(page[page.length - 1]!)}>; rel="next"`;
        res.writeHead(200, headers).end(JSON.stringify({ name: doc.name, tags: page }));
        return;
      }
      const answer = await forward(req);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    })().catch((e: unknown) => res.destroy(e as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A client for `host` with the registry's credentials. */
async function clientVia(reg: TestRegistry, host: string): Promise<RegistryClient> {
  const authFile = join(await tempDir(), 'auth.json');
  const auth = Buffer.from(`${reg.username}:${reg.password}`).toString('base64');
  await writeFile(authFile, JSON.stringify({ auths: { [host]: { auth } } }), { mode: 0o600 });
  return new RegistryClient(host, {
    caFiles: [reg.caFile],
    certDirs: [],
    credentials: { authFile },
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 },
  });
}

describe('discoverSignatures against a real registry', () => {
  let reg: TestRegistry;
  let proxy: FaultProxy;
  let proxied: RegistryClient;
  let direct: RegistryClient;
  const key = generateSigningKey();
  let signed: BuiltImage[]; // lab/signed: two signed, one not
  let unsigned: BuiltImage;
  let wrong: BuiltImage; // lab/wrong: its .sig names another digest
  let mixed: BuiltImage; // lab/wrong: one layer names it, one another digest
  let paged: BuiltImage; // lab/paged: signed, behind six other tags

  const sign = (b: BuiltImage, claims?: string[]) =>
    signImage(direct, {
      repo: b.repo,
      digest: b.digest,
      reference: `${reg.host}/${b.repo}`,
      privateKey: key.privateKey,
      ...(claims ? { claims } : {}),
    });

  /** The proxy's requests from `mark` on, without the first-contact ping. */
  const since = (mark: number): ProxyLogEntry[] =>
    proxy
      .stats()
      .log.slice(mark)
      .filter((e) => e.path !== '/v2/');
  const paths = (log: ProxyLogEntry[], what: string, repo: string) =>
    log.filter((e) => e.method === 'GET' && e.path.startsWith(`/v2/${repo}/${what}`)).map((e) => e.path);

  beforeAll(async () => {
    reg = await startRegistry();
    direct = clientFor(reg);
    const layers = [{ id: 'discover-base', size: 1024 }, { size: 512 }];
    const built = await seedRegistry(reg, [
      { repo: 'lab/signed', layers },
      { repo: 'lab/signed', layers },
      { repo: 'lab/signed', layers },
      { repo: 'lab/wrong', layers },
      { repo: 'lab/wrong', layers },
      { repo: 'lab/paged', layers },
      ...['a0', 'a1', 'a2', 'a3', 'a4', 'a5'].map((tag) => ({ repo: 'lab/paged', tag, layers })),
    ]);
    signed = built.slice(0, 2);
    unsigned = built[2]!;
    [wrong, mixed, paged] = [built[3]!, built[4]!, built[5]!];
    for (const b of signed) await sign(b);
    await signImageNamingAnotherDigest(
      direct,
      {
        repo: wrong.repo,
        digest: wrong.digest,
        reference: `${reg.host}/${wrong.repo}`,
        privateKey: key.privateKey,
      },
      unsigned.digest,
    );
    await sign(mixed, [unsigned.digest, mixed.digest]);
    await sign(paged);

    proxy = await startFaultProxy({ target: reg.url, caFile: reg.caFile, tls: testCertificates().server });
    proxied = await clientVia(reg, proxy.host);
  });

  afterAll(async () => {
    await Promise.all([proxied?.close(), direct?.close()]);
    await Promise.all([proxy?.stop(), reg?.stop()]);
  });

  it('finds signatures with one tag listing per repository; only signatures that exist cost more', async () => {
    const host = proxy.host;
    const images = [
      ...signed.map((b) => planned(host, b)),
      planned(host, unsigned),
      // The same image to a second destination: a signature for each.
      planned(host, signed[0]!, 'copy/signed'),
      // Images airgap builds, and one whose tag did not resolve, are not looked up.
      { ...planned(host, signed[1]!), source: 'build:', destRepo: 'built/catalog' },
      {
        ...planned(host, { repo: 'lab/unresolved', digest: '' }),
        unresolved: { code: 'X', message: 'no such tag' },
      },
    ];
    const mark = proxy.stats().log.length;
    const found = await discoverSignatures(images, () => proxied);
    const log = since(mark);

    // One listing for the one repository looked at, nothing for built or unresolved images.
    expect(paths(log, 'tags/list', 'lab/signed')).toHaveLength(1);
    expect(log.filter((e) => e.path.includes('/tags/list'))).toHaveLength(1);
    // A manifest and one blob per signed image; the unsigned one costs nothing.
    expect(paths(log, 'manifests/', 'lab/signed').sort()).toEqual(
      signed.map((b) => `/v2/lab/signed/manifests/${cosignTag(b.digest)}`).sort(),
    );
    expect(paths(log, 'blobs/', 'lab/signed')).toHaveLength(2);
    expect(log).toHaveLength(5);

    expect(found.warnings).toEqual([]);
    expect([...found.signed.keys()].sort()).toEqual(signed.map((b) => b.digest).sort());
    expect(found.signed.has(unsigned.digest)).toBe(false);
    const manifestDigest = (await direct.getManifest('lab/signed', cosignTag(signed[0]!.digest))).digest;
    expect(found.signed.get(signed[0]!.digest)).toEqual({
      tag: cosignTag(signed[0]!.digest),
      manifestDigest,
      signatures: 1,
    });
    const forFirst = found.entries.filter((e) => e.signs === signed[0]!.digest);
    expect(forFirst.map((e) => e.destRepo).sort()).toEqual(['copy/signed', 'lab/signed']);
    expect(forFirst.find((e) => e.destRepo === 'lab/signed')).toEqual({
      kind: 'signature',
      origin: `${host}/lab/signed:${cosignTag(signed[0]!.digest)}`,
      source: `${host}/lab/signed@${manifestDigest}`,
      digest: manifestDigest,
      destRepo: 'lab/signed',
      destTag: cosignTag(signed[0]!.digest),
      byTag: false,
      byDigest: false,
      context: 'signature of additionalImages lab/signed',
      signs: signed[0]!.digest,
    });
    expect(found.entries).toHaveLength(3);
    expect(found.entries.some((e) => e.signs === unsigned.digest)).toBe(false);
  });

  it('the signature found verifies with the signing key and with no other', async () => {
    const found = await discoverSignatures([planned(proxy.host, signed[1]!)], () => proxied);
    const [entry] = found.entries;
    const ref = parseReference(entry!.source);
    const m = await direct.getManifest(ref.repository, entry!.digest);
    const sigs = await readCosignSignatures(m.bytes, (d, size) =>
      direct.getBlobBytes(ref.repository, d, size),
    );
    expect(sigs.map((s) => verifyCosignSignature(s, key.publicKey))).toEqual([true]);
    expect(sigs.map((s) => verifyCosignSignature(s, generateSigningKey().publicKey))).toEqual([false]);
  });

  it('a .sig whose payload names another digest is a warning naming the image, the tag and that digest, never an entry', async () => {
    const host = proxy.host;
    const found = await discoverSignatures([planned(host, wrong), planned(host, mixed)], () => proxied);
    expect(found.entries.map((e) => e.signs)).toEqual([mixed.digest]);
    expect(found.signed.has(wrong.digest)).toBe(false);
    // One layer of mixed's .sig names it: that one counts, the other does not.
    expect(found.signed.get(mixed.digest)?.signatures).toBe(1);
    expect(found.warnings).toHaveLength(1);
    const [w] = found.warnings;
    expect(w).toContain(`${host}/lab/wrong@${wrong.digest}`); // the image
    expect(w).toContain(`${host}/lab/wrong:${cosignTag(wrong.digest)}`); // the tag
    expect(w).toContain(`for ${unsigned.digest}, not ${wrong.digest}`); // the digest it names
  });

  it('a repository without tags (NAME_UNKNOWN) has no signature; one that refuses its tag list is a warning; the others are still looked up', async () => {
    const host = proxy.host;
    proxy.setRules([
      { match: { path: /^\/v2\/lab\/wrong\/tags\/list/ }, fault: 'status', status: 403, times: Infinity },
    ]);
    try {
      const missing = { repo: 'lab/missing', digest: signed[0]!.digest };
      const found = await discoverSignatures(
        [planned(host, missing), planned(host, wrong), planned(host, signed[0]!)],
        () => proxied,
      );
      expect(found.entries.map((e) => e.signs)).toEqual([signed[0]!.digest]);
      // Distribution answers NAME_UNKNOWN for the tags of a repository that holds only digests:
      // nothing to warn about, it simply has no .sig tag.
      expect(found.warnings).toHaveLength(1);
      expect(found.warnings[0]).toContain(`${host}/lab/wrong: its tags cannot be listed`);
      expect(found.warnings[0]).toMatch(/DENIED|403/);
    } finally {
      proxy.setRules([]);
    }
  });

  it('follows a tag list over several pages to a signature on the last one', async () => {
    const front = await startPagingFront(reg);
    const client = await clientVia(reg, front.host);
    // Four images of the repository to look up: a listing of up to four pages is worth it.
    const unsigned = ['1', '2', '3'].map((c) => ({ repo: 'lab/paged', digest: `sha256:${c.repeat(64)}` }));
    try {
      const found = await discoverSignatures(
        [planned(front.host, paged), ...unsigned.map((u) => planned(front.host, u))],
        () => client,
        { pageSize: 2 },
      );
      // Seven tags (a0…a5 and the .sig, which sorts last), two a page: four pages, each asked for once.
      const pages = front.paths.filter((p) => p.startsWith('/v2/lab/paged/tags/list'));
      expect(pages).toEqual([
        '/v2/lab/paged/tags/list?n=2',
        '/v2/lab/paged/tags/list?n=2&last=a1',
        '/v2/lab/paged/tags/list?n=2&last=a3',
        '/v2/lab/paged/tags/list?n=2&last=a5',
      ]);
      expect(found.entries.map((e) => e.signs)).toEqual([paged.digest]);
      expect(found.entries[0]!.source).toBe(
        `${front.host}/lab/paged@${found.signed.get(paged.digest)!.manifestDigest}`,
      );
      expect(found.warnings).toEqual([]);
    } finally {
      await client.close();
      await front.stop();
    }
  });

  it("asks for each image's .sig tag instead when the listing would take more pages than there are images", async () => {
    const front = await startPagingFront(reg);
    const client = await clientVia(reg, front.host);
    const unsigned = { repo: 'lab/paged', digest: `sha256:${'4'.repeat(64)}` };
    try {
      const found = await discoverSignatures(
        [planned(front.host, paged), planned(front.host, unsigned)],
        () => client,
        { pageSize: 2 },
      );
      // Two images: two pages at most, then one request per image's .sig tag.
      const pages = front.paths.filter((p) => p.startsWith('/v2/lab/paged/tags/list'));
      expect(pages).toEqual(['/v2/lab/paged/tags/list?n=2', '/v2/lab/paged/tags/list?n=2&last=a1']);
      const probes = front.paths.filter((p) => p.startsWith('/v2/lab/paged/manifests/sha256-'));
      expect(probes.sort()).toEqual(
        [
          `/v2/lab/paged/manifests/sha256-${paged.digest.slice(7)}.sig`,
          `/v2/lab/paged/manifests/sha256-${'4'.repeat(64)}.sig`,
        ].sort(),
      );
      expect(found.entries.map((e) => e.signs)).toEqual([paged.digest]);
      expect(found.warnings).toEqual([]);
    } finally {
      await client.close();
      await front.stop();
    }
  });
});

/**
 * Every manifest a distribution registry stores, read from its filesystem (independent of our
 * client): `<repo>/_manifests/revisions/sha256/<hex>`, and whether a `sha256-<hex>.sig` tag points at it.
 */
async function storedManifests(
  storageDir: string,
): Promise<{ repo: string; digest: string; sig: boolean }[]> {
  const root = join(storageDir, 'docker', 'registry', 'v2', 'repositories');
  const out: { repo: string; digest: string; sig: boolean }[] = [];
  for (const entry of await readdir(root, { recursive: true })) {
    const m = /^(.+)\/_manifests\/revisions\/sha256\/([0-9a-f]{64})$/.exec(entry);
    if (m) out.push({ repo: m[1]!, digest: `sha256:${m[2]}`, sig: false });
  }
  for (const entry of await readdir(root, { recursive: true })) {
    const m = /^(.+)\/_manifests\/tags\/sha256-[0-9a-f]{64}\.sig\/current\/link$/.exec(entry);
    if (!m) continue;
    const digest = (await readFile(join(root, entry), 'utf8')).trim();
    const hit = out.find((o) => o.repo === m[1] && o.digest === digest);
    if (hit) hit.sig = true;
  }
  return out;
}

describe('the signed lab upstream', () => {
  let reg: TestRegistry;
  let up: Upstream;
  let client: RegistryClient;

  beforeAll(async () => {
    reg = await startRegistry();
    client = clientFor(reg);
    up = await buildUpstream({
      registry: reg,
      dir: join(await tempDir(), 'upstream'),
      versions: ['4.18.1'],
      components: 2,
      packages: 1,
      channelsPerPackage: 1,
      bundlesPerChannel: 1,
      signing: { key: generateSigningKey().privateKey },
    });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await up?.stop();
    await reg?.stop();
  });

  it('signs every image it serves, and discovery finds each signature, verifying with the public key', async () => {
    const signing = up.signing!;
    // What the registry holds, read from its storage: every manifest not itself a .sig is signed.
    const stored = await storedManifests(reg.storageDir);
    const images = stored.filter((m) => !m.sig).map((m) => `${reg.host}/${m.repo}@${m.digest}`);
    expect(new Set(signing.signed)).toEqual(new Set(images));
    const release = up.releases[0]!;
    for (const ref of [release.payload, ...release.components, up.kubevirtRef]) expect(images).toContain(ref);
    expect(images).toContain(`${reg.host}/redhat/redhat-operator-index@${up.catalogDigest}`);
    for (const repo of [
      'ubi9/ubi',
      'openshift4/ose-kube-rbac-proxy',
      'lab/lab-operator-000-bundle',
      'lab/lab-operator-000-operator',
    ])
      expect(stored.some((m) => m.repo === repo && !m.sig)).toBe(true);
    expect(stored.filter((m) => m.sig)).toHaveLength(images.length);

    const plan = signing.signed.map((ref) => {
      const r = parseReference(ref);
      return planned(reg.host, { repo: r.repository, digest: r.digest! });
    });
    const found = await discoverSignatures(plan, () => client);
    expect(found.warnings).toEqual([]);
    expect(found.entries).toHaveLength(plan.length);
    expect(found.signed.size).toBe(new Set(plan.map((i) => i.digest)).size);
    for (const e of found.entries) {
      const ref = parseReference(e.source);
      const m = await client.getManifest(ref.repository, e.digest);
      const sigs = await readCosignSignatures(m.bytes, (d, size) =>
        client.getBlobBytes(ref.repository, d, size),
      );
      expect(sigs.every((s) => verifyCosignSignature(s, signing.publicKey))).toBe(true);
    }
  });
});
