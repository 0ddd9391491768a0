/**
 * `mirror.helm` of an ImageSetConfiguration, planned: each chart (from a chart repository, or a
 * local directory or archive) is fetched into the workspace (`helm/charts/<name>-<version>.tgz`,
 * carried in archives), rendered with its default values as `helm template` would, and every
 * image its manifests name becomes a plan entry, named at the destination as oc-mirror v2 names
 * additional images. A chart that cannot be fetched or rendered is reported with its name and
 * why (the run then fails); the other charts go on.
 */
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Stats } from 'node:fs';
import {
  AirgapError,
  CommonError,
  hasCode,
  isAirgapError,
  messageOf,
  unreadableReason,
  usageError,
} from '../../util/errors.js';
import { isNotFound, writeFileAtomic } from '../../util/fs.js';
import { joinSegments, pathSegment } from '../../util/path-segment.js';
import type { TlsOptions } from '../../net/http.js';
import { MirrorError } from '../errors.js';
import { formatReference, parseReference, type ImageReference } from '../reference.js';
import { findCredential, type CredentialOptions } from '../auth/credentials.js';
import type { Helm, HelmChart } from '../isc/types.js';
import { IscErrorCode } from '../isc/errors.js';
import {
  planAdditionalImages,
  platformStrings,
  type BlockedImage,
  type PlanChart,
  type PlanChartImage,
  type PlanEntry,
  type PlannedImage,
} from '../plan.js';
import { loadChart, renderChart } from './chart.js';
import { imagesOf, SOURCE_ORDER, type ChartImage } from './images.js';
import {
  allCharts,
  chooseChart,
  downloadChart,
  fetchIndex,
  indexDirOf,
  type IndexedChart,
} from './repository.js';

/** What planning the charts needs. */
export interface HelmPlanContext {
  workspace: string;
  /** TLS for chart repositories (the same CA flags as registries). */
  tls?: TlsOptions;
  /** Where chart repositories' credentials are found: the registries' auth files, by host. */
  credentials?: CredentialOptions;
  /**
   * A plan entry for an image, its tag pinned to a digest as the other sections pin theirs (an
   * image that cannot be resolved is an unresolved entry, reported failed by the run).
   */
  pin(image: PlannedImage, context: string, platforms?: string[]): Promise<PlanEntry>;
  /** `mirror.blockedImages`: a chart image it matches is left out before it is pinned. */
  blockedImages?: readonly { name: string }[];
}

export interface HelmPlan {
  charts: PlanChart[];
  entries: PlanEntry[];
  /** Chart images left out by `mirror.blockedImages` (before they are pinned or named). */
  blocked: BlockedImage[];
  warnings: string[];
}

/** A chart to render: where its archive (or directory) is, and how the plan names it. */
interface ChartSource {
  label: string;
  version?: string;
  repository?: string;
  file: string;
  spec: HelmChart;
}

/** Plan every chart of `mirror.helm`. */
export async function planHelm(helm: Helm, ctx: HelmPlanContext): Promise<HelmPlan> {
  const out: HelmPlan = { charts: [], entries: [], blocked: [], warnings: [] };
  const chartsDir = join(ctx.workspace, 'helm', 'charts');
  await mkdir(chartsDir, { recursive: true });
  const sources: ChartSource[] = [];

  for (const repo of helm.repositories) {
    let index;
    let authorization: string | undefined;
    try {
      authorization = await repositoryAuthorization(repo.url, ctx.credentials);
      index = await fetchIndex(repo.name, repo.url, ctx.tls, authorization);
      await writeFileAtomic(join(ctx.workspace, indexDirOf(repo.url), 'index.yaml'), index.text);
      out.warnings.push(...index.skipped);
    } catch (e) {
      if (isAirgapError(e) && e.exitCode === 2) throw e;
      for (const c of repo.charts.length > 0 ? repo.charts : [{ name: '*' } as HelmChart])
        out.charts.push({ name: c.name, repository: repo.name, error: messageOf(e) });
      continue;
    }
    const wanted: { spec: HelmChart; chart: IndexedChart }[] =
      repo.charts.length > 0
        ? repo.charts.map((spec) => ({ spec, chart: chooseChart(index, repo.name, spec.name, spec.version) }))
        : allCharts(index).map((chart) => ({
            spec: { name: chart.name, version: chart.version, imagePaths: [], platforms: [] },
            chart,
          }));
    if (repo.charts.length === 0) {
      const names = new Set(wanted.map((w) => w.chart.name)).size;
      out.warnings.push(
        `helm repository "${repo.name}" lists no charts: every version of every chart, ${names} chart(s) in ${wanted.length} version(s)`,
      );
    }
    for (const { spec, chart } of wanted) {
      try {
        const file = joinSegments(chartsDir, chart.file);
        await downloadChart(repo.name, index, chart, file, ctx.tls, authorization);
        sources.push({
          label: `${chart.name} ${chart.version}`,
          version: chart.version,
          repository: repo.name,
          file,
          spec: { ...spec, name: chart.name },
        });
      } catch (e) {
        if (isAirgapError(e) && e.exitCode === 2) throw e;
        out.charts.push({
          name: chart.name,
          version: chart.version,
          repository: repo.name,
          error: messageOf(e),
        });
      }
    }
  }

  for (const local of helm.local) {
    let info: Stats;
    try {
      info = await stat(local.path);
    } catch (e) {
      const why = isNotFound(e) ? 'does not exist' : `cannot be read: ${unreadableReason(e)}`;
      out.charts.push({ name: local.name, error: `the local chart ${local.path} ${why}` });
      continue;
    }
    let file = local.path;
    if (info.isFile()) {
      // Kept beside the repository charts, so an archive carries it too.
      file = joinSegments(chartsDir, pathSegment(basename(local.path), `helm local chart ${local.name}`));
      if (file !== local.path) await copyFile(local.path, file);
    }
    sources.push({ label: local.name, file, spec: local });
  }

  for (const src of sources) {
    try {
      const chart = await loadChart(
        src.file.endsWith('.tgz') ? await readFile(src.file) : src.file,
        src.file,
      );
      const { manifests } = renderChart(chart, {});
      const images = chartImages(imagesOf(manifests, { imagePaths: src.spec.imagePaths }));
      const planned = planChartImages(images, ctx.blockedImages ?? []);
      out.blocked.push(...planned.blocked);
      const platforms = platformStrings(src.spec.platforms);
      const byOrigin = new Map(images.map((i) => [i.image, i]));
      for (const img of planned.images) {
        const how = byOrigin.get(img.origin)?.sources.join(', ');
        const context = `helm chart ${src.label}${how ? ` [${how}]` : ''}${img.where ? ` (${img.where})` : ''}`;
        out.entries.push(await ctx.pin(img, context, platforms));
      }
      out.charts.push({
        name: chart.name,
        version: chart.version,
        ...(src.repository ? { repository: src.repository } : {}),
        file: src.file,
        images,
      });
    } catch (e) {
      if (isAirgapError(e) && e.exitCode === 2 && !isChartError(e.code)) throw e;
      out.charts.push({
        name: src.spec.name,
        ...(src.version ? { version: src.version } : {}),
        ...(src.repository ? { repository: src.repository } : {}),
        file: src.file,
        error: messageOf(e),
      });
    }
  }
  for (const c of out.charts.filter((c) => c.error))
    out.warnings.push(`helm chart ${c.name}${c.version ? ` ${c.version}` : ''}: ${c.error}`);
  return out;
}

