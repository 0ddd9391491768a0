/**
 * YAML as Helm reads and writes it. Reading (values.yaml, fromYaml, manifests): YAML 1.2 core
 * types plus merge keys (`<<`) and YAML 1.1's booleans (`yes`, `no`, `on`, `off`, `y`, `n`: Helm's
 * YAML library is go-yaml v2), no timestamps (Helm's YAML→JSON step keeps dates as strings),
 * numbers as float64 (plain numbers); a repeated key keeps its last value. Writing (toYaml): Helm's sigs.k8s.io/yaml sorts keys; the layout is
 * the project's one writer's (no folding, lists not indented under their key).
 */
import * as jsyaml from 'js-yaml';
import { parseYaml, parseYamlDocuments, type YamlReadOptions } from '../../config/yaml-load.js';
import { toYaml } from '../../util/yaml.js';
import { toPlain } from './template/values.js';

declare module 'js-yaml' {
  /** js-yaml's built-in types (exported at run time, missing from @types/js-yaml). */
  export const types: { merge: jsyaml.Type };
}

/** js-yaml's merge-key type. */
const mergeType = jsyaml.types.merge;
/** go-yaml v2's booleans; this type replaces js-yaml's core one (same tag), so it has them all. */
const YAML11_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'true', 'True', 'TRUE']);
const YAML11_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF', 'false', 'False', 'FALSE']);
const yaml11Bool = new jsyaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (data: unknown) => typeof data === 'string' && (YAML11_TRUE.has(data) || YAML11_FALSE.has(data)),
  construct: (data: string) => YAML11_TRUE.has(data),
});
const HELM_SCHEMA = jsyaml.CORE_SCHEMA.extend({ implicit: [mergeType, yaml11Bool] });

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
