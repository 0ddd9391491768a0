/**
 * `helm template` in-process: every template of a chart and of its enabled subcharts parsed into
 * one set (deeper files first, so a parent's `define` wins, as Helm orders them), then each
 * non-partial template executed, in that same order, with its chart's built-in objects
 * (objects.ts). Output is Helm's: "<no value>" removed, whitespace-only files dropped, NOTES.txt
 * rendered but not a manifest; manifests listed by name.
 */
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import type { Chart } from './chart.js';
import {
  capabilities,
  chartTemplates,
  isPartial,
  type CapabilityOptions,
  type Renderable,
} from './objects.js';
import { TemplateError } from './template/errors.js';
import { helmFunctions } from './template/helm-funcs.js';
import { TemplateSet } from './template/template.js';
import type { GoMap } from './template/values.js';
import { scopeChart } from './values.js';

export interface RenderOptions extends CapabilityOptions {
  /** Values over the chart's values.yaml (as `helm template -f`). */
  values?: GoMap;
  /** `.Release.Name`; default "airgap". */
  releaseName?: string;
  /** `.Release.Namespace`; default "default". */
  namespace?: string;
}

export interface RenderedManifest {
  /** `podinfo/templates/deployment.yaml`, `podinfo/charts/cache/templates/master.yaml`. */
  template: string;
  text: string;
}

/** Helm's parse order: deeper paths first, then names in reverse; later definitions win. */
function helmOrder(a: string, b: string): number {
  const da = a.split('/').length;
  const db = b.split('/').length;
  if (da !== db) return db - da;
  return a < b ? 1 : a > b ? -1 : 0;
}

/** Say a template error as Helm says it: a fail/required message with where it was raised. */
function helmError(e: unknown, template: string): unknown {
  if (e instanceof TemplateError && e.failure !== undefined)
    return new TemplateError(
      MirrorError.HELM_TEMPLATE_EXEC,
      `execution error at (${e.location}): ${e.failure}`,
      e.location,
      e.failure,
    );
  // Template calls are limited by the budget (template/budget.ts); what is left is an action
  // nesting parentheses or if/range/with blocks thousands deep.
  if (e instanceof RangeError && /call stack/i.test(e.message))
    return new AirgapError(MirrorError.HELM_TEMPLATE_EXEC, `${template}: its actions nest too deeply`, {
      where: template,
      exitCode: 2,
      hint: "no real chart nests that deep: fix the chart's templates, or leave the chart out of mirror.helm",
    });
  return e;
}

/** Render a chart as `helm template` does: one manifest per non-empty rendered template file. */
export function renderChart(chart: Chart, options: RenderOptions = {}): { manifests: RenderedManifest[] } {
  if (chart.metadata['type'] === 'library')
    throw new AirgapError(
      MirrorError.HELM_CHART_INVALID,
      `${chart.name} is a library chart: it cannot be rendered on its own`,
      {
        where: chart.source,
        exitCode: 2,
      },
    );
  const scoped = scopeChart(chart, options.values ?? {});
  const common = {
    Release: {
      Name: options.releaseName ?? 'airgap',
      Namespace: options.namespace ?? 'default',
      Revision: 1n,
      Service: 'Helm',
      IsInstall: true,
      IsUpgrade: false,
    },
    Capabilities: capabilities(options),
  };
  const all: Renderable[] = [];
  chartTemplates(scoped, common, all);
  all.sort((a, b) => helmOrder(a.name, b.name));

  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  for (const r of all) {
    try {
      set.parse(r.name, r.text);
    } catch (e) {
      throw helmError(e, r.name);
    }
  }

  // Executed in Helm's order: what one template changes (`set` on .Values, .Template) the next sees.
  const manifests: RenderedManifest[] = [];
  for (const r of all) {
    if (isPartial(r.name)) continue;
    r.data['Template'] = { Name: r.name, BasePath: r.basePath };
    let text: string;
    try {
      text = set.execute(r.name, r.data).replaceAll('<no value>', '');
    } catch (e) {
      throw helmError(e, r.name);
    }
    if (r.name.endsWith('NOTES.txt') || text.trim() === '') continue;
    manifests.push({ template: r.name, text });
  }
  manifests.sort((a, b) => (a.template < b.template ? -1 : 1));
  return { manifests };
}
