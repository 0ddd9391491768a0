/**
 * YAML loading with source positions. js-yaml 4 has no AST, but its `listener` option reports an
 * `open` and a `close` event for every node it composes. We rebuild the node tree from those events
 * and walk it beside the loaded value to map each field path (`mirror.additionalImages[1].name`) to
 * the 1-based line and column of its key and of its value.
 */
import * as yaml from 'js-yaml';

/** A place in the source text. `line` and `column` are 1-based; `offset` is a 0-based string index. */
export interface SourcePosition {
  line: number;
  column: number;
  offset: number;
}

/** Where a field sits: its key (absent for list items and the document root) and its value. */
export interface FieldPositions {
  key?: SourcePosition;
  value: SourcePosition;
}

/** Field path → positions. Paths look like `mirror.operators[0].packages[2].name`. */
export type PositionMap = Map<string, FieldPositions>;

/** The loaded document and where each of its fields came from. */
export interface LoadedYaml {
  value: unknown;
  positions: PositionMap;
}

/** The path of `key` inside the mapping at `parent`. Keys that are not plain words are quoted. */
export function childPath(parent: string, key: string): string {
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The path of item `index` inside the list at `parent`. */
export function itemPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** The path one level up (`a.b[2]` → `a.b`, `a.b` → `a`, `a` → ``), or undefined at the root. */
export function parentPath(path: string): string | undefined {
  if (path === '') return undefined;
  if (path.endsWith(']')) {
    const open = path.lastIndexOf('[');
    // A quoted key may contain '[': find the bracket that opens the last segment.
    const quoted = path.lastIndexOf('["');
    return path.slice(0, quoted >= 0 && path.endsWith('"]') ? quoted : open);
  }
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(0, dot);
}

/** Which part of a field a position points at: the key (unknown field) or the value (bad value). */
export type FieldPart = 'key' | 'value';

/** The position of `path` (its key or its value), falling back to the nearest ancestor that has one. */
export function lookupPosition(
  positions: PositionMap,
  path: string,
  part: FieldPart,
): SourcePosition | undefined {
  const exact = positions.get(path);
  if (exact) return part === 'key' ? (exact.key ?? exact.value) : exact.value;
  // A field that is not in the source (missing, defaulted): point at the nearest ancestor.
  for (let p = parentPath(path); p !== undefined; p = parentPath(p)) {
    const found = positions.get(p);
    if (found) return found.key ?? found.value;
  }
  return undefined;
}

// js-yaml exports its types at runtime, but @types/js-yaml does not declare `types`.
const runtimeTypes = (yaml as unknown as { types?: Record<string, yaml.Type> }).types;

/**
 * YAML 1.2 core types plus merge keys (`<<`), without timestamps: a tag such as `2024-01-01` stays
 * a string, as it does for oc-mirror.
 */
const SCHEMA = runtimeTypes?.merge
  ? yaml.CORE_SCHEMA.extend({ implicit: [runtimeTypes.merge] })
  : yaml.CORE_SCHEMA;

interface RawNode {
  open: number;
  end: number;
  kind: string | null;
  result: unknown;
  children: RawNode[];
}

/**
 * Load one YAML document and map every field path to its position. Throws js-yaml's
 * `YAMLException` on a syntax error (its `mark` holds 0-based line and column).
 */
export function loadYamlWithPositions(text: string): LoadedYaml {
  const root: RawNode = { open: 0, end: 0, kind: null, result: undefined, children: [] };
  const stack: RawNode[] = [root];
  const value = yaml.load(text, {
    schema: SCHEMA,
    listener(event, state) {
      if (event === 'open') {
        const node: RawNode = {
          open: state.position,
          end: state.position,
          kind: null,
          result: null,
          children: [],
        };
        stack[stack.length - 1].children.push(node);
        stack.push(node);
      } else {
        const node = stack.pop();
        if (!node) return;
        node.end = state.position;
        node.kind = state.kind ?? null;
        node.result = state.result;
      }
    },
  });
  const positions: PositionMap = new Map();
  const doc = root.children[0];
  if (doc) new Walker(text, positions).node(doc, '', undefined);
  return { value, positions };
}

class Walker {
  private readonly lineStarts: number[] = [0];

  constructor(
    private readonly text: string,
    private readonly positions: PositionMap,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** Line and column of an offset (binary search over line starts). */
  at(offset: number): SourcePosition {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.lineStarts[lo] + 1, offset };
  }

  /** Record `node` at `path`, then its children. */
  node(raw: RawNode, path: string, key: SourcePosition | undefined): void {
    const node = unwrap(raw);
    this.positions.set(path, { ...(key ? { key } : {}), value: this.at(this.valueStart(raw)) });
    const result = node.result;
    if (Array.isArray(result)) this.sequence(node, result, path);
    else if (result !== null && typeof result === 'object') this.mapping(node, path);
  }

  private sequence(node: RawNode, items: unknown[], path: string): void {
    // Empty entries (`-` on its own line) get no node of their own: align children by value.
    let c = 0;
    for (let i = 0; i < items.length && c < node.children.length; i++) {
      const child = node.children[c];
      if (node.children.length === items.length || sameValue(unwrap(child).result, items[i])) {
        this.node(child, itemPath(path, i), undefined);
        c++;
      }
    }
  }

  private mapping(node: RawNode, path: string): void {
    const kids = node.children;
    for (let i = 0; i < kids.length; i++) {
      const keyNode = kids[i];
      const keyStart = this.skipSpace(keyNode.open, true);
      const hasValue = this.text.charCodeAt(this.skipSpace(keyNode.end, true)) === 0x3a; // ':'
      const valueNode = hasValue ? kids[i + 1] : undefined;
      if (valueNode) i++;
      const keyResult = unwrap(keyNode).result;
      if (keyResult === '<<') continue; // merge key: the merged fields have no place of their own
      const fieldPath = childPath(path, String(keyResult));
      const keyPos = this.at(keyStart);
      if (valueNode) this.node(valueNode, fieldPath, keyPos);
      else this.positions.set(fieldPath, { key: keyPos, value: keyPos });
    }
  }

  /**
   * Where a node's content starts. Block values are opened before the separating space, newlines
   * and comments are skipped; an empty (null) value is placed right after its `key:`.
   */
  private valueStart(raw: RawNode): number {
    const inline = this.skipSpace(raw.open, false);
    const ch = this.text.charCodeAt(inline);
    const atLineEnd = Number.isNaN(ch) || ch === 10 || ch === 13 || ch === 0x23;
    if (unwrap(raw).result === null && atLineEnd) return raw.open;
    return this.skipSpace(raw.open, true);
  }

  /** Skip spaces and tabs; with `lines`, also line breaks and `#` comments. */
  private skipSpace(offset: number, lines: boolean): number {
    let i = offset;
    const t = this.text;
    while (i < t.length) {
      const ch = t.charCodeAt(i);
      if (ch === 32 || ch === 9) i++;
      else if (lines && (ch === 10 || ch === 13)) i++;
      else if (lines && ch === 0x23 && (i === 0 || /\s/.test(t[i - 1]))) {
        while (i < t.length && t.charCodeAt(i) !== 10) i++;
      } else break;
    }
    return i;
  }
}

/**
 * js-yaml composes a plain scalar or flow collection in block context through a nested call that
 * turns out not to be a mapping key: the outer node then has one child with the very same result.
 */
function unwrap(node: RawNode): RawNode {
  let n = node;
  while (
    n.children.length === 1 &&
    n.children[0].kind === n.kind &&
    sameValue(n.children[0].result, n.result)
  ) {
    n = n.children[0];
  }
  return n;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
