/**
 * `airgap mirror delete`, oc-mirror v2's two phases:
 *
 * 1. `--generate`: what a DeleteImageSetConfiguration names, resolved like a mirror plan, found at
 *    the destination by digest, becomes `<workspace>/delete/delete-images.yaml` (oc-mirror's
 *    `DeleteImageList`). Nothing is changed. Images still used by what the workspace's last plan
 *    keeps (a release component shared by 4.18.1 and 4.18.3, a base layer…) are never listed; the
 *    report says which blobs only the deleted images used and how many bytes a garbage collection
 *    would reclaim.
 * 2. `--delete-yaml-file`: each listed manifest (children of an index first) is deleted with the
 *    registry's DELETE API; a registry that refuses deletes is said so with how to allow them.
 *    The space comes back when the registry collects its garbage (the report says how).
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isYamlLimitError, parseYaml } from '../config/yaml-load.js';
import { AirgapError, CommonError, isAirgapError, messageOf, usageError } from '../util/errors.js';
import { statIfExists, writeFileAtomic } from '../util/fs.js';
import { Limiter } from '../util/limit.js';
import { formatBytes, noProgress, type ProgressSink } from '../util/progress.js';
import { ClientPool } from './copy/pool.js';
import type { RegistryEndpoint } from './copy/endpoints.js';
import { readPlanFile } from './inputs.js';
import {
  DISC_KIND,
  ISC_API_VERSION,
  ISC_KIND,
  loadImageSetConfig,
  type ImageSetConfig,
} from './isc/index.js';
import { parseLocation, registryLocationText } from './location.js';
import { joinRepo } from './plan.js';
import { loadRegistriesConf } from './registry/registries-conf.js';
import { clientOptions, openSession, openTarget, resolveConfig, type MirrorOptions } from './session.js';
import { resolveWorkflow } from './workflow.js';
import { toYaml } from '../util/yaml.js';
import { MirrorError } from './errors.js';
import { blobsOf, parseManifest } from './manifest.js';
import type { MirrorPlan, PlanEntry } from './plan.js';
import { parseReference, referenceInScope, type ReferenceScope } from './reference.js';
import { tagsKeeping } from './delete-guard.js';
import { isDigest } from './digest.js';
import type { RegistryClient } from './registry/client.js';
import { RegistryError } from './registry/errors.js';
import { takeInventory } from './inventory/walk.js';

/** One manifest to delete, as oc-mirror's delete-images.yaml lists it. */
export interface DeleteItem {
  /** The original name, by digest. */
  imageName: string;
  /** `docker://<destination>/<repo>@sha256:…`. */
  imageReference: string;
  /** `release`, `operator`, `additional`, …, or `child` for a manifest of an index. */
  type: string;
  /** The blobs only deleted images use (what garbage collection would reclaim). */
  relatedBlobs: string[];
  /**
   * The destination tags of its repository that go with it (deleting by digest removes them): any
   * other tag found pointing to it when the list is carried out keeps it. airgap's addition.
   */
  tags?: string[];
}

export interface DeletePlan {
  file: string;
  items: DeleteItem[];
  /** Images the configuration names that stay: still used by what the workspace keeps, or not there. */
  skipped: { image: string; reason: string }[];
  reclaim: { blobs: number; bytes: number; sharedBlobs: number };
  /** Tags of the destination read to know what else it holds (0 when it could not be walked). */
  walkedTags: number;
  /** Why the destination could not be walked, when it could not. */
  walkNote?: string;
  gcHint: string;
}

export interface DeleteOutcome {
  deleted: string[];
  absent: string[];
  /** Listed manifests left in place: a tag outside the list points to them now. */
  kept: { image: string; reason: string }[];
  failed: { image: string; reason: string }[];
  gcHint: string;
}

/** An item's imageReference: `docker://<registry>/<repo>@sha256:<hex>` (registry, repo, digest). */
/** How to have the registry give the space back (deleting manifests frees no blob by itself). */
const GC_HINT =
  'deleting manifests frees no disk until the registry collects its garbage: for the registry airgap registry install runs, `airgap registry gc --workspace <workspace>`; for another distribution (docker-registry) registry, stop it or set it read-only, then run `registry garbage-collect /etc/docker/registry/config.yml` (never --delete-untagged: it deletes the platform manifests of multi-arch images and images pushed by digest); Quay collects by itself once the tags expire';

