/**
 * Fault injection on the hub API server, for tests of how clients cope: fail the next requests that
 * match a method and path with a given status (answered with the Status body the real server sends
 * for it: a Conflict names the resource, 429 has Retry-After), and drop open watch streams at once
 * or periodically.
 */
import type { FastifyReply } from 'fastify';
import { conflict, resourceName } from '../store.js';
import type { ApiContext } from './context.js';
import { route } from './discovery.js';
import { send, sendError, STATUS_REASON, statusBody } from './status.js';

export interface FaultRule {
  method?: string;
  /** Matched against the request path (no query string). */
  path?: RegExp;
  status: 500 | 409 | 429 | 503 | number;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface FaultInjector {
  /** Fail the next matching requests with `status` (a Status body like the real server's). */
  failNext(rule: FaultRule): void;
  /** Abruptly end every open watch stream (the connection is destroyed mid-stream). */
  dropWatches(): void;
  /** Drop every open watch stream every `ms` milliseconds; undefined stops it. */
  dropWatchesEvery(ms: number | undefined): void;
  /** Forget every pending fault and stop periodic drops. */
  clear(): void;
}

/** The faults of one server: the injector tests see, and what the request handler asks. */
export interface Faults {
  injector: FaultInjector;
  /** The status of the fault a request meets (using one of its `times`), or undefined. */
  take(method: string, path: string): number | undefined;
  /** Stop periodic drops (the server is closing). */
  stop(): void;
}

export function createFaults(ctx: ApiContext): Faults {
  let rules: (FaultRule & { left: number })[] = [];
  let dropTimer: NodeJS.Timeout | undefined;
  const stopDrops = () => {
    if (dropTimer) clearInterval(dropTimer);
    dropTimer = undefined;
  };
  const dropWatches = () => {
    for (const w of [...ctx.watches]) {
      w.cleanup();
      w.res.socket?.destroy();
      w.res.destroy();
    }
  };
  return {
    injector: {
      failNext(rule) {
        rules.push({ ...rule, left: rule.times ?? 1 });
      },
      dropWatches,
      dropWatchesEvery(ms) {
        stopDrops();
        if (ms !== undefined) dropTimer = setInterval(dropWatches, ms);
      },
      clear() {
        rules = [];
        stopDrops();
      },
    },
    take(method, path) {
      const rule = rules.find(
        (f) => (!f.method || f.method.toUpperCase() === method) && (!f.path || f.path.test(path)),
      );
      if (!rule) return undefined;
      rule.left -= 1;
      if (rule.left <= 0) rules = rules.filter((f) => f !== rule);
      return rule.status;
    },
    stop: stopDrops,
  };
}

/** Answer a request with the injected fault `status` (`segs`: its path, to name a conflict's resource). */
export function sendFault(ctx: ApiContext, reply: FastifyReply, status: number, segs: string[]) {
  const reason = STATUS_REASON[status] ?? 'InternalError';
  if (status === 409) {
    let message =
      'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again';
    try {
      const t = route(ctx, segs).target;
      if (t?.name) return sendError(reply, conflict(t.type, t.name));
      if (t)
        message = `Operation cannot be fulfilled on ${resourceName(t.type)}: the object has been modified; please apply your changes to the latest version and try again`;
    } catch {
      // not a resource path: the generic message
    }
    return send(reply, 409, statusBody(409, 'Conflict', message));
  }
  if (status === 429) reply.header('Retry-After', '1');
  const message =
    status === 500
      ? 'Internal error occurred: injected fault'
      : status === 503
        ? 'the server is currently unable to handle the request'
        : status === 429
          ? 'Too many requests, please try again later.'
          : `injected fault (${status})`;
  return send(
    reply,
    status,
    statusBody(status, reason, message, status === 500 ? { causes: [{ message: 'injected fault' }] } : {}),
  );
}
