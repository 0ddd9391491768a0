import { load, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { toYaml, toYamlDocuments } from '../../src/util/yaml.js';

const PEM =
  '-----BEGIN CERTIFICATE-----\n' +
  'MIIBszCCAVmgAwIBAgIUJ3f5kZ0o8b5m2cN0Yv0gk1x0xYwwCgYIKoZIzj0EAwIwDzENMAsGA1UEAwwEdGVzdDAeFw0y\n' +
  'NjExMjIwMDAwMDBaFw0zNjExMjAwMDAwMDBaMA8xDTALBgNVBAMMBHRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC\n' +
  '-----END CERTIFICATE-----\n';

describe('toYaml', () => {
  it('writes a PEM as a literal block with `|` (not `|-`) and reads back byte for byte', () => {
    const text = toYaml({ data: { 'ca-bundle.crt': PEM } });
    expect(text).toContain('ca-bundle.crt: |\n');
    expect(text).not.toContain('|-');
    expect(text).toContain('\n    -----END CERTIFICATE-----\n');
    const back = load(text) as { data: Record<string, string> };
    expect(back.data['ca-bundle.crt']).toBe(PEM);
  });

  it('gives a multi-line string without a final newline one, so it is still `|`', () => {
    const text = toYaml({ conf: 'a = 1\nb = 2' });
    expect(text).toBe('conf: |\n  a = 1\n  b = 2\n');
    expect((load(text) as { conf: string }).conf).toBe('a = 1\nb = 2\n');
  });

  it('keeps strings exact on request (then `|-` is the only faithful form)', () => {
    const text = toYaml({ conf: 'a\nb' }, { exactStrings: true });
    expect(text).toBe('conf: |-\n  a\n  b\n');
  });

  it('keeps final blank lines with `|+` and ends the document without a `...` marker', () => {
    const text = toYaml({ notes: 'x\n\n' });
    expect(text).toBe('notes: |+\n  x\n\n');
    expect((load(text) as { notes: string }).notes).toBe('x\n\n');
    const docs = toYamlDocuments([{ notes: 'x\n\n' }, { b: 2 }]);
    expect(docs).toBe('---\nnotes: |+\n  x\n\n---\nb: 2\n');
    expect(loadAll(docs)).toEqual([{ notes: 'x\n\n' }, { b: 2 }]);
  });

  it('keeps a leading-space first line exact with an indentation indicator', () => {
    const s = '  indented\nnext\n';
    expect((load(toYaml({ s })) as { s: string }).s).toBe(s);
  });

  it('keeps key order as given, never folds long lines, and writes lists unindented', () => {
    const long = `registry.example.com/${'x'.repeat(200)}@sha256:${'a'.repeat(64)}`;
    const text = toYaml({ zeta: 1, alpha: { mirrors: [long], source: 'quay.io/a' } });
    expect(text).toBe(`zeta: 1\nalpha:\n  mirrors:\n  - ${long}\n  source: quay.io/a\n`);
  });

  it('quotes strings that would read back as other types, and writes no anchors', () => {
    const shared = { a: 'b' };
    const text = toYaml({ t: 'true', num: '1.0', e: '', x: shared, z: shared, u: undefined });
    expect(text).toBe('t: "true"\nnum: "1.0"\ne: ""\nx:\n  a: b\nz:\n  a: b\n');
  });
});

describe('toYamlDocuments', () => {
  it('prefixes every document with ---, as oc-mirror does', () => {
    const text = toYamlDocuments([{ a: 1 }, { b: 2 }]);
    expect(text).toBe('---\na: 1\n---\nb: 2\n');
    expect(loadAll(text)).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('writes nothing for no documents', () => {
    expect(toYamlDocuments([])).toBe('');
  });
});
