/**
 * File-based catalogs (FBC), as `opm` reads them (operator-registry alpha/declcfg): a directory tree
 * of `.json` files holding concatenated JSON objects and `.yaml`/`.yml` files holding YAML
 * documents. Every object has a `schema`; `olm.package`, `olm.channel`, `olm.bundle` and
 * `olm.deprecations` are modelled, anything else is kept as is. JSON is split object by object as
 * the bytes stream in, so a catalog of several hundred MB never becomes one string.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isYamlLimitError, parseYamlDocuments, YAML_LIMITS, yamlLimitError } from '../../config/yaml-load.js';
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** One entry of an `olm.channel`. */
export interface FbcChannelEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

/** An `olm.channel`; `meta` is the original object (for a rebuild), `entries` the typed entries. */
export interface FbcChannel {
  name: string;
  entries: FbcChannelEntry[];
  meta: Record<string, unknown>;
}

/** A related image of a bundle; the bundle image itself usually appears with no name. */
export interface FbcRelatedImage {
  name?: string;
  image: string;
}

/** A property of a bundle (`olm.package`, `olm.gvk`, `olm.bundle.object`, …). */
export interface FbcProperty {
  type: string;
  value: unknown;
}

/** An `olm.bundle`. `version` comes from its one `olm.package` property. */
export interface FbcBundle {
  name: string;
  package: string;
  image: string;
  version: string;
  relatedImages: FbcRelatedImage[];
  properties: FbcProperty[];
  meta: Record<string, unknown>;
}

/** An `olm.package` with its channels and bundles. */
export interface FbcPackage {
  name: string;
  defaultChannel?: string;
  channels: Map<string, FbcChannel>;
  bundles: Map<string, FbcBundle>;
  meta: Record<string, unknown>;
  /** Where the `olm.package` object was read (`file:line`). */
  where: string;
}

/** A parsed catalog. `deprecations` and `others` (unknown schemas) pass through untouched. */
export interface FbcModel {
  packages: Map<string, FbcPackage>;
  deprecations: Record<string, unknown>[];
  others: Record<string, unknown>[];
}

/** One object read from a catalog file, with where it starts. */
export interface FbcBlob {
  object: Record<string, unknown>;
  file: string;
  line: number;
}

function parseError(message: string, where: string, hint?: string, cause?: unknown): AirgapError {
  return new AirgapError(MirrorError.CATALOG_PARSE, message, { where, hint, cause });
}

function asObject(value: unknown, file: string, line: number): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw parseError('a catalog object must be a JSON/YAML mapping', `${file}:${line}`);
  }
  return value as Record<string, unknown>;
}

/** Split concatenated JSON values out of byte chunks, tracking strings, escapes and brace depth. */
async function* splitJson(chunks: AsyncIterable<Buffer | string>, file: string): AsyncGenerator<FbcBlob> {
  let parts: Buffer[] = [];
  let depth = 0;
  let inString = false;
  let escape = false;
  let line = 1;
  let startLine = 1;
  const emit = (tail: Buffer): FbcBlob => {
    const text = Buffer.concat([...parts, tail]).toString('utf8');
    parts = [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw parseError(`invalid JSON: ${(e as Error).message}`, `${file}:${startLine}`, undefined, e);
    }
    return { object: asObject(value, file, startLine), file, line: startLine };
  };
  for await (const chunk of chunks) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = depth > 0 ? 0 : -1;
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i];
      if (b === 0x0a) line++;
      if (inString) {
        if (escape) escape = false;
        else if (b === 0x5c) escape = true;
        else if (b === 0x22) inString = false;
        continue;
      }
      if (depth === 0) {
        if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
        if (b !== 0x7b) {
          const what = b === 0x5b ? 'an array' : `"${String.fromCharCode(b)}"`;
          throw parseError(
            `expected a JSON object, found ${what}`,
            `${file}:${line}`,
            'opm reads concatenated objects',
          );
        }
        start = i;
        startLine = line;
        depth = 1;
        continue;
      }
      if (b === 0x22) inString = true;
      else if (b === 0x7b || b === 0x5b) depth++;
      else if (b === 0x7d || b === 0x5d) {
        depth--;
        if (depth === 0) {
          yield emit(buf.subarray(start, i + 1));
          start = -1;
        }
      }
    }
    if (depth > 0 && start >= 0) parts.push(Buffer.from(buf.subarray(start)));
  }
  if (depth > 0 || inString) throw parseError('the file ends inside a JSON object', `${file}:${startLine}`);
}

