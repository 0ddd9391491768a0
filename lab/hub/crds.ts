/**
 * Resource types from real CustomResourceDefinition files, loaded from a directory given at run time
 * (the CRDs are never copied into the repository). Every served version of every CRD becomes one
 * {@link ResourceType} with its names, scope, status subresource, printer columns, a validator with
 * API-server messages and the pruning and defaulting the API server applies before validating.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { compileValidator, isObject, normalizeObject, type Schema } from './schema.js';
import type { ResourceType } from './types.js';

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: Record<string, unknown>;
  additionalPrinterColumns?: {
    name: string;
    type: string;
    jsonPath: string;
    description?: string;
    priority?: number;
  }[];
}

interface CrdDoc {
  kind?: string;
  spec?: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: CrdVersion[];
  };
}

/** The resource types of one parsed CustomResourceDefinition (each served version). */
export function crdTypes(crd: unknown, source = 'crd'): ResourceType[] {
  const doc = crd as CrdDoc;
  if (!isObject(crd) || doc.kind !== 'CustomResourceDefinition' || !doc.spec) return [];
  const { group, names, scope } = doc.spec;
  return doc.spec.versions
    .filter((v) => v.served !== false)
    .map((v) => {
      const schema = v.schema?.openAPIV3Schema;
      const check = schema ? compileValidator(schema) : undefined;
      const subresources = Object.keys(v.subresources ?? {});
      const type: ResourceType = {
        group,
        version: v.name,
        apiVersion: `${group}/${v.name}`,
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        plural: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        shortNames: names.shortNames ?? [],
        namespaced: scope === 'Namespaced',
        hasStatus: subresources.includes('status'),
        subresources: subresources.filter((s) => s !== 'status'),
        source,
      };
      if (v.additionalPrinterColumns?.length) type.printerColumns = v.additionalPrinterColumns;
      if (schema && check) {
        type.validate = (obj) => check(obj);
        type.normalize = (obj) => ({ unknownFields: normalizeObject(obj as unknown as Schema, schema) });
      }
      return type;
    });
}

/**
 * Every CRD file (`*.yaml`, `*.yml`, `*.json`, several documents each allowed) in `dir`, as resource
 * types: one per served version. Other documents are skipped. Validators compile on first use.
 */
export function loadCrdTypes(dir: string): ResourceType[] {
  const out: ResourceType[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!/\.(ya?ml|json)$/.test(file)) continue;
    for (const doc of loadAll(readFileSync(join(dir, file), 'utf8'))) out.push(...crdTypes(doc, file));
  }
  return out;
}
