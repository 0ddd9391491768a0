import { describe, expect, it } from 'vitest';
import {
  digestTag,
  joinRepo,
  parsePlan,
  planAdditionalImages,
  PLAN_API_VERSION,
  type AdditionalImageSpec,
} from '../../src/mirror/plan.js';
import { AirgapError } from '../../src/util/errors.js';
import { IscErrorCode } from '../../src/mirror/isc/errors.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { thrown } from '../helpers/realdata.js';

const HEX = '0123456789abcdef'.repeat(4);
const DIGEST = `sha256:${HEX}`;

/** `destRepo:destTag` of each planned image, the names a person sees at the destination. */
function destinations(specs: AdditionalImageSpec[], blocked: { name: string }[] = []): string[] {
  return planAdditionalImages(specs, blocked).images.map((i) => `${i.destRepo}:${i.destTag}`);
}

function planError(specs: AdditionalImageSpec[], blocked: { name: string }[] = []): AirgapError {
  let caught: unknown;
  try {
    planAdditionalImages(specs, blocked);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AirgapError);
  return caught as AirgapError;
}

describe('planAdditionalImages: oc-mirror v2 destination naming', () => {
  it('keeps the source repository path and tag below the destination', () => {
    const { images, blocked } = planAdditionalImages([{ name: 'quay.io/org/app:v1' }], []);
    expect(blocked).toEqual([]);
    expect(images).toEqual([
      {
        origin: 'quay.io/org/app:v1',
        source: { registry: 'quay.io', repository: 'org/app', tag: 'v1' },
        destRepo: 'org/app',
        destTag: 'v1',
      },
    ]);
  });

  it('drops the source registry, port included, and keeps every path component', () => {
    expect(
      destinations([
        { name: 'localhost:5000/a/b/c:1' },
        { name: '[::1]:5000/x/y:2' },
        { name: 'registry.redhat.io/ubi9/ubi-minimal:9.4' },
      ]),
    ).toEqual(['a/b/c:1', 'x/y:2', 'ubi9/ubi-minimal:9.4']);
  });

  it('names docker.io images with their normalized library/ path and latest tag', () => {
    expect(destinations([{ name: 'busybox' }, { name: 'docker.io/org/tool' }])).toEqual([
      'library/busybox:latest',
      'org/tool:latest',
    ]);
  });

  it('accepts a docker:// prefix and keeps it in origin', () => {
    const { images } = planAdditionalImages([{ name: 'docker://quay.io/org/app:v1' }], []);
    expect(images[0]).toMatchObject({
      origin: 'docker://quay.io/org/app:v1',
      destRepo: 'org/app',
      destTag: 'v1',
    });
  });

  it('tags a digest-only image sha256-<hex>', () => {
    const { images } = planAdditionalImages([{ name: `quay.io/org/app@${DIGEST}` }], []);
    expect(images[0]).toMatchObject({ destRepo: 'org/app', destTag: `sha256-${HEX}` });
    expect(images[0]!.source).toEqual({ registry: 'quay.io', repository: 'org/app', digest: DIGEST });
  });

  it('keeps the tag of an image given by tag and digest', () => {
    expect(destinations([{ name: `quay.io/org/app:v2@${DIGEST}` }])).toEqual(['org/app:v2']);
  });

  it('uses targetRepo and targetTag in place of the source path and tag', () => {
    expect(
      destinations([
        { name: 'quay.io/org/app:v1', targetRepo: 'mirror/app' },
        { name: 'quay.io/org/app:v1', targetTag: 'stable' },
        { name: 'quay.io/org/app:v1', targetRepo: 'other/name', targetTag: 'prod' },
        { name: `quay.io/org/app@${DIGEST}`, targetTag: 'pinned' },
        { name: `quay.io/org/app@${DIGEST}`, targetRepo: 'pinned/app' },
      ]),
    ).toEqual([
      'mirror/app:v1',
      'org/app:stable',
      'other/name:prod',
      'org/app:pinned',
      `pinned/app:sha256-${HEX}`,
    ]);
  });

  it('collapses duplicates that name the same destination, keeping the first', () => {
    const { images } = planAdditionalImages(
      [
        { name: 'busybox', where: 'first' },
        { name: 'docker.io/library/busybox:latest', where: 'second' },
        { name: 'busybox:latest' },
        { name: 'busybox:1.36' },
      ],
      [],
    );
    expect(images.map((i) => [i.origin, `${i.destRepo}:${i.destTag}`, i.where])).toEqual([
      ['busybox', 'library/busybox:latest', 'first'],
      ['busybox:1.36', 'library/busybox:1.36', undefined],
    ]);
  });

  it('refuses two different sources that would land on the same destination', () => {
    expect(() =>
      planAdditionalImages(
        [{ name: 'quay.io/org/app:v1' }, { name: 'docker.io/org/app:v1', where: 'isc.yaml:9' }],
        [],
      ),
    ).toThrow(
      expect.objectContaining({
        code: IscErrorCode.Conflict,
        exitCode: 2,
        where: 'isc.yaml:9',
        message: expect.stringContaining('org/app:v1'),
      }),
    );
  });

  it('keeps one source copied to two different targets', () => {
    expect(
      destinations([
        { name: 'quay.io/org/app:v1' },
        { name: 'quay.io/org/app:v1', targetTag: 'v1-copy' },
        { name: 'quay.io/org/app:v1', targetRepo: 'elsewhere/app' },
      ]),
    ).toEqual(['org/app:v1', 'org/app:v1-copy', 'elsewhere/app:v1']);
  });

  it('carries where for messages', () => {
    const { images } = planAdditionalImages([{ name: 'quay.io/a/b:1', where: 'isc.yaml:7' }], []);
    expect(images[0]!.where).toBe('isc.yaml:7');
  });
});

