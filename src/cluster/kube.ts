/**
 * The one Kubernetes API client of airgap, on @kubernetes/client-node 2.x (which stays in this file).
 * Every call names the object it is about in its errors, retries what a busy API server answers
 * (429, 5xx, dropped connections, optimistic-lock 409s on patches), and never logs bodies (Secrets).
 *
 * - `apply` is server-side apply with one field manager (`airgap`) and `force`, like `hcp`'s apply;
 *   `status` and server-owned metadata are stripped first.
 * - Patches set their Content-Type explicitly (client-node would default a custom object patch to a
 *   JSON patch and the server would answer 415 to a merge body).
 * - `watch` streams list changes from a resourceVersion; waits (wait.ts) re-list and re-watch on
 *   every drop, so nothing here has to survive one.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  KubeConfig,
  KubernetesObjectApi,
  Observable,
  PatchStrategy,
  Watch,
  type Configuration,
  type KubernetesObject,
  type ObservableMiddleware,
  type RequestContext,
  type V1APIResource,
} from '@kubernetes/client-node';
import { hasRetryableNetworkCode, isRetryableStatus } from '../net/retry.js';
import { AirgapError, messageOf, usageError } from '../util/errors.js';

/** The field manager of every server-side apply airgap makes. */
const FIELD_MANAGER = 'airgap';

export { describeRef, refOf, type KubeObject, type ObjectRef } from './objects.js';
import { describeRef, refOf, type KubeObject, type ObjectRef } from './objects.js';
import { ClusterError } from './errors.js';

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

export interface KubeConnectOptions {
  /** A kubeconfig file; else KUBECONFIG, else ~/.kube/config. */
  kubeconfig?: string;
  /** A kubeconfig's text (the hosted cluster's admin kubeconfig). */
  kubeconfigText?: string;
  context?: string;
  /** Attempts for a call that fails in a way worth retrying (default 6). */
  attempts?: number;
  /** First backoff in ms (default 200), doubling. */
  baseDelayMs?: number;
}

/** What the API server said: the Status message of an ApiException body (a string or an object). */
function statusOf(e: ApiException<unknown>): { message: string; reason?: string } {
  let body: unknown = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // Not JSON (a proxy's page): its text is the message.
      return { message: (body as string).slice(0, 300) || `HTTP ${e.code}` };
    }
  }
  const s = body as { message?: string; reason?: string } | undefined;
  return { message: s?.message ?? `HTTP ${e.code}`, ...(s?.reason ? { reason: s.reason } : {}) };
}

/**
 * True for failures a later attempt can get past: the statuses and connection codes every HTTP user
 * retries (src/net/retry.ts), and, for patches, the optimistic-lock 409 of the API server.
 */
function retryable(e: unknown, conflictRetries: boolean): boolean {
  if (e instanceof ApiException) return isRetryableStatus(e.code) || (conflictRetries && e.code === 409);
  return hasRetryableNetworkCode(e);
}

/** The system error code of a failed connection (ECONNREFUSED, ENOTFOUND, …), if it is one. */
function netCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown }).code ?? (e as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && /^E[A-Z]+$|^UND_ERR/.test(code) ? code : undefined;
}

function isTlsFailure(e: unknown): boolean {
  const text = `${(e as { code?: string }).code ?? ''} ${messageOf(e)}`;
  return /CERT|certificate|self[- ]signed|UNABLE_TO_VERIFY|ERR_TLS/i.test(text);
}

/**
 * The kubeconfig files to read: --kubeconfig, else the existing files of KUBECONFIG, else
 * ~/.kube/config. None at all is an error here: client-node would fall back to
 * http://localhost:8080 and fail later with a connection error that names nothing.
 */
function kubeconfigFiles(flag: string | undefined): string[] {
  if (flag) return [flag]; // read as given: a missing file is reported by the load
  const fromEnv = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  const home = homedir() ? join(homedir(), '.kube', 'config') : '';
  const candidates = fromEnv.length > 0 ? fromEnv : home ? [home] : [];
  const found = candidates.filter((f) => existsSync(f));
  if (found.length === 0)
    throw usageError(ClusterError.KUBECONFIG_MISSING, 'no kubeconfig: set KUBECONFIG or --kubeconfig', {
      ...(candidates.length ? { where: candidates.join(delimiter) } : {}),
      hint: 'give the management cluster (hub) kubeconfig: --kubeconfig hub.kubeconfig, or log in with oc login (it writes ~/.kube/config)',
    });
  return found;
}

