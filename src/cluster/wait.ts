/**
 * Condition waits modelled on `kubectl wait`: list, evaluate, then watch from the list's
 * resourceVersion and evaluate on every event. A dropped watch, a 410 or an ERROR event leads to a
 * re-list and a new watch; a periodic re-list is a safety net for anything a watch missed. Every
 * wait has a deadline, and a timeout says which objects were being waited for and what they said
 * last (the check's `state`), so a stall explains itself.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AirgapError, hasCode } from '../util/errors.js';
import type { Kube, KubeObject, ListQuery } from './kube.js';
import { ClusterError } from './errors.js';

/** What to watch: one object (name) or a filtered list. */
export interface WaitTarget extends ListQuery {
  apiVersion: string;
  kind: string;
  name?: string;
}

/** The verdict of one evaluation. */
export interface WaitCheck<T> {
  done: boolean;
  value?: T;
  /** One line on where things stand, shown as progress and in a timeout. */
  state: string;
  /** A terminal failure: stop waiting and throw this. */
  failed?: AirgapError;
}

export interface WaitOptions {
  /** What is being waited for, in words: "HostedCluster clusters/example to be Available". */
  what: string;
  timeoutMs: number;
  /** Called whenever `state` changes. */
  onState?: (state: string) => void;
  /** Re-list at least this often even when the watch is quiet (default 10 s). */
  resyncMs?: number;
  /** A hint for the timeout error. */
  hint?: string;
}

function keyOf(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function transient(e: unknown): boolean {
  return hasCode(e, ClusterError.KUBE_API, ClusterError.KUBE_UNREACHABLE, ClusterError.KUBE_CONFLICT);
}

/**
 * Wait until `check(objects)` says done, and return its value. `objects` are the current objects
 * of the target (zero or one for a named target), sorted by namespace/name.
 */
export async function waitFor<T>(
  kube: Kube,
  target: WaitTarget,
  check: (objects: KubeObject[]) => WaitCheck<T>,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  const resyncMs = opts.resyncMs ?? 10_000;
  const query: ListQuery = {
    ...(target.namespace ? { namespace: target.namespace } : {}),
    ...(target.labelSelector ? { labelSelector: target.labelSelector } : {}),
    ...(target.name
      ? { fieldSelector: `metadata.name=${target.name}` }
      : target.fieldSelector
        ? { fieldSelector: target.fieldSelector }
        : {}),
  };
  let lastState = 'nothing observed yet';
  let failures = 0;
  const cache = new Map<string, KubeObject>();

  const evaluate = (): WaitCheck<T> => {
    const objects = [...cache.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    const r = check(objects);
    if (r.state !== lastState) {
      lastState = r.state;
      opts.onState?.(r.state);
    }
    if (r.failed) throw r.failed;
    return r;
  };
  const timeout = () =>
    new AirgapError(
      ClusterError.WAIT_TIMEOUT,
      `timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${opts.what}; last seen: ${lastState}`,
      {
        hint: opts.hint ?? 'run the same command again to continue waiting (it resumes), or raise --timeout',
        details: { state: lastState },
      },
    );

  for (;;) {
    if (Date.now() >= deadline) throw timeout();
    let listed: { items: KubeObject[]; resourceVersion: string };
    try {
      listed = await kube.list(target.apiVersion, target.kind, query);
      failures = 0;
    } catch (e) {
      if (!transient(e)) throw e;
      failures++;
      await sleep(Math.min(200 * 2 ** failures, 2_000, Math.max(0, deadline - Date.now())));
      continue;
    }
    cache.clear();
    for (const o of listed.items) cache.set(keyOf(o), o);
    const first = evaluate();
    if (first.done) return first.value as T;

    let result: WaitCheck<T> | undefined;
    let thrown: unknown;
    let stopWatch: (() => void) | undefined;
    let roundOver = false;
    const outcome = await new Promise<'relist' | 'done' | 'timeout' | 'error'>((resolve) => {
      const deadlineTimer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
      const resyncTimer = setTimeout(() => resolve('relist'), resyncMs);
      const finish = (o: 'relist' | 'done' | 'timeout' | 'error') => {
        clearTimeout(deadlineTimer);
        clearTimeout(resyncTimer);
        resolve(o);
      };
      kube
        .watch(
          target.apiVersion,
          target.kind,
          {
            ...query,
            resourceVersion: listed.resourceVersion,
            timeoutSeconds: Math.ceil(resyncMs / 1000) + 5,
          },
          (ev) => {
            if (roundOver) return;
            if (ev.type === 'ERROR') return finish('relist');
            if (ev.type === 'BOOKMARK') return;
            if (ev.type === 'DELETED') cache.delete(keyOf(ev.object));
            else cache.set(keyOf(ev.object), ev.object);
            try {
              const r = evaluate();
              if (r.done) {
                result = r;
                finish('done');
              }
            } catch (e) {
              thrown = e;
              finish('error');
            }
          },
        )
        .then(
          (w) => {
            // A round that ended before the watch started still owns the stream: stop it.
            if (roundOver) w.stop();
            else stopWatch = () => w.stop();
            void w.done.then(() => finish('relist'));
          },
          (e) => {
            if (transient(e)) return finish('relist');
            thrown = e;
            finish('error');
          },
        );
    });
    roundOver = true;
    stopWatch?.();
    if (outcome === 'done') return (result as WaitCheck<T>).value as T;
    if (outcome === 'error') throw thrown;
    if (outcome === 'timeout') throw timeout();
    await sleep(100);
  }
}
