/**
 * YAML loading with source positions. js-yaml 4 has no AST, but its `listener` option reports an
 * `open` and a `close` event for every node it composes. While js-yaml loads, each node is written
 * into a few typed arrays (where it starts and ends, its kind, where its subtree ends): 11 bytes a
 * node and no object per node, so a 50 MiB file costs tens of megabytes of index, not hundreds. A
 * field path (`mirror.additionalImages[1].name`) becomes a line and column only when it is asked
 * for: the path is walked down that table from the root, beside the source text.
 */
import * as yaml from 'js-yaml';
import { YamlGuard, type YamlReadOptions } from './yaml-load.js';

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

/**
 * Field path → positions, answered on demand. Paths look like `mirror.operators[0].packages[2].name`.
 * `has` says whether the field is written in the source. A `Map<string, FieldPositions>` is one too.
 */
export interface PositionMap {
  get(path: string): FieldPositions | undefined;
  has(path: string): boolean;
}

/** The loaded document and where each of its fields came from. */
export interface LoadedYaml {
  value: unknown;
  positions: PositionMap;
  /**
   * The text positions are measured in: js-yaml's own copy of the source (a byte order mark
   * removed, a line break and a NUL appended), which the loaded strings are slices of. Read this
   * one, and let go of the source string, so that one copy of a large file stays in memory.
   */
  text: string;
  /** Whether some mapping or list appears in more than one place of the value (a YAML alias). */
  aliased: boolean;
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** The path of `key` inside the mapping at `parent`. Keys that are not plain words are quoted. */
export function childPath(parent: string, key: string): string {
  if (PLAIN_KEY.test(key)) return parent === '' ? key : `${parent}.${key}`;
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

/**
 * Load one YAML document and map every field path to its position, under the limits of
 * `options` (yaml-load.ts: a YAML_LIMIT error names `options.source`). Throws js-yaml's
 * `YAMLException` on a syntax error (its `mark` holds 0-based line and column).
 */
export function loadYamlWithPositions(
  text: string,
  options: YamlReadOptions = { source: 'the YAML text' },
): LoadedYaml {
  const guard = new YamlGuard(text, options);
  const builder = new NodeBuilder();
  let value: unknown;
  try {
    value = yaml.load(text, {
      ...guard.loadOptions(SCHEMA),
      listener(event, state) {
        guard.event(event, state);
        if (event === 'open') builder.open(state.position, state.input);
        else builder.close(state);
      },
    });
  } catch (e) {
    throw guard.translate(e);
  }
  const positions = builder.finish(text);
  guard.finish([value]);
  return { value, positions, text: positions.text, aliased: builder.aliased };
}

// info bits of a node: its kind (js-yaml's state.kind), whether its value is null, whether a ':'
// follows it (so it is a key with a value when its parent is a mapping), and whether it only
// wraps the node after it (see NodeBuilder.close).
const KIND_MASK = 3;
const SCALAR = 1;
const SEQUENCE = 2;
const MAPPING = 3;
const NULL_VALUE = 4;
const COLON_AFTER = 8;
const WRAPS_NEXT = 16;

function kindCode(kind: string | null): number {
  return kind === 'scalar' ? SCALAR : kind === 'sequence' ? SEQUENCE : kind === 'mapping' ? MAPPING : 0;
}

const CHUNK_BITS = 16;
const CHUNK_MASK = (1 << CHUNK_BITS) - 1;

/**
 * A column of numbers in fixed-size typed-array chunks: it grows without copying, and wastes at
 * most one chunk. Rows are added in order (`set` at most one past the last row written).
 */
class Column {
  private readonly chunks: Array<Int32Array | Uint16Array | Uint8Array> = [];

  constructor(private readonly bytes: 1 | 2 | 4) {}

  get(i: number): number {
    return this.chunks[i >>> CHUNK_BITS]![i & CHUNK_MASK]!;
  }

  set(i: number, v: number): void {
    const c = i >>> CHUNK_BITS;
    if (c === this.chunks.length) {
      const n = CHUNK_MASK + 1;
      this.chunks.push(
        this.bytes === 1 ? new Uint8Array(n) : this.bytes === 2 ? new Uint16Array(n) : new Int32Array(n),
      );
    }
    this.chunks[c]![i & CHUNK_MASK] = v;
  }
}

/** An end further than this from its node's start is kept in NodeTable.ends. */
const FAR_END = 0xffff;

/**
 * Every node js-yaml composed, numbered in document order (a node before its children), one row
 * per node: 11 bytes. A node's descendants are the rows after it, up to `next`, so its children
 * are found by jumping from one child's `next` to the following child.
 */
interface NodeTable {
  /** Offset of the `open` event (before any separating space). */
  open: Column;
  /** Offset of the `close` event (after the node's content) minus `open`, or FAR_END. */
  length: Column;
  info: Column;
  /** The row after this node's last descendant. */
  next: Column;
  /** Ends of nodes whose `length` is FAR_END. */
  ends: Map<number, number>;
  /** Sequences with items that have no node (`-` alone on its line): item → node, or -1. */
  items: Map<number, Int32Array>;
  /** Nodes followed by `:` whose text is not their key as written (quoted, tagged, `010`): node → key. */
  keys: Map<number, string>;
}

/** What NodeBuilder reads of js-yaml's state when a node closes (and the value it may replace). */
interface ClosedNode {
  position: number;
  kind: string | null;
  result: unknown;
  /** js-yaml keeps it in its state, though its types do not say so. */
  anchor?: string | null;
}

/** Builds the node table from js-yaml's events, as it loads. */
class NodeBuilder {
  private readonly t: NodeTable = {
    open: new Column(4),
    length: new Column(2),
    info: new Column(1),
    next: new Column(4),
    ends: new Map(),
    items: new Map(),
    keys: new Map(),
  };
  private size = 0;
  /**
   * The text js-yaml reads: the one it was given plus a terminator (and without a byte order
   * mark). It is a copy; the strings of the loaded value are slices of it, so positions read it
   * too rather than keep the caller's text alive as a second copy.
   */
  private text = '';
  /** Nodes open now (outermost first), and where each one's children start in `pending`. */
  private readonly stack: number[] = [];
  private readonly marks: number[] = [];
  /** Closed nodes whose parent is still open, in order: pending[0 .. pendingSize). */
  private readonly pending: number[] = [];
  private pendingSize = 0;
  /** The value of the node closed last. */
  private lastResult: unknown = undefined;
  /** Whether an alias of a mapping or list was read. */
  aliased = false;

  open(position: number, input: string): void {
    this.text = input;
    const t = this.t;
    const id = this.size++;
    t.open.set(id, position);
    t.length.set(id, 0);
    t.info.set(id, 0);
    t.next.set(id, id + 1);
    this.stack.push(id);
    this.marks.push(this.pendingSize);
  }

  /** Record the node js-yaml has just composed (its `close` event). */
  close(state: ClosedNode): void {
    const { position, kind: kindName } = state;
    let result: unknown = state.result;
    const t = this.t;
    const id = this.stack.pop();
    const start = this.marks.pop();
    if (id === undefined || start === undefined) return;
    const pending = this.pending;
    const n = this.pendingSize - start;
    const kind = kindCode(kindName);
    let info = kind | (result === null ? NULL_VALUE : 0);
    // An alias node has no kind of its own; its value is the anchored node's.
    if (kind === 0 && typeof result === 'object' && result !== null) this.aliased = true;
    const only = n === 1 ? pending[start]! : -1;
    if (only >= 0 && (t.info.get(only) & KIND_MASK) === kind && sameValue(this.lastResult, result)) {
      // js-yaml composes a plain scalar or flow collection in block context through a nested call
      // that turns out not to be a mapping key: this node wraps its one child, with the very same
      // value. This node's start is where the value's place is measured from; its content is the
      // child's. A child without children of its own is dropped.
      if (only === this.size - 1) {
        this.size--;
        t.keys.delete(only);
        t.ends.delete(only);
      } else {
        info |= WRAPS_NEXT;
      }
    } else if (kind === SEQUENCE && Array.isArray(result)) {
      if (result.length !== n) t.items.set(id, this.alignItems(result, start, n));
      // js-yaml grows each list by push, which leaves room for 16 more items; a copy is exact.
      // Whoever composed this node takes its value from state.result once this event returns.
      // An anchored list is left alone: its aliases are the very same list.
      if (!state.anchor) result = state.result = result.slice();
    }
    t.next.set(id, this.size);
    const length = position - t.open.get(id);
    if (length < FAR_END) t.length.set(id, length);
    else {
      t.length.set(id, FAR_END);
      t.ends.set(id, position);
    }
    const text = this.text;
    if (text.charCodeAt(skipSpace(text, position, true)) === 0x3a) {
      info |= COLON_AFTER;
      const keyStart = skipSpace(text, t.open.get(id), true);
      const written =
        typeof result === 'string' &&
        result.length === position - keyStart &&
        text.startsWith(result, keyStart);
      if (!written) t.keys.set(id, keyString(result));
    }
    t.info.set(id, info);
    pending[start] = id;
    this.pendingSize = start + 1;
    this.lastResult = result;
  }

  /**
   * A sequence with empty entries (`-` on its own line) has fewer child nodes than items: a null
   * item is matched to a child only if that child is null too.
   */
  private alignItems(items: unknown[], start: number, n: number): Int32Array {
    const map = new Int32Array(items.length).fill(-1);
    let c = 0;
    for (let i = 0; i < items.length && c < n; i++) {
      const child = this.pending[start + c]!;
      if ((items[i] === null) === ((this.t.info.get(child) & NULL_VALUE) !== 0)) {
        map[i] = child;
        c++;
      }
    }
    return map;
  }

  /** The finished index; `text` is what was loaded, for a document that had no node. */
  finish(text: string): PositionIndex {
    const root = this.pendingSize > 0 ? this.pending[0]! : -1;
    return new PositionIndex(root >= 0 ? this.text : text, this.t, root);
  }
}

/** A mapping key as js-yaml stores it: the string of the key's value. */
function keyString(key: unknown): string {
  if (Array.isArray(key))
    return key.map((k: unknown) => (isPlainObject(k) ? '[object Object]' : k)).join(',');
  if (isPlainObject(key)) return '[object Object]';
  return String(key);
}

function isPlainObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A mapping entry: its key node and its value node (-1 for a key written without a value). */
interface Entry {
  key: number;
  value: number;
}

/** Mappings and sequences with more children than this get an index the first time one is looked up. */
const INDEXED = 64;

/** Field positions over a node table, computed when asked for. */
class PositionIndex implements PositionMap {
  private lineStarts?: Uint32Array;
  private readonly mappingIndex = new Map<number, Map<string, Entry>>();
  private readonly sequenceIndex = new Map<number, Int32Array>();

  constructor(
    readonly text: string,
    private readonly t: NodeTable,
    private readonly root: number,
  ) {}

  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  get(path: string): FieldPositions | undefined {
    if (this.root < 0) return undefined;
    const segments = parsePath(path);
    if (!segments) return undefined;
    let node = this.root;
    let key = -1;
    for (const segment of segments) {
      if (node < 0) return undefined; // a key written without a value has nothing below it
      const kind = this.t.info.get(node) & KIND_MASK;
      if (typeof segment === 'number') {
        if (kind !== SEQUENCE) return undefined;
        node = this.item(node, segment);
        if (node < 0) return undefined;
        key = -1;
      } else {
        if (kind !== MAPPING) return undefined;
        const entry = this.entry(node, segment);
        if (!entry) return undefined;
        key = entry.key;
        node = entry.value;
      }
    }
    const keyPos = key >= 0 ? this.at(skipSpace(this.text, this.t.open.get(key), true)) : undefined;
    if (node < 0) return { key: keyPos, value: keyPos! };
    const value = this.at(this.valueStart(node));
    return keyPos ? { key: keyPos, value } : { value };
  }

  /** The node that holds what `node` stands for (itself, or the node it wraps). */
  private content(node: number): number {
    let n = node;
    while ((this.t.info.get(n) & WRAPS_NEXT) !== 0) n++;
    return n;
  }

  /** The node of item `index` of a sequence, or -1. */
  private item(node: number, index: number): number {
    const seq = this.content(node);
    const aligned = this.t.items.get(seq) ?? this.sequenceIndex.get(seq);
    if (aligned) return index < aligned.length ? aligned[index]! : -1;
    const end = this.t.next.get(seq);
    let kid = seq + 1;
    for (let i = 0; kid < end; i++) {
      if (i === index) return kid;
      if (i === INDEXED) return this.indexSequence(seq)[index] ?? -1;
      kid = this.t.next.get(kid);
    }
    return -1;
  }

  private indexSequence(seq: number): Int32Array {
    const kids: number[] = [];
    const end = this.t.next.get(seq);
    for (let kid = seq + 1; kid < end; kid = this.t.next.get(kid)) kids.push(kid);
    const index = Int32Array.from(kids);
    this.sequenceIndex.set(seq, index);
    return index;
  }

  /** The entry of a mapping whose key is `name`. Merge keys (`<<`) have no place of their own. */
  private entry(node: number, name: string): Entry | undefined {
    if (name === '<<') return undefined;
    const map = this.content(node);
    const indexed = this.mappingIndex.get(map);
    if (indexed) return indexed.get(name);
    let seen = 0;
    for (const e of this.entries(map)) {
      if (this.keyIs(e.key, name)) return e;
      if (++seen === INDEXED) return this.indexMapping(map).get(name);
    }
    return undefined;
  }

  /** A mapping's children as entries: a key, then its value when a ':' follows the key. */
  private *entries(map: number): Generator<Entry> {
    const end = this.t.next.get(map);
    let kid = map + 1;
    while (kid < end) {
      const after = this.t.next.get(kid);
      const value = (this.t.info.get(kid) & COLON_AFTER) !== 0 && after < end ? after : -1;
      yield { key: kid, value };
      kid = value >= 0 ? this.t.next.get(value) : after;
    }
  }

  private indexMapping(map: number): Map<string, Entry> {
    const index = new Map<string, Entry>();
    for (const e of this.entries(map)) {
      const name = this.keyOf(e.key);
      if (name !== '<<' && !index.has(name)) index.set(name, e);
    }
    this.mappingIndex.set(map, index);
    return index;
  }

  private end(node: number): number {
    const length = this.t.length.get(node);
    return length === FAR_END ? this.t.ends.get(node)! : this.t.open.get(node) + length;
  }

  private keyIs(key: number, name: string): boolean {
    const special = this.t.keys.get(key);
    if (special !== undefined) return special === name;
    const start = skipSpace(this.text, this.t.open.get(key), true);
    if (this.end(key) - start === name.length && this.text.startsWith(name, start)) return true;
    // A key written without a value (`? key`, `{key}`) was not checked while loading.
    return (this.t.info.get(key) & COLON_AFTER) === 0 && this.keyOf(key) === name;
  }

  /** The key a key node stands for. */
  private keyOf(key: number): string {
    const special = this.t.keys.get(key);
    if (special !== undefined) return special;
    const source = this.text.slice(skipSpace(this.text, this.t.open.get(key), true), this.end(key));
    if ((this.t.info.get(key) & COLON_AFTER) !== 0) return source;
    try {
      return keyString(yaml.load(source, { schema: SCHEMA }));
    } catch {
      // A key that does not load on its own (it only parses in context) is named by its source text.
      return source;
    }
  }

  /**
   * Where a node's content starts. Block values are opened before the separating space, newlines
   * and comments are skipped; an empty (null) value is placed right after its `key:`.
   */
  private valueStart(node: number): number {
    const open = this.t.open.get(node);
    const inline = skipSpace(this.text, open, false);
    const ch = this.text.charCodeAt(inline);
    // js-yaml ends its text with a NUL.
    const atLineEnd = Number.isNaN(ch) || ch === 0 || ch === 10 || ch === 13 || ch === 0x23;
    if ((this.t.info.get(node) & NULL_VALUE) !== 0 && atLineEnd) return open;
    return skipSpace(this.text, open, true);
  }

  /** Line and column of an offset (binary search over line starts, found on first use). */
  private at(offset: number): SourcePosition {
    const starts = (this.lineStarts ??= lineStartsOf(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1, offset };
  }
}

function lineStartsOf(text: string): Uint32Array {
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  const starts = new Uint32Array(lines);
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts[n++] = i + 1;
  return starts;
}

/** `a.b[2]["x.y"]` → ['a', 'b', 2, 'x.y']; `` → []; undefined for what no path looks like. */
function parsePath(path: string): Array<string | number> | undefined {
  const out: Array<string | number> = [];
  let i = 0;
  while (i < path.length) {
    const ch = path.charCodeAt(i);
    if (ch === 0x5b /* [ */) {
      if (path.charCodeAt(i + 1) === 0x22 /* " */) {
        let j = i + 2;
        while (j < path.length && path.charCodeAt(j) !== 0x22) j += path.charCodeAt(j) === 0x5c ? 2 : 1;
        if (path.charCodeAt(j + 1) !== 0x5d) return undefined;
        try {
          out.push(JSON.parse(path.slice(i + 1, j + 1)) as string);
        } catch {
          // Not a JSON string: not a path this reads (undefined says so).
          return undefined;
        }
        i = j + 2;
      } else {
        const close = path.indexOf(']', i);
        const digits = close < 0 ? '' : path.slice(i + 1, close);
        if (!/^\d+$/.test(digits)) return undefined;
        out.push(Number(digits));
        i = close + 1;
      }
    } else {
      if (ch === 0x2e /* . */) {
        if (i === 0) return undefined;
        i++;
      } else if (i > 0) return undefined;
      let j = i;
      while (j < path.length && path.charCodeAt(j) !== 0x2e && path.charCodeAt(j) !== 0x5b) j++;
      if (j === i) return undefined;
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

/** Skip spaces and tabs; with `lines`, also line breaks and `#` comments. */
function skipSpace(t: string, offset: number, lines: boolean): number {
  let i = offset;
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

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