/** Lines where YAML documents start (a leading `---` starts the first one). */
function yamlDocLines(text: string): number[] {
  const starts: number[] = [];
  const lines = text.split('\n');
  let sawMarker = false;
  lines.forEach((l, i) => {
    if (/^---(\s|$)/.test(l)) {
      starts.push(i + 1);
      sawMarker = true;
    } else if (!sawMarker && starts.length === 0 && l.trim() !== '' && !l.startsWith('#')) starts.push(1);
  });
  return starts;
}

/**
 * Parse one catalog file from a stream of chunks (a file, or a tar entry): yields each object with
 * the line it starts at. JSON is split incrementally; YAML files are read whole (they are small).
 */
export async function* parseFbcStream(
  chunks: AsyncIterable<Buffer | string>,
  kind: 'json' | 'yaml',
  file: string,
): AsyncGenerator<FbcBlob> {
  if (kind === 'json') {
    yield* splitJson(chunks, file);
    return;
  }
  let text = '';
  for await (const c of chunks) {
    text += typeof c === 'string' ? c : c.toString('utf8');
    // Read whole, so refused before it is: a YAML file is not a catalog's bulk.
    if (text.length > YAML_LIMITS.bytes)
      throw yamlLimitError(
        file,
        'bytes',
        `it is more than ${YAML_LIMITS.bytes.toLocaleString('en-US')} bytes of YAML`,
        {
          details: { max: YAML_LIMITS.bytes },
        },
      );
  }
  let docs: unknown[];
  try {
    docs = parseYamlDocuments(text, { source: file });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    const mark = (e as { mark?: { line: number } }).mark;
    const reason = (e as { reason?: string }).reason ?? (e as Error).message;
    throw parseError(`invalid YAML: ${reason}`, mark ? `${file}:${mark.line + 1}` : file, undefined, e);
  }
  const lines = yamlDocLines(text);
  for (let i = 0; i < docs.length; i++) {
    if (docs[i] === null || docs[i] === undefined) continue;
    const line = lines[i] ?? 1;
    yield { object: asObject(docs[i], file, line), file, line };
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Accumulates catalog objects from any number of files into one FbcModel. */
export class FbcModelBuilder {
  private readonly packages = new Map<string, FbcPackage>();
  private readonly declared = new Set<string>();
  private readonly firstUse = new Map<string, string>();
  private readonly deprecations: Record<string, unknown>[] = [];
  private readonly others: Record<string, unknown>[] = [];
  private readonly seen = new Map<string, string>();

  private pkg(name: string, where: string): FbcPackage {
    let p = this.packages.get(name);
    if (!p) {
      p = { name, channels: new Map(), bundles: new Map(), meta: {}, where };
      this.packages.set(name, p);
      this.firstUse.set(name, where);
    }
    return p;
  }

  private unique(key: string, what: string, where: string): void {
    const before = this.seen.get(key);
    if (before) throw parseError(`${what} is defined twice (first at ${before})`, where);
    this.seen.set(key, where);
  }

  /** Add one object; throws CATALOG_PARSE naming the file and line when it is malformed. */
  add(blob: FbcBlob): void {
    const { object: o, file, line } = blob;
    const where = `${file}:${line}`;
    const schema = str(o.schema);
    if (!schema) throw parseError('object has no "schema"', where);
    const need = (field: string): string => {
      const v = str(o[field]);
      if (!v) throw parseError(`${schema} object has no "${field}"`, where);
      return v;
    };
    if (schema === 'olm.package') {
      const name = need('name');
      this.unique(`p/${name}`, `package ${JSON.stringify(name)}`, where);
      const p = this.pkg(name, where);
      Object.assign(p, { meta: o, where, defaultChannel: str(o.defaultChannel) });
      this.declared.add(name);
    } else if (schema === 'olm.channel') {
      const [pkg, name] = [need('package'), need('name')];
      this.unique(
        `c/${pkg}/${name}`,
        `channel ${JSON.stringify(name)} of package ${JSON.stringify(pkg)}`,
        where,
      );
      const entries = Array.isArray(o.entries) ? o.entries : [];
      const typed = entries.map((e, i): FbcChannelEntry => {
        const r = asObject(e, file, line);
        const n = str(r.name);
        if (!n) throw parseError(`channel ${JSON.stringify(name)} entry ${i} has no "name"`, where);
        const skips = Array.isArray(r.skips) ? r.skips.filter((s): s is string => typeof s === 'string') : [];
        return {
          name: n,
          ...(str(r.replaces) ? { replaces: str(r.replaces) } : {}),
          ...(skips.length > 0 ? { skips } : {}),
          ...(str(r.skipRange) ? { skipRange: str(r.skipRange) } : {}),
        };
      });
      this.pkg(pkg, where).channels.set(name, { name, entries: typed, meta: o });
    } else if (schema === 'olm.bundle') {
      const [pkg, name] = [need('package'), need('name')];
      this.unique(
        `b/${pkg}/${name}`,
        `bundle ${JSON.stringify(name)} of package ${JSON.stringify(pkg)}`,
        where,
      );
      const properties = (Array.isArray(o.properties) ? o.properties : []).map((p) => {
        const r = asObject(p, file, line);
        return { type: String(r.type ?? ''), value: r.value };
      });
      const pkgProps = properties.filter((p) => p.type === 'olm.package');
      if (pkgProps.length !== 1) {
        throw parseError(
          `bundle ${JSON.stringify(name)} has ${pkgProps.length} olm.package properties, expected exactly one`,
          where,
        );
      }
      const value = (pkgProps[0].value ?? {}) as Record<string, unknown>;
      const version = str(value.version);
      if (!version)
        throw parseError(`bundle ${JSON.stringify(name)}: olm.package property has no version`, where);
      const relatedImages = (Array.isArray(o.relatedImages) ? o.relatedImages : []).flatMap((ri) => {
        const r = asObject(ri, file, line);
        const image = str(r.image);
        return image ? [{ ...(str(r.name) ? { name: str(r.name) } : {}), image }] : [];
      });
      const image = str(o.image) ?? '';
      this.pkg(pkg, where).bundles.set(name, {
        name,
        package: pkg,
        image,
        version,
        relatedImages,
        properties,
        meta: o,
      });
    } else if (schema === 'olm.deprecations') {
      need('package');
      this.deprecations.push(o);
    } else {
      this.others.push(o);
    }
  }

  /** The model; throws when a channel or bundle names a package that has no olm.package object. */
  build(): FbcModel {
    for (const name of this.packages.keys()) {
      if (!this.declared.has(name)) {
        throw parseError(
          `package ${JSON.stringify(name)} has channels or bundles but no olm.package object`,
          this.firstUse.get(name) ?? '',
          'every package needs exactly one object with schema: olm.package',
        );
      }
    }
    return { packages: this.packages, deprecations: this.deprecations, others: this.others };
  }
}

/** Simple .indexignore support: `#` comments, `*` and `?` globs, matched on the path or base name. */
export function ignoreMatcher(lines: string): (rel: string) => boolean {
  const res = lines
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((p) => {
      const body = p
        .replace(/^\/|\/$/g, '')
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]');
      return new RegExp(`(^|/)${body}(/|$)`);
    });
  return (rel) => res.some((r) => r.test(rel));
}

async function* walk(root: string, rel: string, ignored: ((r: string) => boolean)[]): AsyncGenerator<string> {
  const dir = path.join(root, rel);
  const names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const rules = [...ignored];
  if (names.some((d) => d.name === '.indexignore' && d.isFile())) {
    const match = ignoreMatcher(await readFile(path.join(dir, '.indexignore'), 'utf8'));
    rules.push((r) => match(path.relative(rel, r)));
  }
  for (const d of names) {
    const r = path.join(rel, d.name);
    if (d.name === '.indexignore' || rules.some((m) => m(r))) continue;
    if (d.isDirectory()) yield* walk(root, r, rules);
    else if (d.isFile() && /\.(json|ya?ml)$/.test(d.name)) yield r;
  }
}

/** Load a catalog directory tree (the extracted `/configs`) into a model. */
export async function loadFbcDir(dir: string): Promise<FbcModel> {
  const builder = new FbcModelBuilder();
  for await (const rel of walk(dir, '', [])) {
    const kind = rel.endsWith('.json') ? 'json' : 'yaml';
    const stream = createReadStream(path.join(dir, rel), { highWaterMark: 1 << 20 });
    for await (const blob of parseFbcStream(stream, kind, rel)) builder.add(blob);
  }
  return builder.build();
}
