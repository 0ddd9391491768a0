/**
 * Small typed decoders from loaded YAML to the config types, strict like oc-mirror's
 * DisallowUnknownFields JSON decode. Every problem is recorded with its path; decoding goes on so
 * that one run reports them all. A decoder returns undefined for a value it rejected.
 * The ImageSetConfiguration (src/mirror/isc) and the site file (src/cluster/site) both decode
 * with these; each context says which error codes its problems carry.
 */
import { childPath, itemPath } from './positions.js';
import type { Problems } from './problems.js';
import { didYouMean } from './suggest.js';

/** The codes of the three problems decoding finds, in the codes of the file being decoded. */
export interface DecodeCodes<C extends string = string> {
  invalid: C;
  required: C;
  unknownField: C;
}

/** What a decoder needs: where problems go (it knows positions), the source text, the codes. */
export interface DecodeContext {
  problems: Problems;
  /** The source text, for hints that quote a value as written. */
  text?: string;
  /** Which codes the problems decoding finds carry (the ISC's, the site's). */
  codes: DecodeCodes;
  /**
   * Decode in place: the mappings and lists of the loaded value become the decoded ones (fields
   * converted, defaults added, absent ones removed) instead of being copied, so a large file is not
   * held twice. Only for a loaded value nothing else reads, in which no mapping or list appears
   * twice (YAML aliases), and whose result is dropped when any problem was found: in place, an
   * unknown field stays where it was.
   */
  inPlace?: boolean;
}

export type Decoder<T> = (raw: unknown, path: string, ctx: DecodeContext) => T | undefined;

/** How a field of a mapping is decoded, and what it is when absent. */
export interface Field<T> {
  decode: Decoder<NonNullable<T>>;
  required: boolean;
  fallback?: () => T;
}

/** One field spec per property of T: the compiler keeps schema and types in step. */
export type FieldsOf<T> = { [K in keyof T]-?: Field<T[K]> };

/** A required field: absent, null or empty string is a problem. */
export function required<T>(decode: Decoder<T>): Field<T> {
  return { decode: decode as Decoder<NonNullable<T>>, required: true };
}

/** An optional field that stays undefined when absent. */
export function optional<T>(decode: Decoder<T>): Field<T | undefined> {
  return { decode: decode as Decoder<NonNullable<T>>, required: false };
}

/** An optional field with a value when absent. */
export function withDefault<T>(decode: Decoder<T>, fallback: () => T): Field<T> {
  return { decode: decode as Decoder<NonNullable<T>>, required: false, fallback };
}

/** A word for the type of a loaded YAML value, for messages. */
/**
 * What a value is, without the value: for a file not yet known to be the kind expected (any file
 * given by mistake: /etc/passwd, a pull secret), whose content is never quoted.
 */
export function describeShape(raw: unknown): string {
  if (raw === null || raw === undefined) return 'nothing';
  if (Array.isArray(raw)) return 'a list';
  if (typeof raw === 'object') return 'a mapping';
  return `a ${typeof raw}`;
}

/**
 * A header field (`kind`, `apiVersion`) as a message names it: `kind Foo` when its value is shaped
 * like a type name, else `the kind`. Anything else there is content of a file not known to be
 * what was expected, and is not quoted.
 */
export function namedHeader(field: string, raw: unknown): string {
  return typeof raw === 'string' && /^[A-Za-z0-9][A-Za-z0-9./-]{0,62}$/.test(raw)
    ? `${field} ${raw}`
    : `the ${field}`;
}

function describeType(raw: unknown): string {
  if (raw === null || raw === undefined) return 'nothing';
  if (Array.isArray(raw)) return 'a list';
  if (typeof raw === 'object') return 'a mapping';
  if (typeof raw === 'number') return `the number ${String(raw)}`;
  if (typeof raw === 'boolean') return `the boolean ${String(raw)}`;
  return `the string ${JSON.stringify(raw)}`;
}