/** A client for one cluster (the hub, or a hosted cluster through its kubeconfig). */
export class Kube {
  readonly server: string;
  private readonly objects: ObjectApi;
  private readonly kc: KubeConfig;
  private readonly attempts: number;
  private readonly baseDelayMs: number;

  private constructor(kc: KubeConfig, opts: KubeConnectOptions) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster)
      throw usageError(ClusterError.KUBECONFIG_NO_CLUSTER, 'the kubeconfig has no current cluster', {
        ...(opts.kubeconfig ? { where: opts.kubeconfig } : {}),
        hint: 'check current-context in the kubeconfig, or pass --context',
      });
    this.server = cluster.server;
    this.objects = ObjectApi.make(kc);
    this.attempts = opts.attempts ?? 6;
    this.baseDelayMs = opts.baseDelayMs ?? 200;
  }

  /** Load a kubeconfig (file, text, or the default chain) and make a client. Exit 2 when unusable. */
  static connect(opts: KubeConnectOptions = {}): Kube {
    const kc = new KubeConfig();
    const files = opts.kubeconfigText === undefined ? kubeconfigFiles(opts.kubeconfig) : [];
    const where = files.join(':') || opts.kubeconfig || 'the kubeconfig';
    try {
      if (opts.kubeconfigText !== undefined) kc.loadFromString(opts.kubeconfigText);
      else if (files.length === 1) kc.loadFromFile(files[0]!);
      // Several (KUBECONFIG=a:b): client-node merges them as kubectl does.
      else kc.loadFromDefault();
    } catch (e) {
      throw usageError(ClusterError.KUBECONFIG_UNREADABLE, `cannot load the kubeconfig: ${messageOf(e)}`, {
        where,
        hint: 'pass --kubeconfig with the management cluster kubeconfig (oc login writes one to ~/.kube/config)',
      });
    }
    if (opts.context) {
      if (!kc.getContextObject(opts.context)) {
        const known = kc.getContexts().map((c) => c.name);
        throw usageError(
          ClusterError.KUBECONFIG_NO_CONTEXT,
          `the kubeconfig has no context named ${opts.context}`,
          {
            where,
            hint: known.length
              ? `its contexts: ${known.join(', ')} (kubectl config get-contexts)`
              : 'it has no contexts at all: log in again (oc login) or pass another --kubeconfig',
          },
        );
      }
      kc.setCurrentContext(opts.context);
    }
    return new Kube(kc, opts);
  }

  /** Run one API call with retries; turn what is left into an AirgapError naming `what`. */
  private async call<T>(
    what: string,
    fn: () => Promise<T>,
    opts: { conflictRetries?: boolean } = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (attempt < this.attempts && retryable(e, opts.conflictRetries ?? false)) {
          await sleep(Math.min(this.baseDelayMs * 2 ** (attempt - 1), 5_000));
          continue;
        }
        throw this.translate(e, what);
      }
    }
  }

  private translate(e: unknown, what: string): AirgapError {
    if (e instanceof AirgapError) return e;
    if (e instanceof ApiException) {
      const { message, reason } = statusOf(e);
      const code =
        e.code === 401 || e.code === 403
          ? ClusterError.KUBE_FORBIDDEN
          : e.code === 404
            ? ClusterError.KUBE_NOT_FOUND
            : e.code === 409
              ? ClusterError.KUBE_CONFLICT
              : e.code === 422
                ? ClusterError.KUBE_INVALID
                : ClusterError.KUBE_API;
      const hint =
        e.code === 401
          ? 'the kubeconfig credentials were refused: log in again (oc login) or pass another --kubeconfig'
          : e.code === 403
            ? 'the kubeconfig user lacks this permission: use a cluster-admin kubeconfig'
            : e.code === 404 && /the server could not find the requested resource/.test(message)
              ? 'this API is not installed on the cluster: run airgap install hub first (MCE with hypershift and assisted-service)'
              : e.code === 422
                ? 'the object was refused by the API server schema; this is a bug in airgap or an unsupported hub version'
                : undefined;
      return new AirgapError(code, `${what}: ${message}`, {
        where: this.server,
        ...(hint ? { hint } : {}),
        details: { status: e.code, ...(reason ? { reason } : {}) },
      });
    }
    if (isTlsFailure(e))
      return new AirgapError(
        ClusterError.KUBE_TLS,
        `${what}: TLS verification of ${this.server} failed: ${messageOf(e)}`,
        {
          where: this.server,
          hint: 'the kubeconfig certificate-authority-data must hold the API server CA',
          cause: e,
        },
      );
    if (netCode(e))
      return new AirgapError(ClusterError.KUBE_UNREACHABLE, `${what}: ${messageOf(e)}`, {
        where: this.server,
        hint: 'check that the API server address in the kubeconfig is reachable from this machine',
        cause: e,
      });
    return new AirgapError(ClusterError.KUBE_REQUEST, `${what}: ${messageOf(e)}`, {
      where: this.server,
      cause: e,
    });
  }

  /** The object, or undefined when it does not exist. */
  async get(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return await this.call(`read ${describeRef(ref)}`, async () =>
        clean(await this.objects.read(header(ref))),
      );
    } catch (e) {
      if (
        e instanceof AirgapError &&
        e.code === ClusterError.KUBE_NOT_FOUND &&
        !/could not find the requested resource/.test(e.message)
      )
        return undefined;
      throw e;
    }
  }

  /** Objects of a type, optionally in one namespace and filtered by selectors. */
  async list(
    apiVersion: string,
    kind: string,
    q: ListQuery = {},
  ): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const what = `list ${kind}${q.namespace ? ` in ${q.namespace}` : ''}`;
    const res = await this.call(what, () =>
      this.objects.list(
        apiVersion,
        kind,
        q.namespace,
        undefined,
        undefined,
        undefined,
        q.fieldSelector,
        q.labelSelector,
      ),
    );
    return {
      items: res.items.map((o) => clean({ ...o, apiVersion, kind })),
      resourceVersion: res.metadata?.resourceVersion ?? '',
    };
  }

  /**
   * Objects of a type, or none when the cluster does not serve the type at all (its API group or
   * kind is not installed: nothing of it can exist). Any other failure (forbidden, unreachable, a
   * 500) is thrown: it is never read as "there are none".
   */
  async listServed(apiVersion: string, kind: string, q: ListQuery = {}): Promise<KubeObject[]> {
    if (!(await this.resource(apiVersion, kind))) return [];
    return (await this.list(apiVersion, kind, q)).items;
  }

  /** Server-side apply of `obj` (status and server-owned metadata stripped), field manager airgap, forced. */
  async apply(obj: KubeObject): Promise<KubeObject> {
    const body = forApply(obj);
    return this.call(
      `apply ${describeRef(refOf(obj))}`,
      async () =>
        clean(
          await this.objects.patch(
            body,
            undefined,
            undefined,
            FIELD_MANAGER,
            true,
            PatchStrategy.ServerSideApply,
          ),
        ),
      { conflictRetries: true },
    );
  }

  /** JSON merge patch (RFC 7386) of an object's main resource. */
  async mergePatch(ref: ObjectRef, patch: Record<string, unknown>): Promise<KubeObject> {
    const { metadata, ...rest } = patch as { metadata?: Record<string, unknown> };
    // The object's name and namespace say which object: the patch's own metadata goes beside them.
    const body = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      ...rest,
      metadata: { ...metadata, ...metaOf(ref) },
    } as KubernetesObject;
    return this.call(
      `patch ${describeRef(ref)}`,
      async () =>
        clean(
          await this.objects.patch(
            body,
            undefined,
            undefined,
            FIELD_MANAGER,
            undefined,
            PatchStrategy.MergePatch,
          ),
        ),
      { conflictRetries: true },
    );
  }

  /** Delete (background propagation). False when it was already gone. */
  async delete(ref: ObjectRef): Promise<boolean> {
    try {
      await this.call(`delete ${describeRef(ref)}`, () =>
        this.objects.delete(header(ref), undefined, undefined, undefined, undefined, 'Background'),
      );
      return true;
    } catch (e) {
      if (e instanceof AirgapError && e.code === ClusterError.KUBE_NOT_FOUND) return false;
      throw e;
    }
  }

  /** The resource of a type as discovery reports it; undefined when the API is not served. */
  async resource(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    try {
      return await this.call(`discover ${kind} (${apiVersion})`, () =>
        this.objects.resourceOf(apiVersion, kind),
      );
    } catch (e) {
      if (e instanceof AirgapError && e.code === ClusterError.KUBE_NOT_FOUND) return undefined;
      throw e;
    }
  }

  /**
   * Watch a list from `resourceVersion`. `onEvent` sees every event; the promise `done` settles when
   * the stream ends for any reason (server timeout, dropped connection, 410): the caller re-lists.
   */
  async watch(
    apiVersion: string,
    kind: string,
    q: ListQuery & { resourceVersion?: string; timeoutSeconds?: number },
    onEvent: (e: WatchEvent) => void,
  ): Promise<{ stop(): void; done: Promise<unknown> }> {
    const res = await this.resource(apiVersion, kind);
    if (!res)
      throw new AirgapError(
        ClusterError.KUBE_NOT_FOUND,
        `${kind} (${apiVersion}) is not served by ${this.server}`,
        {
          hint: 'run airgap install hub first (MCE with hypershift and assisted-service)',
        },
      );
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const path = `${base}${res.namespaced && q.namespace ? `/namespaces/${q.namespace}` : ''}/${res.name}`;
    const query: Record<string, string | number | boolean> = { allowWatchBookmarks: true };
    if (q.resourceVersion) query.resourceVersion = q.resourceVersion;
    if (q.labelSelector) query.labelSelector = q.labelSelector;
    if (q.fieldSelector) query.fieldSelector = q.fieldSelector;
    query.timeoutSeconds = q.timeoutSeconds ?? 300;
    let settle!: (v: unknown) => void;
    const done = new Promise((resolve) => (settle = resolve));
    const controller = await new Watch(this.kc).watch(
      path,
      query,
      (type, obj) =>
        onEvent({
          type: type as WatchEvent['type'],
          object: clean({ apiVersion, kind, ...(obj as object) } as KubeObject),
        }),
      (err) => settle(err),
    );
    return { stop: () => controller.abort(), done };
  }
}

