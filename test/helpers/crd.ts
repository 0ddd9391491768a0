/**
 * Validate objects against the real CustomResourceDefinitions (AIRGAP_CRD_DIR, else the realdata's
 * `crds`: see lab/realdata.ts) with ajv, the way the API server would check them (as far as a JSON
 * Schema validator can). Tests that use it need the real CRDs: `withRealCrds` (./realdata.ts).
 *
 * The structural-schema translation for ajv is the hub simulator's (lab/hub/schema.ts, see there):
 * int-or-string, `additionalProperties: false` where the server would prune (a typo must fail here),
 * list-type set → uniqueItems; CEL validations and formats are not checked.
 * `apiVersion` and `kind` are checked against the CRD's group, storage version and kind.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { load } from 'js-yaml';
import { isObject, toJsonSchema, type Schema } from '../../lab/hub/schema.js';
import { crdDir } from './realdata.js';

export { crdDir, toJsonSchema };

/** One validation failure: a JSON path into the object (`$.spec.imageDigestMirrors[0].source`) and why. */
export interface CrdError {
  path: string;
  message: string;
}

/** A loaded CRD: its identity, the translated schema, and a validator. */
export interface Crd {
  group: string;
  version: string;
  kind: string;
  apiVersion: string;
  schema: Schema;
  validate(obj: unknown): CrdError[];
}

/** JSON Pointer (`/spec/x/0/y`) → JSON path (`$.spec.x[0].y`). */
function jsonPath(pointer: string): string {
  let path = '$';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^\d+$/.test(seg)
      ? `[${seg}]`
      : /^[A-Za-z_$][\w$-]*$/.test(seg)
        ? `.${seg}`
        : `[${JSON.stringify(seg)}]`;
  }
  return path;
}

function describe(e: ErrorObject): CrdError {
  let path = jsonPath(e.instancePath);
  let message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    path = `${path}.${extra}`;
    message = 'is not a field of this schema';
  } else if (e.keyword === 'enum') {
    message = `${message}: ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
  }
  return { path, message };
}

const cache = new Map<string, Crd>();

/** Load `<crdDir()>/<file>` and build a validator for its served storage version. */
export function loadCrd(file: string): Crd {
  const hit = cache.get(file);
  if (hit) return hit;
  const crd = load(readFileSync(resolve(crdDir(), file), 'utf8')) as {
    kind?: string;
    spec: {
      group: string;
      names: { kind: string };
      versions: {
        name: string;
        served?: boolean;
        storage?: boolean;
        schema?: { openAPIV3Schema?: unknown };
      }[];
    };
  };
  if (crd.kind !== 'CustomResourceDefinition') throw new Error(`${file} is not a CustomResourceDefinition`);
  const v = crd.spec.versions.find((x) => x.served && x.storage) ?? crd.spec.versions.find((x) => x.served);
  if (!v?.schema?.openAPIV3Schema) throw new Error(`${file} has no served version with an openAPIV3Schema`);
  const schema = toJsonSchema(v.schema.openAPIV3Schema) as Schema;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const check: ValidateFunction = ajv.compile(schema);
  const group = crd.spec.group;
  const kind = crd.spec.names.kind;
  const apiVersion = group ? `${group}/${v.name}` : v.name;
  const loaded: Crd = {
    group,
    version: v.name,
    kind,
    apiVersion,
    schema,
    validate(obj: unknown): CrdError[] {
      const errors: CrdError[] = [];
      if (!isObject(obj)) return [{ path: '$', message: 'is not an object' }];
      if (obj.apiVersion !== apiVersion) {
        errors.push({
          path: '$.apiVersion',
          message: `is ${JSON.stringify(obj.apiVersion)}, expected ${apiVersion}`,
        });
      }
      if (obj.kind !== kind)
        errors.push({ path: '$.kind', message: `is ${JSON.stringify(obj.kind)}, expected ${kind}` });
      if (!isObject(obj.metadata) || typeof obj.metadata.name !== 'string' || obj.metadata.name === '') {
        errors.push({ path: '$.metadata.name', message: 'is missing' });
      }
      if (!check(obj)) errors.push(...(check.errors ?? []).map(describe));
      return errors;
    },
  };
  cache.set(file, loaded);
  return loaded;
}

/** Validate `obj` against the CRD in `file`; the errors, empty when it is valid. */
export function validateAgainstCrd(file: string, obj: unknown): CrdError[] {
  return loadCrd(file).validate(obj);
}
