import { dump } from 'js-yaml';

/**
 * The one YAML writer for Kubernetes objects and other files people apply or read.
 *
 * - Keys keep the order they were given (no sorting), so callers decide the layout.
 * - No line folding, ever: a long image reference or a PEM line stays on one line.
 * - Multi-line strings (PEM certificates, registries.conf, scripts) are literal blocks with the
 *   plain `|` indicator. A multi-line string without a final newline gets one, because `|-` (strip)
 *   drops the newline a PEM bundle or a config file needs; see {@link YamlOptions.exactStrings}.
 * - Lists are not indented under their key (`key:\n- item`), as kubectl, oc and oc-mirror write them.
 * - No anchors or aliases: an object used twice is written twice.
 * - Strings that would read back as something else (`"true"`, `"1.0"`, `""`) are double-quoted.
 */
export interface YamlOptions {
  /**
   * Keep every string byte for byte, even a multi-line one without a final newline (written `|-`).
   * Off by default: multi-line values get a trailing newline so they are emitted with `|`.
   */
  exactStrings?: boolean;
}

/** A copy without `undefined` fields, and (unless `exact`) with a final newline on multi-line strings. */
function normalize(value: unknown, exact: boolean): unknown {
  if (typeof value === 'string') {
    return !exact && value.includes('\n') && !value.endsWith('\n') ? `${value}\n` : value;
  }
  if (Array.isArray(value)) return value.map((v) => normalize(v, exact));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = normalize(v, exact);
    return out;
  }
  return value;
}

/** One YAML document (no `---`), ending with a newline. `undefined` fields are left out. */
export function toYaml(obj: unknown, options: YamlOptions = {}): string {
  const text = dump(normalize(obj, options.exactStrings === true), {
    lineWidth: -1,
    noRefs: true,
    seqNoIndent: true,
    quoteStyle: 'double',
    skipInvalid: false,
  });
  // js-yaml 5 ends a document whose last scalar keeps its final blank lines (`|+`) with `...`; the
  // block ends at the end of the text or at the next `---` all the same, as js-yaml 4 wrote it.
  return text.endsWith('\n...\n') ? text.slice(0, -4) : text;
}

/** Several YAML documents, each preceded by `---` on its own line, as oc-mirror writes IDMS/ITMS files. */
export function toYamlDocuments(objs: readonly unknown[], options: YamlOptions = {}): string {
  return objs.map((o) => `---\n${toYaml(o, options)}`).join('');
}
