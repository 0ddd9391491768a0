/**
 * Helm's built-in objects, one top-level object per chart (engine's recAllTpls, chartutil's
 * ToRenderValues), as `helm template` (client-only, Helm 3.16) gives them:
 *
 * - .Values: the chart's values (values.ts);
 * - .Release: Name, Namespace, IsUpgrade (false), IsInstall (true), Revision (1), Service ("Helm");
 * - .Chart: Chart.yaml's fields under chart.Metadata's names, and IsRoot; .Chart.Dependencies as
 *   Helm leaves them: the enabled ones, named by alias;
 * - .Capabilities: KubeVersion (Version, Major, Minor; GitVersion deprecated), APIVersions (the
 *   group/versions client-go knows, plus any given; `Has`), HelmVersion;
 * - .Files (files.ts);
 * - .Subcharts: each enabled subchart's name (alias) → that subchart's own top-level object;
 * - .Template: Name, BasePath, set on the chart's object as each of its templates is executed (as
 *   Helm does: `.Subcharts.x.Template` is the one of x's templates executed last).
 */
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import type { Chart, ChartDependency } from './chart.js';
import { filesObject } from './files.js';
import { GoStruct, isMap, type GoMap } from './template/values.js';
import type { ScopedChart } from './values.js';

export interface CapabilityOptions {
  /** `.Capabilities.KubeVersion`; default v1.31.0. */
  kubeVersion?: string;
  /** More API versions for `.Capabilities.APIVersions.Has` (as `helm template --api-versions`). */
  apiVersions?: string[];
}

/**
 * The group/versions of client-go v0.31's scheme and apiextensions, in the order it registers
 * them: Helm 3.16's `helm template` knows these (group/version only: `Has "apps/v1/Deployment"`
 * is false without --api-versions).
 */
const DEFAULT_API_VERSIONS: readonly string[] = [
  'v1',
  ...[
    ['admissionregistration.k8s.io', 'v1 v1alpha1 v1beta1'],
    ['internal.apiserver.k8s.io', 'v1alpha1'],
    ['apps', 'v1 v1beta1 v1beta2'],
    ['authentication.k8s.io', 'v1 v1alpha1 v1beta1'],
    ['authorization.k8s.io', 'v1 v1beta1'],
    ['autoscaling', 'v1 v2 v2beta1 v2beta2'],
    ['batch', 'v1 v1beta1'],
    ['certificates.k8s.io', 'v1 v1beta1 v1alpha1'],
    ['coordination.k8s.io', 'v1alpha1 v1beta1 v1'],
    ['discovery.k8s.io', 'v1 v1beta1'],
    ['events.k8s.io', 'v1 v1beta1'],
    ['extensions', 'v1beta1'],
    ['flowcontrol.apiserver.k8s.io', 'v1 v1beta1 v1beta2 v1beta3'],
    ['networking.k8s.io', 'v1 v1alpha1 v1beta1'],
    ['node.k8s.io', 'v1 v1alpha1 v1beta1'],
    ['policy', 'v1 v1beta1'],
    ['rbac.authorization.k8s.io', 'v1 v1beta1 v1alpha1'],
    ['resource.k8s.io', 'v1alpha3'],
    ['scheduling.k8s.io', 'v1alpha1 v1beta1 v1'],
    ['storage.k8s.io', 'v1beta1 v1 v1alpha1'],
    ['storagemigration.k8s.io', 'v1alpha1'],
    ['apiextensions.k8s.io', 'v1beta1 v1'],
  ].flatMap(([group, versions]) => versions!.split(' ').map((v) => `${group}/${v}`)),
];

/** What Helm 3.16.0's release binary says of itself (its tag's commit; built with setup-go '1.22' then, go1.22.7). */
const HELM_VERSION = {
  Version: 'v3.16.0',
  GitCommit: '0d439e1a09683f21a0ab9401eb661401f185b00b',
  GitTreeState: 'clean',
  GoVersion: 'go1.22.7',
};

/** `--kube-version` as Helm reads it (k8s ParseGeneric): `1.29` is v1.29, `v1.30.2+k3s1` v1.30.2. */
function kubeVersion(text: string): { Version: string; Major: string; Minor: string } {
  const m = /^\s*v?([0-9]+(?:\.[0-9]+)+)/.exec(text);
  if (!m)
    throw new AirgapError(MirrorError.HELM_CHART_INVALID, `"${text}" is not a Kubernetes version`, {
      exitCode: 2,
      hint: 'give it as Helm takes --kube-version, e.g. v1.31.0 or 1.31',
    });
  const parts = m[1]!.split('.').map((p) => BigInt(p).toString());
  return { Version: `v${parts.join('.')}`, Major: parts[0]!, Minor: parts[1]! };
}

