/**
 * The container images of rendered manifests, found as oc-mirror v2 finds them, and more:
 *
 * - every `image` of containers, initContainers and ephemeralContainers of any pod spec: a Pod's
 *   `.spec`, a workload's `.spec.template.spec` (Deployment, StatefulSet, DaemonSet, ReplicaSet,
 *   Job, and custom resources shaped the same), a CronJob's `.spec.jobTemplate.spec.template.spec`,
 *   a PodTemplate's `.template.spec` (oc-mirror reads only the first two, for containers and
 *   initContainers);
 * - full image references (a registry host, and a tag or digest) in container `args`, `command`
 *   and `env` values: a whole value, the value of `--flag=value` / `key=value`, or an item of a
 *   comma-separated list (operators take their operand images this way, e.g. the Prometheus
 *   operator's `--prometheus-config-reloader=…`, cert-manager's `--acme-http01-solver-image=…`;
 *   oc-mirror misses them);
 * - the ImageSetConfiguration's `imagePaths` (JSONPath: `{.spec.custom[*].image}`, `{.a.b[0].c}`).
 *
 * Hooks (`helm.sh/hook`) and test pods (`helm.sh/hook: test`) are read too: Helm pulls their
 * images at install and at `helm test` (oc-mirror v2 leaves hooks out). A manifest whose hook
 * events Helm does not know is left out, as Helm leaves it out.
 *
 * Each image is listed once, with every place it was found and how.
 */
import { YAMLException } from 'js-yaml';
import { isYamlLimitError } from '../../config/yaml-load.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import type { PlanChartImage } from '../plan.js';
import { parseReference } from '../reference.js';
import type { RenderedManifest } from './render.js';
import { isMap, type GoMap } from './template/values.js';
import { loadYamlDocuments } from './yaml.js';

/** How an image was found: its fields, and `hook` / `test` when a Helm hook or a test pod names it. */
export type ImageSource = PlanChartImage['sources'][number];
/** Which field of a manifest named an image: a container's `image`, its `args` or `command`, an `env` value, an `imagePaths` path. */
export type ImageField = Exclude<ImageSource, 'hook' | 'test'>;

export interface ChartImage {
  image: string;
  /** The first place it was found: `<template>: Deployment/podinfo .spec.template.spec.containers[0].image`. */
  where: string;
  /** Every place it was found, the first included. */
  places: string[];
  /** How it was found, each once: `image`, `args`, `env`, `imagePaths`, then `hook`, `test`. */
  sources: ImageSource[];
  /**
   * Present when no release resource names it, only hooks (pulled at install, upgrade, …) or
   * test pods (pulled by `helm test`): which.
   */
  onlyIn?: ('hook' | 'test')[];
}

export interface ImagesOptions {
  /** More places to look, as oc-mirror's helm `imagePaths`: `{.spec.template.spec.custom[*].image}`. */
  imagePaths?: readonly string[];
}

type Step = { key: string } | { index: number } | { all: true };

/** Parse `{.a.b[*].c}` / `{.a.b[0].c}` (braces optional). */
function parseImagePath(path: string): Step[] {
  const bad = (why: string): never => {
    throw usageError(MirrorError.HELM_IMAGE_PATH_INVALID, `the image path "${path}" ${why}`, {
      hint: 'write it as a JSONPath of fields and list indexes, e.g. {.spec.template.spec.containers[*].image}',
    });
  };
  let p = path.trim();
  if (p.startsWith('{')) {
    if (!p.endsWith('}')) bad('opens a brace it does not close');
    p = p.slice(1, -1).trim();
  }
  if (!p.startsWith('.')) bad('must start with "."');
  const steps: Step[] = [];
  const re = /\.([^.[\]\s{}]+)|\[(\*|[0-9]+)\]/y;
  let i = 0;
  while (i < p.length) {
    re.lastIndex = i;
    const m = re.exec(p);
    if (!m) bad(`has "${p.slice(i)}" where a field or an index was expected`);
    if (m![1] !== undefined) steps.push({ key: m![1] });
    else if (m![2] === '*') steps.push({ all: true });
    else steps.push({ index: Number(m![2]) });
    i = re.lastIndex;
  }
  if (steps.length === 0) bad('names no field');
  return steps;
}

/** The values at a path, each with its concrete path (`[*]` expanded). */
function valuesAt(obj: unknown, steps: Step[]): { value: unknown; path: string }[] {
  let cur: { value: unknown; path: string }[] = [{ value: obj, path: '' }];
  for (const s of steps) {
    const next: { value: unknown; path: string }[] = [];
    for (const { value, path } of cur) {
      if ('key' in s) {
        if (isMap(value) && Object.hasOwn(value, s.key))
          next.push({ value: value[s.key], path: `${path}.${s.key}` });
      } else if (Array.isArray(value)) {
        if ('index' in s) {
          if (s.index < value.length) next.push({ value: value[s.index], path: `${path}[${s.index}]` });
        } else value.forEach((v, i) => next.push({ value: v, path: `${path}[${i}]` }));
      }
    }
    cur = next;
  }
  return cur;
}