/** Where a delete entry is at the destination, for the plan. */
export interface DeleteTarget {
  client: RegistryClient;
  registry: string;
  /** The destination's prefix (`ocp` of docker://host/ocp): what else is there is walked below it. */
  prefix: string;
  repo(e: PlanEntry): string;
}

/** What the destination holds besides what is deleted: manifests (`repo@digest` → a tag naming it) and blobs. */
interface Held {
  manifests: Map<string, string>;
  blobs: Set<string>;
  /** Tags read. */
  tags: number;
  /** Why the walk could not be made (the registry does not list its repositories to us). */
  note?: string;
}

/**
 * Walk every tag of every repository below the prefix (the inventory walk, inventory/walk.ts),
 * except those being deleted: their manifests (index children included) and blobs stay. A
 * registry that does not list its repositories leaves only what the workspace's last plan keeps
 * to go by, and the report says so; any other read that fails stops the list being made.
 */
async function walkDestination(target: DeleteTarget, doomed: Set<string>, parallel?: number): Promise<Held> {
  const held: Held = { manifests: new Map(), blobs: new Set(), tags: 0 };
  const taken = await takeInventory({
    client: target.client,
    destination: registryLocationText(target),
    prefix: target.prefix,
    ...(parallel ? { parallel } : {}),
    catalogRefused: async (e) => ({
      repositories: [],
      note: `${target.registry} did not list its repositories (${messageOf(e)}): what else it holds was not read, only what the workspace's last plan keeps is kept`,
    }),
  });
  if (taken.firstFailure !== undefined) throw taken.firstFailure;
  held.note = taken.notes[0];
  const doc = taken.document;
  /** A manifest's blobs and, for an index, its children's, each child kept at `repo@child`. */
  const keep = (repo: string, m: number, tag: string) => {
    const [, , , blobs, children] = doc.manifests[m]!;
    for (const b of blobs) held.blobs.add(doc.blobs[b]![0]);
    for (const c of children) {
      held.manifests.set(`${repo}@${doc.manifests[c]![0]}`, tag);
      keep(repo, c, tag);
    }
  };
  for (const [r, tag, m] of doc.tags) {
    const repo = doc.repositories[r]!;
    if (doomed.has(`${repo}:${tag}`)) continue;
    held.tags++;
    held.manifests.set(`${repo}@${doc.manifests[m]![0]}`, `${repo}:${tag}`);
    keep(repo, m, `${repo}:${tag}`);
  }
  return held;
}

interface ImageBlobs {
  /** The manifest's digest. */
  digest: string;
  /** Manifests of an index (children), then the image's own blobs with sizes. */
  children: string[];
  blobs: Map<string, number>;
}

/** An image's blobs at the destination (by tag or digest), its index's children included; undefined when not there. */
async function blobsAt(client: RegistryClient, repo: string, ref: string): Promise<ImageBlobs | undefined> {
  let m;
  try {
    m = await client.getManifest(repo, ref);
  } catch (e) {
    if (e instanceof RegistryError && e.status === 404) return undefined;
    throw e;
  }
  const parsed = parseManifest(m.bytes, m.mediaType, `${repo}${ref.includes(':') ? '@' : ':'}${ref}`);
  const out: ImageBlobs = { digest: m.digest, children: [], blobs: new Map() };
  if (parsed.kind === 'image') {
    for (const b of blobsOf(parsed)) out.blobs.set(b.digest, b.size);
    return out;
  }
  for (const c of parsed.manifests) {
    const child = await blobsAt(client, repo, c.digest);
    if (!child) continue; // a sparse copy: that child was never mirrored
    out.children.push(c.digest);
    for (const [d, s] of child.blobs) out.blobs.set(d, s);
  }
  return out;
}

