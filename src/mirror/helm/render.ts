/**
 * `helm template` in-process: every template of a chart and of its enabled subcharts parsed into
 * one set (deeper files first, so a parent's `define` wins, as Helm orders them), then each
 * non-partial template executed with its chart's objects: .Values, .Release, .Chart (Chart.yaml's
 * fields under Helm's names), .Capabilities, .Template, .Files. Output is Helm's: "<no value>"
 * removed, whitespace-only files dropped, NOTES.txt rendered but not a manifest.
 */
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import type { Chart, ChartFile } from './chart.js';
import { TemplateError } from './template/errors.js';
import { helmFunctions } from './template/helm-funcs.js';
import { TemplateSet } from './template/template.js';
import { GoStruct, isMap, type GoMap } from './template/values.js';
import { scopeChart, type ScopedChart } from './values.js';
import { writeYaml } from './yaml.js';

export interface RenderOptions {
  /** Values over the chart's values.yaml (as `helm template -f`). */
  values?: GoMap;
  /** `.Release.Name`; default "airgap". */
  releaseName?: string;
  /** `.Release.Namespace`; default "default". */
  namespace?: string;
  /** `.Capabilities.KubeVersion`; default v1.31.0. */
  kubeVersion?: string;
  /** More API versions for `.Capabilities.APIVersions.Has` (as `helm template --api-versions`). */
  apiVersions?: string[];
}

export interface RenderedManifest {
  /** `podinfo/templates/deployment.yaml`, `podinfo/charts/cache/templates/master.yaml`. */
  template: string;
  text: string;
}

/** The API versions of a v1.31 cluster (group/version and group/version/Kind), as Helm's defaults. */
const DEFAULT_API_VERSIONS: string[] = (() => {
  const gv: Record<string, string[]> = {
    v1: [
      'ConfigMap',
      'Secret',
      'Service',
      'ServiceAccount',
      'Pod',
      'PersistentVolumeClaim',
      'Namespace',
      'Endpoints',
    ],
    'apps/v1': ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision'],
    'batch/v1': ['Job', 'CronJob'],
    'autoscaling/v1': ['HorizontalPodAutoscaler'],
    'autoscaling/v2': ['HorizontalPodAutoscaler'],
    'policy/v1': ['PodDisruptionBudget'],
    'networking.k8s.io/v1': ['Ingress', 'IngressClass', 'NetworkPolicy'],
    'rbac.authorization.k8s.io/v1': ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'],
    'storage.k8s.io/v1': ['StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment'],
    'admissionregistration.k8s.io/v1': ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    'apiextensions.k8s.io/v1': ['CustomResourceDefinition'],
    'apiregistration.k8s.io/v1': ['APIService'],
    'coordination.k8s.io/v1': ['Lease'],
    'discovery.k8s.io/v1': ['EndpointSlice'],
    'events.k8s.io/v1': ['Event'],
    'node.k8s.io/v1': ['RuntimeClass'],
    'scheduling.k8s.io/v1': ['PriorityClass'],
    'certificates.k8s.io/v1': ['CertificateSigningRequest'],
    'flowcontrol.apiserver.k8s.io/v1': ['FlowSchema', 'PriorityLevelConfiguration'],
    'authentication.k8s.io/v1': ['TokenReview'],
    'authorization.k8s.io/v1': ['SubjectAccessReview'],
  };
  return Object.entries(gv).flatMap(([v, kinds]) => [v, ...kinds.map((k) => `${v}/${k}`)]);
})();

/** Chart.yaml's keys under the names of Helm's chart.Metadata fields, with Go's zero values. */
const METADATA_FIELDS: [string, string, 'string' | 'list' | 'bool' | 'map'][] = [
  ['name', 'Name', 'string'],
  ['home', 'Home', 'string'],
  ['sources', 'Sources', 'list'],
  ['version', 'Version', 'string'],
  ['description', 'Description', 'string'],
  ['keywords', 'Keywords', 'list'],
  ['maintainers', 'Maintainers', 'list'],
  ['icon', 'Icon', 'string'],
  ['apiVersion', 'APIVersion', 'string'],
  ['condition', 'Condition', 'string'],
  ['tags', 'Tags', 'string'],
  ['appVersion', 'AppVersion', 'string'],
  ['deprecated', 'Deprecated', 'bool'],
  ['annotations', 'Annotations', 'map'],
  ['kubeVersion', 'KubeVersion', 'string'],
  ['dependencies', 'Dependencies', 'list'],
  ['type', 'Type', 'string'],
];

function capitalised(v: GoMap, fields: [string, string][]): GoStruct {
  const out: GoMap = {};
  for (const [k, f] of fields)
    out[f] = typeof v[k] === 'string' || typeof v[k] === 'boolean' ? v[k] : (v[k] ?? '');
  return new GoStruct('*chart.Struct', out);
}

