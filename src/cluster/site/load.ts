/**
 * Load a site file: parse (with positions), decode against the schema (schema.ts), check each
 * section (sections.ts, hosts.ts), apply defaults, and make paths absolute (relative to the file's
 * directory). Every problem is collected and thrown as one usage error (exit 2) naming
 * `file:line:column` and the field; then, unless told not to, every file the site names must exist.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { loadYamlWithPositions } from '../../config/positions.js';
import { isYamlLimitError } from '../../config/yaml-load.js';
import { Problems } from '../../config/problems.js';
import { describeShape } from '../../config/decode.js';
import { unreadableReason, usageError } from '../../util/errors.js';
import { hostsSection } from './hosts.js';
import { SITE_DECODE_CODES, SiteErrorCode, type SiteProblems } from './problems.js';
import { siteDocument, type SiteDocument } from './schema.js';
import {
  checkHeader,
  clusterSection,
  hubSection,
  mirrorSection,
  networkSection,
  type SectionContext,
} from './sections.js';
import { SITE_API_VERSION, SITE_KIND, type Site } from './types.js';

// prepare.ts applies the overrides on what it loads from here.

export interface LoadSiteOptions {
  /** Check that every file and directory the site names exists (default true). */
  checkFiles?: boolean;
}

/** The file or directory at `path`, named by `field`, exists and is of that kind. */
async function checkPath(
  problems: SiteProblems,
  field: string,
  path: string,
  kind: 'file' | 'directory',
): Promise<void> {
  try {
    const st = await stat(path);
    if (kind === 'file' && !st.isFile())
      problems.add(SiteErrorCode.File, field, `${field} names ${path}, which is not a file`);
    if (kind === 'directory' && !st.isDirectory())
      problems.add(SiteErrorCode.File, field, `${field} names ${path}, which is not a directory`);
  } catch (e) {
    problems.add(SiteErrorCode.File, field, `${field} names ${path}, but ${unreadableReason(e)}`, {
      hint: 'paths are relative to the site file’s directory',
    });
  }
}

/** Each section checked in file order, on a decoded document; records problems and returns the Site. */
function build(doc: SiteDocument, problems: SiteProblems, file: string, dir: string): Site {
  const warnings: string[] = [];
  const ctx: SectionContext = {
    problems,
    warnings,
    abs: (p: string) => (p === undefined ? '' : isAbsolute(p) ? p : resolve(dir, p)),
  };
  const cluster = clusterSection(doc.cluster, ctx);
  const network = networkSection(doc.network, ctx);
  const mirror = mirrorSection(doc.mirror, ctx);
  const hub = hubSection(doc.hub, ctx);
  const hosts = hostsSection(doc.hosts, ctx);
  return {
    apiVersion: SITE_API_VERSION,
    kind: SITE_KIND,
    cluster,
    network,
    mirror,
    hub,
    hosts,
    source: { file, dir, positions: problems.positions },
    warnings,
  };
}

/** Parse and check a site file's text (`file` names it in messages; paths resolve against `dir`). */
export function parseSite(text: string, file: string, dir = dirname(resolve(file))): Site {
  let loaded: ReturnType<typeof loadYamlWithPositions>;
  try {
    loaded = loadYamlWithPositions(text, { source: file, exitCode: 2 });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    const mark = (e as { mark?: { line: number; column: number } }).mark;
    const reason = (e as { reason?: string }).reason ?? (e as Error).message.split('\n')[0];
    throw usageError(SiteErrorCode.Yaml, `the site file is not valid YAML: ${reason}`, {
      where: mark ? `${file}:${mark.line + 1}:${mark.column + 1}` : file,
      hint: mark
        ? 'fix the YAML syntax (indentation, a missing ":" or quote)'
        : 'write the repeated parts out, or use fewer nested aliases',
    });
  }
  const problems = new Problems<SiteErrorCode>(file, loaded.positions);
  // What the file is comes before what is in it: a file of another kind (or any file given by
  // mistake) is named as such, and its content is never quoted.
  const root = loaded.value;
  if (root === null || typeof root !== 'object' || Array.isArray(root)) {
    throw usageError(
      SiteErrorCode.Kind,
      root === null || root === undefined
        ? 'the site file is empty'
        : `${file} holds ${describeShape(root)}, not a site (a mapping with apiVersion, kind, cluster, network, mirror and hosts)`,
      { where: file, hint: `start the file with apiVersion: ${SITE_API_VERSION} and kind: ${SITE_KIND}` },
    );
  }
  checkHeader(root as SiteDocument, problems);
  problems.throwIfAny();
  const doc = siteDocument(loaded.value, '', { problems, text, codes: SITE_DECODE_CODES });
  // A document that is not even a mapping, or lacks its sections, cannot be checked further.
  if (doc === undefined || !doc.cluster || !doc.network || !doc.mirror) {
    problems.throwIfAny();
    throw usageError(SiteErrorCode.Kind, 'the site file is empty', { where: file });
  }
  const site = build(doc, problems, file, dir);
  problems.throwIfAny();
  return site;
}

/** The files and directories a site names, with the field that names each. */
function siteFiles(site: Site): { field: string; path: string; kind: 'file' | 'directory' }[] {
  const out: { field: string; path: string; kind: 'file' | 'directory' }[] = [
    { field: 'cluster.pullSecretFile', path: site.cluster.pullSecretFile, kind: 'file' },
    { field: 'cluster.sshKeyFile', path: site.cluster.sshKeyFile, kind: 'file' },
    ...site.mirror.caFiles.map((path, i) => ({ field: `mirror.caFiles[${i}]`, path, kind: 'file' as const })),
  ];
  if (site.mirror.clusterResources)
    out.push({ field: 'mirror.clusterResources', path: site.mirror.clusterResources, kind: 'directory' });
  if (site.hub.osImagesFile)
    out.push({ field: 'hub.osImagesFile', path: site.hub.osImagesFile, kind: 'file' });
  site.hosts.forEach((h, i) =>
    out.push({ field: `hosts[${i}].bmc.credentialsFile`, path: h.bmc.credentialsFile, kind: 'file' }),
  );
  return out;
}

/**
 * Read, check and complete a site file. Throws one usage error (exit 2) listing every problem with
 * `file:line:column`, the field, and a hint; unless `checkFiles: false`, files it names must exist.
 */
export async function loadSite(path: string, options: LoadSiteOptions = {}): Promise<Site> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(SiteErrorCode.Read, `cannot read the site file ${path}: ${unreadableReason(e)}`, {
      hint: 'give the path of a Site YAML file (see docs/site-config.md)',
    });
  }
  const site = parseSite(text, path, dirname(resolve(path)));
  if (options.checkFiles !== false) {
    const problems = new Problems<SiteErrorCode>(path, site.source.positions);
    // The CA file field is `mirror.caFiles` when written as one string.
    const caOne = !site.source.positions.has('mirror.caFiles[0]');
    for (const f of siteFiles(site)) {
      const field = caOne && f.field === 'mirror.caFiles[0]' ? 'mirror.caFiles' : f.field;
      await checkPath(problems, field, f.path, f.kind);
    }
    problems.throwIfAny();
  }
  return site;
}
