/**
 * The container images of rendered manifests, found as oc-mirror v2 finds them, and more:
 *
 * - every `image` of containers, initContainers and ephemeralContainers of any pod spec: a Pod's
 *   `.spec`, a workload's `.spec.template.spec` (Deployment, StatefulSet, DaemonSet, ReplicaSet,
 *   Job, and custom resources shaped the same), a CronJob's `.spec.jobTemplate.spec.template.spec`,
 *   a PodTemplate's `.template.spec` (oc-mirror reads only the first two, for containers and
 *   initContainers);
 * - container `env` values that are image references with a registry host and a tag or digest
 *   (operators take their operand images this way; oc-mirror misses them);
 * - the ImageSetConfiguration's `imagePaths` (JSONPath: `{.spec.custom[*].image}`, `{.a.b[0].c}`).
 *
 * Each image is listed once, with every place it was found.
 */
import { isYamlLimitError } from '../../config/yaml-load.js';
import { AirgapError, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import { parseReference } from '../reference.js';
import type { RenderedManifest } from './render.js';
import { isMap, type GoMap } from './template/values.js';
import { loadYamlDocuments } from './yaml.js';

export interface ChartImage {
  image: string;
  /** The first place it was found: `<template>: Deployment/podinfo .spec.template.spec.containers[0].image`. */
  where: string;
  /** Every place it was found, the first included. */
  places: string[];
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

/** Whether an env value reads as a full image reference: a registry host, and a tag or digest. */
function looksLikeImage(value: string): boolean {
  const v = value.trim();
  if (v !== value || v === '' || /\s|:\/\//.test(v)) return false;
  const slash = v.indexOf('/');
  if (slash <= 0) return false;
  const host = v.slice(0, slash);
  if (!(host.includes('.') || host.includes(':') || host === 'localhost')) return false;
  try {
    const ref = parseReference(v);
    return ref.registry === host && (ref.tag !== undefined || ref.digest !== undefined);
  } catch {
    // parseReference refuses it: the value does not read as an image.
    return false;
  }
}

/** The images of rendered manifests, each once, in the order first found. */
export function imagesOf(manifests: readonly RenderedManifest[], options: ImagesOptions = {}): ChartImage[] {
  const custom = (options.imagePaths ?? []).map((p) => ({ text: p, steps: parseImagePath(p) }));
  const found = new Map<string, ChartImage>();
  const add = (image: unknown, where: string) => {
    if (typeof image !== 'string' || image.trim() === '') return;
    const name = image.trim();
    const seen = found.get(name);
    if (seen) {
      if (!seen.places.includes(where)) seen.places.push(where);
    } else found.set(name, { image: name, where, places: [where] });
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
            if (!isMap(c)) return;
            const cpath = `${path}.${list}[${i}]`;
            add(c['image'], at(`${cpath}.image`));
            if (Array.isArray(c['env']))
              c['env'].forEach((e, j) => {
                if (isMap(e) && typeof e['value'] === 'string' && looksLikeImage(e['value']))
                  add(e['value'], at(`${cpath}.env[${j}].value`));
              });
          });
        }
      }
    }
    for (const c of custom)
      for (const { value, path } of valuesAt(obj, c.steps)) {
        if (Array.isArray(value)) value.forEach((v, i) => add(v, at(`${path}[${i}]`)));
        else add(value, at(path));
      }
  };

  for (const m of manifests) {
    let docs: unknown[];
    try {
      docs = loadYamlDocuments(m.text, { source: m.template, exitCode: 2 });
    } catch (e) {
      if (isYamlLimitError(e)) throw e;
      throw new AirgapError(
        MirrorError.HELM_MANIFEST_INVALID,
        `YAML parse error on ${m.template}: ${(e as Error).message}`,
        {
          where: m.template,
          exitCode: 2,
          cause: e,
        },
      );
    }
    for (const d of docs) if (isMap(d)) visit(m.template, d, '');
  }
  return [...found.values()];
}
