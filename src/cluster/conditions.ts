/**
 * Reading status conditions the way `kubectl wait --for=condition` does: the first condition of a
 * type (compared case-insensitively), its status compared case-insensitively, and — for objects with
 * `metadata.generation` and a condition or status `observedGeneration` — not met until the
 * controller has seen the current generation. conditionsv1 objects (Agent, InfraEnv,
 * AgentServiceConfig) carry no observedGeneration, so the guard does not apply to them.
 */
import type { KubeObject } from './kube.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export function conditionsOf(obj: KubeObject | undefined): Condition[] {
  const list = obj?.status?.conditions;
  return Array.isArray(list) ? (list as Condition[]) : [];
}

export function findCondition(obj: KubeObject | undefined, type: string): Condition | undefined {
  const t = type.toLowerCase();
  return conditionsOf(obj).find((c) => c.type?.toLowerCase() === t);
}

/** True when the controller has observed the object's current generation (or cannot say). */
function generationObserved(obj: KubeObject, c?: Condition): boolean {
  const generation = obj.metadata.generation;
  if (generation === undefined) return true;
  const observed = c?.observedGeneration ?? (obj.status?.observedGeneration as number | undefined);
  return observed === undefined || observed >= generation;
}

/** `kubectl wait --for=condition=<type>=<status>` on one object. */
export function conditionIs(obj: KubeObject | undefined, type: string, status = 'True'): boolean {
  if (!obj) return false;
  const c = findCondition(obj, type);
  if (!c || c.status?.toLowerCase() !== status.toLowerCase()) return false;
  return generationObserved(obj, c);
}

/** `Available=False (WaitingForAvailable: Waiting for hosted control plane to be healthy)`. */
export function describeCondition(c: Condition | undefined, type = c?.type ?? '?'): string {
  if (!c) return `${type}: not reported yet`;
  const why = [c.reason, c.message].filter(Boolean).join(': ');
  return `${c.type}=${c.status}${why ? ` (${why})` : ''}`;
}

/** A field of a nested object by dotted path (`status.provisioning.state`); undefined when absent. */
export function field(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