/** Helm's `.Capabilities` for `helm template`. */
export function capabilities(options: CapabilityOptions): GoStruct {
  const kv = kubeVersion(options.kubeVersion ?? 'v1.31.0');
  const kube = new GoStruct(
    'chartutil.KubeVersion',
    kv,
    { String: () => kv.Version, GitVersion: () => kv.Version },
    () => kv.Version,
  );
  const apis = [...DEFAULT_API_VERSIONS, ...(options.apiVersions ?? [])];
  const apiVersions = new GoStruct(
    'chartutil.VersionSet',
    {},
    { Has: (v: unknown) => apis.includes(String(v)) },
    () => `[${apis.join(' ')}]`,
  );
  return new GoStruct('*chartutil.Capabilities', {
    KubeVersion: kube,
    APIVersions: apiVersions,
    HelmVersion: new GoStruct('version.BuildInfo', { ...HELM_VERSION }),
  });
}

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

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function maintainer(m: unknown): unknown {
  if (!isMap(m)) return m;
  return new GoStruct('*chart.Maintainer', {
    Name: str(m['name']),
    Email: str(m['email']),
    URL: str(m['url']),
  });
}

/** A chart.Dependency as Helm leaves it after processing (its import-values as child/parent pairs). */
function dependency(d: ChartDependency): GoStruct {
  const imports = d.importValues.map((iv) =>
    typeof iv === 'string'
      ? { child: `exports.${iv}`, parent: '.' }
      : { child: String(iv['child'] ?? '<nil>'), parent: String(iv['parent'] ?? '<nil>') },
  );
  return new GoStruct('*chart.Dependency', {
    Name: d.name,
    Version: d.version,
    Repository: d.repository,
    Condition: d.condition,
    Tags: d.tags.length ? d.tags : null,
    Enabled: d.enabled ?? true,
    ImportValues: imports.length ? imports : null,
    Alias: d.alias,
  });
}

/** `.Chart`: Helm's struct of the chart's Metadata and IsRoot. */
function chartObject(chart: Chart, name: string, isRoot: boolean, deps: ChartDependency[]): GoStruct {
  const md = chart.metadata;
  const fields: GoMap = {};
  for (const [key, field, kind] of METADATA_FIELDS) {
    const v = key === 'name' ? name : md[key];
    if (key === 'dependencies') fields[field] = deps.length ? deps.map(dependency) : null;
    // Helm reads a Chart.yaml without apiVersion as a v1 chart.
    else if (key === 'apiVersion') fields[field] = str(v) || 'v1';
    else if (kind === 'string') fields[field] = str(v);
    else if (kind === 'bool') fields[field] = v === true;
    else if (kind === 'map') fields[field] = isMap(v) ? v : null;
    else if (!Array.isArray(v)) fields[field] = null;
    else fields[field] = key === 'maintainers' ? v.map(maintainer) : v;
  }
  return new GoStruct('struct { chart.Metadata; IsRoot bool }', { ...fields, IsRoot: isRoot });
}

/** A template to execute, with the top-level object of its chart. */
export interface Renderable {
  /** The template's full name: `<chart path>/templates/x.yaml`. */
  name: string;
  text: string;
  /** Its chart's top-level object, shared by the chart's templates (and its parent's .Subcharts). */
  data: GoMap;
  /** `<chart path>/templates`. */
  basePath: string;
}

export const isPartial = (name: string): boolean => name.slice(name.lastIndexOf('/') + 1).startsWith('_');

/** The top-level object of a chart and its subcharts, and their templates, into `out`. */
export function chartTemplates(
  s: ScopedChart,
  common: { Release: GoMap; Capabilities: GoStruct },
  out: Renderable[],
  isRoot = true,
): GoMap {
  const subcharts: GoMap = {};
  const top: GoMap = {
    Chart: chartObject(s.chart, s.name, isRoot, s.dependencies),
    Files: filesObject(s.chart.files),
    Release: common.Release,
    Capabilities: common.Capabilities,
    Values: s.values,
    Subcharts: subcharts,
  };
  for (const c of s.children) subcharts[c.name] = chartTemplates(c, common, out, false);
  const isLibrary = s.chart.metadata['type'] === 'library';
  for (const t of s.chart.templates) {
    const name = `${s.path}/${t.name}`;
    // A library chart's only templates are its partials (Helm's isTemplateValid).
    if (isLibrary && !isPartial(name)) continue;
    out.push({ name, text: t.data, data: top, basePath: `${s.path}/templates` });
  }
  return top;
}
