/**
 * Label and field selectors as the API server parses them. Labels: `a=b`, `a==b`, `a!=b`,
 * `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a` (does not exist), comma-separated (all must hold).
 * Fields: `path=value`, `path==value`, `path!=value`; `metadata.name` and `metadata.namespace` for
 * every type, any dotted path for built-in types (custom resources reject other fields, like the
 * real server without selectableFields). A malformed selector is a 400 HubApiError.
 */
import { HubApiError, type KubeObject } from './types.js';

export type Matcher = (obj: KubeObject) => boolean;

/** Split on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;

function bad(selector: string, why: string): HubApiError {
  return new HubApiError(400, 'BadRequest', `unable to parse requirement: ${why} in selector "${selector}"`);
}

/** A label selector as a predicate over an object's labels; empty or absent matches everything. */
export function parseLabelSelector(selector: string | undefined): Matcher {
  if (!selector || selector.trim() === '') return () => true;
  const reqs: ((labels: Record<string, string>) => boolean)[] = [];
  for (const part of splitTop(selector)) {
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      if (!KEY.test(key)) throw bad(selector, `invalid label key "${key}"`);
      const values = new Set(
        list
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      );
      reqs.push(
        op === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l) || !values.has(l[key]!),
      );
    } else if ((m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/))) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      if (!KEY.test(key)) throw bad(selector, `invalid label key "${key}"`);
      reqs.push(op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value);
    } else if ((m = part.match(/^!\s*(\S+)$/))) {
      const key = m[1]!;
      if (!KEY.test(key)) throw bad(selector, `invalid label key "${key}"`);
      reqs.push((l) => !(key in l));
    } else if (KEY.test(part)) {
      reqs.push((l) => part in l);
    } else {
      throw bad(selector, `found '${part}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return reqs.every((r) => r(labels));
  };
}

function valueAtPath(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}

/**
 * A field selector as a predicate. `anyField` allows dotted paths beyond metadata.name and
 * metadata.namespace (built-in types); otherwise they are 400 `field label not supported`.
 */
export function parseFieldSelector(selector: string | undefined, anyField = false): Matcher {
  if (!selector || selector.trim() === '') return () => true;
  const reqs: Matcher[] = [];
  for (const part of splitTop(selector)) {
    const m = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/);
    if (!m)
      throw new HubApiError(400, 'BadRequest', `invalid selector: '${selector}'; can't understand '${part}'`);
    const [, path, op, value] = m as unknown as [string, string, string, string];
    if (!anyField && path !== 'metadata.name' && path !== 'metadata.namespace') {
      throw new HubApiError(400, 'BadRequest', `field label not supported: ${path}`);
    }
    reqs.push(op === '!=' ? (o) => valueAtPath(o, path) !== value : (o) => valueAtPath(o, path) === value);
  }
  return (obj) => reqs.every((r) => r(obj));
}
