import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommonError } from '../../src/util/errors.js';
import { isPathSegment, joinSegments, pathSegment, type PathSegment } from '../../src/util/path-segment.js';
import { thrown } from '../helpers/realdata.js';

describe('PathSegment: a name from outside becomes one file name or nothing', () => {
  it('takes ordinary chart and file names', () => {
    for (const ok of ['podinfo-6.5.0.tgz', 'a', '.hidden', 'x..y', 'host:5000', 'v1.0.0+build.1'])
      expect(isPathSegment(ok), ok).toBe(true);
  });

  it('refuses separators, dot segments, NUL, control characters, empty and over-long names, and says why', () => {
    const cases: [unknown, RegExp][] = [
      ['', /empty/],
      ['.', /names a directory/],
      ['..', /names a directory/],
      ['a/b', /path separator/],
      ['..\\x', /path separator/],
      ['1.0.0/../../x', /path separator/],
      ['a\u0000b', /NUL or control/],
      ['a\nb', /NUL or control/],
      ['x'.repeat(256), /over 255 bytes/],
      [42, /not a string/],
    ];
    for (const [v, why] of cases) {
      const e = thrown(() => pathSegment(v, 'index.yaml entries'));
      expect(e.code).toBe(CommonError.PATH_SEGMENT_INVALID);
      expect(e.message).toMatch(why);
      expect(e.message.length).toBeLessThan(200);
    }
  });

  it('joinSegments checks again where the path is made, and keeps it below its base', async () => {
    const base = await mkdtemp(join(tmpdir(), 'segments-'));
    expect(joinSegments(base, pathSegment('charts', 'x'), pathSegment('a.tgz', 'x'))).toBe(
      join(base, 'charts', 'a.tgz'),
    );
    // A value cast to the type without the check is still refused at the sink.
    expect(thrown(() => joinSegments(base, '../escape' as PathSegment)).code).toBe(
      CommonError.PATH_SEGMENT_INVALID,
    );
    expect(thrown(() => joinSegments(base, '..' as PathSegment)).code).toBe(CommonError.PATH_SEGMENT_INVALID);
  });
});
