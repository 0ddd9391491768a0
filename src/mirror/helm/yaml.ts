/**
 * YAML as Helm reads and writes it. Reading (values.yaml, fromYaml, manifests): YAML 1.2 core
 * types plus merge keys (`<<`) and YAML 1.1's booleans (`yes`, `no`, `on`, `off`, `y`, `n`: Helm's
 * YAML library is go-yaml v2), no timestamps (Helm's YAML→JSON step keeps dates as strings),
 * numbers as float64 (plain numbers); a repeated key keeps its last value. Writing (toYaml,
 * toYamlPretty): go-yaml's own layout, character for character (go-yaml-writer.ts).
 */
import { boolYaml11Tag, CORE_SCHEMA, mergeTag } from 'js-yaml';
import {
  parseYaml,
  parseYamlDocuments,
  YAML_LIMITS,
  YamlBudget,
  type YamlReadOptions,
} from '../../config/yaml-load.js';
import { encode } from './go-yaml-encode.js';
import { emitYaml } from './go-yaml-writer.js';

/**
 * YAML 1.1's booleans (`y`, `Y`, `yes`, `on`, `off`, `n`, …: go-yaml v2's, js-yaml's boolYaml11Tag)
 * replace the core ones (same tag), so this schema has them all.
 */
const HELM_SCHEMA = CORE_SCHEMA.withTags(mergeTag, boolYaml11Tag);

/** How a text is named in a YAML_LIMIT error, and the rest of the bounded loader's options. */
export type HelmYamlSource = Omit<YamlReadOptions, 'schema' | 'json'>;

/** Load one document with Helm's schema, under the bounded loader's limits (config/yaml-load.ts). */
export function loadYaml(text: string, from: HelmYamlSource = { source: 'a YAML string' }): unknown {
  return parseYaml(text, { ...from, schema: HELM_SCHEMA, json: true });
}

/** Go's `\s` in RE2: ASCII whitespace without \v. */
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c;

/**
 * A template's output cut into documents as Helm cuts it (releaseutil.SplitManifests, whose
 * separator is `(?:^|\s*\n)---\s*`): `---` at the start of the text or right after a newline,
 * with the whitespace before that newline and the whitespace after it. Whatever follows on the
 * line stays in the next document: `---# note` leaves a comment, `--- kind: Pod` leaves
 * `kind: Pod`. The blank documents (after trimming) are left out. Found by looking for "\n---"
 * and walking the whitespace around it, in one pass: the regular expression retried at every
 * space of an indented multi-megabyte dashboard.
 */
export function splitManifests(text: string): string[] {
  const docs: string[] = [];
  let docStart = 0;
  let [at, length] = text.startsWith('---') ? [0, 3] : [text.indexOf('\n---'), 4];
  while (at !== -1) {
    let begin = at;
    while (begin > docStart && isSpace(text.charCodeAt(begin - 1))) begin--;
    let end = at + length;
    while (end < text.length && isSpace(text.charCodeAt(end))) end++;
    docs.push(text.slice(docStart, begin));
    docStart = end;
    [at, length] = [text.indexOf('\n---', end), 4];
  }
  docs.push(text.slice(docStart));
  return docs.filter((d) => d.trim() !== '');
}

/**
 * Load every document of a template's output (rendered manifests) as Helm does: cut with Helm's
 * separator ({@link splitManifests}), each piece loaded on its own with Helm's schema, under the
 * bounded loader's limits; the pieces share one budget of the whole text's bytes and nodes, so the
 * cut lets nothing more through.
 */
export function loadYamlDocuments(
  text: string,
  from: HelmYamlSource = { source: 'a YAML stream' },
): unknown[] {
  let options: YamlReadOptions = { ...from, schema: HELM_SCHEMA, json: true };
  if (!from.budget) {
    const limits = { ...YAML_LIMITS, ...from.limits };
    const budget = new YamlBudget(
      from.source,
      { bytes: limits.bytes, nodes: limits.nodes },
      from.exitCode ?? 1,
      from.hint,
    );
    budget.hold(Buffer.byteLength(text), from.source);
    options = { ...options, budget, held: true };
  }
  return splitManifests(text).flatMap((doc) => parseYamlDocuments(doc, options));
}

/**
 * toYaml (and .Files.AsConfig/AsSecrets): what Helm's sigs.k8s.io/yaml Marshal writes, the value
 * through encoding/json and then go-yaml v2 (go-yaml-encode.ts, go-yaml-writer.ts); ends with a
 * newline. Throws {@link GoYamlError} where JSON has no value (NaN, ±Inf).
 */
export function writeYaml(v: unknown): string {
  return emitYaml(encode(v, 'v2'), { width: 80, indentlessSequences: true, tabsPrintable: false });
}

/** toYamlPretty: what Helm's go-yaml v3 Encoder with SetIndent(2) writes; ends with a newline. */
export function writeYamlPretty(v: unknown): string {
  return emitYaml(encode(v, 'v3'), { width: Infinity, indentlessSequences: false, tabsPrintable: true });
}
