/**
 * What `airgap mirror init` does with the configuration it built: the YAML text (after the
 * command line as a comment), a short summary for the terminal, and the file, written atomically
 * and never over an existing one unless asked.
 */
import { stat } from 'node:fs/promises';
import { usageError, CommonError } from '../../util/errors.js';
import { writeFileAtomic } from '../../util/fs.js';
import { toYaml } from '../../util/yaml.js';
import type { InitChannel, InitImageSetConfig } from './init-types.js';

/** The YAML file: optional `#` comment lines, then the document. */
export function renderImageSetConfig(
  config: InitImageSetConfig,
  options: { comment?: string[] } = {},
): string {
  const comment = (options.comment ?? []).map((line) => `# ${line}`.trimEnd()).join('\n');
  return `${comment ? `${comment}\n` : ''}${toYaml(config)}`;
}

/** A channel and which of its releases: `stable-4.18 from 4.18.1 to the latest`. */
function channelSummary(c: InitChannel): string {
  const range =
    c.minVersion && c.minVersion === c.maxVersion
      ? ` at ${c.minVersion}`
      : c.minVersion || c.maxVersion
        ? ` from ${c.minVersion ?? 'the first'} to ${c.maxVersion ?? 'the latest'}`
        : c.full
          ? ' (every release)'
          : ' (latest release)';
  return `${c.name}${range}`;
}

/** One line per part of the set, for a person reading the terminal. */
export function summarizeImageSetConfig(config: InitImageSetConfig): string[] {
  const lines: string[] = [];
  const p = config.mirror.platform;
  if (p) {
    const arches = p.architectures ? `, ${p.architectures.join(', ')}` : '';
    const extras = [p.graph ? 'update graph' : '', p.kubeVirtContainer ? 'KubeVirt container disk' : '']
      .filter(Boolean)
      .join(', ');
    const releases = p.release ? `release ${p.release}` : (p.channels ?? []).map(channelSummary).join(', ');
    lines.push(`OpenShift: ${releases}${arches}${extras ? `, with the ${extras}` : ''}`);
  }
  for (const op of config.mirror.operators ?? []) {
    const names = op.packages?.map((pkg) =>
      pkg.channels ? `${pkg.name} (${pkg.channels.map((c) => c.name).join(', ')})` : pkg.name,
    );
    lines.push(`operators from ${op.catalog}: ${names ? names.join(', ') : 'every package'}`);
  }
  const images = config.mirror.additionalImages ?? [];
  if (images.length > 0)
    lines.push(`${images.length} additional image(s): ${images.map((i) => i.name).join(', ')}`);
  if (config.archiveSize !== undefined) lines.push(`archive parts of at most ${config.archiveSize} GiB`);
  return lines;
}

/**
 * Write the file atomically. An existing file is replaced only with `force`; a directory never.
 */
export async function writeImageSetConfigFile(path: string, text: string, options: { force?: boolean } = {}) {
  let existing: Awaited<ReturnType<typeof stat>> | undefined;
  try {
    existing = await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (existing?.isDirectory()) {
    throw usageError(CommonError.FLAG_INVALID, `--output ${path} is a directory`, {
      where: path,
      hint: `name a file in it, e.g. --output ${path.replace(/\/+$/, '')}/imageset-config.yaml`,
    });
  }
  if (existing && !options.force) {
    throw usageError(CommonError.OUTPUT_EXISTS, `${path} already exists; not replacing it`, {
      where: path,
      hint: 'pass --force to replace it, or choose another --output',
    });
  }
  await writeFileAtomic(path, text);
}