describe('planAdditionalImages: blockedImages', () => {
  const specs: AdditionalImageSpec[] = [
    { name: 'busybox:1.36' },
    { name: 'quay.io/org/app:v1' },
    { name: 'quay.io/org/app:v10' },
    { name: 'registry.redhat.io/ubi9/ubi:9.4' },
  ];

  it('blocks on the string as written in the configuration', () => {
    const { images, blocked } = planAdditionalImages(specs, [{ name: '^busybox' }]);
    expect(blocked).toEqual([{ origin: 'busybox:1.36', pattern: '^busybox' }]);
    expect(images.map((i) => i.origin)).toEqual(specs.slice(1).map((s) => s.name));
  });

  it('blocks on the normalized reference', () => {
    const { blocked } = planAdditionalImages(specs, [{ name: '^docker\\.io/library/busybox:1\\.36$' }]);
    expect(blocked.map((b) => b.origin)).toEqual(['busybox:1.36']);
  });

  it('matches anywhere in the name unless anchored (Go MatchString)', () => {
    const { blocked } = planAdditionalImages(specs, [{ name: 'org/app' }]);
    expect(blocked.map((b) => b.origin)).toEqual(['quay.io/org/app:v1', 'quay.io/org/app:v10']);
  });

  it('reports the first pattern that blocked each image', () => {
    const { blocked } = planAdditionalImages(specs, [
      { name: 'ubi' },
      { name: 'redhat' },
      { name: 'app:v1$' },
    ]);
    expect(blocked).toEqual([
      { origin: 'quay.io/org/app:v1', pattern: 'app:v1$' },
      { origin: 'registry.redhat.io/ubi9/ubi:9.4', pattern: 'ubi' },
    ]);
  });

  it('blocks nothing when no pattern matches', () => {
    const { images, blocked } = planAdditionalImages(specs, [{ name: '^quay\\.io/other/' }]);
    expect(blocked).toEqual([]);
    expect(images).toHaveLength(4);
  });

  it('understands Go (RE2) syntax the configuration validator accepts: (?i) and \\z', () => {
    const { blocked } = planAdditionalImages(specs, [{ name: '(?i)QUAY\\.IO/ORG/APP:V1\\z' }]);
    expect(blocked.map((b) => b.origin)).toEqual(['quay.io/org/app:v1']);
  });

  it('refuses a pattern that is not a valid regular expression as a usage error', () => {
    const e = planError(specs, [{ name: 'quay.io/(org' }]);
    expect(e.code).toBe(IscErrorCode.Invalid);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('quay.io/(org');
  });
});