/**
 * One connection pool per client. client-node 2.x gives every API request a new undici Agent (the
 * KubeConfig sets a fresh dispatcher on each request), so every call would pay a TCP and TLS
 * handshake: 50 applies, 50 handshakes. A request middleware (the public hook of client-node's
 * Configuration) keeps the first dispatcher the kubeconfig makes for this client and hands it to
 * every later request, so applies and reads reuse its keep-alive connections (two for a run of
 * calls one after the other). Its TLS material (CA, client certificate, server name) is the
 * kubeconfig's, taken once: a client is made for one cluster and one user. Credentials sent as
 * headers (the bearer token) are still set per request. A watch opens its own connection.
 */
function oneConnectionPool(): ObservableMiddleware {
  let dispatcher: ReturnType<RequestContext['getDispatcher']>;
  return {
    pre(ctx) {
      dispatcher ??= ctx.getDispatcher();
      // None when the kubeconfig has no TLS settings at all: undici's global pool serves the request.
      if (dispatcher) ctx.setDispatcher(dispatcher);
      return new Observable(Promise.resolve(ctx));
    },
    post: (res) => new Observable(Promise.resolve(res)),
  };
}

/**
 * KubernetesObjectApi with its discovery lookup made public (watch paths need the plural) and one
 * connection pool. `resource` and `setDefaultNamespace` are protected members meant for subclasses.
 */
