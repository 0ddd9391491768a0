import { describe, expect, it } from 'vitest';
import { loadYamlWithPositions } from '../../src/config/positions.js';
import { Problems, problemsError } from '../../src/config/problems.js';
import { AirgapError } from '../../src/util/errors.js';
import { yamlOf } from '../mirror/isc/helpers.js';

/** Problems over a small document, with the codes of a made-up file format. */
function collect() {
  const { positions } = loadYamlWithPositions(yamlOf('a:', '  b: 1', '  c: two', 'd: [x, y]'));
  return new Problems<'X_BAD' | 'X_UNKNOWN'>('x.yaml', positions);
}

describe('Problems', () => {
  it('places a problem at the value, the key, or the nearest ancestor', () => {
    const p = collect();
    p.add('X_BAD', 'a.c', 'a.c is bad');
    p.add('X_UNKNOWN', 'a.b', 'unknown field a.b', { part: 'key', hint: 'remove it' });
    p.add('X_BAD', 'a.missing.deep', 'a.missing.deep is required');
    p.add('X_BAD', 'd[1]', 'd[1] is bad');
    expect(p.list).toEqual([
      { code: 'X_BAD', path: 'a.c', message: 'a.c is bad', where: 'x.yaml:3:6', line: 3, column: 6 },
      {
        code: 'X_UNKNOWN',
        path: 'a.b',
        message: 'unknown field a.b',
        hint: 'remove it',
        where: 'x.yaml:2:3',
        line: 2,
        column: 3,
      },
      {
        code: 'X_BAD',
        path: 'a.missing.deep',
        message: 'a.missing.deep is required',
        where: 'x.yaml:1:1',
        line: 1,
        column: 1,
      },
      { code: 'X_BAD', path: 'd[1]', message: 'd[1] is bad', where: 'x.yaml:4:8', line: 4, column: 8 },
    ]);
  });

  it('keeps the first 1000 problems with their places and counts the rest', () => {
    const p = collect();
    for (let i = 0; i < 1500; i++) p.add('X_BAD', `a.f${i}`, `a.f${i} is bad`);
    expect(p.list).toHaveLength(1000);
    expect(p.omitted).toBe(500);
    expect(p.full).toBe(true);
    const e = problemsError(p.file, p.list, p.omitted);
    expect(e.message).toMatch(/^1500 problems in x\.yaml:\n {2}x\.yaml:1:1: a\.f0 is bad\n/);
    expect(e.message.split('\n')).toHaveLength(52); // the count, 50 problems, and the rest
    expect(e.message).toMatch(/\n {2}… and 1450 more$/);
    expect(e.details).toMatchObject({ file: 'x.yaml', omitted: 500 });
    expect((e.details as { problems: unknown[] }).problems).toHaveLength(1000);
    expect(() => p.throwIfAny()).toThrow(/^1500 problems in x\.yaml/);
  });

  it('throws nothing when there is nothing, one problem as itself, several as one sorted list', () => {
    const p = collect();
    expect(() => p.throwIfAny()).not.toThrow();
    p.add('X_BAD', 'd', 'd is bad', { hint: 'fix d' });
    let e = problemsError(p.file, p.list);
    expect(e).toBeInstanceOf(AirgapError);
    expect(e).toMatchObject({
      code: 'X_BAD',
      message: 'd is bad',
      where: 'x.yaml:4:4',
      hint: 'fix d',
      exitCode: 2,
    });
    p.add('X_UNKNOWN', 'a.b', 'unknown field a.b', { part: 'key' });
    e = problemsError(p.file, p.list);
    // Sorted by place: the code is the first one's, each line has its own place.
    expect(e.code).toBe('X_UNKNOWN');
    expect(e.where).toBe('x.yaml');
    expect(e.message).toBe(
      '2 problems in x.yaml:\n  x.yaml:2:3: unknown field a.b\n  x.yaml:4:4: d is bad — fix d',
    );
    expect(() => p.throwIfAny()).toThrow(/2 problems in x\.yaml/);
  });
});
