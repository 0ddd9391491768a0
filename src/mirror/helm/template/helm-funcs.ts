/**
 * Helm's own template functions: include, tpl, required, fail, lookup (an empty dict, as `helm
 * template` gives), toYaml/toYamlPretty/fromYaml/fromYamlArray, toJson/fromJson/fromJsonArray/
 * toPrettyJson/toRawJson (and the must* forms), fromToml, and sprig's mustFromJson. YAML is written
 * as Helm writes it (go-yaml's layout, ../yaml.ts; no final newline) and read as Helm reads values
 * (numbers are float64). Parsing pays
 * for its text, writing is checked for size first (budget.ts).
 */
import type { FuncDef } from './exec.js';
import { f } from './sprig-def.js';
import { BudgetExceeded, TemplateBudgetError, checkPrinted } from './budget.js';
import { TemplateFailure, clip } from './errors.js';
import { str, strval } from './convert.js';
import type { TemplateSet } from './template.js';
import { isMap, isNil, mapGet, toPlain, type GoMap } from './values.js';
import { loadYaml, writeYaml, writeYamlPretty } from '../yaml.js';
import { GoYamlError } from '../go-yaml-encode.js';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';

/** What parsing YAML or JSON text costs: a character can become as much as a list item. */
const parseCost = (s: unknown) => str(s).length;

/** Go's json.Marshal: sorted keys, with <, > and & escaped as Go escapes them for HTML. */
function goJson(v: unknown, indent?: string, escapeHtml = true): string {
  checkPrinted('toJson', v);
  const text = JSON.stringify(toPlain(v), null, indent);
  const out = text ?? 'null';
  return escapeHtml
    ? out.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : out;
}

/** Keys sorted at every level, as BurntSushi/toml's encoder orders a map's. */
function sortedTables(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedTables);
  if (!isMap(v)) return v;
  const out: GoMap = {};
  for (const k of Object.keys(v).sort())
    Object.defineProperty(out, k, { value: sortedTables(v[k]), enumerable: true, writable: true });
  return out;
}

/**
 * Helm's toToml: the value as a TOML document (smol-toml writes it; the layout may differ from
 * BurntSushi/toml's in spacing), or, as Helm gives it, the encoder's error message as the text.
 */
