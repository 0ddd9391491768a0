/**
 * Read an ImageSetConfiguration or DeleteImageSetConfiguration the way oc-mirror v2 does
 * (internal/pkg/config/load.go): check `kind`, refuse unknown keys, then validate. Every problem
 * names its field path and file:line:column; all of them come out in one AirgapError.
 */
import { readFile } from 'node:fs/promises';
import * as yaml from 'js-yaml';
import { usageError } from '../../util/errors.js';
import { imageSetContent, archiveSize, TOP_LEVEL_KEYS, TOP_LEVEL_REMOVED } from './schema.js';
import { describeShape, namedHeader, type DecodeContext } from '../../config/decode.js';
import { childPath, loadYamlWithPositions } from '../../config/positions.js';
import { Problems, problemsError } from '../../config/problems.js';
import { didYouMean } from '../../config/suggest.js';
import { ISC_DECODE_CODES, IscErrorCode, type IscProblems } from './errors.js';
import { registerSource } from './source.js';
import { validateArchiveSize, validateContent } from './validate.js';
import {
  DISC_KIND,
  DISC_LEGACY_API_VERSION,
  ISC_API_VERSION,
  ISC_KIND,
  type AnyImageSetConfig,
  type DeleteImageSetConfig,
  type ImageSetConfig,
  type ImageSetContent,
} from './types.js';

type Kind = typeof ISC_KIND | typeof DISC_KIND;

/** Options for reading a configuration. */
export interface ParseOptions {
  /** Accept only this kind (a mirror command wants an ISC, a delete command a DISC). */
  kind?: Kind;
}

/**
 * Parse and validate configuration text. `file` names the source in messages (`file:line:col`).
 * Throws a usage error (exit code 2) listing every problem found.
 */
export function parseImageSetConfig(
  text: string,
  file: string,
  options: { kind: typeof ISC_KIND },
): ImageSetConfig;
export function parseImageSetConfig(
  text: string,
  file: string,
  options: { kind: typeof DISC_KIND },
): DeleteImageSetConfig;
export function parseImageSetConfig(text: string, file: string, options?: ParseOptions): AnyImageSetConfig;
export function parseImageSetConfig(
  text: string,
  file: string,
  options: ParseOptions = {},
): AnyImageSetConfig {
  return parseSource({ text }, file, options);
}

/**
 * Parse the text `source` holds. Once YAML has read it, `source.text` is let go: the loaded strings
 * point into the text the loader read (without a byte order mark), and a second copy of a large
 * file should not stay in memory while it is decoded.
 */
function parseSource(source: { text: string }, file: string, options: ParseOptions): AnyImageSetConfig {
  const loaded = loadYaml(source.text, file); // the loader removes a byte order mark
  source.text = '';
  const problems = new Problems<IscErrorCode>(file, loaded.positions);
  // The loaded value is decoded in place unless aliases share parts of it; it is dropped on a problem.
  const ctx: DecodeContext = {
    problems,
    text: loaded.text,
    codes: ISC_DECODE_CODES,
    inPlace: !loaded.aliased,
  };
  const root = loaded.value;
  if (root === null || root === undefined || typeof root !== 'object' || Array.isArray(root)) {
    // Not known to be a configuration: its content is never quoted (it may be any file).
    const what = root === null || root === undefined ? 'is empty' : `holds ${describeShape(root)}`;
    problems.add(
      IscErrorCode.Invalid,
      '',
      `${file} ${what}; expected a mapping with kind, apiVersion and mirror`,
      {
        hint: `start the file with "kind: ${options.kind ?? ISC_KIND}" and "apiVersion: ${ISC_API_VERSION}"`,
      },
    );
    throw problemsError(file, problems.list, problems.omitted);
  }
  const doc = root as Record<string, unknown>;
  const kind = checkKind(doc.kind, options.kind, problems);
  checkApiVersion(doc.apiVersion, kind, problems);
  checkTopLevelKeys(doc, kind, ctx);

  const contentKey = kind === ISC_KIND ? 'mirror' : 'delete';
  let content: ImageSetContent = emptyContent();
  if (!Object.hasOwn(doc, contentKey)) {
    problems.add(IscErrorCode.Required, '', `${contentKey} is required in a ${kind}`, {
      hint: `add "${contentKey}:" with platform, operators, additionalImages or helm`,
    });
  } else if (doc[contentKey] !== null) {
    content = imageSetContent(doc[contentKey], contentKey, ctx) ?? content;
  }
  validateContent(content, contentKey, problems);

  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : ISC_API_VERSION;
  let config: AnyImageSetConfig;
  if (kind === ISC_KIND) {
    const size =
      doc.archiveSize === undefined || doc.archiveSize === null
        ? undefined
        : archiveSize(doc.archiveSize, 'archiveSize', ctx);
    validateArchiveSize(size, problems);
    config = { kind, apiVersion, ...(size !== undefined ? { archiveSize: size } : {}), mirror: content };
  } else {
    config = { kind, apiVersion, delete: content };
  }
  problems.throwIfAny();
  registerSource(config, { file, positions: loaded.positions });
  return config;
}

