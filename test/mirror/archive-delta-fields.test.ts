/**
 * The delta fields of an archive manifest (which inventory it was cut against, where the far side
 * mounts each left-out blob from) come from the connected side: held to what airgap writes before
 * `mirror verify` or `mirror --from` acts on them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const digest = `sha256:${'a'.repeat(64)}`;

async function archiveWith(fields: Record<string, unknown>): Promise<string> {
  const dir = join(await tempDir(), 'archive');
  await mkdir(dir);
  await writeFile(
    join(dir, 'airgap-archive.json'),
    JSON.stringify({
      kind: 'AirgapArchive',
      version: 1,
      createdAt: '2026-11-27T00:00:00Z',
      parts: [],
      images: [],
      previouslyArchived: [digest],
      ...fields,
    }),
  );
  return dir;
}

describe('an archive manifest’s delta fields, as input', () => {
  it.each([
    ['a home that is a path, not a repository', { homes: { [digest]: '../../etc' } }, 'homes'],
    ['a home keyed by something not a digest', { homes: { 'sha256:zz': 'ocp/release' } }, 'homes'],
    ['previouslyArchived holding a path', { previouslyArchived: ['../x'] }, 'previouslyArchived'],
    [
      'an inventory stamp naming no registry',
      {
        inventory: {
          sha256: `sha256:${'c'.repeat(64)}`,
          destination: 'docker:///ocp',
          takenAt: '2026-11-20T10:00:00.000Z',
          complete: true,
        },
      },
      'inventory.destination',
    ],
    [
      'an inventory stamp without its digest',
      { inventory: { destination: 'docker://m.example.com/ocp', takenAt: 'x', complete: true } },
      'inventory',
    ],
  ])('%s is refused with exit 2, the field named', async (_, fields, field) => {
    const r = await airgap(['mirror', 'verify', `file://${await archiveWith(fields)}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('ARCHIVE_INVALID');
    expect(r.stderr).toContain(field);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('a delta archive says so, and against which inventory', async () => {
    const sha = `sha256:${'b'.repeat(64)}`;
    const dir = await archiveWith({
      inventory: {
        sha256: sha,
        destination: 'docker://m.example.com/ocp',
        takenAt: '2026-11-20T10:00:00.000Z',
        complete: true,
      },
      homes: { [digest]: 'ocp/openshift/release' },
    });
    const r = await airgap(['mirror', 'verify', `file://${dir}`, '--json']);
    expect(JSON.parse(r.stdout).delta).toEqual({
      previouslyArchived: 1,
      inventory: {
        sha256: sha,
        destination: 'docker://m.example.com/ocp',
        takenAt: '2026-11-20T10:00:00.000Z',
        complete: true,
      },
    });
  });
});
