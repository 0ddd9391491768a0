/**
 * The plan's measure against real registries: what a run would move, each question asked once.
 * The endpoints are the real ones over TLS; the test only counts what is asked of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../../lab/images.js';
import { RegistryEndpoint, type Endpoint } from '../../../src/mirror/copy/endpoints.js';
import type { CopyPair } from '../../../src/mirror/copy/engine.js';
import { measurePairs } from '../../../src/mirror/copy/measure.js';
import { clientFor, seedRegistry } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';

/** The endpoint, with a tally of the questions asked of it (method and arguments). */
function counted(e: Endpoint): { endpoint: Endpoint; asked: Map<string, number> } {
  const asked = new Map<string, number>();
  const tally = (key: string) => asked.set(key, (asked.get(key) ?? 0) + 1);
  const endpoint: Endpoint = Object.create(e) as Endpoint;
  for (const name of ['getManifest', 'headManifest', 'hasBlob', 'tags'] as const) {
    const real = (e[name] as (...a: unknown[]) => unknown).bind(e);
    (endpoint as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      tally(`${name} ${args.slice(0, 2).join(' ')}`);
      return real(...args);
    };
  }
  return { endpoint, asked };
}

describe('measurePairs', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    // Twelve images sharing one base layer, like a release's components.
    built = await seedRegistry(
      src,
      Array.from({ length: 12 }, (_, i) => ({
        repo: 'ocp/release',
        tag: `c${i}`,
        layers: [{ id: 'base', size: 64 * 1024 }, { size: 4096 + i }],
      })),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  const pairsFor = (s: Endpoint, d: Endpoint, repo: string, images: BuiltImage[]): CopyPair[] =>
    images.map((b) => ({
      source: { endpoint: s, repo: b.repo, ref: b.digest },
      dest: { endpoint: d, repo, ref: b.tag! },
      digest: b.digest,
    }));

  it('an empty destination: one tag listing, no blob or manifest question, everything to move', async () => {
    const s = counted(new RegistryEndpoint(clientFor(src)));
    const d = counted(new RegistryEndpoint(clientFor(dst)));
    const m = await measurePairs(pairsFor(s.endpoint, d.endpoint, 'empty/release', built), { parallel: 4 });
    expect([...d.asked]).toEqual([['tags empty/release', 1]]);
    expect(m.presentImages).toBe(0);
    expect(m.blobs).toBe(12 * 2 + 1); // a config and a layer each, one shared base
    expect(m.bytesToMove).toBe(m.bytes);
    // Each source manifest read once.
    expect([...s.asked.values()].every((n) => n === 1)).toBe(true);
    await Promise.all([s.endpoint.close(), d.endpoint.close()]);
  });

  it('a destination holding half: the listed tags are checked, each blob asked once, the rest is counted', async () => {
    const srcEp = new RegistryEndpoint(clientFor(src));
    const dstEp = new RegistryEndpoint(clientFor(dst));
    const half = built.slice(0, 6);
    const copied = await new CopyEngine({ parallel: 4 }).run(pairsFor(srcEp, dstEp, 'half/release', half));
    expect(copied.images.every((i) => i.status !== 'failed')).toBe(true);

    const s = counted(srcEp);
    const d = counted(dstEp);
    const m = await measurePairs(pairsFor(s.endpoint, d.endpoint, 'half/release', built), { parallel: 4 });
    expect(m.presentImages).toBe(6);
    expect(m.images.map((i) => i.present)).toEqual(built.map((_, i) => i < 6));
    // The six tags listed are confirmed by digest; the six others are not asked for.
    const heads = [...d.asked.keys()].filter((k) => k.startsWith('headManifest'));
    expect(heads.sort()).toEqual(half.map((b) => `headManifest half/release ${b.tag}`).sort());
    // The shared base is in the destination already: only the new images' own blobs move.
    const baseAndHalf = m.bytes - m.bytesToMove;
    expect(baseAndHalf).toBeGreaterThan(64 * 1024);
    expect(m.presentBlobs).toBe(1 + 6 * 2);
    // No blob asked twice.
    expect([...d.asked].filter(([k, n]) => k.startsWith('hasBlob') && n > 1)).toEqual([]);
    await Promise.all([srcEp.close(), dstEp.close()]);
  });
});
