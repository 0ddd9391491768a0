/**
 * The one way airgap reads YAML it did not write: a Helm repository's index.yaml, a chart's
 * values.yaml, graph data, release metadata, catalogs, and the files a person gives (an image set
 * configuration, a site file). Every document is read under limits, so that a few kilobytes cannot
 * stand for gigabytes:
 *
 * - its size in bytes, and its nodes: js-yaml 5 reads a text in two steps, its parser turning it
 *   into a flat list of events and its constructor building the value from them; the nodes are
 *   counted on the events, so a document over the limit is refused before any value is built (the
 *   events themselves, about 100 bytes a node, are bounded only by the byte limit);
 * - its nesting (js-yaml's `maxDepth`, checked as it parses) and the keys merge keys (`<<`) copy
 *   (js-yaml's `maxTotalMergeKeys`);
 * - its aliases. js-yaml does not copy what an alias refers to: the loaded value shares it, and may
 *   even contain itself (js-yaml registers a mapping's anchor before reading its children, so
 *   `a: &x {b: *x}` is a cycle). Whatever later walks the value as a tree (Helm's values
 *   coalescing, a JSON writer, a loop over index entries) walks each alias in full. So a document
 *   that has an alias of a mapping or list is measured once after loading, each distinct mapping
 *   and list once (memoised by identity): the nodes it stands for expanded, how many of them come
 *   through aliases, how deep it nests expanded. A cycle is refused, so is more aliasing than
 *   go-yaml (Helm, kubectl, oc-mirror) accepts (its decoder's `allowedAliasRatio`: past 1,000
 *   nodes of which 100 come through aliases, these may be 99% of up to 400,000 nodes, falling to
 *   10% at 4,000,000), so is an expanded size over the node limit.
 * - what one source holds in all: the files of one source (the blocked edges of graph data, a
 *   chart's files) share a {@link YamlBudget} of bytes and nodes.
 *
 * Over a limit is a YAML_LIMIT error naming the source, the limit and how to fix it: exit 2 for a
 * file the user gave, 1 for content fetched from a registry or a repository.
 *
 * Unless a caller gives a schema, YAML is read as {@link LOAD_SCHEMA}: YAML 1.2 core types plus
 * merge keys, no timestamps.
 */
import {
  constructFromEvents,
  CORE_SCHEMA,
  EVENT_ID,
  mergeTag,
  parseEvents,
  YAMLException,
  type Event,
  type Schema,
} from 'js-yaml';
import { AirgapError, CommonError, hasCode, type ExitCode } from '../util/errors.js';

/**
 * YAML 1.2 core types (null, booleans, integers, floats as YAML 1.2 writes them) plus merge keys
 * (`<<`), without timestamps: a value such as `2024-01-01` stays a string, as it does for oc-mirror
 * and Go's YAML libraries.
 */
export const LOAD_SCHEMA: Schema = CORE_SCHEMA.withTags(mergeTag);

const MIB = 1024 * 1024;

/** What one document (or one multi-document text) may be. */
export interface YamlLimits {
  /** Its size in bytes (UTF-8). */
  bytes: number;
  /** Nodes js-yaml reads (events it parses); also what the value may stand for with every alias expanded. */
  nodes: number;
  /** Nesting as written (js-yaml's maxDepth). */
  depth: number;
  /** Nesting of the value with its aliases expanded (an alias deep down may refer to a deep node). */
  expandedDepth: number;
  /** Keys that merge keys (`<<`) may copy, over the whole text (js-yaml's maxTotalMergeKeys). */
  mergeKeys: number;
}

/**
 * The limits unless a caller says otherwise. 64 MiB and 16 million nodes hold the largest
 * documents airgap reads (a 50 MiB image set configuration is about 5 million nodes); the depth
 * and merge keys are js-yaml's own defaults, which every caller had until now.
 */
export const YAML_LIMITS: Readonly<YamlLimits> = {
  bytes: 64 * MIB,
  nodes: 16_000_000,
  depth: 100,
  expandedDepth: 1000,
  mergeKeys: 10_000,
};

