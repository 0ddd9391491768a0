/**
 * The hub simulator's controllers: in-process stand-ins for the operators of an OpenShift management
 * cluster (MCE, HyperShift with the CAPI agent provider, metal3, assisted-service with BMAC), watching
 * and writing the simulator's store, time-compressed so a whole hosted cluster install takes seconds.
 *
 * Every controller reconciles everything on each pass; a pass runs on a ticker (one simulated step)
 * and shortly after store changes, so nothing is missed and reconciles settle (a write happens only
 * when it changes something). Timed behaviour counts steps since an object entered a phase.
 */
import type { HubStore, StoreEvent } from '../types.js';
import { AgentController, BmacController, InfraEnvController } from './assisted.js';
import type { ControllerOptions, Ctx, GuestEntry, Reconciler, ResolvedOptions } from './context.js';
import { HostedClusterController } from './hypershift.js';
import { MceController } from './mce.js';
import { BareMetalHostController } from './metal3.js';
import { NodePoolController } from './nodepool.js';
import { Dwell, nowIso } from './util.js';

export type { ControllerOptions } from './context.js';
export { startGuestApi } from './guest.js';
export { seedHub } from './seed.js';
export { parseBmcAddress } from './metal3.js';

export interface Controllers {
  /** Stop the ticker and watch, wait for in-flight work, close every guest API. */
  stop(): Promise<void>;
  /** The guest API of each HostedCluster (`<namespace>/<name>`) that has one. */
  guests(): Map<string, { url: string; store: HubStore }>;
  /** Reconcile errors so far (`where: message`), newest last, at most 100. */
  errors(): string[];
  /** Run one reconcile pass now (tests and callers that just wrote something). */
  reconcileNow(): void;
}

export function startControllers(store: HubStore, options: ControllerOptions): Controllers {
  const resolved: ResolvedOptions = {
    stepMs: options.stepMs ?? 40,
    hypershift: options.hypershift ?? 'current',
    bmacAutoApprove: options.bmacAutoApprove ?? true,
    faults: options.faults ?? {},
    hubVersion: options.hubVersion ?? '4.17.3',
    releaseVersions: options.releaseVersions ?? {},
  };
  const errors: string[] = [];
  const inflight = new Set<Promise<unknown>>();
  const guests = new Map<string, GuestEntry>();
  let stopped = false;
  let pending: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let lastRun = 0;

  const ctx: Ctx = {
    store,
    options: resolved,
    startGuest: () => options.guest.startApi(),
    dwell: new Dwell(resolved.stepMs),
    now: nowIso,
    guests,
    track(work) {
      const p = work.finally(() => inflight.delete(p));
      inflight.add(p);
    },
    error(where, err) {
      const message = err instanceof Error ? err.message : String(err);
      errors.push(`${where}: ${message}`);
      if (errors.length > 100) errors.splice(0, errors.length - 100);
      options.onError?.(where, err);
    },
    stopped: () => stopped,
    kick: () => schedule(),
  };

  const mce = new MceController(ctx);
  const reconcilers: Reconciler[] = [
    mce,
    new HostedClusterController(ctx),
    new BareMetalHostController(ctx),
    new InfraEnvController(ctx),
    new BmacController(ctx),
    new AgentController(ctx),
    new NodePoolController(ctx),
  ];

  function pass(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    lastRun = Date.now();
    try {
      for (const r of reconcilers) {
        try {
          r.reconcile();
        } catch (err) {
          ctx.error(r.name, err);
        }
      }
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      schedule();
    }
  }

  /** A pass soon, but at most about four per step when writes keep coming. */
  function schedule(): void {
    if (stopped || pending) return;
    const gap = Math.max(0, lastRun + resolved.stepMs / 4 - Date.now());
    pending = setTimeout(() => {
      pending = undefined;
      pass();
    }, gap);
  }

  const unwatch = store.watch((ev: StoreEvent) => {
    if (stopped) return;
    mce.onEvent(ev);
    schedule();
  });
  const ticker = setInterval(pass, resolved.stepMs);
  schedule();

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(ticker);
      if (pending) clearTimeout(pending);
      pending = undefined;
      unwatch();
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      const closing = [...guests.values()].filter((g) => g.api).map((g) => g.api!.close());
      guests.clear();
      await Promise.allSettled(closing);
    },
    guests() {
      const out = new Map<string, { url: string; store: HubStore }>();
      for (const g of guests.values()) if (g.api) out.set(g.hc, { url: g.api.url, store: g.api.store });
      return out;
    },
    errors: () => [...errors],
    reconcileNow: pass,
  };
}
