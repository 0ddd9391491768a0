import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bootImagesManifestPath,
  mergeBootImagesManifest,
  readBootImagesManifest,
  writeBootImagesManifest,
  type BootImageEntry,
} from '../../../src/server/rhcos/manifest.js';
import { tempDir } from '../../helpers/fixtures.js';
import { rejection } from '../../helpers/realdata.js';
import { ServerError } from '../../../src/server/errors.js';

function entry(over: Partial<BootImageEntry>): BootImageEntry {
  return {
    architecture: 'x86_64',
    artifact: 'iso',
    release: '9.6.20250402-0',
    file: 'rhcos-9.6.20250402-0-live-iso.x86_64.iso',
    sha256: 'a'.repeat(64),
    size: 10,
    location: 'https://rhcos.mirror.openshift.com/x.iso',
    stream: 'rhcos-4.18',
    ...over,
  };
}

describe('boot images manifest', () => {
  it('merges: same file or same (stream, architecture, artifact) is replaced, the rest stays, sorted', () => {
    const first = mergeBootImagesManifest(undefined, {
      stream: 'rhcos-4.18',
      openshiftVersion: '4.18',
      source: 'quay.io/x@sha256:1',
      images: [
        entry({ architecture: 'x86_64', artifact: 'rootfs', file: 'x-rootfs.img', openshiftVersion: '4.18' }),
        entry({ architecture: 'x86_64', artifact: 'iso', file: 'x.iso', openshiftVersion: '4.18' }),
      ],
    });
    expect(first.images.map((i) => i.file)).toEqual(['x.iso', 'x-rootfs.img']);

    // Another architecture from a stream file without a version: kept apart, the version carried on.
    const second = mergeBootImagesManifest(first, {
      stream: 'rhcos-4.18',
      source: 'stream.json',
      images: [entry({ architecture: 'aarch64', file: 'a.iso' })],
    });
    expect(second.openshiftVersion).toBe('4.18');
    expect(second.source).toBe('stream.json');
    expect(second.images.map((i) => [i.file, i.openshiftVersion])).toEqual([
      ['a.iso', '4.18'],
      ['x.iso', '4.18'],
      ['x-rootfs.img', '4.18'],
    ]);

    // A newer build of the same stream and architecture replaces the entry (the old file is not listed).
    const third = mergeBootImagesManifest(second, {
      stream: 'rhcos-4.18',
      openshiftVersion: '4.18',
      images: [
        entry({
          architecture: 'x86_64',
          file: 'x2.iso',
          release: '9.6.20250501-0',
          openshiftVersion: '4.18',
        }),
      ],
    });
    expect(third.images.map((i) => i.file)).toEqual(['a.iso', 'x2.iso', 'x-rootfs.img']);

    // Another stream: both listed; the top level is the latest fetch's.
    const fourth = mergeBootImagesManifest(third, {
      stream: 'rhcos-4.19',
      openshiftVersion: '4.19',
      images: [entry({ file: 'y.iso', stream: 'rhcos-4.19', openshiftVersion: '4.19' })],
    });
    expect(fourth.stream).toBe('rhcos-4.19');
    expect(fourth.openshiftVersion).toBe('4.19');
    expect(
      fourth.images.filter((i) => i.architecture === 'x86_64' && i.artifact === 'iso').map((i) => i.stream),
    ).toEqual(['rhcos-4.18', 'rhcos-4.19']);
  });

  it('reads back what it wrote; missing, invalid and incomplete manifests are named errors', async () => {
    const dir = await tempDir('airgap-manifest-');
    const missing = await rejection(readBootImagesManifest(dir));
    expect(missing.code).toBe(ServerError.IMAGES_MANIFEST_MISSING);
    expect(missing.exitCode).toBe(2);
    expect(missing.hint).toContain('airgap images fetch');

    const m = mergeBootImagesManifest(undefined, { stream: 'rhcos-4.18', images: [entry({ size: 3 })] });
    expect(m.openshiftVersion).toBeUndefined();
    const path = await writeBootImagesManifest(dir, m);
    expect(path).toBe(join(dir, 'images', 'airgap-images.json'));
    expect(await readBootImagesManifest(dir)).toEqual(m);

    const files = await rejection(readBootImagesManifest(dir, { checkFiles: true }));
    expect(files.code).toBe(ServerError.IMAGES_FILE_MISSING);
    expect(files.message).toContain('rhcos-9.6.20250402-0-live-iso.x86_64.iso is missing');
    await writeFile(join(dir, 'images', entry({}).file), 'abcd');
    expect((await rejection(readBootImagesManifest(dir, { checkFiles: true }))).message).toContain(
      'is 4 bytes, the manifest says 3',
    );
    await writeFile(join(dir, 'images', entry({}).file), 'abc');
    await readBootImagesManifest(dir, { checkFiles: true });

    for (const bad of ['{', '{"kind":"Other"}', JSON.stringify({ ...m, images: [{ file: '../x' }] })]) {
      await writeFile(bootImagesManifestPath(dir), bad);
      expect((await rejection(readBootImagesManifest(dir))).code, bad).toBe(
        ServerError.IMAGES_MANIFEST_INVALID,
      );
    }
    // Each field is checked, and the error names it.
    for (const [bad, field] of [
      [
        { artifact: 'constructor' },
        'images[0].artifact is "constructor", not one of iso, rootfs, kernel, initramfs',
      ],
      [{ sha256: 7 }, 'images[0].sha256 is 7, not a string'],
      [{ size: -1 }, 'images[0].size is -1, not a size in bytes'],
      [{ openshiftVersion: 4.18 }, 'images[0].openshiftVersion is 4.18, not a string'],
    ] as const) {
      await writeFile(
        bootImagesManifestPath(dir),
        JSON.stringify({ ...m, images: [{ ...entry({}), ...bad }] }),
      );
      const e = await rejection(readBootImagesManifest(dir));
      expect(e.code, field).toBe(ServerError.IMAGES_MANIFEST_INVALID);
      expect(e.message).toContain(field);
    }
    const other = join(dir, 'other');
    await mkdir(join(other, 'images'), { recursive: true });
    await writeFile(
      bootImagesManifestPath(other),
      JSON.stringify({ ...m, images: [{ ...entry({}), file: '.hidden.partial' }] }),
    );
    expect((await rejection(readBootImagesManifest(other))).code).toBe(ServerError.IMAGES_MANIFEST_INVALID);
  });
});