describe('planAdditionalImages: invalid input', () => {
  it.each(['-bad', '.bad', 'has space', 'x'.repeat(129), 'a/b', ''])('refuses targetTag %j', (targetTag) => {
    const e = planError([{ name: 'quay.io/org/app:v1', targetTag, where: 'isc.yaml:9' }]);
    expect(e.code).toBe(IscErrorCode.Invalid);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(`targetTag "${targetTag}"`);
    expect(e.message).toContain('quay.io/org/app:v1');
    expect(e.where).toBe('isc.yaml:9');
  });

  it('accepts a 128-character targetTag', () => {
    expect(destinations([{ name: 'quay.io/a:1', targetTag: 'v'.repeat(128) }])).toEqual([
      `a:${'v'.repeat(128)}`,
    ]);
  });

  it('refuses an invalid image name with the reference error', () => {
    const e = planError([{ name: 'quay.io/Org/app:v1' }]);
    expect(e.code).toBe(MirrorError.REF_INVALID);
    expect(e.message).toContain('quay.io/Org/app:v1');
  });
});

describe('digestTag and joinRepo', () => {
  it('turns a digest into the sha256-<hex> tag', () => {
    expect(digestTag(DIGEST)).toBe(`sha256-${HEX}`);
  });

  it('truncates a longer digest tag to 127 characters so it stays a valid tag', () => {
    const t = digestTag(`sha512:${'c'.repeat(128)}`);
    expect(t).toHaveLength(127);
    expect(t.startsWith('sha512-ccc')).toBe(true);
  });

  it('joins a destination prefix and a repository path', () => {
    expect(joinRepo('', 'org/app')).toBe('org/app');
    expect(joinRepo('ocp', 'org/app')).toBe('ocp/org/app');
    expect(joinRepo('ocp/mirror//', 'org/app')).toBe('ocp/mirror/org/app');
  });
});

describe('a plan read back: every reference it carries is canonical before it is used', () => {
  const entry = {
    kind: 'additional',
    origin: 'quay.io/org/app:v1',
    source: `quay.io/org/app@sha256:${'a'.repeat(64)}`,
    digest: `sha256:${'a'.repeat(64)}`,
    destRepo: 'org/app',
    destTag: 'v1',
    byTag: true,
    byDigest: false,
    context: 'additionalImages[0]',
  };
  const planWith = (e: Record<string, unknown>) =>
    JSON.stringify({ apiVersion: PLAN_API_VERSION, kind: 'MirrorPlan', images: [{ ...entry, ...e }] });

  it('takes a plan as airgap wrote it, build sources included', () => {
    expect(parsePlan(planWith({}), 'plan.json').images).toHaveLength(1);
    expect(parsePlan(planWith({ source: 'build:redhat/catalog' }), 'plan.json').images).toHaveLength(1);
  });

  it.each([
    ['origin', 'quay.io/org/../other/app:v1'],
    ['origin', 'quay.io/org/%2e%2e/app:v1'],
    ['origin', 'quay.io/org/app:v1\n[[registry]]'],
    ['source', 'quay.io/Org/app@sha256:x'],
    ['source', 'build:../x'],
  ])('refuses a plan whose %s is %j, naming the field', (field, value) => {
    const e = thrown(() => parsePlan(planWith({ [field]: value }), 'plan.json'));
    expect(e.code).toBe(MirrorError.PLAN_INVALID);
    expect(e.message).toContain(`plan.json images[0].${field}`);
  });
});
