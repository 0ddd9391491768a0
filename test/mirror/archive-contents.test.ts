/**
 * An archive whose parts are intact (sizes and checksums match its manifest) but which lacks a
 * blob one of its images needs: built by the test from a real archive, re-packed without that
 * blob and with a consistent manifest, as a careless or hostile hand would. `airgap mirror verify`
 * must fail naming the blob and the image; the disk → registry run must fail that image at once
 * (no retries, no "network" explanation) and still push the others.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create as tarCreate, extract as tarExtract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/mirror/errors.js';
import { airgap } from '../helpers/cli.js';
import { tempDir, writeIsc } from '../helpers/fixtures.js';
import { startHostileRegistry, type HostileRegistry } from '../helpers/hostile-registry.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';

const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Re-pack part 1 of the archive in `dir` without blob `digest`, and fix the archive manifest to match. */
async function dropBlob(dir: string, digest: string): Promise<void> {
  const manifestPath = join(dir, 'airgap-archive.json');
  const m = JSON.parse(await readFile(manifestPath, 'utf8')) as {
    parts: { file: string; size: number; sha256: string; blobs: string[] }[];
  };
  const part = m.parts.find((p) => p.blobs.includes(digest))!;
  const unpacked = join(dir, 'unpacked');
  await mkdir(unpacked, { recursive: true });
  await tarExtract({ file: join(dir, part.file), cwd: unpacked });
  await rm(join(unpacked, 'blobs', 'sha256', digest.slice('sha256:'.length)));
  const members = ['oci-layout', 'index.json', 'airgap-plan.json'];
  for (const f of await readdir(join(unpacked, 'blobs', 'sha256'))) members.push(`blobs/sha256/${f}`);
  const present = [];
  for (const f of members) if (await stat(join(unpacked, f)).catch(() => undefined)) present.push(f);
  await tarCreate({ file: join(dir, part.file), cwd: unpacked, portable: true, noDirRecurse: true }, present);
  await rm(unpacked, { recursive: true });
  const bytes = await readFile(join(dir, part.file));
  part.size = bytes.length;
  part.sha256 = sha256(bytes);
  part.blobs = part.blobs.filter((b) => b !== digest);
  await writeFile(manifestPath, JSON.stringify(m, null, 2));
}

describe('an archive that lacks a blob its image needs', () => {
  let src: HostileRegistry;
  let dst: TestRegistry;
  let dir: string;
  let isc: string;
  let archive: string;
  let missing: string;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startHostileRegistry(), startRegistry()]);
    dir = await tempDir();
    src.image('fine/app', 'v1', Buffer.from('the only layer of fine/app'));
    missing = src.image('broken/app', 'v1', Buffer.from('the only layer of broken/app')).layer;
    isc = await writeIsc(dir, [`${src.host}/fine/app:v1`, `${src.host}/broken/app:v1`]);
    const made = await airgap(['mirror', '-c', isc, `file://${join(dir, 'made')}`, '--ca-file', src.caFile]);
    expect(made.exitCode, made.stderr).toBe(0);
    // Carried across: the parts and their manifest only, never the connected side's working-dir.
    archive = join(dir, 'archive');
    await mkdir(archive);
    for (const f of await readdir(join(dir, 'made')))
      if (f.endsWith('.tar') || f === 'airgap-archive.json')
        await copyFile(join(dir, 'made', f), join(archive, f));
    await dropBlob(archive, missing);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  it('mirror verify fails, naming the blob and the image', async () => {
    const r = await airgap(['mirror', 'verify', `file://${archive}`]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain(`broken/app:v1: layer ${missing} is in no part of the archive`);
    expect(r.stdout).toContain('archive is incomplete');
    // Every part itself is intact: only the image is named, not a part.
    expect(r.stdout).toMatch(/^ok {5} mirror_000001\.tar$/m);
    const json = JSON.parse((await airgap(['mirror', 'verify', `file://${archive}`, '--json'])).stdout) as {
      ok: boolean;
      missing: { image: string; digest: string }[];
    };
    expect(json.ok).toBe(false);
    expect(json.missing).toEqual([expect.objectContaining({ image: 'broken/app:v1', digest: missing })]);
  }, 60_000);

  it('disk to registry fails that image at once, naming the blob, and pushes the others', async () => {
    const started = Date.now();
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--from',
      `file://${archive}`,
      `docker://${dst.host}/mirror`,
      '--authfile',
      dst.authFile,
      '--ca-file',
      dst.caFile,
      '--json',
    ]);
    expect(r.exitCode).toBe(1);
    // Told before anything is pushed, then the image fails without a retry.
    expect(r.stderr).toContain(`the archive lacks what broken/app:v1 needs: layer ${missing}`);
    expect(Date.now() - started).toBeLessThan(20_000);
    const images = (
      JSON.parse(r.stdout) as {
        summary: {
          images: {
            source: string;
            status: string;
            error?: { code: string; message: string; hint?: string };
          }[];
        };
      }
    ).summary.images;
    const broken = images.find((i) => i.source.includes('broken/app'))!;
    expect(broken.status).toBe('failed');
    // Refused before any of it is pushed, saying the archive is incomplete.
    expect(broken.error?.code).toBe(MirrorError.MIRROR_BLOB_UNAVAILABLE);
    expect(broken.error?.message).toContain(missing);
    expect(broken.error?.hint).toContain('the archive neither carries these nor left them out on purpose');
    expect(r.stdout).not.toContain('keeps dropping the connection');
    expect(images.find((i) => i.source.includes('fine/app'))?.status).toBe('copied');
    expect(await skopeoDigest(`docker://${dst.skopeoHost}/mirror/fine/app:v1`, dst.skopeo)).toMatch(
      /^sha256:/,
    );
  }, 120_000);
});