function chartObject(chart: Chart, name: string, isRoot: boolean): GoStruct {
  const md = chart.metadata;
  const fields: GoMap = {};
  for (const [key, field, kind] of METADATA_FIELDS) {
    const v = key === 'name' ? name : md[key];
    if (kind === 'string') fields[field] = typeof v === 'string' ? v : '';
    else if (kind === 'bool') fields[field] = v === true;
    else if (kind === 'map') fields[field] = isMap(v) ? v : null;
    else if (!Array.isArray(v)) fields[field] = null;
    else if (key === 'maintainers')
      fields[field] = v.map((m) =>
        isMap(m)
          ? capitalised(m, [
              ['name', 'Name'],
              ['email', 'Email'],
              ['url', 'URL'],
            ])
          : m,
      );
    else if (key === 'dependencies')
      fields[field] = v.map((d) =>
        isMap(d)
          ? capitalised(d, [
              ['name', 'Name'],
              ['version', 'Version'],
              ['repository', 'Repository'],
              ['condition', 'Condition'],
              ['tags', 'Tags'],
              ['alias', 'Alias'],
            ])
          : d,
      );
    else fields[field] = v;
  }
  return new GoStruct('*chart.Metadata', fields, { IsRoot: () => isRoot });
}

function capabilities(options: RenderOptions): GoStruct {
  const version = options.kubeVersion ?? 'v1.31.0';
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  const kube = new GoStruct(
    'chartutil.KubeVersion',
    { Version: version, Major: m?.[1] ?? '1', Minor: m?.[2] ?? '31' },
    { String: () => version, GitVersion: () => version },
    () => version,
  );
  const apis = [...DEFAULT_API_VERSIONS, ...(options.apiVersions ?? [])];
  const apiVersions = new GoStruct(
    'chartutil.VersionSet',
    {},
    { Has: (v: unknown) => apis.includes(String(v)) },
    () => `[${apis.join(' ')}]`,
  );
  const helm = new GoStruct('chartutil.HelmVersion', {
    Version: 'v3.16.0',
    GitCommit: '',
    GitTreeState: '',
    GoVersion: 'go1.22',
  });
  return new GoStruct('*chartutil.Capabilities', {
    KubeVersion: kube,
    APIVersions: apiVersions,
    HelmVersion: helm,
  });
}

function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') re += '(?:';
    else if (c === '}') re += ')';
    else if (c === ',' && re.includes('(?:')) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Helm's `.Files`: Get, GetBytes, Glob, Lines, AsConfig, AsSecrets. */
function filesObject(files: ChartFile[]): GoStruct {
  const byName = new Map(files.map((f) => [f.name, f.data]));
  const basename = (n: string) => n.slice(n.lastIndexOf('/') + 1);
  const asMap = (enc: (b: Buffer) => string) => {
    const m: GoMap = {};
    for (const f of files) m[basename(f.name)] = enc(f.data);
    // Helm's toYAML of the map: `{}` when no file matched.
    return writeYaml(m).replace(/\n$/, '');
  };
  return new GoStruct(
    'engine.files',
    {},
    {
      Get: (n: unknown) => byName.get(String(n))?.toString('utf8') ?? '',
      GetBytes: (n: unknown) => new Uint8Array(byName.get(String(n)) ?? []),
      Lines: (n: unknown) => {
        const t = byName.get(String(n))?.toString('utf8');
        return t === undefined ? [] : t.split('\n');
      },
      Glob: (p: unknown) => {
        const re = globToRegExp(String(p));
        return filesObject(files.filter((f) => re.test(f.name)));
      },
      AsConfig: () => asMap((b) => b.toString('utf8')),
      AsSecrets: () => asMap((b) => b.toString('base64')),
    },
  );
}

interface Renderable {
  /** The template's full name: `<chart path>/templates/x.yaml`. */
  name: string;
  text: string;
  data: GoMap;
}

function collect(
  s: ScopedChart,
  common: { Release: GoMap; Capabilities: GoStruct },
  out: Renderable[],
): void {
  const isLibrary = s.chart.metadata['type'] === 'library';
  const base = {
    Values: s.values,
    Chart: chartObject(s.chart, s.name, !s.path.includes('/')),
    Files: filesObject(s.chart.files),
    Release: common.Release,
    Capabilities: common.Capabilities,
  };
  for (const t of s.chart.templates) {
    const name = `${s.path}/${t.name}`;
    // A library chart's only templates are its partials (Helm's isTemplateValid).
    if (isLibrary && !isPartial(name)) continue;
    out.push({
      name,
      text: t.data,
      data: { ...base, Template: { Name: name, BasePath: `${s.path}/templates` } },
    });
  }
  for (const c of s.children) collect(c, common, out);
}

/** Helm's parse order: deeper paths first, then names in reverse; later definitions win. */
function helmOrder(a: string, b: string): number {
  const da = a.split('/').length;
  const db = b.split('/').length;
  if (da !== db) return db - da;
  return a < b ? 1 : a > b ? -1 : 0;
}

const isPartial = (name: string) => name.slice(name.lastIndexOf('/') + 1).startsWith('_');

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
  collect(scoped, common, all);
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

  const manifests: RenderedManifest[] = [];
  for (const r of [...all].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (isPartial(r.name)) continue;
    let text: string;
    try {
      text = set.execute(r.name, r.data).replaceAll('<no value>', '');
    } catch (e) {
      throw helmError(e, r.name);
    }
    if (r.name.endsWith('NOTES.txt') || text.trim() === '') continue;
    manifests.push({ template: r.name, text });
  }
  return { manifests };
}