/** go-yaml v3's rule: aliases are judged once a document has this many nodes … */
const ALIAS_MIN_NODES = 1000;
/** … of which this many come through aliases. */
const ALIAS_MIN_ALIASED = 100;

/** The share of a document's (expanded) nodes that may come through aliases, as go-yaml v3 allows. */
export function allowedAliasRatio(nodes: number): number {
  if (nodes <= 400_000) return 0.99;
  if (nodes >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((nodes - 400_000) / 3_600_000);
}

/** How to read one text, and what to call it in messages. */
export interface YamlReadOptions {
  /** What the text is, for messages: a file, a URL, an image and a path in it. */
  source: string;
  /** 2 for a file the user gave, 1 (the default) for what a registry or repository served. */
  exitCode?: ExitCode;
  /** How to fix it, when the default one (by limit and exit code) does not fit. */
  hint?: string;
  limits?: Partial<YamlLimits>;
  /** The budget of the source this text is one file of. */
  budget?: YamlBudget;
  /** The text's bytes were counted already ({@link YamlBudget.hold}, as it was read). */
  held?: boolean;
  /** {@link LOAD_SCHEMA} unless given. */
  schema?: Schema;
  /** js-yaml's filename option: the name its syntax errors give. */
  filename?: string;
  /** js-yaml's json option: a repeated key keeps its last value instead of being an error. */
  json?: boolean;
}

/** Which limit a document went over (in the error's details). */
export type YamlLimitName = keyof YamlLimits | 'aliases' | 'cycle' | 'budgetBytes' | 'budgetNodes';

/** Whether `e` is a YAML_LIMIT error: callers that wrap "not YAML" errors let these through. */
export function isYamlLimitError(e: unknown): e is AirgapError {
  return hasCode(e, CommonError.YAML_LIMIT);
}

const n = (v: number): string => Math.round(v).toLocaleString('en-US');

function defaultHint(limit: YamlLimitName, exitCode: ExitCode): string {
  if (exitCode === 1)
    return 'airgap refuses to read a document this large or this aliased from a registry or repository: check that it is the source you meant, and tell whoever publishes it';
  switch (limit) {
    case 'aliases':
    case 'expandedDepth':
      return 'write the repeated parts out, or use fewer nested aliases';
    case 'cycle':
      return 'an alias may not refer to a mapping or list that contains it: write that part out';
    case 'depth':
      return 'nest the document less deeply';
    case 'mergeKeys':
      return 'write the merged keys out, or merge fewer (`<<`) mappings';
    default:
      return 'split the file, or give a smaller one';
  }
}

/** The YAML_LIMIT error for `source`. */
export function yamlLimitError(
  source: string,
  limit: YamlLimitName,
  what: string,
  options: { exitCode?: ExitCode; hint?: string; details?: Record<string, unknown>; cause?: unknown } = {},
): AirgapError {
  const exitCode = options.exitCode ?? 1;
  return new AirgapError(CommonError.YAML_LIMIT, `${source}: ${what}`, {
    exitCode,
    hint: options.hint ?? defaultHint(limit, exitCode),
    details: { source, limit, ...options.details },
    ...(options.cause !== undefined ? { cause: options.cause } : {}),
  });
}

/**
 * What all the YAML files of one source (a graph image, a chart, a directory) may hold together:
 * bytes as they are read, nodes as they are loaded. Made once per source, given to each read.
 */
export class YamlBudget {
  private bytes = 0;
  private nodes = 0;

  constructor(
    /** The source, for messages (`the graph image host/openshift/graph-image:latest`). */
    readonly source: string,
    readonly limits: { bytes: number; nodes: number } = { bytes: 64 * MIB, nodes: 16_000_000 },
    readonly exitCode: ExitCode = 1,
    readonly hint?: string,
  ) {}

  /** Nodes the budget has left. */
  get nodesLeft(): number {
    return this.limits.nodes - this.nodes;
  }

  /** Count `bytes` of `file` about to be held (call it before reading them in, where that can be). */
  hold(bytes: number, file: string): void {
    this.bytes += bytes;
    if (this.bytes > this.limits.bytes)
      throw this.over(
        'budgetBytes',
        `its YAML files come to more than ${n(this.limits.bytes)} bytes (at ${file})`,
      );
  }

  /** Count `nodes` of `file`, loaded. */
  take(nodes: number, file: string): void {
    this.nodes += nodes;
    if (this.nodes > this.limits.nodes)
      throw this.over(
        'budgetNodes',
        `its YAML files come to more than ${n(this.limits.nodes)} nodes (at ${file})`,
      );
  }

  private over(limit: YamlLimitName, what: string): AirgapError {
    return yamlLimitError(this.source, limit, what, {
      exitCode: this.exitCode,
      hint: this.hint,
      details: { max: limit === 'budgetBytes' ? this.limits.bytes : this.limits.nodes },
    });
  }
}

/**
 * The limits applied to one read: checks the size first, counts the nodes on the events js-yaml's
 * parser makes, then measures what its constructor built. {@link parseYaml} uses it; so does the
 * positions loader, which reads the events too.
 */
export class YamlGuard {
  readonly limits: YamlLimits;
  /**
   * The text js-yaml reads: the one given, without a byte order mark. Event offsets, error marks
   * and positions are measured in it; the loaded strings are slices of it.
   */
  readonly text: string;
  private readonly exitCode: ExitCode;
  private readonly nodeLimit: number;
  /** Nodes read so far. */
  nodes = 0;
  /** Whether an alias of a mapping or list was read (only then is the value measured). */
  aliased = false;

  constructor(
    text: string,
    private readonly options: YamlReadOptions,
  ) {
    this.limits = { ...YAML_LIMITS, ...options.limits };
    this.exitCode = options.exitCode ?? options.budget?.exitCode ?? 1;
    const budget = options.budget;
    this.nodeLimit = Math.min(this.limits.nodes, budget ? Math.max(budget.nodesLeft, 0) : Infinity);
    // A string has at most 3 bytes a UTF-16 unit: only a text near the limit, or one the budget
    // counts, is measured.
    const exact = text.length * 3 > this.limits.bytes || (budget !== undefined && !options.held);
    const bytes = exact ? Buffer.byteLength(text) : text.length;
    if (bytes > this.limits.bytes)
      throw this.fail('bytes', `it is ${n(bytes)} bytes of YAML, over the limit of ${n(this.limits.bytes)}`, {
        max: this.limits.bytes,
        found: bytes,
      });
    if (budget && !options.held) budget.hold(bytes, options.source);
    // js-yaml 4 removed a byte order mark itself; js-yaml 5 skips it but measures offsets with it.
    this.text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /** Parse the text into js-yaml's events (its nesting limit applies), and count their nodes. */
  events(): Event[] {
    let events: Event[];
    try {
      events = parseEvents(this.text, {
        maxDepth: this.limits.depth,
        ...(this.options.filename ? { filename: this.options.filename } : {}),
      });
    } catch (e) {
      throw this.translate(e);
    }
    this.count(events);
    return events;
  }

  /** Build the documents `events` stand for (the merge-key limit applies), then measure them. */
  documents(events: Event[]): unknown[] {
    let documents: unknown[];
    try {
      documents = constructFromEvents(events, {
        source: this.text,
        schema: this.options.schema ?? LOAD_SCHEMA,
        ...(this.options.json ? { json: true } : {}),
        ...(this.options.filename ? { filename: this.options.filename } : {}),
        maxTotalMergeKeys: this.limits.mergeKeys,
      });
    } catch (e) {
      throw this.translate(e);
    }
    this.finish(documents);
    return documents;
  }

  /** Count the nodes of `events`, and note an alias of a mapping or list. */
  private count(events: readonly Event[]): void {
    const text = this.text;
    let nodes = 0;
    // Per document: whether each anchor names a mapping or list (anchors are few; most documents
    // have none).
    let anchors: Map<string, boolean> | undefined;
    for (const e of events) {
      switch (e.type) {
        case EVENT_ID.DOCUMENT:
          anchors = undefined;
          break;
        case EVENT_ID.SCALAR:
        case EVENT_ID.SEQUENCE:
        case EVENT_ID.MAPPING:
          nodes++;
          if (e.anchorStart >= 0)
            (anchors ??= new Map()).set(text.slice(e.anchorStart, e.anchorEnd), e.type !== EVENT_ID.SCALAR);
          break;
        case EVENT_ID.ALIAS:
          nodes++;
          if (anchors?.get(text.slice(e.anchorStart, e.anchorEnd))) this.aliased = true;
          break;
      }
    }
    this.nodes += nodes;
    if (this.nodes > this.nodeLimit) this.tooManyNodes(this.nodes);
  }

  /** What js-yaml threw, as a YAML_LIMIT error when it is its depth or merge-key limit. */
  translate(e: unknown): unknown {
    const reason = e instanceof YAMLException ? e.reason : '';
    if (
      /^nesting exceeded maxDepth/.test(reason) ||
      (e instanceof RangeError && /call stack/.test(e.message))
    )
      return this.fail('depth', `it nests deeper than ${n(this.limits.depth)} levels`, {
        max: this.limits.depth,
        cause: e,
      });
    if (/^merge keys exceeded maxTotalMergeKeys/.test(reason))
      return this.fail('mergeKeys', `its merge keys (<<) copy more than ${n(this.limits.mergeKeys)} keys`, {
        max: this.limits.mergeKeys,
        cause: e,
      });
    return e;
  }

  /** Measure what was loaded (each document of a multi-document text), and count it in the budget. */
  private finish(documents: readonly unknown[]): void {
    let total = this.nodes;
    if (this.aliased) {
      total = 0;
      for (const doc of documents) total += this.measure(doc, this.nodeLimit - total);
    }
    this.options.budget?.take(total, this.options.source);
  }

  /** The nodes `root` stands for, expanded; refuses a cycle and too much aliasing. */
  private measure(root: unknown, nodeLimit: number): number {
    const m = measureValue(root, { nodes: nodeLimit, depth: this.limits.expandedDepth });
    if (m.cycle) throw this.fail('cycle', 'an alias refers to a mapping or list that contains it (a cycle)');
    if (m.tooDeep)
      throw this.fail(
        'expandedDepth',
        `its aliases nest it deeper than ${n(this.limits.expandedDepth)} levels`,
        {
          max: this.limits.expandedDepth,
        },
      );
    const excessive =
      m.aliased > ALIAS_MIN_ALIASED &&
      m.nodes > ALIAS_MIN_NODES &&
      m.aliased / m.nodes > allowedAliasRatio(m.nodes);
    if (excessive && m.nodes > nodeLimit)
      // The walk stopped at the limit: the aliases alone took it there.
      throw this.fail(
        'aliases',
        `its aliases expand it to more than ${n(nodeLimit)} nodes (a "billion laughs" document)`,
        { max: nodeLimit },
      );
    if (excessive) {
      const share = Math.round(allowedAliasRatio(m.nodes) * 100);
      throw this.fail(
        'aliases',
        `its aliases stand for ${n(m.aliased)} of the ${n(m.nodes)} nodes it expands to, more than the ${share}% go-yaml (Helm, kubectl) accepts (a "billion laughs" document)`,
        { found: m.aliased, nodes: m.nodes },
      );
    }
    if (m.nodes > nodeLimit) this.tooManyNodes(m.nodes);
    return m.nodes;
  }

  /** Over the node limit, or over what the budget has left. */
  private tooManyNodes(found: number): never {
    const budget = this.options.budget;
    // When the budget is what ran out, its error says so.
    if (budget && this.nodeLimit < this.limits.nodes) budget.take(found, this.options.source);
    throw this.fail('nodes', `it has more than ${n(this.limits.nodes)} YAML nodes`, {
      max: this.limits.nodes,
    });
  }

  private fail(limit: YamlLimitName, what: string, details: Record<string, unknown> = {}): AirgapError {
    const { cause, ...rest } = details;
    return yamlLimitError(this.options.source, limit, what, {
      exitCode: this.exitCode,
      ...((this.options.hint ?? this.options.budget?.hint)
        ? { hint: this.options.hint ?? this.options.budget?.hint }
        : {}),
      details: rest,
      ...(cause !== undefined ? { cause } : {}),
    });
  }
}

/** What {@link measureValue} found. */
interface Measure {
  /** Nodes with every alias expanded: a mapping counts 1 and a key and the value per entry. */
  nodes: number;
  /** How many of them are there again: second and later references to the same mapping or list. */
  aliased: number;
  cycle: boolean;
  tooDeep: boolean;
}

/** The mappings and lists js-yaml makes (a !!binary value or a date is one node). */
function isCollection(v: unknown): v is object {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

const IN_PROGRESS = -1;

/**
 * Walk `root` as the DAG it is, each mapping and list once (iteratively: a deep value cannot
 * overflow the stack), stopping as soon as it is known to be over `limits`.
 */
function measureValue(root: unknown, limits: { nodes: number; depth: number }): Measure {
  const out: Measure = { nodes: 0, aliased: 0, cycle: false, tooDeep: false };
  if (!isCollection(root)) {
    out.nodes = 1;
    return out;
  }
  /** Expanded size of each mapping and list walked, or IN_PROGRESS while its children are. */
  const sizes = new Map<object, number>();
  const heights = new Map<object, number>();
  interface Frame {
    node: object;
    children: unknown[];
    /** 1 a mapping (its keys are nodes too), 0 a list. */
    perChild: number;
    next: number;
    size: number;
    height: number;
  }
  const frameOf = (node: object): Frame => {
    const list = Array.isArray(node);
    return {
      node,
      children: list ? node : Object.values(node),
      perChild: list ? 0 : 1,
      next: 0,
      size: 1,
      height: 1,
    };
  };
  sizes.set(root, IN_PROGRESS);
  const stack: Frame[] = [frameOf(root)];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.children.length) {
      const child = top.children[top.next++];
      top.size += top.perChild;
      if (!isCollection(child)) {
        top.size += 1;
      } else {
        const known = sizes.get(child);
        if (known === IN_PROGRESS) return { ...out, cycle: true };
        if (known === undefined) {
          sizes.set(child, IN_PROGRESS);
          stack.push(frameOf(child));
          if (stack.length > limits.depth) return { ...out, tooDeep: true };
          continue;
        }
        // Seen before: this is an alias (or a merge key's copy) of it.
        out.aliased += known;
        top.size += known;
        top.height = Math.max(top.height, heights.get(child)! + 1);
        if (top.height > limits.depth) return { ...out, tooDeep: true };
      }
      if (top.size > limits.nodes) return { ...out, nodes: top.size };
      continue;
    }
    stack.pop();
    sizes.set(top.node, top.size);
    heights.set(top.node, top.height);
    const parent = stack[stack.length - 1];
    if (!parent) {
      out.nodes = top.size;
      break;
    }
    parent.size += top.size;
    parent.height = Math.max(parent.height, top.height + 1);
    if (parent.height > limits.depth) return { ...out, tooDeep: true };
    if (parent.size > limits.nodes) return { ...out, nodes: parent.size };
  }
  return out;
}

/** The one document of `documents`, as js-yaml's `load` has it (but an empty text is undefined). */
export function onlyDocument(documents: readonly unknown[]): unknown {
  // js-yaml 5's load throws on an empty text; js-yaml 4 gave undefined, which callers expect.
  if (documents.length > 1)
    throw new YAMLException('expected a single document in the stream, but found more');
  return documents[0];
}

/**
 * Load one YAML document under the limits of `options` (js-yaml's YAMLException for bad syntax).
 * An empty text (or only comments) is undefined.
 */
export function parseYaml(text: string, options: YamlReadOptions): unknown {
  const guard = new YamlGuard(text, options);
  return onlyDocument(guard.documents(guard.events()));
}

/** Load every document of a YAML stream under the limits of `options`. */
export function parseYamlDocuments(text: string, options: YamlReadOptions): unknown[] {
  const guard = new YamlGuard(text, options);
  return guard.documents(guard.events());
}
