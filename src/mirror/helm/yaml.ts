/**
 * YAML as Helm reads and writes it. Reading (values.yaml, fromYaml, manifests): YAML 1.2 core
 * types plus merge keys (`<<`) and YAML 1.1's booleans (`yes`, `no`, `on`, `off`, `y`, `n`: Helm's
 * YAML library is go-yaml v2), no timestamps (Helm's YAML→JSON step keeps dates as strings),
 * numbers as float64 (plain numbers); a repeated key keeps its last value. Writing (toYaml): Helm's sigs.k8s.io/yaml sorts keys; the layout is
 * the project's one writer's (no folding, lists not indented under their key).
 */
import { boolYaml11Tag, CORE_SCHEMA, mergeTag } from 'js-yaml';
import { parseYaml, parseYamlDocuments, type YamlReadOptions } from '../../config/yaml-load.js';
import { toYaml } from '../../util/yaml.js';
import { toPlain } from './template/values.js';

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

/** Load every document of a stream (rendered manifests) with Helm's schema, under the same limits. */
export function loadYamlDocuments(
  text: string,
  from: HelmYamlSource = { source: 'a YAML stream' },
): unknown[] {
  return parseYamlDocuments(text, { ...from, schema: HELM_SCHEMA, json: true });
}

/** toYaml: keys sorted, ints and structs made plain, strings byte for byte; ends with a newline. */
export function writeYaml(v: unknown): string {
  return toYaml(toPlain(v), { exactStrings: true });
}
