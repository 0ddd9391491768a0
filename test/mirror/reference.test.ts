import { describe, expect, it } from 'vitest';
import {
  formatReference,
  parseTransport,
  parseReference,
  referenceInScope,
  type ImageReference,
  type TransportReference,
} from '../../src/mirror/reference.js';
import { AirgapError } from '../../src/util/errors.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { thrown } from '../helpers/realdata.js';

const HEX = 'a'.repeat(56) + '0123abcd';
const DIGEST = `sha256:${HEX}`;

/** The error parseReference throws for `input`, checked to be the one usage error people see. */
function refError(input: string): AirgapError {
  let caught: unknown;
  try {
    parseReference(input);
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected "${input}" to be rejected`).toBeInstanceOf(AirgapError);
  const e = caught as AirgapError;
  expect(e.code).toBe(MirrorError.REF_INVALID);
  expect(e.exitCode).toBe(2);
  expect(e.message).toContain(`"${input}"`);
  return e;
}

function locationError(input: string, kind: 'image' | 'destination'): AirgapError {
  let caught: unknown;
  try {
    parseTransport(input, kind);
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected "${input}" to be rejected`).toBeInstanceOf(AirgapError);
  const e = caught as AirgapError;
  expect(e.exitCode).toBe(2);
  return e;
}

describe('parseReference: docker.io normalization (ParseNormalizedNamed)', () => {
  const cases: [string, ImageReference][] = [
    ['busybox', { registry: 'docker.io', repository: 'library/busybox', tag: 'latest' }],
    ['busybox:1.36', { registry: 'docker.io', repository: 'library/busybox', tag: '1.36' }],
    ['docker.io/busybox', { registry: 'docker.io', repository: 'library/busybox', tag: 'latest' }],
    ['docker.io/library/busybox', { registry: 'docker.io', repository: 'library/busybox', tag: 'latest' }],
    // index.docker.io is the legacy name of docker.io: it becomes docker.io, and library/ is added
    // exactly as for docker.io, only to single-component paths.
    ['index.docker.io/x', { registry: 'docker.io', repository: 'library/x', tag: 'latest' }],
    ['index.docker.io/org/x:2', { registry: 'docker.io', repository: 'org/x', tag: '2' }],
    ['org/app', { registry: 'docker.io', repository: 'org/app', tag: 'latest' }],
    ['docker.io/org/app', { registry: 'docker.io', repository: 'org/app', tag: 'latest' }],
    // A lone "localhost" is a repository name, and so is "localhost:5000" (a tag of library/localhost).
    ['localhost', { registry: 'docker.io', repository: 'library/localhost', tag: 'latest' }],
    ['localhost:5000', { registry: 'docker.io', repository: 'library/localhost', tag: '5000' }],
  ];
  it.each(cases)('%s', (input, want) => {
    expect(parseReference(input)).toEqual(want);
  });

  it('does not add library/ for any registry other than docker.io', () => {
    expect(parseReference('quay.io/busybox').repository).toBe('busybox');
    expect(parseReference('localhost/busybox').repository).toBe('busybox');
  });
});

describe('parseReference: which first component is a registry host', () => {
  const cases: [string, ImageReference][] = [
    ['localhost/foo', { registry: 'localhost', repository: 'foo', tag: 'latest' }],
    ['localhost:5000/foo', { registry: 'localhost:5000', repository: 'foo', tag: 'latest' }],
    // Uppercase in the first component makes it a host (hostnames are case-insensitive, paths are not).
    ['Foo.com/bar', { registry: 'Foo.com', repository: 'bar', tag: 'latest' }],
    ['FOO/bar', { registry: 'FOO', repository: 'bar', tag: 'latest' }],
    // A colon (port) alone makes a host, without a dot.
    ['myhost:5000/repo', { registry: 'myhost:5000', repository: 'repo', tag: 'latest' }],
    ['quay.io/org/app:v1', { registry: 'quay.io', repository: 'org/app', tag: 'v1' }],
    ['127.0.0.1:5000/a/b/c', { registry: '127.0.0.1:5000', repository: 'a/b/c', tag: 'latest' }],
    ['[::1]:5000/repo:tag', { registry: '[::1]:5000', repository: 'repo', tag: 'tag' }],
    ['[::1]:5000/repo', { registry: '[::1]:5000', repository: 'repo', tag: 'latest' }],
    ['[fd00::1]/repo', { registry: '[fd00::1]', repository: 'repo', tag: 'latest' }],
    ['[FD00::1]:443/a/b:c', { registry: '[FD00::1]:443', repository: 'a/b', tag: 'c' }],
  ];
  it.each(cases)('%s', (input, want) => {
    expect(parseReference(input)).toEqual(want);
  });

  it('does not take a lowercase single word without dot or port as a host', () => {
    expect(parseReference('registry/app')).toEqual({
      registry: 'docker.io',
      repository: 'registry/app',
      tag: 'latest',
    });
  });
});

