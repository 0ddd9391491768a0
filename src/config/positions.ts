/**
 * YAML loading with source positions, from js-yaml 5's public event API. Its parser turns a text
 * into a flat list of events (a mapping or list opens, a scalar with its offsets, an alias, a
 * close), and its constructor builds the value from that list. Before the value is built, each node
 * is written into a few typed arrays (where its content starts, where a scalar ends, its kind,
 * where its subtree ends): 11 bytes a node and no object per node, so a 50 MiB file costs tens of
 * megabytes of index once js-yaml's events are let go. A field path
 * (`mirror.additionalImages[1].name`) becomes a line and column only when it is asked for: the path
 * is walked down that table from the root, beside the source text.
 */
import {
  constructFromEvents,
  EVENT_ID,
  getScalarValue,
  SCALAR_STYLE,
  type DocumentEvent,
  type Event,
  type PopEvent,
  type ScalarEvent,
} from 'js-yaml';
import { LOAD_SCHEMA, onlyDocument, YamlGuard, type YamlReadOptions } from './yaml-load.js';

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
   * The text positions are measured in: the source without a byte order mark, which the loaded
   * strings are slices of. Read this one, and let go of the source string.
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

/**
 * YAML 1.2 core types plus merge keys (`<<`), without timestamps: a tag such as `2024-01-01` stays
 * a string, as it does for oc-mirror. Whatever `options.schema` says, this is the schema.
 */
const SCHEMA = LOAD_SCHEMA;

/**
 * Load one YAML document and map every field path to its position, under the limits of
 * `options` (yaml-load.ts: a YAML_LIMIT error names `options.source`). Throws js-yaml's
 * `YAMLException` on a syntax error (its `mark` holds 0-based line and column).
 */
export function loadYamlWithPositions(
  text: string,
  options: YamlReadOptions = { source: 'the YAML text' },
): LoadedYaml {
  const guard = new YamlGuard(text, { ...options, schema: SCHEMA });
  const events = guard.events();
  const positions = new NodeBuilder(guard.text).build(events);
  const value = onlyDocument(guard.documents(events));
  return { value, positions, text: guard.text, aliased: guard.aliased };
}

// info bits of a node: its kind, whether it has no place in the text (an empty scalar without a
// tag or anchor: `key:` with nothing after it, `-` alone), and whether it is a mapping key whose
// text as written is its key (a plain one-line scalar that no schema type reads as anything but a
// string).
const KIND_MASK = 3;
const ALIAS = 0;
const SCALAR = 1;
const SEQUENCE = 2;
const MAPPING = 3;
const NO_PLACE = 4;
const WRITTEN_KEY = 8;

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

/** A token longer than this keeps its end in NodeTable.ends. */
const FAR_END = 0xffff;

/**
 * Every node of the first document, numbered in document order (a node before its children), one
 * row per node: 11 bytes. A node's descendants are the rows after it, up to `next`, so its children
 * are found by jumping from one child's `next` to the following child; a mapping's children are
 * its keys and values in turn.
 */
interface NodeTable {
  /** Where the node starts: its tag or anchor, else its content (a quote, `|`, `[`, `-`, a key). */
  start: Column;
  /** Where a scalar or alias token ends (after a closing quote), minus `start`, or FAR_END. */
  length: Column;
  info: Column;
  /** The row after this node's last descendant. */
  next: Column;
  /** Ends of tokens whose `length` is FAR_END. */
  ends: Map<number, number>;
  /** Mapping keys that are not their text as written (quoted, tagged, `010`, `true`): node → key. */
  keys: Map<number, string>;
}

/** A mapping or list being read, with what its children need. */
interface Open {
  row: number;
  mapping: boolean;
  /** Children read so far (a mapping's even ones are keys). */
  children: number;
  /** The key row of the entry being read, or -1. */
  key: number;
}

const POP: PopEvent = { type: EVENT_ID.POP };

/** Builds the node table from js-yaml's events of the first document. */
class NodeBuilder {
  private readonly t: NodeTable = {
    start: new Column(4),
    length: new Column(2),
    info: new Column(1),
    next: new Column(4),
    ends: new Map(),
    keys: new Map(),
  };
  private size = 0;
  private readonly open: Open[] = [];
  private document: DocumentEvent | undefined;
  /** Anchored scalars of the document, for a key that is an alias. */
  private anchors?: Map<string, ScalarEvent>;
  /** The first characters a schema type may read a plain scalar by (undefined: any). */
  private readonly implicitFirst = implicitFirstChars();

  constructor(private readonly text: string) {}

  build(events: readonly Event[]): PositionIndex {
    for (const e of events) {
      if (e.type === EVENT_ID.DOCUMENT) {
        if (this.document) break; // positions of the first document only (load reads one)
        this.document = e;
      } else if (e.type === EVENT_ID.POP) {
        const closed = this.open.pop();
        if (!closed) continue; // the document's end
        this.t.next.set(closed.row, this.size);
      } else this.node(e);
    }
    return new PositionIndex(this.text, this.t, this.size > 0 ? 0 : -1);
  }

