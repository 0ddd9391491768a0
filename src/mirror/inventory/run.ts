/**
 * `airgap mirror inventory`: take an inventory of a registry below a prefix and write it (walk.ts,
 * format.ts), or read one back (`--verify`) and say what it covers.
 */
import { join } from 'node:path';
import { CommonError, messageOf, usageError } from '../../util/errors.js';
import { statIfExists } from '../../util/fs.js';
import { formatBytes, noProgress } from '../../util/progress.js';
import { ClientPool } from '../copy/pool.js';
import { MirrorError } from '../errors.js';
import { readPlanFile } from '../inputs.js';
import { parseLocation, registryLocationText, type RegistryLocation } from '../location.js';
import { flattenRepo, joinRepo } from '../plan.js';
import type { RegistryError } from '../registry/errors.js';
import { clientOptions, type MirrorOptions } from '../session.js';
import { readInventory, writeInventory, type InventorySummary } from './format.js';
import { takeInventory } from './walk.js';

/** The default file an inventory is written to (in the working directory). */
export const DEFAULT_INVENTORY_FILE = 'inventory.json';

export interface InventoryRunOptions extends MirrorOptions {
  /** Where to write it (`.gz`: gzip). */
  output: string;
}

/** What `airgap mirror inventory` (and `--verify`) report. */
export interface InventoryReport extends InventorySummary {
  /** Bytes of the file as stored. */
  fileBytes: number;
  /** Seconds the walk and the write took (not for --verify). */
  tookSeconds?: number;
  /** What the reader should know that is not a failed read (the catalog refused, the plan used). */
  notes: string[];
}

/** Walk the registry `o.destination` names and write its inventory to `o.output`. */
export async function runInventory(o: InventoryRunOptions): Promise<InventoryReport> {
  const started = Date.now();
  const dest = parseLocation(o.destination, 'destination');
  if (dest.kind !== 'registry') {
    throw usageError(CommonError.FLAG_INVALID, `an inventory is taken of a registry, not ${o.destination}`, {
      hint: 'give the mirror as docker://host[:port][/prefix]; to read an inventory file back, use --verify <file>',
    });
  }
  const pool = new ClientPool(clientOptions(o));
  try {
    const { client } = pool.get(dest.registry, 'destination', o.destTlsVerify === false);
    // Reachability, TLS and credentials said once, with their fix, before the walk.
    await client.ping(joinRepo(dest.prefix, 'airgap-preflight'), 'pull');
    const plan = planRepositories(o, dest);
    const { document, notes } = await takeInventory({
      client,
      destination: registryLocationText(dest),
      prefix: dest.prefix,
      parallel: o.parallel,
      progress: o.progress ?? noProgress,
      ...(plan ? { catalogRefused: plan } : {}),
      ...(o.version ? { version: o.version } : {}),
    });
    const written = await writeInventory(o.output, document);
    return {
      ...written.summary(),
      fileBytes: written.fileBytes,
      tookSeconds: Math.round((Date.now() - started) / 100) / 10,
      notes,
    };
  } finally {
    await pool.close();
  }
}

/** Read an inventory file back: what it covers. INVENTORY_INVALID (exit 2) names what is wrong with it. */
export async function verifyInventory(path: string): Promise<InventoryReport> {
  const inv = await readInventory(path);
  return { ...inv.summary(), fileBytes: inv.fileBytes, notes: [] };
}

/**
 * The repositories a plan names at this destination (--plan, else the workspace's plan.json), for
 * a registry that does not serve its catalog; undefined when neither is given.
 */
function planRepositories(
  o: InventoryRunOptions,
  dest: RegistryLocation,
): ((e: RegistryError) => Promise<{ repositories: string[]; note: string }>) | undefined {
  const file =
    o.plan ?? (o.workspace ? join(parseLocation(o.workspace, '--workspace').path, 'plan.json') : '');
  if (!file) return undefined;
  return async (e) => {
    if (!o.plan && !(await statIfExists(file))) {
      throw usageError(
        MirrorError.INVENTORY_INCOMPLETE,
        `the workspace has no plan: ${file} does not exist`,
        {
          hint: 'the registry does not list its repositories, so the inventory reads the ones a plan names: give the workspace that mirrored to it, or its plan with --plan <plan.json>',
        },
      );
    }
    const plan = await readPlanFile(file);
    const repositories = [
      ...new Set(plan.images.map((i) => flattenRepo(joinRepo(dest.prefix, i.destRepo), o.maxNestedPaths))),
    ];
    return {
      repositories,
      note: `${dest.registry} did not list its repositories (${messageOf(e).split('\n')[0]}): the ${repositories.length} repositories the plan ${file} names were read instead; repositories it does not name are not in the inventory`,
    };
  };
}

/** The report in lines people read. */
export function renderInventory(r: InventoryReport, verb: 'wrote' | 'read'): string {
  const lines = [
    `${verb} ${r.path}: the inventory of ${r.destination}, taken ${r.takenAt}${r.takenBy ? ` by ${r.takenBy}` : ''}`,
    `  ${r.repositories} repositories, ${r.tags} tags, ${r.manifests} manifests, ${r.blobs} blobs (${formatBytes(r.bytes)} of blobs, each counted once)`,
    `  file: ${formatBytes(r.fileBytes)}, ${r.sha256}${r.tookSeconds !== undefined ? `; took ${r.tookSeconds} s` : ''}`,
    ...r.notes.map((n) => `note: ${n}`),
  ];
  if (r.complete) {
    lines.push('complete: every read succeeded; it lists all the registry holds below the prefix');
  } else {
    lines.push(
      `INCOMPLETE (${MirrorError.INVENTORY_INCOMPLETE}): ${r.problems.length} read(s) failed. What it lists is there, but not all that is there is listed (an archive cut against it carries the rest again):`,
      ...r.problems.map((p) => `  ${p}`),
      verb === 'wrote'
        ? 'run the same command again once the registry answers to get a complete inventory'
        : 'take it again on the disconnected side once the registry answers',
    );
  }
  return `${lines.join('\n')}\n`;
}