/**
 * The delete list of `del` (a plan resolved from a DeleteImageSetConfiguration) at the destination,
 * keeping what `keep` (the workspace's last mirror plan) still uses; written to `file`.
 */
async function planDeletion(
  del: MirrorPlan,
  keep: MirrorPlan | undefined,
  target: DeleteTarget,
  opts: {
    file: string;
    parallel?: number;
    progress: ProgressSink;
    /** Release images hosted clusters run (from the hub): deleting one is refused, naming them. */
    inUse?: readonly { cluster: string; image: string; digest?: string }[];
  },
): Promise<DeletePlan> {
  const limit = new Limiter(opts.parallel ?? 16);
  const key = (e: PlanEntry) => `${target.repo(e)}@${e.digest}`;
  // What stays: the last plan's images at every destination tag this does not delete. A deleted
  // tag whose manifest another kept tag names (2.0 and stable, or a release component shared by
  // two releases) is then kept for that tag's sake.
  const tagOf = (e: PlanEntry) => `${target.repo(e)}:${e.destTag}`;
  const doomed = new Set(del.images.filter((e) => e.digest).map(tagOf));
  const kept = (keep?.images ?? []).filter((e) => e.digest && !doomed.has(tagOf(e)));
  const keptAt = new Map(kept.map((e) => [key(e), e]));
  const skipped: DeletePlan['skipped'] = [];
  opts.progress({
    type: 'phase',
    name: 'delete',
    detail: `${del.images.length} images named, ${kept.length} kept`,
  });

  // What the destination holds under the prefix besides what is deleted (this workspace's images,
  // other workspaces', images pushed by hand): their manifests and blobs stay.
  const held = await walkDestination(target, doomed, opts.parallel);
  const keptBlobs = new Set(held.blobs);
  const keptManifests = new Set(held.manifests.keys());
  // What the last plan keeps and the walk did not read (no catalog, or a tag moved since): read by digest.
  await Promise.all(
    kept
      .filter((e) => !held.manifests.has(key(e)))
      .map((e) =>
        limit.run(async () => {
          const b = await blobsAt(target.client, target.repo(e), e.digest); // undefined only for a 404
          for (const c of b?.children ?? []) keptManifests.add(`${target.repo(e)}@${c}`);
          for (const d of b?.blobs.keys() ?? []) keptBlobs.add(d);
        }),
      ),
  );

  const running = (e: PlanEntry) =>
    (opts.inUse ?? []).filter(
      (u) =>
        (u.digest !== undefined && u.digest === e.digest) ||
        u.image === `${target.registry}/${target.repo(e)}:${e.destTag}`,
    );
  const inUse = del.images.flatMap((e) => running(e).map((u) => ({ e, u })));
  if (inUse.length > 0) {
    throw usageError(
      MirrorError.DELETE_IN_USE,
      `refusing to delete what hosted clusters run: ${inUse.map(({ e, u }) => `${e.origin} (${u.cluster})`).join(', ')}`,
      {
        hint: 'update those clusters to another release first (airgap cluster status shows what they run), or leave the release out of the DeleteImageSetConfiguration',
      },
    );
  }

  const results = await Promise.all(
    del.images.map((e) =>
      limit.run(async () => {
        if (!e.digest) return { e, skip: `not resolved: ${e.unresolved?.message ?? 'no digest'}` };
        const k = keptAt.get(key(e));
        if (k) return { e, skip: `still used by ${k.context}` };
        const tagged = held.manifests.get(key(e));
        if (tagged) return { e, skip: `still tagged at the destination as ${tagged}` };
        const b = await blobsAt(target.client, target.repo(e), e.digest);
        return b ? { e, b } : { e, skip: 'not in the mirror' };
      }),
    ),
  );
  const { items, freed, shared } = listManifests(results, target, keptBlobs, keptManifests, skipped);
  const bytes = [...freed.values()].reduce((a, n) => a + n, 0);
  const text =
    `# airgap mirror delete --generate: ${items.length} manifest(s) to delete; ${freed.size} blob(s), ${bytes} bytes, ` +
    `used by nothing the workspace keeps (a garbage collection reclaims them).\n` +
    `# Review it, then: airgap mirror delete --delete-yaml-file <this file> docker://${target.registry}\n` +
    toYaml({ apiVersion: 'mirror.openshift.io/v2alpha1', kind: 'DeleteImageList', items });
  await writeFileAtomic(opts.file, text);
  return {
    file: opts.file,
    items,
    skipped,
    reclaim: { blobs: freed.size, bytes, sharedBlobs: shared },
    walkedTags: held.tags,
    ...(held.note ? { walkNote: held.note } : {}),
    gcHint: GC_HINT,
  };
}