class ObjectApi extends KubernetesObjectApi {
  static make(kc: KubeConfig): ObjectApi {
    const api = kc.makeApiClient(ObjectApi);
    api.setDefaultNamespace(kc);
    return api;
  }
  constructor(configuration: Configuration) {
    super({ ...configuration, middleware: [...configuration.middleware, oneConnectionPool()] });
  }
  resourceOf(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

function metaOf(ref: ObjectRef): { name: string; namespace?: string } {
  return { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
}

function header(ref: ObjectRef): KubernetesObject & { metadata: { name: string } } {
  return { apiVersion: ref.apiVersion, kind: ref.kind, metadata: metaOf(ref) };
}

/** What server-side apply should send: no status, no server-owned metadata. */
function forApply(obj: KubeObject): KubernetesObject {
  const { status: _status, ...rest } = obj;
  const {
    uid: _uid,
    resourceVersion: _rv,
    generation: _gen,
    creationTimestamp: _ct,
    deletionTimestamp: _dt,
    managedFields: _mf,
    ...metadata
  } = obj.metadata;
  return { ...rest, metadata } as KubernetesObject;
}

/**
 * A plain JSON object: client-node deserializes known types into classes with Date fields; the rest
 * of airgap reads plain objects with string timestamps.
 */
function clean(obj: unknown): KubeObject {
  return JSON.parse(JSON.stringify(obj)) as KubeObject;
}
