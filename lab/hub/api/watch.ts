/**
 * Watch on the hub API server (`?watch=1` or a `/watch/` path): newline-delimited JSON events of
 * the objects the namespace, name, label and field selectors match; from a resourceVersion it
 * replays the store's event log (too old: one ERROR event with a 410 Status, then the end), from
 * none or `0` (or with `sendInitialEvents`) it starts with ADDED for every object. The stream ends
 * after `timeoutSeconds` (or the server's maximum) and sends bookmarks when allowed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseFieldSelector, parseLabelSelector } from '../selectors.js';
import type { KubeObject, StoreEvent } from '../types.js';
import type { ApiContext, OpenWatch, Target } from './context.js';
import { statusBody } from './status.js';

/** Whether the query asks a collection GET to watch. */
export const isWatchQuery = (q: URLSearchParams) => q.get('watch') === 'true' || q.get('watch') === '1';

/** Whether an object is in what the watch selects. */
function watchMatcher(t: Target, q: URLSearchParams): (o: KubeObject) => boolean {
  const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(q.get('fieldSelector') ?? undefined, t.type.source === 'builtin');
  return (o) =>
    (!t.namespace || o.metadata.namespace === t.namespace) &&
    (!t.name || o.metadata.name === t.name) &&
    labels(o) &&
    fields(o);
}

/** The events a watch writes: buffered until the stream opens, then written straight out. */
class EventWriter {
  private pending: string[] = [];
  private res: FastifyReply['raw'] | undefined;

  write(type: string, object: unknown): void {
    const line = `${JSON.stringify({ type, object })}\n`;
    if (!this.res) this.pending.push(line);
    else if (!this.res.writableEnded && !this.res.destroyed) this.res.write(line);
  }

  /** What was buffered, as one body (for a watch that ends before it streams). */
  buffered(): string {
    return this.pending.join('');
  }

  /** Write what was buffered to `res`, and every later event. */
  open(res: FastifyReply['raw']): void {
    this.res = res;
    for (const line of this.pending.splice(0)) res.write(line);
  }
}

/** Stream the watch of `t` (see the file comment). */
export function watch(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  t: Target,
  q: URLSearchParams,
) {
  const { store } = ctx;
  const type = t.type;
  const matches = watchMatcher(t, q);
  const rv = q.get('resourceVersion') ?? '';
  const sendInitial = q.get('sendInitialEvents') === 'true';
  const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
  const timeout = Number(q.get('timeoutSeconds') ?? ctx.maxWatchSeconds);
  const out = new EventWriter();
  const bookmark = (annotations?: Record<string, string>) =>
    out.write('BOOKMARK', {
      kind: type.kind,
      apiVersion: type.apiVersion,
      metadata: { resourceVersion: store.resourceVersion(), ...(annotations ? { annotations } : {}) },
    });
  const forward = (e: StoreEvent) => {
    if (e.resource.group !== type.group || e.resource.kind !== type.kind) return;
    const obj = { ...e.object, apiVersion: type.apiVersion };
    const now = matches(obj);
    const before = e.old ? matches(e.old) : false;
    if (e.type === 'MODIFIED') {
      if (now && before) out.write('MODIFIED', obj);
      else if (now) out.write('ADDED', obj);
      else if (before) out.write('DELETED', obj);
    } else if (now) out.write(e.type, obj);
  };

  if (sendInitial || rv === '' || rv === '0') {
    for (const o of store.list(type.apiVersion, type.kind, { namespace: t.namespace }))
      if (matches(o)) out.write('ADDED', o);
    if (sendInitial) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    const events = store.eventsSince
      ? store.eventsSince(rv)
      : rv === store.resourceVersion()
        ? []
        : undefined;
    if (events === undefined) {
      out.write(
        'ERROR',
        statusBody(410, 'Expired', `too old resource version: ${rv} (${store.resourceVersion()})`),
      );
      return reply.code(200).type('application/json').send(out.buffered());
    }
    for (const e of events) forward(e);
  }
  openStream(ctx, req, reply, out, () => {
    const unsubscribe = store.watch(forward);
    const timers: NodeJS.Timeout[] = [setTimeout(() => reply.raw.end(), Math.max(0, timeout) * 1000)];
    if (bookmarks) timers.push(setInterval(() => bookmark(), ctx.bookmarkMs));
    return () => {
      unsubscribe();
      for (const x of timers) clearTimeout(x);
    };
  });
}

/**
 * Take the response over from fastify and send the headers now (a watch with nothing to say yet
 * must still answer), then the buffered events; `start` subscribes and returns how to stop. The
 * stream is registered in `ctx.watches` until it closes (so faults can drop it).
 */
function openStream(
  ctx: ApiContext,
  req: FastifyRequest,
  reply: FastifyReply,
  out: EventWriter,
  start: () => () => void,
): void {
  const res = reply.raw;
  reply.hijack();
  const rec = ctx.records.get(req);
  if (rec) rec.status = 200;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  out.open(res);
  const stop = start();
  const handle: OpenWatch = {
    res,
    cleanup() {
      stop();
      ctx.watches.delete(handle);
    },
  };
  ctx.watches.add(handle);
  res.on('close', () => handle.cleanup());
  res.on('finish', () => handle.cleanup());
}