/** What one named image is at the destination: skipped with why, or its blobs. */
type Found = { e: PlanEntry; skip: string } | { e: PlanEntry; b: ImageBlobs };

/**
 * The delete list from what each named image is at the destination: an index's children first
 * (those nothing kept names), each manifest once with every tag that goes with it, and the blobs
 * only deleted images use (`freed`) or that kept images share (`shared`). Skipped images join
 * `skipped` with their reason.
 */
function listManifests(
  results: readonly Found[],
  target: DeleteTarget,
  keptBlobs: ReadonlySet<string>,
  keptManifests: ReadonlySet<string>,
  skipped: DeletePlan['skipped'],
): { items: DeleteItem[]; freed: Map<string, number>; shared: number } {
  const items: DeleteItem[] = [];
  const freed = new Map<string, number>();
  let shared = 0;
  /** Each listed manifest (`repo@digest`) and its item: a manifest is listed once. */
  const named = new Map<string, DeleteItem>();
  for (const r of results) {
    const { e } = r;
    const name = `${parseReference(e.origin).registry}/${parseReference(e.origin).repository}@${e.digest}`;
    if ('skip' in r) {
      skipped.push({ image: name, reason: r.skip });
      continue;
    }
    const b = r.b;
    const repo = target.repo(e);
    const related: string[] = [];
    for (const [d, size] of b.blobs) {
      if (keptBlobs.has(d)) {
        shared++;
        continue;
      }
      related.push(d);
      freed.set(d, size);
    }
    // Children first: an index deleted before its children would leave them unreachable.
    for (const c of b.children) {
      const ref = `${repo}@${c}`;
      if (keptManifests.has(ref) || named.has(ref)) continue;
      const child: DeleteItem = {
        imageName: `${name.split('@')[0]}@${c}`,
        imageReference: `docker://${target.registry}/${ref}`,
        type: 'child',
        relatedBlobs: [],
      };
      named.set(ref, child);
      items.push(child);
    }
    const ref = `${repo}@${e.digest}`;
    const tags = isDigest(e.destTag) ? [] : [e.destTag];
    const same = named.get(ref);
    if (same) {
      same.tags = [...new Set([...(same.tags ?? []), ...tags])].sort();
      continue;
    }
    const item: DeleteItem = {
      imageName: name,
      imageReference: `docker://${target.registry}/${ref}`,
      type: e.kind,
      relatedBlobs: related.sort(),
      tags,
    };
    named.set(ref, item);
    items.push(item);
  }
  return { items, freed, shared };
}

/** Read a delete-images.yaml; DELETE_LIST_INVALID names what is wrong with it. */
async function readDeleteList(path: string, scope: ReferenceScope): Promise<DeleteItem[]> {
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(path, 'utf8'), { source: path, exitCode: 2, json: true });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw usageError(MirrorError.DELETE_LIST_INVALID, `cannot read ${path}: ${messageOf(e).split('\n')[0]}`, {
      hint: 'give the delete-images.yaml that `airgap mirror delete --generate` wrote',
    });
  }
  const items = (doc as { kind?: unknown; items?: unknown })?.items;
  if ((doc as { kind?: unknown })?.kind !== 'DeleteImageList' || !Array.isArray(items)) {
    throw usageError(MirrorError.DELETE_LIST_INVALID, `${path} is not a DeleteImageList`, {
      hint: 'give the delete-images.yaml that `airgap mirror delete --generate` wrote',
    });
  }
  return items.map((it: unknown, i) => {
    const ref = (it as { imageReference?: unknown })?.imageReference;
    referenceInScope(ref, scope, `${path}: items[${i}].imageReference`);
    return { ...(it as DeleteItem), imageReference: ref as string };
  });
}