/** Where pod specs are, in any object (oc-mirror reads the first two). */
const POD_SPECS = ['.spec', '.spec.template.spec', '.spec.jobTemplate.spec.template.spec', '.template.spec'];
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

/**
 * Whether a string reads as a full image reference: a registry host (a dotted name ending in a
 * label of two letters or more, an IPv4 address, `localhost`, or any of these with a port), a
 * repository, and a tag or digest written out. URLs, `host:port`, `host:port/path` and file paths
 * do not.
 */
export function looksLikeImage(value: string): boolean {
  if (value === '' || /[\s"'`$\\{}<>]|:\/\//.test(value)) return false;
  const slash = value.indexOf('/');
  if (slash <= 0) return false;
  const host = value.slice(0, slash);
  const name = host.replace(/:[0-9]+$/, '');
  const hasPort = name !== host;
  const registryLike =
    name === 'localhost' ||
    /^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(name) ||
    /^([a-z0-9-]+\.)+[a-z][a-z0-9-]*[a-z]$/i.test(name) ||
    (hasPort && /^[a-z0-9-]+$/i.test(name));
  if (!registryLike) return false;
  const last = value.slice(value.lastIndexOf('/') + 1);
  if (!last.includes(':') && !last.includes('@')) return false; // no tag or digest written
  try {
    return parseReference(value).registry === host;
  } catch {
    // parseReference refuses it: the value does not read as an image.
    return false;
  }
}

/** `--flag=`, `-flag=`, `key=` before a value (the flag's name alone: letters, digits, `_.-`). */
const FLAG_PREFIX = /^-{0,2}[A-Za-z_][\w.-]*=/;

/**
 * The image references in a container argument, command word or env value: the whole string, the
 * value of a `--flag=value` or `key=value`, or an item of a comma-separated list of either, when it
 * reads as a full image reference ({@link looksLikeImage}).
 */
export function referencesIn(value: string): string[] {
  const v = value.trim();
  const m = FLAG_PREFIX.exec(v);
  const rest = m ? v.slice(m[0].length) : v;
  return rest.split(',').filter(looksLikeImage);
}

/**
 * How a manifest is installed, as Helm sorts it (releaseutil.SortManifests): a release resource
 * (`install`), a hook run around install/upgrade/delete/rollback (`hook`), a pod `helm test` runs
 * (`test`, `test-success`), or none (`skip`: an unknown hook event, which Helm leaves out). Events
 * are read lower-cased and trimmed, comma-separated.
 */
type Phase = 'install' | 'hook' | 'test' | 'skip';
const HOOK_EVENTS = new Set([
  'pre-install',
  'post-install',
  'pre-delete',
  'post-delete',
  'pre-upgrade',
  'post-upgrade',
  'pre-rollback',
  'post-rollback',
]);
const TEST_EVENTS = new Set(['test', 'test-success']);

function phaseOf(obj: GoMap): Phase[] {
  const meta = isMap(obj['metadata']) ? obj['metadata'] : {};
  const annotations = isMap(meta['annotations']) ? meta['annotations'] : {};
  const hook = annotations['helm.sh/hook'];
  if (hook === undefined) return ['install'];
  const phases = new Set<Phase>();
  for (const event of String(hook).split(',')) {
    const e = event.trim().toLowerCase();
    if (TEST_EVENTS.has(e)) phases.add('test');
    else if (HOOK_EVENTS.has(e)) phases.add('hook');
    else return ['skip'];
  }
  return [...phases];
}

/**
 * The documents of a rendered template. HELM_MANIFEST_INVALID says where one is not YAML:
 * `<chart>/templates/x.yaml:<line>`, the line of the template's output (as `helm template` prints it),
 * and, as Helm does, the line in that document.
 */
function manifestDocuments(m: RenderedManifest): unknown[] {
  try {
    return loadYamlDocuments(m.text, { source: m.template, exitCode: 2 });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    // The message is Helm's (the line counted in the document, with the lines around it); where
    // names the line of the whole output.
    const line = e instanceof YAMLException ? outputLine(m.text, e) : undefined;
    const where = line ? `${m.template}:${line}` : m.template;
    throw new AirgapError(
      MirrorError.HELM_MANIFEST_INVALID,
      `YAML parse error on ${m.template}: ${(e as Error).message}`,
      {
        where,
        exitCode: 2,
        hint: `${line ? `line ${line} is of the template's output: ` : ''}see the output with helm template, then fix the template or its values`,
        cause: e,
      },
    );
  }
}

/** The line of the whole output a YAML error of one of its documents is at (the document's own line when it cannot be placed). */
function outputLine(text: string, e: YAMLException): number {
  const mark = e.mark as { buffer?: string; line?: number } | undefined;
  const inDoc = (mark?.line ?? 0) + 1;
  const doc = mark?.buffer?.replace(/\0$/, '').replace(/\n$/, '');
  const at = doc ? text.indexOf(doc) : -1;
  return at < 0 ? inDoc : text.slice(0, at).split('\n').length - 1 + inDoc;
}

/** The order sources are listed in. */
export const SOURCE_ORDER: readonly ImageSource[] = ['image', 'args', 'env', 'imagePaths', 'hook', 'test'];

/** An image as it is being collected. */
interface Found {
  image: ChartImage;
  sources: Set<ImageSource>;
  phases: Set<Phase>;
}

/** The images of rendered manifests, each once, in the order first found. */
export function imagesOf(manifests: readonly RenderedManifest[], options: ImagesOptions = {}): ChartImage[] {
  const custom = (options.imagePaths ?? []).map((p) => ({ text: p, steps: parseImagePath(p) }));
  const found = new Map<string, Found>();
  let phases: Phase[] = ['install'];
  const add = (image: unknown, where: string, source: ImageField) => {
    if (typeof image !== 'string' || image.trim() === '') return;
    const name = image.trim();
    let f = found.get(name);
    if (!f) {
      f = { image: { image: name, where, places: [], sources: [] }, sources: new Set(), phases: new Set() };
      found.set(name, f);
    }
    if (!f.image.places.includes(where)) f.image.places.push(where);
    f.sources.add(source);
    for (const p of phases) f.phases.add(p);
  };
  /** Each reference in a list of strings (args, command), or in a string (an env value). */
  const addReferences = (values: unknown, at: string, source: ImageField) => {
    const list = Array.isArray(values) ? values : [values];
    list.forEach((v, i) => {
      if (typeof v !== 'string') return;
      const where = Array.isArray(values) ? `${at}[${i}]` : at;
      for (const ref of referencesIn(v)) add(ref, where, source);
    });
  };

  const visitContainer = (c: GoMap, at: (path: string) => string, cpath: string) => {
    add(c['image'], at(`${cpath}.image`), 'image');
    addReferences(c['command'], at(`${cpath}.command`), 'args');
    addReferences(c['args'], at(`${cpath}.args`), 'args');
    if (Array.isArray(c['env']))
      c['env'].forEach((e, j) => {
        if (isMap(e)) addReferences(e['value'], at(`${cpath}.env[${j}].value`), 'env');
      });
  };

  const visit = (template: string, obj: GoMap, prefix: string) => {
    if (obj['kind'] === 'List' && Array.isArray(obj['items'])) {
      obj['items'].forEach((item, i) => {
        if (isMap(item)) visit(template, item, `${prefix}.items[${i}]`);
      });
      return;
    }
    const meta = isMap(obj['metadata']) ? obj['metadata'] : {};
    const label = `${template}: ${String(obj['kind'] ?? '?')}/${String(meta['name'] ?? '?')}`;
    const at = (path: string) => `${label} ${prefix}${path}`;
    for (const specPath of POD_SPECS) {
      for (const { value: spec, path } of valuesAt(obj, parseImagePath(specPath))) {
        if (!isMap(spec)) continue;
        for (const list of CONTAINER_LISTS) {
          const containers = spec[list];
          if (!Array.isArray(containers)) continue;
          containers.forEach((c, i) => {
            if (isMap(c)) visitContainer(c, at, `${path}.${list}[${i}]`);
          });
        }
      }
    }
    for (const c of custom)
      for (const { value, path } of valuesAt(obj, c.steps)) {
        if (Array.isArray(value)) value.forEach((v, i) => add(v, at(`${path}[${i}]`), 'imagePaths'));
        else add(value, at(path), 'imagePaths');
      }
  };

  for (const m of manifests) {
    const docs = manifestDocuments(m);
    for (const d of docs) {
      if (!isMap(d)) continue;
      phases = phaseOf(d);
      if (!phases.includes('skip')) visit(m.template, d, '');
    }
  }
  return [...found.values()].map(({ image, sources, phases: p }) => {
    if (p.has('hook')) sources.add('hook');
    if (p.has('test')) sources.add('test');
    const onlyIn = p.has('install') ? [] : (['hook', 'test'] as const).filter((x) => p.has(x));
    return {
      ...image,
      sources: SOURCE_ORDER.filter((s) => sources.has(s)),
      ...(onlyIn.length > 0 ? { onlyIn } : {}),
    };
  });
}