  private node(e: Exclude<Event, DocumentEvent | PopEvent>): void {
    const t = this.t;
    const id = this.size++;
    const parent = this.open[this.open.length - 1];
    const isKey = parent !== undefined && parent.mapping && parent.children % 2 === 0;
    const keyRow = parent?.mapping && !isKey ? parent.key : -1;
    if (parent) {
      parent.children++;
      parent.key = isKey ? id : -1;
    }
    let info: number;
    let start: number;
    let end = -1;
    if (e.type === EVENT_ID.ALIAS) {
      info = ALIAS;
      start = e.anchorStart - 1; // the '*'
      end = e.anchorEnd;
    } else {
      const props = propsStart(e);
      if (e.type === EVENT_ID.SCALAR) {
        info = SCALAR;
        const content = this.scalarStart(e, keyRow);
        start = props >= 0 ? props : content;
        if (start < 0) info |= NO_PLACE;
        end = e.valueEnd < 0 ? -1 : quoted(e) ? e.valueEnd + 1 : e.valueEnd;
        if (e.anchorStart >= 0) (this.anchors ??= new Map()).set(this.anchorName(e), e);
      } else {
        info = e.type === EVENT_ID.MAPPING ? MAPPING : SEQUENCE;
        start = props >= 0 ? props : e.start;
        this.open.push({ row: id, mapping: info === MAPPING, children: 0, key: -1 });
        if (e.anchorStart >= 0) this.anchors?.delete(this.anchorName(e));
      }
    }
    if (isKey) info |= this.key(id, e, start);
    t.start.set(id, start);
    const length = end < 0 ? 0 : end - start;
    if (length < FAR_END) t.length.set(id, length);
    else {
      t.length.set(id, FAR_END);
      t.ends.set(id, end);
    }
    t.info.set(id, info);
    t.next.set(id, id + 1);
  }

  private anchorName(e: { anchorStart: number; anchorEnd: number }): string {
    return this.text.slice(e.anchorStart, e.anchorEnd);
  }

