/**
 * Rendered manifests are cut into documents as Helm's releaseutil.SplitManifests cuts them: its
 * separator is the regular expression `(?:^|\s*\n)---\s*` (Go's \s: ASCII space, \t, \n, \f, \r).
 * airgap walks the text once instead; these compare the two on every short text over an alphabet
 * that builds each edge (a separator at the start, after blank lines, followed by a comment or a
 * key, runs of dashes, \v which is not a space to Go), and on the shapes charts produce.
 */
import { describe, expect, it } from 'vitest';
import { splitManifests } from '../../../src/mirror/helm/yaml.js';

const HELM_SEPARATOR = /(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*/;
const byHelm = (text: string) => text.split(HELM_SEPARATOR).filter((d) => d.trim() !== '');

describe("splitting a template's output into documents", () => {
  it('cuts every text of up to 6 characters over "-", "\\n", " ", "\\t", "\\v", "a", "#" as Helm does', () => {
    const alphabet = ['-', '\n', ' ', '\t', '\v', 'a', '#'];
    let texts = [''];
    let compared = 0;
    for (let len = 1; len <= 6; len++) {
      texts = texts.flatMap((t) => alphabet.map((c) => t + c));
      for (const t of texts) {
        expect(splitManifests(t), JSON.stringify(t)).toEqual(byHelm(t));
        compared++;
      }
    }
    expect(compared).toBe(137_256);
  });

  it('keeps what follows a separator on its line, as a trim marker leaves it', () => {
    const text = '---\nkind: A\n\n  \n---# comment\nkind: B\n--- kind: C\n----\nkind: D\n---\n';
    expect(splitManifests(text)).toEqual(byHelm(text));
    expect(splitManifests(text)).toEqual(['kind: A', '# comment\nkind: B', 'kind: C', '-\nkind: D']);
  });

  it('cuts a multi-megabyte indented document in one pass', () => {
    const dashboard = `kind: ConfigMap\ndata:\n  d.json: |\n${'    {"a":      1}\n'.repeat(200_000)}`;
    const text = `${dashboard}---\n${dashboard}`;
    expect(splitManifests(text)).toEqual(byHelm(text));
  });
});
