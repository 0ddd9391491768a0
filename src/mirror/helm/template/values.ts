/**
 * Go values as the template engine sees them, held in plain JavaScript values:
 *
 * | Go                          | here                                   |
 * | --------------------------- | -------------------------------------- |
 * | invalid reflect.Value       | `undefined` (a nil that was dug out of an interface: "<no value>") |
 * | nil interface{}             | `null` (a missing map key, a YAML null) |
 * | bool, string                | boolean, string                         |
 * | int, int64                  | bigint                                  |
 * | float64                     | number (YAML and JSON numbers are float64 in Helm) |
 * | []interface{}               | array                                   |
 * | map[string]interface{}      | a plain object                          |
 * | a struct or a type with methods (.Chart, .Capabilities, semver) | {@link GoStruct} |
 * | a map type with methods (.Files)  | {@link GoStruct} with `entries`        |
 * | time.Time                   | Date                                    |
 * | []byte                      | Uint8Array                              |
 *
 * The difference between `undefined` and `null` matters in one place, as in Go: a field of a nil
 * interface (`.Values.missing.key`) is an error, a field of no value (`$unset.key`) is nothing.
 */
export type GoMap = Record<string, unknown>;

/** A Go struct or named type: fields read with `.Name`, methods called with `.Name arg…`. */
export class GoStruct {
  constructor(
    /** The Go type as `%T` prints it, e.g. `*chart.Metadata`. */
    readonly typeName: string,
    readonly fields: Readonly<Record<string, unknown>>,
    readonly methods: Readonly<Record<string, (...args: unknown[]) => unknown>> = {},
    /** What `%v` prints (a String() method); else the fields in braces. */
    readonly display?: () => string,
    /**
     * The map of a named map type with methods (Helm's `engine.files`): what range, index, len,
     * truth and a key that is not a method see.
     */
    readonly entries?: GoMap,
  ) {}
}

/** The map a value holds: a map, or the entries of a named map type; else undefined. */
export function mapOf(v: unknown): GoMap | undefined {
  if (isMap(v)) return v;
  return v instanceof GoStruct ? v.entries : undefined;
}

export function isNil(v: unknown): v is null | undefined {
  return v === null || v === undefined;
}

export function isMap(v: unknown): v is GoMap {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A value's own key, as a Go map lookup sees it (never the prototype's). */
export function mapGet(m: GoMap, key: string): unknown {
  return Object.hasOwn(m, key) ? m[key] : null;
}

/** The Go type of a scalar (its kind and its type are the same name), or undefined. */
function scalarType(v: unknown): string | undefined {
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float64';
    default:
      return undefined;
  }
}

/** reflect.Kind of a value, as sprig's kindOf prints it. */
export function kindOf(v: unknown): string {
  if (isNil(v)) return 'invalid';
  const scalar = scalarType(v);
  if (scalar) return scalar;
  if (Array.isArray(v) || v instanceof Uint8Array) return 'slice';
  if (mapOf(v)) return 'map';
  if (v instanceof GoStruct) return v.typeName.startsWith('*') ? 'ptr' : 'struct';
  if (v instanceof Date) return 'struct';
  return 'invalid';
}

/** The Go type, as `%T` and sprig's typeOf print it. */
export function typeOf(v: unknown): string {
  if (isNil(v)) return '<nil>';
  const scalar = scalarType(v);
  if (scalar) return scalar;
  if (Array.isArray(v)) return '[]interface {}';
  if (v instanceof Uint8Array) return '[]uint8';
  if (isMap(v)) return 'map[string]interface {}';
  if (v instanceof GoStruct) return v.typeName;
  if (v instanceof Date) return 'time.Time';
  return 'interface {}';
}

/** Go's truth: false, 0, "", nil and empty slices and maps are false; structs are true. */
export function isTrue(v: unknown): boolean {
  if (isNil(v)) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'string':
      return v.length > 0;
    case 'bigint':
      return v !== 0n;
    case 'number':
      return v !== 0;
    default:
  }
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length > 0;
  const m = mapOf(v);
  if (m) return Object.keys(m).length > 0;
  return true;
}

/** sprig's `empty`: the opposite of Go's truth. */
export function isEmpty(v: unknown): boolean {
  return !isTrue(v);
}

/** A deep copy of maps and lists (other values are immutable or shared, as in Go). */
export function deepCopy<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x: unknown) => deepCopy(x)) as T;
  if (isMap(v)) {
    const out: GoMap = {};
    for (const [k, x] of Object.entries(v)) out[k] = deepCopy(x);
    return out as T;
  }
  return v;
}

/** The JSON-like value of a Go value, for YAML and JSON writers: ints become numbers, structs their fields. */
export function toPlain(v: unknown, sortKeys = true): unknown {
  if (v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => toPlain(x, sortKeys));
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString().replace(/\.000Z$/, 'Z');
  if (v instanceof GoStruct) return toPlain(v.entries ?? { ...v.fields }, sortKeys);
  if (isMap(v)) {
    const out: GoMap = {};
    const keys = Object.keys(v);
    if (sortKeys) keys.sort(compareStrings);
    for (const k of keys) out[k] = toPlain(v[k], sortKeys);
    return out;
  }
  return v;
}

/** Byte-wise string order, as Go sorts map keys (UTF-16 order agrees for the BMP). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The keys of a map in Go's order (sorted). */
export function sortedKeys(m: GoMap): string[] {
  return Object.keys(m).sort(compareStrings);
}