/**
 * Delete the listed manifests, in list order (children before their index), `parallel` at a time.
 * Each item is checked against the scope again just before its delete (the list is outside input).
 */
async function executeDeletion(
  client: RegistryClient,
  items: readonly DeleteItem[],
  opts: { parallel?: number; progress: ProgressSink; scope: ReferenceScope },
): Promise<DeleteOutcome> {
  const out: DeleteOutcome = { deleted: [], absent: [], kept: [], failed: [], gcHint: GC_HINT };
  opts.progress({ type: 'items-total', total: items.length });
  // The last look: a tag outside the list that points to a listed manifest now keeps it.
  const keeping = await tagsKeeping(
    client,
    items.map((it) => ({
      ref: referenceInScope(it.imageReference, opts.scope, 'delete list item'),
      tags: it.tags ?? [],
    })),
    opts.parallel,
  );
  // Children (listed before their index) go first, then the rest.
  const children = items.filter((i) => i.type === 'child');
  const tops = items.filter((i) => i.type !== 'child');
  for (const batch of [children, tops]) {
    const limit = new Limiter(opts.parallel ?? 8);
    await Promise.all(
      batch.map((it) =>
        limit.run(async () => {
          const ref = referenceInScope(it.imageReference, opts.scope, 'delete list item');
          const tag = keeping.get(`${ref.repository}@${ref.digest}`);
          if (tag) {
            out.kept.push({
              image: it.imageReference,
              reason: `${tag} points to it now, and the list does not delete that tag`,
            });
            opts.progress({ type: 'item-done', ok: true, name: it.imageReference });
            return;
          }
          try {
            const gone = await client.deleteManifest(ref.repository, ref.digest!);
            (gone ? out.deleted : out.absent).push(it.imageReference);
            opts.progress({ type: 'item-done', ok: true, name: it.imageReference });
          } catch (e) {
            if (e instanceof RegistryError && (e.status === 405 || e.hasRegistryCode('UNSUPPORTED'))) {
              throw new AirgapError(
                MirrorError.DELETE_REFUSED,
                `${client.registry} refuses to delete manifests (${e.status})`,
                {
                  hint: 'allow deletes in the registry: for distribution, storage.delete.enabled: true in its config.yml (or REGISTRY_STORAGE_DELETE_ENABLED=true), then run this again; nothing else was changed by this refusal',
                  cause: e,
                },
              );
            }
            out.failed.push({
              image: it.imageReference,
              reason: isAirgapError(e) ? e.message : messageOf(e),
            });
            opts.progress({ type: 'item-done', ok: false, name: it.imageReference });
          }
        }),
      ),
    );
  }
  return out;
}