describe('parseReference: tags and digests', () => {
  it('keeps a digest and adds no tag to a digest-only reference', () => {
    expect(parseReference(`quay.io/org/app@${DIGEST}`)).toEqual({
      registry: 'quay.io',
      repository: 'org/app',
      digest: DIGEST,
    });
  });

  it('keeps both tag and digest when both are given', () => {
    expect(parseReference(`quay.io/org/app:v1@${DIGEST}`)).toEqual({
      registry: 'quay.io',
      repository: 'org/app',
      tag: 'v1',
      digest: DIGEST,
    });
  });

  it('parses a digest on a registry with a port and a bracketed IPv6 host', () => {
    expect(parseReference(`[::1]:5000/repo@${DIGEST}`)).toEqual({
      registry: '[::1]:5000',
      repository: 'repo',
      digest: DIGEST,
    });
    expect(parseReference(`localhost:5000/repo:t@${DIGEST}`)).toMatchObject({
      registry: 'localhost:5000',
      tag: 't',
      digest: DIGEST,
    });
  });

  it('accepts sha512 digests of the right length', () => {
    const d = `sha512:${'b'.repeat(128)}`;
    expect(parseReference(`quay.io/a@${d}`).digest).toBe(d);
  });

  it('accepts uppercase, digits, _, . and - in tags, up to 128 characters', () => {
    expect(parseReference('quay.io/a:V1.0_rc-2').tag).toBe('V1.0_rc-2');
    expect(parseReference('quay.io/a:_x').tag).toBe('_x');
    const t128 = 'v' + 'x'.repeat(127);
    expect(parseReference(`quay.io/a:${t128}`).tag).toBe(t128);
  });

  it('accepts the separators distribution allows inside a path component', () => {
    for (const repo of ['a.b', 'a_b', 'a__b', 'a-b', 'a---b', 'a0/b1.c2_d3__e4-f5']) {
      expect(parseReference(`quay.io/${repo}`).repository).toBe(repo);
    }
  });

  it('round-trips through formatReference', () => {
    for (const s of [
      'quay.io/org/app:v1',
      `quay.io/org/app@${DIGEST}`,
      `quay.io/org/app:v1@${DIGEST}`,
      '[::1]:5000/repo:tag',
      '127.0.0.1:5000/a/b/c:latest',
    ]) {
      expect(formatReference(parseReference(s))).toBe(s);
    }
    expect(formatReference(parseReference('busybox'))).toBe('docker.io/library/busybox:latest');
  });
});

describe('parseReference: length limits', () => {
  it('rejects a tag over 128 characters', () => {
    const t129 = 'v' + 'x'.repeat(128);
    expect(refError(`quay.io/a:${t129}`).message).toContain('not a valid tag');
  });

  it('counts the full normalized name (registry/library/...) against the 255-character limit', () => {
    // docker.io/library/ is 18 characters: 237 more make 255 (allowed), 238 make 256.
    expect(parseReference('a'.repeat(237)).repository).toBe(`library/${'a'.repeat(237)}`);
    expect(refError('a'.repeat(238)).message).toContain('longer than 255');
    // localhost/ is 10 characters.
    expect(parseReference(`localhost/${'b'.repeat(245)}`).repository).toHaveLength(245);
    refError(`localhost/${'b'.repeat(246)}`);
  });

  it('does not count the tag or digest in the name length', () => {
    const name = `localhost/${'b'.repeat(245)}`;
    expect(parseReference(`${name}:${'t'.repeat(100)}@${DIGEST}`).tag).toHaveLength(100);
  });
});