/**
 * A chart's images as additional images (named at the destination as oc-mirror names them), the
 * blocked ones left out first. Two that would land on one destination fail the chart, with a hint
 * that fits a chart (its images have no targetRepo).
 */
function planChartImages(
  images: readonly PlanChartImage[],
  blockedImages: readonly { name: string }[],
): { images: PlannedImage[]; blocked: BlockedImage[] } {
  try {
    return planAdditionalImages(
      images.map((i) => ({ name: i.image, where: i.where })),
      [...blockedImages],
    );
  } catch (e) {
    if (!hasCode(e, IscErrorCode.Conflict)) throw e;
    throw new AirgapError(IscErrorCode.Conflict, e.message, {
      where: e.where,
      hint: 'leave one of them out with a mirror.blockedImages pattern naming its registry, and mirror it under another name with additionalImages and a targetRepo if it is needed',
      cause: e,
    });
  }
}

/**
 * A chart's images as the plan lists them, each image once: spellings of one image (`nginx:1`,
 * `docker.io/library/nginx:1`) are one entry, the first spelling's, with the sources of all.
 * REF_INVALID names an image field that is not an image reference.
 */
function chartImages(found: readonly ChartImage[]): PlanChartImage[] {
  const byFull = new Map<string, PlanChartImage>();
  for (const i of found) {
    const full = formatReference(referenceOf(i));
    const into = byFull.get(full);
    if (!into) {
      byFull.set(full, {
        image: i.image,
        sources: [...i.sources],
        where: i.where,
        ...(i.onlyIn ? { onlyIn: [...i.onlyIn] } : {}),
      });
      continue;
    }
    const sources = new Set([...into.sources, ...i.sources]);
    into.sources = SOURCE_ORDER.filter((s) => sources.has(s));
    const only = into.onlyIn && i.onlyIn ? new Set([...into.onlyIn, ...i.onlyIn]) : undefined;
    if (only) into.onlyIn = (['hook', 'test'] as const).filter((x) => only.has(x));
    else delete into.onlyIn;
  }
  return [...byFull.values()];
}

/** An image of a chart parsed; REF_INVALID says where the chart names it. */
function referenceOf(i: ChartImage): ImageReference {
  try {
    return parseReference(i.image.replace(/^docker:\/\//, ''));
  } catch (e) {
    if (!isAirgapError(e) || e.code !== MirrorError.REF_INVALID) throw e;
    throw usageError(MirrorError.REF_INVALID, `${i.where}: ${e.message}`, {
      hint: "fix the chart's values or templates so it names an image, e.g. quay.io/org/app:v1",
    });
  }
}

/**
 * The Authorization header for a chart repository, from the auth file entry of its host (or
 * host/path), as a registry's: Basic with the user and password. Never shown.
 */
async function repositoryAuthorization(
  url: string,
  credentials: CredentialOptions | undefined,
): Promise<string | undefined> {
  if (!credentials) return undefined;
  const u = new URL(url);
  const c = await findCredential(u.host, u.pathname.replace(/^\/+|\/+$/g, ''), credentials);
  if (!c?.username || c.password === undefined) return undefined;
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

/** Errors about a chart itself (it does not load or render): reported for that chart, not the run. */
function isChartError(code: string): boolean {
  // A chart's YAML over a limit (a "billion laughs" values.yaml) fails that chart alone.
  // An image field that is no image reference fails that chart alone too, and so do two of the
  // chart's images that would land on one destination (each chart's images are planned apart).
  return (
    code.startsWith('HELM_') ||
    code === CommonError.YAML_LIMIT ||
    code === MirrorError.REF_INVALID ||
    code === IscErrorCode.Conflict
  );
}