/** Read and parse a configuration file. A missing or unreadable file is a usage error naming it. */
export async function loadImageSetConfig(
  path: string,
  options: { kind: typeof ISC_KIND },
): Promise<ImageSetConfig>;
export async function loadImageSetConfig(
  path: string,
  options: { kind: typeof DISC_KIND },
): Promise<DeleteImageSetConfig>;
export async function loadImageSetConfig(path: string, options?: ParseOptions): Promise<AnyImageSetConfig>;
export async function loadImageSetConfig(
  path: string,
  options: ParseOptions = {},
): Promise<AnyImageSetConfig> {
  const source = { text: '' };
  try {
    source.text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : ((e as Error).message ?? String(e));
    throw usageError(IscErrorCode.Read, `cannot read the image set configuration ${path}: ${why}`, {
      where: path,
      hint: 'check the path given with --config',
      cause: e,
    });
  }
  return parseSource(source, path, options);
}

function loadYaml(text: string, file: string): ReturnType<typeof loadYamlWithPositions> {
  try {
    return loadYamlWithPositions(text, { source: file, exitCode: 2 });
  } catch (e) {
    if (!(e instanceof yaml.YAMLException)) throw e;
    const where = e.mark ? `${file}:${e.mark.line + 1}:${e.mark.column + 1}` : file;
    throw usageError(IscErrorCode.Yaml, `${file} is not valid YAML: ${e.reason}`, {
      where,
      hint: e.mark
        ? 'indent with spaces (not tabs), put a space after each ":" and "- ", and quote values with special characters'
        : 'write the repeated parts out, or use fewer nested aliases',
      cause: e,
      details: { line: e.mark ? e.mark.line + 1 : undefined, column: e.mark ? e.mark.column + 1 : undefined },
    });
  }
}

function checkKind(raw: unknown, wanted: Kind | undefined, problems: IscProblems): Kind {
  const kinds: Kind[] = [ISC_KIND, DISC_KIND];
  if (raw === undefined || raw === null) {
    problems.add(IscErrorCode.Kind, '', 'kind is missing', { hint: `add "kind: ${wanted ?? ISC_KIND}"` });
  } else if (typeof raw !== 'string' || !(kinds as string[]).includes(raw)) {
    // A kind is a type name; anything else there is content of an unknown file, not quoted.
    problems.add(
      IscErrorCode.Kind,
      'kind',
      `${namedHeader('kind', raw)} is not ${ISC_KIND} or ${DISC_KIND}`,
      {
        hint: (typeof raw === 'string' && didYouMean(raw, kinds)) || `use kind: ${wanted ?? ISC_KIND}`,
      },
    );
  } else if (wanted && raw !== wanted) {
    const job = wanted === ISC_KIND ? 'mirroring' : 'deleting';
    problems.add(
      IscErrorCode.Kind,
      'kind',
      `${problems.file} is a ${raw}; ${job} needs ${wanted === ISC_KIND ? 'an' : 'a'} ${wanted}`,
      {
        hint:
          wanted === ISC_KIND
            ? 'mirroring reads kind: ImageSetConfiguration; a DeleteImageSetConfiguration is for airgap mirror delete'
            : 'deleting reads kind: DeleteImageSetConfiguration with a delete: section',
      },
    );
  } else {
    return raw as Kind;
  }
  throw problemsError(problems.file, problems.list, problems.omitted); // nothing else can be read without the kind
}

function checkApiVersion(raw: unknown, kind: Kind, problems: IscProblems): void {
  const accepted = kind === ISC_KIND ? [ISC_API_VERSION] : [ISC_API_VERSION, DISC_LEGACY_API_VERSION];
  if (raw === undefined || raw === null) {
    problems.add(IscErrorCode.ApiVersion, '', 'apiVersion is missing', {
      hint: `add "apiVersion: ${ISC_API_VERSION}"`,
    });
    return;
  }
  if (typeof raw === 'string' && accepted.includes(raw)) return;
  const legacy = raw === DISC_LEGACY_API_VERSION || raw === 'mirror.openshift.io/v1alpha1';
  problems.add(
    IscErrorCode.ApiVersion,
    'apiVersion',
    legacy
      ? `apiVersion ${String(raw)} is the oc-mirror v1 format; airgap reads the v2 format`
      : `${namedHeader('apiVersion', raw)} is not ${accepted.join(' or ')}`,
    {
      hint: legacy
        ? `set "apiVersion: ${ISC_API_VERSION}" and remove v1-only fields such as storageConfig`
        : `use apiVersion: ${ISC_API_VERSION}`,
    },
  );
}

function checkTopLevelKeys(doc: Record<string, unknown>, kind: Kind, ctx: DecodeContext): void {
  const allowed: readonly string[] = TOP_LEVEL_KEYS[kind];
  for (const key of Object.keys(doc)) {
    if (allowed.includes(key)) continue;
    if (ctx.problems.full) {
      ctx.problems.add(IscErrorCode.UnknownField, childPath('', key), `unknown field ${childPath('', key)}`);
      continue;
    }
    let hint = TOP_LEVEL_REMOVED[key] ?? didYouMean(key, allowed) ?? `allowed here: ${allowed.join(', ')}`;
    if (key === 'delete' && kind === ISC_KIND)
      hint = `delete: is not allowed in an ${ISC_KIND}; use kind: ${DISC_KIND}`;
    if (key === 'mirror' && kind === DISC_KIND)
      hint = `mirror: is not allowed in a ${DISC_KIND}; it lists content under delete:`;
    const path = childPath('', key);
    ctx.problems.add(IscErrorCode.UnknownField, path, `unknown field ${path}`, { hint, part: 'key' });
  }
}

function emptyContent(): ImageSetContent {
  return { operators: [], additionalImages: [], blockedImages: [], samples: [] };
}