/** The source text of a scalar value (for hints such as "quote it"), without comments. */
function rawScalar(path: string, ctx: DecodeContext): string | undefined {
  const pos = ctx.problems.positions.get(path)?.value;
  if (!pos || ctx.text === undefined) return undefined;
  const eol = ctx.text.indexOf('\n', pos.offset);
  let token = ctx.text.slice(pos.offset, eol < 0 ? undefined : eol).split(/\s#/)[0];
  if (!/^["']/.test(token)) token = token.split(/[,\]}]/)[0];
  token = token.trim();
  return token.length > 0 ? token : undefined;
}

/** Record that the value at `path` is not `expected`; returns undefined for the decoder to return. */
export function invalid(
  ctx: DecodeContext,
  path: string,
  expected: string,
  raw: unknown,
  hint?: string,
): undefined {
  ctx.problems.add(ctx.codes.invalid, path, `${path} must be ${expected}, not ${describeType(raw)}`, {
    ...(hint ? { hint } : {}),
  });
  return undefined;
}

/** A string. Numbers and booleans are refused as oc-mirror refuses them, with a hint to quote. */
export const str: Decoder<string> = (raw, path, ctx) => {
  if (typeof raw === 'string') return raw;
  if ((typeof raw === 'number' || typeof raw === 'boolean') && !ctx.problems.full) {
    const token = rawScalar(path, ctx) ?? String(raw);
    return invalid(ctx, path, 'a string', raw, `quote it: "${token.replace(/^["']|["']$/g, '')}"`);
  }
  return invalid(ctx, path, 'a string', raw);
};

// YAML 1.1 booleans, which oc-mirror's YAML library (go-yaml v2) still reads as booleans.
const YAML11_TRUE = new Set(['y', 'yes', 'on']);
const YAML11_FALSE = new Set(['n', 'no', 'off']);

/** true or false (also unquoted yes/no/on/off, as oc-mirror's YAML 1.1 reader takes them). */
export const bool: Decoder<boolean> = (raw, path, ctx) => {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const token = rawScalar(path, ctx);
    const quoted = token !== undefined && /^["']/.test(token);
    if (!quoted && YAML11_TRUE.has(raw.toLowerCase())) return true;
    if (!quoted && YAML11_FALSE.has(raw.toLowerCase())) return false;
  }
  return invalid(ctx, path, 'true or false', raw);
};

/** A whole number. */
export const int: Decoder<number> = (raw, path, ctx) => {
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
  return invalid(ctx, path, 'a whole number', raw);
};

/** One of a fixed set of strings. */
export function oneOf<const V extends string>(values: readonly V[]): Decoder<V> {
  return (raw, path, ctx) => {
    const s = str(raw, path, ctx);
    if (s === undefined) return undefined;
    if ((values as readonly string[]).includes(s)) return s as V;
    const hint = ctx.problems.full
      ? undefined
      : (didYouMean(s, values) ?? `use one of: ${values.join(', ')}`);
    ctx.problems.add(
      ctx.codes.invalid,
      path,
      `${path} is ${JSON.stringify(s)}; expected one of ${values.join(', ')}`,
      {
        hint,
      },
    );
    return undefined;
  };
}

/** A list; items that fail to decode are left out (their problems are recorded). */
export function list<T>(item: Decoder<T>): Decoder<T[]> {
  return (raw, path, ctx) => {
    if (!Array.isArray(raw)) {
      const hint =
        typeof raw === 'object'
          ? 'start each list item with "- "'
          : 'write it as a list: one "- " item per line';
      return invalid(ctx, path, 'a list', raw, hint);
    }
    // Sized once: an array grown by push keeps room for 16 more items, a lot for many short lists.
    const out = ctx.inPlace ? (raw as T[]) : new Array<T>(raw.length);
    let n = 0;
    for (let i = 0; i < raw.length; i++) {
      const value: unknown = raw[i];
      const p = itemPath(path, i);
      if (value === null || value === undefined) {
        ctx.problems.add(ctx.codes.invalid, p, `${p} is empty`, { hint: 'remove the empty "- " item' });
        continue;
      }
      const decoded = item(value, p, ctx);
      if (decoded !== undefined) out[n++] = decoded;
    }
    out.length = n;
    return out;
  };
}

/** Extra knowledge for a mapping's unknown keys: fields that were removed, with what to do instead. */
export interface ObjectOptions {
  removed?: Record<string, string>;
}

/** A mapping with exactly the given fields; any other key is an unknown-field problem. */
export function obj<T>(fields: FieldsOf<T>, options: ObjectOptions = {}): Decoder<T> {
  const specs = fields as Record<string, Field<unknown>>;
  const allowed = Object.keys(specs);
  const entries = Object.entries(specs);
  return (raw, path, ctx) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return invalid(
        ctx,
        path || 'the document',
        'a mapping of fields',
        raw,
        `expected fields: ${allowed.join(', ')}`,
      );
    }
    const input = raw as Record<string, unknown>;
    for (const key of Object.keys(input)) {
      if (Object.hasOwn(specs, key)) continue;
      unknownField(ctx, childPath(path, key), key, allowed, options.removed?.[key]);
    }
    const out: Record<string, unknown> = ctx.inPlace ? input : {};
    for (const [key, spec] of entries) {
      const p = childPath(path, key);
      const value = Object.hasOwn(input, key) ? input[key] : undefined;
      let decoded: unknown;
      if (value === undefined || value === null || (spec.required && value === '')) {
        if (spec.required) {
          const at = value === undefined ? path : p;
          ctx.problems.add(ctx.codes.required, at, `${p} is required`, { part: 'key' });
        } else if (spec.fallback) decoded = spec.fallback();
      } else {
        decoded = spec.decode(value, p, ctx);
        if (decoded === undefined && spec.fallback) decoded = spec.fallback();
      }
      if (decoded !== undefined) {
        if (out[key] !== decoded) out[key] = decoded;
      } else if (out === input && value !== undefined) {
        delete out[key];
      }
    }
    return out as T;
  };
}

function unknownField(
  ctx: DecodeContext,
  path: string,
  key: string,
  allowed: string[],
  removed?: string,
): void {
  const hint = ctx.problems.full
    ? undefined
    : (removed ??
      didYouMean(key, allowed) ??
      (allowed.length > 0 ? `allowed here: ${allowed.join(', ')}` : 'no fields are allowed here'));
  ctx.problems.add(ctx.codes.unknownField, path, `unknown field ${path}`, { hint, part: 'key' });
}
