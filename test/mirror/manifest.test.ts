import { describe, expect, it } from 'vitest';
import { blobsOf, matchesPlatform, parseManifest } from '../../src/mirror/manifest.js';
import { MediaType } from '../../src/mirror/media-types.js';
import { MirrorError } from '../../src/mirror/errors.js';

const d = (n: number, extra: object = {}) => ({
  mediaType: MediaType.OciLayer,
  digest: `sha256:${String(n).repeat(64).slice(0, 64)}`,
  size: n,
  ...extra,
});

describe('parseManifest', () => {
  it('refuses Docker schema 1 with a clear error, by content type or by schemaVersion', () => {
    const doc = Buffer.from(JSON.stringify({ schemaVersion: 1, name: 'x', fsLayers: [] }));
    expect(() => parseManifest(doc, MediaType.DockerSchema1Signed, 'quay.io/old:1')).toThrow(
      expect.objectContaining({
        code: MirrorError.MIRROR_SCHEMA1,
        message: expect.stringContaining('quay.io/old:1'),
      }),
    );
    expect(() => parseManifest(doc, 'application/json', 'quay.io/old:1')).toThrow(
      expect.objectContaining({ code: MirrorError.MIRROR_SCHEMA1 }),
    );
  });

  it('reads an OCI manifest without mediaType from its shape, and skips non-distributable layers', () => {
    const doc = Buffer.from(
      JSON.stringify({ schemaVersion: 2, config: d(1), layers: [d(2), d(3, { urls: ['https://x'] })] }),
    );
    const m = parseManifest(doc, undefined, 'x');
    expect(m.kind).toBe('image');
    if (m.kind !== 'image') return;
    expect(blobsOf(m).map((b) => b.size)).toEqual([1, 2]);
  });

  it('reads an index and filters children by architecture, keeping platform-less entries', () => {
    const doc = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciIndex,
        manifests: [
          d(1, { platform: { os: 'linux', architecture: 'amd64' } }),
          d(2, { platform: { os: 'linux', architecture: 'arm64' } }),
          d(3),
        ],
      }),
    );
    const m = parseManifest(doc, MediaType.OciIndex, 'x');
    if (m.kind !== 'index') throw new Error('expected an index');
    expect(m.manifests.filter((c) => matchesPlatform(c, ['arm64'])).map((c) => c.size)).toEqual([2, 3]);
  });

  it('names the image when a descriptor is malformed or the bytes are not JSON', () => {
    expect(() => parseManifest(Buffer.from('{nope'), MediaType.OciManifest, 'reg/app:1')).toThrow(
      /reg\/app:1: it is not JSON/,
    );
    const bad = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciManifest,
        config: { digest: 'x' },
        layers: [],
      }),
    );
    expect(() => parseManifest(bad, MediaType.OciManifest, 'reg/app:1')).toThrow(
      expect.objectContaining({ code: MirrorError.MIRROR_MANIFEST_INVALID }),
    );
  });
});

describe('digests where they enter', () => {
  const layer = (digest: string) =>
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciManifest,
        config: {
          mediaType: 'application/vnd.oci.image.config.v1+json',
          digest: `sha256:${'c'.repeat(64)}`,
          size: 2,
        },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest, size: 5 }],
      }),
    );

  it.each([
    'sha256:../../../x',
    'sha256:ABCDEF' + 'a'.repeat(58),
    `sha256:${'a'.repeat(63)}`,
    `sha256:${'a'.repeat(64)}/x`,
    `md5:${'a'.repeat(32)}`,
    `sha512:${'a'.repeat(64)}`,
  ])('a descriptor whose digest is %j is refused, naming where it is', (digest) => {
    expect(() => parseManifest(layer(digest), undefined, 'manifest m')).toThrow(
      expect.objectContaining({
        code: MirrorError.MIRROR_DIGEST_INVALID,
        message: expect.stringContaining('manifest m layers[0]'),
      }),
    );
  });

  it.each([`sha256:${'a'.repeat(64)}`, `sha384:${'b'.repeat(96)}`, `sha512:${'c'.repeat(128)}`])(
    'accepts %s (what go-digest validates)',
    (digest) => {
      expect(() => parseManifest(layer(digest), undefined, 'manifest m')).not.toThrow();
    },
  );
});
