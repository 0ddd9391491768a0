/**
 * The inventory file (src/mirror/inventory/format.ts): findings written and read back are the same
 * document, plain or gzip; each blob and manifest once; and a file that is not what airgap writes
 * is refused (exit 2) with the field named.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  inventoryDocument,
  inventoryStamp,
  inventoryText,
  readInventory,
  writeInventory,
} from '../../../src/mirror/inventory/format.js';
import { tempDir } from '../../helpers/fixtures.js';

const d = (c: string) => `sha256:${c.repeat(64)}`;

const findings = () => ({
  destination: 'docker://mirror.example.com:8443/ocp',
  takenAt: new Date('2026-11-27T10:00:00Z'),
  takenBy: 'airgap 1.2.3',
  problems: [],
  repositories: ['ocp/b', 'ocp/a'],
  manifests: [
    // The same image in two repositories, sharing a layer with another image.
    {
      repository: 'ocp/b',
      digest: d('1'),
      size: 500,
      blobs: [
        { digest: d('a'), size: 10 },
        { digest: d('c'), size: 30 },
      ],
      children: [],
    },
    {
      repository: 'ocp/a',
      digest: d('1'),
      size: 500,
      blobs: [
        { digest: d('a'), size: 10 },
        { digest: d('c'), size: 30 },
      ],
      children: [],
    },
    {
      repository: 'ocp/a',
      digest: d('2'),
      size: 400,
      blobs: [
        { digest: d('b'), size: 20 },
        { digest: d('c'), size: 30 },
      ],
      children: [],
    },
    { repository: 'ocp/a', digest: d('3'), size: 300, blobs: [], children: [d('2'), d('1'), d('9')] },
  ],
  tags: [
    { repository: 'ocp/b', tag: 'latest', digest: d('1') },
    { repository: 'ocp/a', tag: 'multi', digest: d('3') },
    { repository: 'ocp/a', tag: 'gone', digest: d('8') },
  ],
});

describe('inventory format', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('airgap-inventory-format-');
  });

  it('lists each blob and manifest once, sorted, and reads back the same document (plain and gzip)', async () => {
    const doc = inventoryDocument(findings());
    expect(doc.repositories).toEqual(['ocp/a', 'ocp/b']);
    expect(doc.blobs).toEqual([
      [d('a'), 10, 0],
      [d('b'), 20, 0],
      [d('c'), 30, 0],
    ]);
    // The index's children that are there, by place; the one not there (9) is not named.
    expect(doc.manifests.map((m) => [m[0], m[4]])).toEqual([
      [d('1'), []],
      [d('2'), []],
      [d('3'), [0, 1]],
    ]);
    // A tag whose manifest was not read is not listed.
    expect(doc.tags).toEqual([
      [0, 'multi', 2],
      [1, 'latest', 0],
    ]);
    for (const name of ['inv.json', 'inv.json.gz']) {
      const path = join(dir, name);
      const { sha256: sha } = await writeInventory(path, doc);
      const inv = await readInventory(path);
      expect(inv.doc).toEqual(doc);
      expect(inv.sha256).toBe(sha);
      expect(inv.summary()).toMatchObject({
        repositories: 2,
        tags: 2,
        manifests: 3,
        blobs: 3,
        bytes: 60,
        complete: true,
      });
      expect(inv.holdsBlob(d('b'), 20)).toBe(true);
      expect(inv.holdsBlob(d('b'), 21)).toBe(false);
      expect(inv.tag('ocp/a', 'multi')).toBe(d('3'));
    }
    const plain = await readFile(join(dir, 'inv.json'));
    expect(gunzipSync(await readFile(join(dir, 'inv.json.gz')))).toEqual(plain);
  });

  it('is one list entry per line (a diff of two inventories shows what changed), and stamps what it is', async () => {
    const text = inventoryText(inventoryDocument(findings()));
    expect(text.split('\n')).toContain(`    ["${d('b')}",20,0],`);
    expect(text.split('\n')).toContain(`    [0,"multi",2],`);
    const path = join(dir, 'stamped.json.gz');
    const { sha256 } = await writeInventory(path, inventoryDocument(findings()));
    expect(inventoryStamp(await readInventory(path))).toEqual({
      sha256,
      destination: 'docker://mirror.example.com:8443/ocp',
      takenAt: '2026-11-27T10:00:00.000Z',
      complete: true,
    });
  });

  it('refuses a file that says complete with problems listed, naming the field', async () => {
    const path = join(dir, 'lying.json');
    const doc = { ...inventoryDocument(findings()), problems: ['ocp/a: the tag list: 500'] };
    await writeFile(path, JSON.stringify(doc));
    await expect(readInventory(path)).rejects.toMatchObject({
      code: 'INVENTORY_INVALID',
      exitCode: 2,
      message: expect.stringMatching(/lying\.json: complete: says true with 1 problem/),
    });
  });

  it('lists an index with every child some repository holds (one copy filtered by architecture, one whole)', () => {
    const d = (c: string) => `sha256:${c.repeat(64)}`;
    const doc = inventoryDocument({
      destination: 'docker://m.example.com/ocp',
      takenAt: new Date(0),
      problems: [],
      repositories: ['ocp/a', 'ocp/b'],
      manifests: [
        { repository: 'ocp/a', digest: d('1'), size: 10, blobs: [], children: [d('2')] },
        { repository: 'ocp/b', digest: d('1'), size: 10, blobs: [], children: [d('2'), d('3')] },
        { repository: 'ocp/a', digest: d('2'), size: 5, blobs: [], children: [] },
        { repository: 'ocp/b', digest: d('3'), size: 5, blobs: [], children: [] },
      ],
      tags: [
        { repository: 'ocp/a', tag: 'v1', digest: d('1') },
        { repository: 'ocp/b', tag: 'v1', digest: d('1') },
      ],
    });
    const index = doc.manifests.find((m) => m[0] === d('1'))!;
    expect(index[4].map((c) => doc.manifests[c]![0])).toEqual([d('2'), d('3')]);
  });
});
