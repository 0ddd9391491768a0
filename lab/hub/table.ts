/**
 * `meta.k8s.io/v1` Table output (what `kubectl get` asks for): NAME, then the type's printer columns
 * (a CRD's additionalPrinterColumns, a built-in type's columns, or AGE when it has none), cells
 * computed by the column itself (built-in columns the real server computes) or with the small JSONPath
 * subset printer columns use: `.a.b`, `[0]`, `[*]`, `[?(@.type=="Available")]`, `[?(@.state!="")]`.
 */
import { isObject } from './schema.js';
import type { KubeObject, ResourceType } from './types.js';

type Column = NonNullable<ResourceType['printerColumns']>[number];
const AGE: Column = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** All values `path` selects in `obj`, in order. */
function evalJsonPath(obj: unknown, path: string): unknown[] {
  let cur: unknown[] = [obj];
  const re =
    /\.([A-Za-z0-9_$-]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_.$-]+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\)\]|\['([^']+)'\]/y;
  let i = 0;
  const p = path.replace(/^\{|\}$/g, '').replace(/^\$/, '');
  while (i < p.length) {
    re.lastIndex = i;
    const m = re.exec(p);
    if (!m) return [];
    i = re.lastIndex;
    const next: unknown[] = [];
    for (const v of cur) {
      if (m[1] !== undefined || m[8] !== undefined) {
        const key = m[1] ?? m[8]!;
        if (isObject(v) && v[key] !== undefined) next.push(v[key]);
      } else if (m[2] !== undefined) {
        if (Array.isArray(v) && v[Number(m[2])] !== undefined) next.push(v[Number(m[2])]);
      } else if (m[3] !== undefined) {
        if (!Array.isArray(v)) continue;
        const want = m[5] ?? m[6] ?? m[7] ?? '';
        for (const item of v) {
          let got: unknown = item;
          for (const seg of m[3].split('.')) got = isObject(got) ? got[seg] : undefined;
          const s = got === undefined || got === null ? undefined : String(got);
          if (m[4] === '==' ? s === want : s !== undefined && s !== want) next.push(item);
        }
      } else if (Array.isArray(v)) next.push(...v);
      else if (isObject(v)) next.push(...Object.values(v));
    }
    cur = next;
  }
  return cur;
}

/** kubectl's short age: 45s, 5m10s, 12m, 3h4m, 20h, 3d4h, 12d. */
function humanAge(from: string | undefined, now = Date.now()): string {
  if (!from) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 === 0 ? '' : `${s % 60}s`}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 === 0 ? '' : `${m % 60}m`}`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return `${d}d${h % 24 === 0 ? '' : `${h % 24}h`}`;
  return `${d}d`;
}

function cell(obj: KubeObject, col: Column): unknown {
  if (col.cell) return col.cell(obj);
  const found = evalJsonPath(obj, col.jsonPath);
  if (found.length === 0) return null;
  const v = found[0];
  if (col.type === 'date') return typeof v === 'string' ? humanAge(v) : null;
  if (isObject(v) || Array.isArray(v)) return JSON.stringify(v);
  return v;
}

/** A meta.k8s.io Table of `objects` (`apiVersion`: meta.k8s.io/v1 or v1beta1). */
export function toTable(
  type: ResourceType,
  objects: KubeObject[],
  resourceVersion: string,
  opts: { apiVersion?: string; includeObject?: string } = {},
): Record<string, unknown> {
  const columns = type.printerColumns?.length ? type.printerColumns : [AGE];
  const apiVersion = opts.apiVersion ?? 'meta.k8s.io/v1';
  return {
    kind: 'Table',
    apiVersion,
    metadata: { resourceVersion },
    columnDefinitions: [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...columns.map((c) => ({
        name: c.name,
        type: c.type,
        format: '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    rows: objects.map((o) => ({
      cells: [o.metadata.name, ...columns.map((c) => cell(o, c))],
      object:
        opts.includeObject === 'None'
          ? undefined
          : opts.includeObject === 'Object'
            ? o
            : { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata },
    })),
  };
}