/** The generate phase or the delete phase, in lines people read. */
export function renderDeletion(r: DeletePlan | DeleteOutcome, destination: string): string {
  const lines: string[] = [];
  if ('items' in r) {
    for (const s of r.skipped) lines.push(`kept     ${s.image}: ${s.reason}`);
    const images = r.items.filter((i) => i.type !== 'child').length;
    lines.push(
      `wrote ${r.file}: ${images} image(s) to delete (${r.items.length} manifest(s) with their children)`,
      `a garbage collection would then reclaim ${r.reclaim.blobs} blob(s), ${formatBytes(r.reclaim.bytes)}; ${r.reclaim.sharedBlobs} blob(s) stay, still used by what the workspace keeps or by the ${r.walkedTags} other tag(s) the destination holds`,
      ...(r.walkNote ? [`note: ${r.walkNote}`] : []),
      `nothing was deleted yet: review the list, then run airgap mirror delete --delete-yaml-file ${r.file} ${destination}`,
    );
  } else {
    for (const k of r.kept) lines.push(`warning: kept ${k.image}: ${k.reason}`);
    for (const f of r.failed) lines.push(`FAILED   ${f.image}: ${f.reason}`);
    lines.push(
      `deleted ${r.deleted.length} manifest(s)${r.absent.length ? `, ${r.absent.length} already gone` : ''}${r.kept.length ? `, ${r.kept.length} kept` : ''}${r.failed.length ? `, ${r.failed.length} failed` : ''}`,
      r.gcHint,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Options of {@link runDelete}: the mirror options, and which of oc-mirror's two phases. */
export interface DeleteRunOptions extends MirrorOptions {
  /** Write `<workspace>/delete/delete-images.yaml` from the DeleteImageSetConfiguration (-c). */
  generate?: boolean;
  /** Delete what this delete-images.yaml lists. */
  deleteYamlFile?: string;
  /** Release images hosted clusters run (read from the hub by the command): never listed. */
  inUse?: { cluster: string; image: string; digest?: string }[];
}

/**
 * `airgap mirror delete`: `--generate` resolves the DeleteImageSetConfiguration like a mirror plan
 * and lists what the destination holds of it (keeping what the workspace's last plan still uses);
 * `--delete-yaml-file` deletes that list. See delete.ts.
 */
export async function runDelete(o: DeleteRunOptions): Promise<DeletePlan | DeleteOutcome> {
  if (Boolean(o.generate) === Boolean(o.deleteYamlFile)) {
    throw usageError(CommonError.FLAG_MISSING, 'say which phase: --generate, or --delete-yaml-file <file>', {
      hint: 'first `airgap mirror delete -c delete-isc.yaml --workspace file://ws --generate docker://<mirror>`, review the list, then `airgap mirror delete --delete-yaml-file <list> docker://<mirror>`',
    });
  }
  const destination = parseLocation(o.destination, 'destination');
  if (destination.kind !== 'registry') {
    throw usageError(CommonError.FLAG_INVALID, 'airgap mirror delete deletes from a registry', {
      hint: 'give the mirror as docker://host[:port][/prefix]',
    });
  }
  if (o.deleteYamlFile) {
    const scope = { registry: destination.registry, prefix: destination.prefix };
    const items = await readDeleteList(o.deleteYamlFile, scope);
    const pool = new ClientPool(clientOptions(o));
    try {
      const endpoint = pool.get(destination.registry, 'destination', o.destTlsVerify === false);
      await endpoint.client.ping(joinRepo(destination.prefix, 'airgap-preflight'), 'pull,push');
      return await executeDeletion(endpoint.client, items, {
        scope,
        parallel: o.parallel,
        progress: o.progress ?? noProgress,
      });
    } finally {
      await pool.close();
    }
  }
  if (!o.config) {
    throw usageError(
      CommonError.FLAG_MISSING,
      '--generate needs the DeleteImageSetConfiguration: -c <file>',
      {
        hint: 'write one with kind: DeleteImageSetConfiguration and a delete: section shaped like mirror:',
      },
    );
  }
  const flow = resolveWorkflow({ ...o, dryRun: true });
  const disc = await loadImageSetConfig(o.config, { kind: DISC_KIND });
  const config: ImageSetConfig = {
    ...disc,
    kind: ISC_KIND,
    apiVersion: ISC_API_VERSION,
    mirror: disc.delete,
  };
  const registries = await loadRegistriesConf({ path: o.registriesConf });
  await mkdir(flow.workspace, { recursive: true });
  const run = openSession(o, flow, { config, ...(registries.tables.length > 0 ? { registries } : {}) });
  try {
    const target = await openTarget(run);
    const plan = await resolveConfig(run);
    const keepFile = join(flow.workspace, 'plan.json');
    // Only a workspace with no plan keeps nothing: a plan that cannot be read stops the list.
    const keep = (await statIfExists(keepFile)) ? await readPlanFile(keepFile) : undefined;
    return await planDeletion(
      plan,
      keep,
      {
        client: (target.endpoint as RegistryEndpoint).client,
        registry: destination.registry,
        prefix: destination.prefix,
        repo: target.repo,
      },
      {
        file: join(flow.workspace, 'delete', 'delete-images.yaml'),
        parallel: o.parallel,
        progress: run.progress,
        ...(o.inUse ? { inUse: o.inUse } : {}),
      },
    );
  } finally {
    await run.pool.close();
  }
}