function toToml(v: unknown): string {
  checkPrinted('toToml', v);
  try {
    return stringifyToml(sortedTables(toPlain(v)) as Record<string, unknown>);
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * A TOML document as BurntSushi/toml gives it to Helm's fromToml: tables are maps, integers
 * int64, floats float64, date-times times (a key `__proto__` stays a key).
 */
function tomlValue(v: unknown): unknown {
  if (v instanceof Date) return new Date(v.getTime());
  if (Array.isArray(v)) return v.map(tomlValue);
  if (typeof v === 'object' && v !== null) {
    const out: GoMap = {};
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(out, k, {
        value: tomlValue(x),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return v;
}

/** Helm's fromToml: the document's table, or a map whose "Error" says why it does not parse. */
function fromToml(s: unknown): GoMap {
  try {
    return tomlValue(parseToml(str(s), { integersAsBigInt: true })) as GoMap;
  } catch (e) {
    return { Error: `toml: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}` };
  }
}

/** sprig's mustFromJson: any JSON value (numbers float64), or the error (fromJson swallows it). */
function mustFromJson(s: unknown): unknown {
  const text = str(s);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new Error(text.trim() === '' ? 'unexpected end of JSON input' : (e as Error).message, { cause: e });
  }
}

function errorMap(e: unknown): GoMap {
  return { Error: e instanceof Error ? e.message : String(e) };
}

/**
 * Helm's functions bound to a template set (include and tpl render through it). A template that
 * includes itself is stopped by the set's budget (budget.ts: nesting), long before Helm's 1000
 * includes of one name.
 */
export function helmFunctions(set: TemplateSet): Map<string, FuncDef> {
  const m = new Map<string, FuncDef>();

  m.set(
    'include',
    f(2, 2, (name: unknown, data: unknown) => {
      const n = str(name);
      return set.execute(n, data, { kind: 'include', name: n });
    }),
  );

  m.set(
    'tpl',
    f(2, 2, (text: unknown, vals: unknown) => {
      const t = isMap(vals) ? mapGet(vals, 'Template') : undefined;
      const name = isMap(t) ? mapGet(t, 'Name') : undefined;
      if (typeof name !== 'string')
        throw new Error(`cannot retrieve Template.Name from values inside tpl function: ${str(text)}`);
      const child = set.child();
      try {
        child.parse(name, str(text));
        return child.execute(name, vals, { kind: 'tpl', name: str(text) }).replaceAll('<no value>', '');
      } catch (e) {
        if (e instanceof BudgetExceeded || e instanceof TemplateBudgetError) throw e;
        const why = `error during tpl function execution for ${JSON.stringify(clip(str(text)))}: ${(e as Error).message}`;
        throw Object.assign(new Error(why), { failure: (e as { failure?: string }).failure });
      }
    }),
  );

  m.set(
    'required',
    f(2, 2, (warn: unknown, val: unknown) => {
      if (isNil(val) || val === '') throw new TemplateFailure(str(warn));
      return val;
    }),
  );
  m.set(
    'fail',
    f(1, 1, (msg: unknown) => {
      throw new TemplateFailure(str(msg));
    }),
  );
  m.set(
    'lookup',
    f(4, 4, () => ({})),
  );
  for (const [name, def] of yamlJsonFunctions()) m.set(name, def);
  return m;
}

/** toYaml, fromYaml, toJson, fromJson and their variants. */
function yamlJsonFunctions(): Map<string, FuncDef> {
  const m = new Map<string, FuncDef>();
  // Helm trims the final newline; toYaml swallows a marshalling error into "", mustToYaml raises it.
  const yamlOf = (name: string, write: (v: unknown) => string, must: boolean) =>
    f(1, 1, (v: unknown) => {
      checkPrinted(name, v);
      try {
        return write(v).replace(/\n$/, '');
      } catch (e) {
        if (!(e instanceof GoYamlError)) throw e;
        if (must) throw new Error(`error marshaling into JSON: ${e.message}`, { cause: e });
        return '';
      }
    });
  m.set('toYaml', yamlOf('toYaml', writeYaml, false));
  m.set('mustToYaml', yamlOf('mustToYaml', writeYaml, true));
  m.set('toYamlPretty', yamlOf('toYamlPretty', writeYamlPretty, false));
  m.set(
    'fromYaml',
    f(
      1,
      1,
      (s: unknown) => {
        try {
          const v = loadYaml(str(s));
          if (isNil(v)) return {};
          if (!isMap(v))
            throw new Error(
              `error unmarshaling JSON: json: cannot unmarshal ${Array.isArray(v) ? 'array' : typeof v} into Go value of type map[string]interface {}`,
            );
          return v;
        } catch (e) {
          return errorMap(e);
        }
      },
      parseCost,
    ),
  );
  m.set(
    'fromYamlArray',
    f(
      1,
      1,
      (s: unknown) => {
        try {
          const v = loadYaml(str(s));
          if (isNil(v)) return [];
          if (!Array.isArray(v))
            throw new Error(
              'error unmarshaling JSON: cannot unmarshal object into Go value of type []interface {}',
            );
          return v;
        } catch (e) {
          return [(e as Error).message];
        }
      },
      parseCost,
    ),
  );
  m.set(
    'toJson',
    f(1, 1, (v: unknown) => goJson(v)),
  );
  m.set('mustToJson', m.get('toJson')!);
  m.set(
    'toPrettyJson',
    f(1, 1, (v: unknown) => goJson(v, '  ')),
  );
  m.set('mustToPrettyJson', m.get('toPrettyJson')!);
  m.set(
    'toRawJson',
    f(1, 1, (v: unknown) => goJson(v, undefined, false)),
  );
  m.set('mustToRawJson', m.get('toRawJson')!);
  m.set(
    'fromJson',
    f(
      1,
      1,
      (s: unknown) => {
        try {
          const v = JSON.parse(strval(s)) as unknown;
          if (!isMap(v))
            throw new Error('json: cannot unmarshal into Go value of type map[string]interface {}');
          return v;
        } catch (e) {
          return errorMap(e);
        }
      },
      parseCost,
    ),
  );
  m.set('mustFromJson', f(1, 1, mustFromJson, parseCost));
  m.set('fromToml', f(1, 1, fromToml, parseCost));
  m.set(
    'fromJsonArray',
    f(
      1,
      1,
      (s: unknown) => {
        try {
          const v = JSON.parse(strval(s)) as unknown;
          if (!Array.isArray(v))
            throw new Error('json: cannot unmarshal into Go value of type []interface {}');
          return v;
        } catch (e) {
          return [(e as Error).message];
        }
      },
      parseCost,
    ),
  );
  m.set('toToml', f(1, 1, toToml));
  return m;
}
