/**
 * Mirror mappings (`source scope → mirror scope`, by digest and/or by tag) read back from the
 * ImageDigestMirrorSets, ImageTagMirrorSets and ImageContentSourcePolicies that `airgap mirror` or
 * oc-mirror write, or from `source=mirror[@digest|@tag]` flags; and the registry host syntax both
 * share. The mappings feed the one registries.conf writer (mirror/outputs/registries-conf.ts).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { MirrorMapping } from '../mirror/index.js';
import { isYamlLimitError, parseYamlDocuments } from '../config/yaml-load.js';
import { usageError, CommonError } from '../util/errors.js';
import { parseHostPort } from './names.js';
import { CertsError } from './errors.js';

export type { MirrorMapping } from '../mirror/index.js';

export { parseHostPort } from './names.js';

const PATH_COMPONENT_RE = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

/**
 * Check a mirror-set scope, `host[:port][/namespace…[/repo]]` without tag or digest, as an IDMS
 * `source` or `mirrors[]` entry is written. Returns why it is not one, or undefined.
 */
export function scopeProblem(scope: string): string | undefined {
  if (scope === '') return 'it is empty';
  if (scope.startsWith('*.'))
    return 'wildcard sources (*.example.com) cannot be written to registries.conf here; list the registries it stands for';
  if (/^[a-z]+:\/\//.test(scope)) return 'write it without a transport (no docker://)';
  if (scope.includes('@')) return 'a scope has no digest (drop the @sha256:…)';
  const slash = scope.indexOf('/');
  const hostText = slash < 0 ? scope : scope.slice(0, slash);
  const host = parseHostPort(hostText);
  if ('error' in host) return host.error;
  if (slash < 0) return undefined;
  const path = scope.slice(slash + 1);
  const bad = path.split('/').find((c) => !PATH_COMPONENT_RE.test(c));
  if (bad === undefined) return undefined;
  if (bad.includes(':')) return 'a scope has no tag (drop the :tag)';
  return bad === ''
    ? 'it has an empty path component (a double or trailing "/")'
    : `"${bad}" is not a valid repository path component (lowercase letters, digits, and . _ - between them)`;
}

/** Whether a scope names a whole registry (no repository path). */
export function isBareRegistry(scope: string): boolean {
  return !scope.includes('/');
}

/**
 * Parse a `--mirror` value: `source=mirror`, `source=mirror@digest` (digest pulls only, as an IDMS
 * entry) or `source=mirror@tag` (tag pulls only, as an ITMS entry). Without a suffix the mirror
 * serves both.
 */
export function parseMirrorFlag(value: string): MirrorMapping {
  const bad = (why: string) =>
    usageError(CertsError.MIRROR_FLAG_INVALID, `--mirror ${value}: ${why}`, {
      hint: 'write it as source=mirror[@digest|@tag], e.g. --mirror quay.io/openshift-release-dev=registry.example.com:8443/ocp/openshift-release-dev@digest',
    });
  const eq = value.indexOf('=');
  if (eq < 0) throw bad('there is no "=" between the source and the mirror');
  const source = value.slice(0, eq).trim();
  let mirror = value.slice(eq + 1).trim();
  let digest = true;
  let tag = true;
  const at = mirror.lastIndexOf('@');
  if (at >= 0) {
    const kind = mirror.slice(at + 1);
    if (kind === 'digest') tag = false;
    else if (kind === 'tag') digest = false;
    else throw bad(`"@${kind}" is not @digest or @tag`);
    mirror = mirror.slice(0, at);
  }
  for (const [what, scope] of [
    ['the source', source],
    ['the mirror', mirror],
  ] as const) {
    const why = scopeProblem(scope);
    if (why) throw bad(`${what} "${scope}": ${why}`);
  }
  return { source, mirror, digest, tag };
}

/** The mirror-set kinds and what they hold. */
const KINDS = {
  ImageDigestMirrorSet: { field: 'imageDigestMirrors', digest: true },
  ImageTagMirrorSet: { field: 'imageTagMirrors', digest: false },
  ImageContentSourcePolicy: { field: 'repositoryDigestMirrors', digest: true },
} as const;
type MirrorSetKind = keyof typeof KINDS;

/** Mappings read from files, and what was read but cannot be carried into registries.conf. */
export interface MirrorMappingsRead {
  mappings: MirrorMapping[];
  /** Each mirror-set object read, as `file: Kind/name`. */
  objects: string[];
  warnings: string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The mirror-set objects of one parsed YAML document (a `List` gives its items), with where each is. */
function* mirrorSetObjects(
  doc: unknown,
  where: string,
): Generator<{ obj: Record<string, unknown>; kind: string; where: string }> {
  if (!isObject(doc)) return;
  if (doc.kind === 'List' && Array.isArray(doc.items)) {
    for (const [i, item] of doc.items.entries()) yield* mirrorSetObjects(item, `${where} items[${i}]`);
    return;
  }
  yield { obj: doc, kind: typeof doc.kind === 'string' ? doc.kind : '', where };
}

/** The mappings of one IDMS/ITMS/ICSP object; its entries are checked, and named in errors. */
function objectMappings(
  obj: Record<string, unknown>,
  kind: MirrorSetKind,
  where: string,
  out: MirrorMappingsRead,
): void {
  const { field, digest } = KINDS[kind];
  const invalid = (path: string, why: string) =>
    usageError(CertsError.MIRROR_SET_INVALID, `${kind} ${path} ${why}`, {
      where,
      hint: `fix the file, or give the mapping with --mirror source=mirror${digest ? '@digest' : '@tag'}`,
    });
  const spec = obj.spec;
  const entries = isObject(spec) ? spec[field] : undefined;
  if (!Array.isArray(entries)) throw invalid(`spec.${field}`, 'is missing or not a list');
  for (const [i, entry] of entries.entries()) {
    const path = `spec.${field}[${i}]`;
    if (!isObject(entry)) throw invalid(path, 'is not an object');
    const source = entry.source;
    if (typeof source !== 'string') throw invalid(`${path}.source`, 'is missing or not a string');
    const sourceWhy = scopeProblem(source);
    if (sourceWhy) throw invalid(`${path}.source`, `"${source}": ${sourceWhy}`);
    const mirrors = entry.mirrors ?? [];
    if (!Array.isArray(mirrors)) throw invalid(`${path}.mirrors`, 'is not a list');
    if (mirrors.length === 0) {
      out.warnings.push(`${where}: ${path} (${source}) has no mirrors; left out of registries.conf`);
      continue;
    }
    for (const [j, mirror] of mirrors.entries()) {
      if (typeof mirror !== 'string') throw invalid(`${path}.mirrors[${j}]`, 'is not a string');
      const why = scopeProblem(mirror);
      if (why) throw invalid(`${path}.mirrors[${j}]`, `"${mirror}": ${why}`);
      out.mappings.push({ source, mirror, digest, tag: !digest });
    }
    if (entry.mirrorSourcePolicy === 'NeverContactSource')
      out.warnings.push(
        `${where}: ${path} (${source}) says NeverContactSource; registries.conf still lets a pull fall back to the source`,
      );
  }
  const name = isObject(obj.metadata) && typeof obj.metadata.name === 'string' ? obj.metadata.name : '?';
  out.objects.push(`${where}: ${kind}/${name}`);
}

async function readYamlDocuments(path: string, code: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(CommonError.FILE_UNREADABLE, `cannot read ${path}: ${(e as Error).message}`, {
      hint: 'check the path',
    });
  }
  try {
    return parseYamlDocuments(text, { source: path, exitCode: 2 });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw usageError(code, `not valid YAML: ${(e as Error).message.split('\n')[0]}`, {
      where: path,
      hint: 'give the idms-oc-mirror.yaml / itms-oc-mirror.yaml that airgap mirror (or oc-mirror) wrote',
    });
  }
}

/**
 * Read an `--idms` file (`digest`: ImageDigestMirrorSets, or ImageContentSourcePolicies) or an
 * `--itms` file (`tag`: ImageTagMirrorSets). Multi-document YAML and `kind: List` are read; any
 * other kind is an error that names the file and the document, and so is a file with none.
 */
export async function readMirrorSetFile(
  path: string,
  expect: 'digest' | 'tag',
  into: MirrorMappingsRead = { mappings: [], objects: [], warnings: [] },
): Promise<MirrorMappingsRead> {
  const accepted: MirrorSetKind[] =
    expect === 'digest' ? ['ImageDigestMirrorSet', 'ImageContentSourcePolicy'] : ['ImageTagMirrorSet'];
  const flag = expect === 'digest' ? '--idms' : '--itms';
  const docs = await readYamlDocuments(path, CertsError.MIRROR_SET_INVALID);
  const before = into.objects.length;
  for (const [d, doc] of docs.entries()) {
    if (doc === null || doc === undefined) continue;
    for (const { obj, kind, where } of mirrorSetObjects(doc, `${path}, document ${d + 1}`)) {
      if (!(accepted as string[]).includes(kind)) {
        throw usageError(
          CertsError.MIRROR_SET_KIND,
          `${flag} takes ${accepted.join(' or ')}, but this document is ${kind ? `of kind ${kind}` : 'without a kind'}`,
          {
            where,
            hint:
              expect === 'digest'
                ? 'give idms-oc-mirror.yaml to --idms and itms-oc-mirror.yaml to --itms'
                : 'give itms-oc-mirror.yaml to --itms and idms-oc-mirror.yaml to --idms',
          },
        );
      }
      objectMappings(obj, kind as MirrorSetKind, where, into);
    }
  }
  if (into.objects.length === before) {
    throw usageError(
      CertsError.MIRROR_SET_KIND,
      `${flag} takes ${accepted.join(' or ')}, and this file holds none`,
      {
        where: path,
        hint: 'give the file airgap mirror wrote to <workspace>/cluster-resources/',
      },
    );
  }
  return into;
}

/**
 * Read every ImageDigestMirrorSet, ImageTagMirrorSet and ImageContentSourcePolicy in a
 * cluster-resources directory (`*.yaml`, `*.yml`; found by kind, not by file name, so oc-mirror v1's
 * `imageContentSourcePolicy.yaml` works too). Other objects (CatalogSources, …) are skipped. A file
 * that is not YAML is an error naming it; so is a directory without any mirror set.
 */
export async function readClusterResourcesDir(dir: string): Promise<MirrorMappingsRead> {
  let names: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error('not a directory');
    names = (await readdir(dir)).filter((n) => ['.yaml', '.yml'].includes(extname(n))).sort();
  } catch (e) {
    throw usageError(
      CommonError.FILE_UNREADABLE,
      `cannot read the directory ${dir}: ${(e as Error).message}`,
      {
        hint: 'give --cluster-resources <workspace>/cluster-resources, as airgap mirror wrote it',
      },
    );
  }
  const out: MirrorMappingsRead = { mappings: [], objects: [], warnings: [] };
  for (const name of names) {
    const path = join(dir, name);
    const docs = await readYamlDocuments(path, CertsError.MIRROR_SET_INVALID);
    for (const [d, doc] of docs.entries()) {
      for (const { obj, kind, where } of mirrorSetObjects(doc, `${path}, document ${d + 1}`)) {
        if (kind in KINDS) objectMappings(obj, kind as MirrorSetKind, where, out);
      }
    }
  }
  if (out.objects.length === 0) {
    throw usageError(
      CertsError.MIRROR_SET_MISSING,
      `no ImageDigestMirrorSet or ImageTagMirrorSet in the directory (looked in ${names.length} YAML file(s))`,
      {
        where: dir,
        hint: 'give the cluster-resources directory of a mirror run that ended in a registry, or use --idms/--itms/--mirror',
      },
    );
  }
  return out;
}
