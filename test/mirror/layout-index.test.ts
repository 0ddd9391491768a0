/**
 * index.json of an OCI layout under many writers: every entry set concurrently is on disk when
 * its call resolves, a replaced name keeps one entry, and a change made by another writer of the
 * same directory is kept (the in-memory index is read again when the file is not ours).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OciLayout, REF_NAME } from '../../src/mirror/layout/store.js';
import { MediaType } from '../../src/mirror/media-types.js';
import { sha256Digest } from '../../src/mirror/digest.js';
import type { ManifestData } from '../../src/mirror/manifest.js';
import { tempDir } from '../helpers/fixtures.js';

function manifest(n: number): ManifestData {
  const bytes = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciManifest, n }));
  return { bytes, digest: sha256Digest(bytes), mediaType: MediaType.OciManifest };
}

async function onDisk(dir: string): Promise<Map<string, string>> {
  const idx = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as {
    manifests: { digest: string; annotations: Record<string, string> }[];
  };
  const names = idx.manifests.map((d) => d.annotations[REF_NAME]!);
  expect(new Set(names).size).toBe(names.length); // no name twice
  return new Map(idx.manifests.map((d) => [d.annotations[REF_NAME]!, d.digest]));
}

describe('OciLayout index.json', () => {
  it('holds every entry set concurrently, each on disk when its call resolves', async () => {
    const dir = await tempDir('airgap-layout-index-');
    const layout = await OciLayout.open(dir);
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 400 }, async (_, i) => {
        await layout.setEntry(`app/n${i}:v1`, manifest(i));
        // What this call asked for is on disk now, whatever the others are doing.
        if (i % 50 === 0) {
          expect((await onDisk(dir)).get(`app/n${i}:v1`)).toBe(manifest(i).digest);
          seen.push(i);
        }
      }),
    );
    expect(seen).toHaveLength(8);
    const all = await onDisk(dir);
    expect(all.size).toBe(400);
    expect((await layout.entries()).map((e) => e.refName)).toContain('app/n399:v1');
  });

  it('lookups running beside changes never lose a change (a fresh layout of an existing index)', async () => {
    const dir = await tempDir('airgap-layout-index-');
    await OciLayout.open(dir);
    // A large index (as a channel's layout has): reading it takes long enough for changes to happen
    // meanwhile. Written directly: its blobs do not matter to a lookup.
    const old = Array.from({ length: 20_000 }, (_, i) => ({
      mediaType: MediaType.OciManifest,
      digest: manifest(i).digest,
      size: manifest(i).bytes.length,
      annotations: { [REF_NAME]: `old/n${i}:v1` },
    }));
    await writeFile(
      join(dir, 'index.json'),
      JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciIndex, manifests: old }, null, 2),
    );
    // A second layout of the directory (as a later step of a run opens it): lookups keep starting
    // while entries are set.
    const b = await OciLayout.open(dir);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      work.push(b.resolve(`old/n${i}:v1`).then((d) => expect(d?.digest).toBe(manifest(i).digest)));
      work.push(b.setEntry(`new/n${i}:v1`, manifest(100_000 + i)));
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(work);
    const all = await onDisk(dir);
    expect(all.size).toBe(20_000 + 20);
    for (let i = 0; i < 20; i++) expect(all.get(`new/n${i}:v1`)).toBe(manifest(100_000 + i).digest);
  }, 60_000);

  it('replaces a name in place, and keeps what another writer of the directory added', async () => {
    const dir = await tempDir('airgap-layout-index-');
    const a = await OciLayout.open(dir);
    await a.setEntry('app/one:v1', manifest(1));
    await a.setEntry('app/one:v1', manifest(2));
    // Another writer (another OciLayout of the same directory: an archive unpacked, a second step).
    const b = await OciLayout.open(dir);
    await b.setEntry('app/two:v1', manifest(3));
    await a.setEntries([
      { refName: 'app/three:v1', m: manifest(4) },
      { refName: 'app/one:v1', m: manifest(5) },
    ]);
    const all = await onDisk(dir);
    expect([...all.keys()]).toEqual(['app/one:v1', 'app/two:v1', 'app/three:v1']);
    expect(all.get('app/one:v1')).toBe(manifest(5).digest);
    expect(all.get('app/two:v1')).toBe(manifest(3).digest);
  });
});

describe('temp files a killed writer left in a layout', () => {
  it('are swept when the layout is opened to write again; a live writer’s stay', async () => {
    const dir = await tempDir('airgap-layout-sweep-');
    await OciLayout.open(dir);
    // A pid that is surely gone: a child that has exited.
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']).stdout.toString().trim();
    const hex = 'a'.repeat(64);
    const blobs = join(dir, 'blobs', 'sha256');
    const dead = [join(blobs, `.${hex}.tmp-${gone}-0a1b2c3d`), join(dir, `.index.json.tmp-${gone}-deadbeef`)];
    const live = join(blobs, `.${hex}.tmp-${process.ppid}-0a1b2c3d`);
    const other = join(blobs, '.not-ours.tmp');
    for (const f of [...dead, live, other]) await writeFile(f, 'partial');
    await OciLayout.open(dir, false); // reading only: nothing is swept
    expect(existsSync(dead[0]!)).toBe(true);
    await OciLayout.open(dir);
    expect(dead.map((f) => existsSync(f))).toEqual([false, false]);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});