  /**
   * Where a scalar's content starts (-1 for an empty one): its first character, its opening
   * quote, or its `|` or `>` indicator (js-yaml gives where the block's lines start; the indicator
   * is on the line before, after the key of `keyRow` if that key is on it).
   */
  private scalarStart(e: ScalarEvent, keyRow: number): number {
    if (e.valueStart < 0) return -1;
    if (quoted(e)) return e.valueStart - 1;
    if (e.style !== SCALAR_STYLE.LITERAL_BLOCK && e.style !== SCALAR_STYLE.FOLDED_BLOCK) return e.valueStart;
    const text = this.text;
    let lineEnd = e.valueStart;
    if (text.charCodeAt(lineEnd - 1) === 10) lineEnd--;
    if (text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
    let i = lineEnd;
    while (i > 0 && text.charCodeAt(i - 1) !== 10 && text.charCodeAt(i - 1) !== 13) i--;
    if (keyRow >= 0 && (this.t.info.get(keyRow) & NO_PLACE) === 0) {
      const keyEnd = tokenEnd(this.t, keyRow);
      if (keyEnd > i && keyEnd <= lineEnd) i = keyEnd;
    }
    // Before the indicator there may only be `: `, `- `, `? ` and `--- ` on its line.
    while (i < lineEnd && ' \t:-?'.includes(text[i]!)) i++;
    const ch = text.charCodeAt(i);
    return ch === 0x7c || ch === 0x3e ? i : e.valueStart;
  }

  /** Note the key a key node stands for: WRITTEN_KEY when it is its text, else in `keys`. */
  private key(id: number, e: Event, start: number): number {
    if (e.type === EVENT_ID.SCALAR && e.style === SCALAR_STYLE.PLAIN && e.fast && start === e.valueStart) {
      const first = this.text[e.valueStart]!;
      if (this.implicitFirst && !this.implicitFirst.has(first)) return WRITTEN_KEY;
    }
    const name = this.keyName(e);
    if (name !== undefined) this.t.keys.set(id, name);
    return 0;
  }

  /** The key a scalar (or an alias of one) stands for, as js-yaml's mappings store it: a string. */
  private keyName(e: Event): string | undefined {
    let scalar: ScalarEvent | undefined;
    if (e.type === EVENT_ID.SCALAR) scalar = e;
    else if (e.type === EVENT_ID.ALIAS) scalar = this.anchors?.get(this.anchorName(e));
    if (!scalar) return undefined; // a mapping or list is no key js-yaml loads
    if (scalar.style !== SCALAR_STYLE.PLAIN && scalar.tagStart < 0) return getScalarValue(this.text, scalar);
    try {
      // What js-yaml makes of it, by the schema and the document's tag directives.
      const [value] = constructFromEvents([this.document!, { ...scalar, anchorStart: -1 }, POP], {
        source: this.text,
        schema: SCHEMA,
      });
      return String(value);
    } catch {
      // A tag the schema does not know: the document fails to load anyway.
      return getScalarValue(this.text, scalar);
    }
  }
}

/** The first characters of plain scalars that SCHEMA's types may read as something else than a string. */
function implicitFirstChars(): Set<string> | undefined {
  const out = new Set<string>();
  for (const tag of SCHEMA.tags) {
    if (tag.nodeKind !== 'scalar' || !tag.implicit) continue;
    if (tag.implicitFirstChars === null) return undefined;
    for (const c of tag.implicitFirstChars) out.add(c);
  }
  return out;
}

/** Where the token of a scalar or alias row ends (a mapping or list row: where it starts). */
function tokenEnd(t: NodeTable, row: number): number {
  const length = t.length.get(row);
  return length === FAR_END ? t.ends.get(row)! : t.start.get(row) + length;
}

/** Where a node's tag or anchor starts (they come before its content), or -1. */
function propsStart(e: { anchorStart: number; tagStart: number }): number {
  const anchor = e.anchorStart >= 0 ? e.anchorStart - 1 : -1; // the '&'
  if (anchor < 0) return e.tagStart;
  return e.tagStart < 0 ? anchor : Math.min(anchor, e.tagStart);
}

function quoted(e: ScalarEvent): boolean {
  return e.style === SCALAR_STYLE.SINGLE_QUOTED || e.style === SCALAR_STYLE.DOUBLE_QUOTED;
}

/** Mappings and sequences with more children than this get an index the first time one is looked up. */
const INDEXED = 64;

/** A mapping entry: its key node and its value node. */
interface Entry {
  key: number;
  value: number;
}

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
    const keyPos = key >= 0 && !this.noPlace(key) ? this.at(this.t.start.get(key)) : undefined;
    const start = this.valueStart(node, key);
    if (start < 0) return keyPos ? { key: keyPos, value: keyPos } : undefined;
    const value = this.at(start);
    return keyPos ? { key: keyPos, value } : { value };
  }

  private noPlace(node: number): boolean {
    return (this.t.info.get(node) & NO_PLACE) !== 0;
  }

  /** The node of item `index` of a sequence, or -1 (also for an empty item: it has no place). */
  private item(seq: number, index: number): number {
    const indexed = this.sequenceIndex.get(seq);
    let kid: number;
    if (indexed) kid = index < indexed.length ? indexed[index]! : -1;
    else {
      const end = this.t.next.get(seq);
      let k = seq + 1;
      for (let i = 0; k < end; i++) {
        if (i === index) break;
        if (i === INDEXED) {
          const all = this.indexSequence(seq);
          k = index < all.length ? all[index]! : end;
          break;
        }
        k = this.t.next.get(k);
      }
      kid = k < end ? k : -1;
    }
    return kid >= 0 && !this.noPlace(kid) ? kid : -1;
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
  private entry(map: number, name: string): Entry | undefined {
    if (name === '<<') return undefined;
    const indexed = this.mappingIndex.get(map);
    if (indexed) return indexed.get(name);
    let seen = 0;
    for (const e of this.entries(map)) {
      if (this.keyIs(e.key, name)) return e;
      if (++seen === INDEXED) return this.indexMapping(map).get(name);
    }
    return undefined;
  }

  /** A mapping's children as entries: a key, then its value. */
  private *entries(map: number): Generator<Entry> {
    const end = this.t.next.get(map);
    let kid = map + 1;
    while (kid < end) {
      const value = this.t.next.get(kid);
      if (value >= end) return;
      yield { key: kid, value };
      kid = this.t.next.get(value);
    }
  }

  private indexMapping(map: number): Map<string, Entry> {
    const index = new Map<string, Entry>();
    for (const e of this.entries(map)) {
      const name = this.keyOf(e.key);
      if (name !== undefined && name !== '<<' && !index.has(name)) index.set(name, e);
    }
    this.mappingIndex.set(map, index);
    return index;
  }

  private end(node: number): number {
    return tokenEnd(this.t, node);
  }

  private keyIs(key: number, name: string): boolean {
    if ((this.t.info.get(key) & WRITTEN_KEY) === 0) return this.t.keys.get(key) === name;
    const start = this.t.start.get(key);
    return this.end(key) - start === name.length && this.text.startsWith(name, start);
  }

  /** The key a key node stands for (undefined for one that is no scalar). */
  private keyOf(key: number): string | undefined {
    if ((this.t.info.get(key) & WRITTEN_KEY) === 0) return this.t.keys.get(key);
    return this.text.slice(this.t.start.get(key), this.end(key));
  }

  /**
   * Where a value starts, or -1. An empty value of a mapping entry is placed right after its
   * `key:` (or at its key, when no `:` follows it, as in `{key}`).
   */
  private valueStart(node: number, key: number): number {
    if (!this.noPlace(node)) return this.t.start.get(node);
    if (key < 0 || this.noPlace(key)) return -1;
    const after = skipSpace(this.text, this.end(key), true);
    return this.text.charCodeAt(after) === 0x3a ? after + 1 : this.t.start.get(key);
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