describe('parseReference: invalid references are usage errors naming the input', () => {
  const invalid: [string, string][] = [
    ['', 'empty'],
    ['   ', 'only whitespace'],
    [':tag', 'a tag with no name'],
    ['repo:', 'an empty tag'],
    ['repo:.x', 'a tag starting with .'],
    ['repo:-x', 'a tag starting with -'],
    ['quay.io/org/app:v1:v2', 'two tags'],
    ['quay.io/Org/app', 'uppercase in the repository path'],
    ['Busybox', 'uppercase in a docker.io name'],
    ['quay.io/org/App:v1', 'uppercase in the last path component'],
    ['a//b', 'an empty path component'],
    ['a/-b', 'a component starting with -'],
    ['a/b-', 'a component ending with -'],
    ['a/_b', 'a component starting with _'],
    ['a___b', 'three underscores'],
    ['a/b/', 'a trailing slash'],
    ['quay.io/', 'a registry with no path'],
    ['quay.io/a b', 'a space in the path'],
    ['[::1]', 'a bracketed IPv6 address without a path'],
    ['[::1]:5000', 'an IPv6 address and port without a path'],
    ['[abc]/repo', 'brackets around something that is not an IPv6 address'],
    ['[::ffff:127.0.0.1]:5000/repo', 'an IPv4-mapped IPv6 address (distribution only allows hex and colons)'],
    ['[fe80::1%eth0]/repo', 'an IPv6 zone'],
    ['a:b/c', 'a non-numeric port'],
    ['-quay.io/a', 'a host starting with -'],
    ['quay..io/a', 'an empty host label'],
    ['repo@', 'an empty digest'],
    ['repo@sha256:abc', 'a short sha256 digest'],
    [`repo@sha256:${HEX.toUpperCase()}`, 'an uppercase sha256 digest'],
    [`repo@sha256:${HEX}0`, 'a 65-character sha256 digest'],
    [`repo@sha512:${HEX}`, 'a sha512 digest of sha256 length'],
    [`repo@md5:${'0'.repeat(32)}`, 'an unsupported digest algorithm'],
    [`repo@${HEX}`, 'a digest without algorithm'],
    [`repo@${DIGEST}@${DIGEST}`, 'two digests'],
    [HEX, 'a 64-character hex string (an image ID, not a name)'],
  ];
  it.each(invalid)('%j (%s)', (input) => {
    refError(input);
  });

  it('says why in the message and how to write it in the hint', () => {
    expect(refError('quay.io/Org/app').message).toContain('lowercase');
    expect(refError('repo@sha256:abc').message).toContain('"sha256:abc" is not a valid digest');
    expect(refError('a:b/c').message).toContain('"a:b" is not a valid registry host');
    expect(refError('').hint).toContain('[host[:port]/]path');
  });

  it('accepts a 64-hex string as a path component below a namespace, and with a tag', () => {
    expect(parseReference(`org/${HEX}`).repository).toBe(`org/${HEX}`);
    expect(parseReference(`${HEX}:v1`).repository).toBe(`library/${HEX}`);
  });
});

describe('parseTransport: destinations', () => {
  const cases: [string, TransportReference][] = [
    [
      'docker://host:5000/prefix/sub',
      { transport: 'docker-prefix', registry: 'host:5000', prefix: 'prefix/sub' },
    ],
    ['docker://host.example.com', { transport: 'docker-prefix', registry: 'host.example.com', prefix: '' }],
    ['docker://host:5000/ocp/', { transport: 'docker-prefix', registry: 'host:5000', prefix: 'ocp' }],
    ['docker://[::1]:5000/p', { transport: 'docker-prefix', registry: '[::1]:5000', prefix: 'p' }],
    ['docker://localhost', { transport: 'docker-prefix', registry: 'localhost', prefix: '' }],
    ['docker://localhost/mirror', { transport: 'docker-prefix', registry: 'localhost', prefix: 'mirror' }],
    [
      'mirror.example.com:8443/ocp',
      { transport: 'docker-prefix', registry: 'mirror.example.com:8443', prefix: 'ocp' },
    ],
    ['file://dir', { transport: 'file', path: 'dir' }],
    ['file:///abs/dir', { transport: 'file', path: '/abs/dir' }],
    ['oci:/path:ref', { transport: 'oci', path: '/path', refName: 'ref' }],
    ['oci:/path', { transport: 'oci', path: '/path' }],
    ['oci:///abs/layout:v1', { transport: 'oci', path: '/abs/layout', refName: 'v1' }],
    ['oci:rel/dir', { transport: 'oci', path: 'rel/dir' }],
  ];
  it.each(cases)('%s', (input, want) => {
    expect(parseTransport(input, 'destination')).toEqual(want);
  });

  it('rejects a destination whose first component cannot be a host (it would mean docker.io)', () => {
    // `noport` has no dot, no port and is not localhost: as an image name it is docker.io/library/noport,
    // so pushing "to" it would be ambiguous. Refusing it is what keeps a typo off Docker Hub.
    for (const input of ['docker://noport', 'docker://noport/ocp', 'noport']) {
      const e = locationError(input, 'destination');
      expect(e.code).toBe(MirrorError.LOCATION_INVALID);
      expect(e.message).toContain(`"${input}"`);
      expect(e.hint).toContain('docker://host[:port][/prefix]');
    }
  });

  it('rejects an invalid host or prefix', () => {
    expect(locationError('docker://-bad.example.com/p', 'destination').code).toBe(
      MirrorError.LOCATION_INVALID,
    );
    expect(locationError('docker://host:port/p', 'destination').code).toBe(MirrorError.LOCATION_INVALID);
    const e = locationError('docker://host:5000/Upper/sub', 'destination');
    expect(e.code).toBe(MirrorError.LOCATION_INVALID);
    expect(e.message).toContain('"Upper/sub"');
    expect(locationError('docker://host:5000/a//b', 'destination').code).toBe(MirrorError.LOCATION_INVALID);
    expect(locationError('docker://', 'destination').code).toBe(MirrorError.LOCATION_INVALID);
  });

  it('rejects file:// and oci: with no directory', () => {
    const f = locationError('file://', 'destination');
    expect(f.code).toBe(MirrorError.LOCATION_INVALID);
    expect(f.message).toContain('"file://"');
    expect(locationError('oci:', 'destination').code).toBe(MirrorError.LOCATION_INVALID);
  });
});

