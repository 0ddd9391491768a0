import { describe, expect, it } from 'vitest';
import { childPath, itemPath, loadYamlWithPositions, parentPath } from '../../src/config/positions.js';
import { yamlOf } from '../mirror/isc/helpers.js';

/** `line:column` of a path's key and value, for compact assertions. */
function at(text: string) {
  const { positions } = loadYamlWithPositions(text);
  return (path: string) => {
    const p = positions.get(path);
    if (!p) return undefined;
    return {
      key: p.key ? `${p.key.line}:${p.key.column}` : undefined,
      value: `${p.value.line}:${p.value.column}`,
    };
  };
}

describe('loadYamlWithPositions', () => {
  it('maps nested mappings, keys and values', () => {
    const pos = at(yamlOf('a:', '  b:', '    c: 1', '  d: two', 'e: x'));
    expect(pos('a')).toEqual({ key: '1:1', value: '2:3' });
    expect(pos('a.b')).toEqual({ key: '2:3', value: '3:5' });
    expect(pos('a.b.c')).toEqual({ key: '3:5', value: '3:8' });
    expect(pos('a.d')).toEqual({ key: '4:3', value: '4:6' });
    expect(pos('e')).toEqual({ key: '5:1', value: '5:4' });
    expect(pos('')).toEqual({ key: undefined, value: '1:1' });
  });

  it('maps lists of mappings, indented and not', () => {
    const pos = at(
      yamlOf(
        'items:',
        '- name: one', //          line 2
        '  tag: v1',
        '-   name: two', //        line 4: extra space after the dash
        'nested:',
        '  list:',
        '    - name: three', //    line 7
        '      deep:',
        '        - x',
        '        - y', //          line 10
      ),
    );
    expect(pos('items')).toEqual({ key: '1:1', value: '2:1' });
    expect(pos('items[0]')).toEqual({ key: undefined, value: '2:3' });
    expect(pos('items[0].name')).toEqual({ key: '2:3', value: '2:9' });
    expect(pos('items[0].tag')).toEqual({ key: '3:3', value: '3:8' });
    expect(pos('items[1].name')).toEqual({ key: '4:5', value: '4:11' });
    expect(pos('nested.list[0].name')).toEqual({ key: '7:7', value: '7:13' });
    expect(pos('nested.list[0].deep[1]')).toEqual({ key: undefined, value: '10:11' });
  });

  it('maps flow style mappings and sequences', () => {
    const pos = at(yamlOf('a: {b: 1, c: [x, {d: e}]}', 'f: [1, 2,', '    3]'));
    expect(pos('a')).toEqual({ key: '1:1', value: '1:4' });
    expect(pos('a.b')).toEqual({ key: '1:5', value: '1:8' });
    expect(pos('a.c')).toEqual({ key: '1:11', value: '1:14' });
    expect(pos('a.c[0]')).toEqual({ key: undefined, value: '1:15' });
    expect(pos('a.c[1].d')).toEqual({ key: '1:19', value: '1:22' });
    expect(pos('f[2]')).toEqual({ key: undefined, value: '3:5' });
  });

  it('skips comments and blank lines before values', () => {
    const pos = at(
      yamlOf(
        '# leading comment',
        'a: # trailing comment',
        '', // blank line 3
        '  # comment inside',
        '  b: "quoted # not a comment"', // line 5
        'c: plain # comment',
      ),
    );
    expect(pos('a')).toEqual({ key: '2:1', value: '5:3' });
    expect(pos('a.b')).toEqual({ key: '5:3', value: '5:6' });
    expect(pos('c')).toEqual({ key: '6:1', value: '6:4' });
  });

  it('places empty values right after their key', () => {
    const pos = at(yamlOf('a:', 'b:   # nothing', 'c: null', 'list:', '- ', '- x'));
    expect(pos('a')).toEqual({ key: '1:1', value: '1:3' });
    expect(pos('b')).toEqual({ key: '2:1', value: '2:3' });
    expect(pos('c')).toEqual({ key: '3:1', value: '3:4' });
    expect(pos('list[1]')).toEqual({ key: undefined, value: '6:3' });
  });

  it('handles quoted keys, block scalars, anchors, CRLF and a document marker', () => {
    const pos = at(
      ['---', '"a b": 1', "'c': |", '  text', 'd: &anchor {e: 1}', 'f: *anchor', 'g: x'].join('\r\n'),
    );
    expect(pos('["a b"]')).toEqual({ key: '2:1', value: '2:8' });
    expect(pos('c')).toEqual({ key: '3:1', value: '3:6' });
    expect(pos('d')).toEqual({ key: '5:1', value: '5:4' });
    expect(pos('d.e')).toEqual({ key: '5:13', value: '5:16' });
    expect(pos('f')).toEqual({ key: '6:1', value: '6:4' });
    expect(pos('g')).toEqual({ key: '7:1', value: '7:4' });
  });

  it('finds items of long lists and fields of large mappings, and nothing that is not there', () => {
    const items = Array.from({ length: 300 }, (_, i) => (i === 150 ? '-' : `- {name: n${i}}`));
    const fields = Array.from({ length: 300 }, (_, i) => `  k${i}: ${i}`);
    const text = yamlOf('list:', ...items, 'map:', ...fields);
    const { positions } = loadYamlWithPositions(text);
    const pos = at(text);
    expect(pos('list[0].name')).toEqual({ key: '2:4', value: '2:10' });
    expect(pos('list[150]')).toBeUndefined(); // `-` alone: an empty item has no place
    expect(pos('list[299].name')).toEqual({ key: '301:4', value: '301:10' });
    expect(pos('map.k0')).toEqual({ key: '303:3', value: '303:7' });
    expect(pos('map.k299')).toEqual({ key: '602:3', value: '602:9' });
    expect(positions.has('list[300]')).toBe(false);
    expect(positions.has('map.k300')).toBe(false);
    expect(positions.has('map.k1.deeper')).toBe(false);
    expect(positions.has('list.name')).toBe(false);
    expect(positions.has('map[0]')).toBe(false);
    expect(positions.has('map..k1')).toBe(false);
  });

  it('measures from what js-yaml read: a byte order mark and a missing final line break', () => {
    const { positions, text } = loadYamlWithPositions('\ufeffa: 1\nb:\n  - x');
    expect(positions.get('a')).toEqual({
      key: { line: 1, column: 1, offset: 0 },
      value: { line: 1, column: 4, offset: 3 },
    });
    expect(positions.get('b[0]')?.value).toEqual({ line: 3, column: 5, offset: 12 });
    expect(text.slice(12, 13)).toBe('x');
  });

  it('says whether a mapping or list is shared through an alias', () => {
    expect(loadYamlWithPositions(yamlOf('a: &x [1]', 'b: *x')).aliased).toBe(true);
    expect(loadYamlWithPositions(yamlOf('a: &x {c: 1}', 'b:', '  <<: *x')).aliased).toBe(true);
    expect(loadYamlWithPositions(yamlOf('a: &x one', 'b: *x', 'c: [1, {d: 2}]')).aliased).toBe(false);
  });

  it('returns the loaded value with YAML 1.2 core types and no timestamps', () => {
    const { value } = loadYamlWithPositions(
      yamlOf('a: 4.18', 'b: 2024-01-01', 'c: true', 'd: yes', 'e: 010'),
    );
    expect(value).toEqual({ a: 4.18, b: '2024-01-01', c: true, d: 'yes', e: 10 });
  });
});

describe('field paths', () => {
  it('joins and splits paths', () => {
    expect(childPath('', 'mirror')).toBe('mirror');
    expect(childPath('mirror', 'additionalImages')).toBe('mirror.additionalImages');
    expect(itemPath('mirror.additionalImages', 1)).toBe('mirror.additionalImages[1]');
    expect(childPath('a', 'x.y')).toBe('a["x.y"]');
    expect(parentPath('mirror.additionalImages[1].name')).toBe('mirror.additionalImages[1]');
    expect(parentPath('mirror.additionalImages[1]')).toBe('mirror.additionalImages');
    expect(parentPath('a["x.y"]')).toBe('a');
    expect(parentPath('mirror')).toBe('');
    expect(parentPath('')).toBeUndefined();
  });
});