describe('parseTransport: images', () => {
  it('parses docker:// and bare references as images with normalization', () => {
    expect(parseTransport('docker://quay.io/org/app:v1', 'image')).toEqual({
      transport: 'docker',
      reference: { registry: 'quay.io', repository: 'org/app', tag: 'v1' },
    });
    expect(parseTransport('busybox', 'image')).toEqual({
      transport: 'docker',
      reference: { registry: 'docker.io', repository: 'library/busybox', tag: 'latest' },
    });
  });

  it('reports an invalid image reference with the reference named', () => {
    let caught: unknown;
    try {
      parseTransport('docker://quay.io/Org/app', 'image');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AirgapError);
    expect((caught as AirgapError).code).toBe(MirrorError.REF_INVALID);
    expect((caught as AirgapError).message).toContain('quay.io/Org/app');
  });
});

describe('referenceInScope: a list item made canonical before it is compared with the destination', () => {
  const scope = { registry: 'mirror.example:5000', prefix: 'ocp' };
  const d = `sha256:${'a'.repeat(64)}`;
  const where = 'delete-images.yaml: items[0].imageReference';

  it('takes a canonical item below the prefix', () => {
    expect(referenceInScope(`docker://mirror.example:5000/ocp/app/server@${d}`, scope, where)).toEqual({
      registry: 'mirror.example:5000',
      repository: 'ocp/app/server',
      digest: d,
    });
    expect(
      referenceInScope(`docker://MIRROR.example:5000/other@${d}`, { ...scope, prefix: '' }, where).repository,
    ).toBe('other');
  });

  it('refuses dot segments, percent-encoding, other repositories, other registries and tags, naming the item', () => {
    const cases: [string, string, RegExp][] = [
      [
        `docker://mirror.example:5000/ocp/../other/app@${d}`,
        MirrorError.REF_INVALID,
        /not a canonical reference/,
      ],
      [
        `docker://mirror.example:5000/ocp/%2e%2e/other/app@${d}`,
        MirrorError.REF_INVALID,
        /not a canonical reference/,
      ],
      [`docker://mirror.example:5000/ocp/%2Fapp@${d}`, MirrorError.REF_INVALID, /not a canonical reference/],
      [
        `docker://mirror.example:5000/other/app@${d}`,
        MirrorError.REF_OUTSIDE_SCOPE,
        /outside the destination prefix ocp\//,
      ],
      [
        `docker://mirror.example:5000/ocpx/app@${d}`,
        MirrorError.REF_OUTSIDE_SCOPE,
        /outside the destination prefix/,
      ],
      [
        `docker://mirror.example:5000/ocp@${d}`,
        MirrorError.REF_OUTSIDE_SCOPE,
        /outside the destination prefix/,
      ],
      [
        `docker://elsewhere:5000/ocp/app@${d}`,
        MirrorError.REF_OUTSIDE_SCOPE,
        /not at the destination mirror\.example:5000/,
      ],
      ['docker://mirror.example:5000/ocp/app:1.0', MirrorError.REF_INVALID, /not pinned by digest/],
      [`mirror.example:5000/ocp/app@${d}`, MirrorError.REF_INVALID, /is not docker:\/\//],
    ];
    for (const [ref, code, why] of cases) {
      const e = thrown(() => referenceInScope(ref, scope, where));
      expect([ref, e.code]).toEqual([ref, code]);
      expect(e.message).toContain(where);
      expect(e.message).toMatch(why);
      expect(e.exitCode).toBe(2);
    }
  });
});
