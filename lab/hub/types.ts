/**
 * The hub simulator's contracts: the object store every part shares (the HTTPS API server in
 * server.ts serves it; the simulated controllers in controllers/ read and write it in process), the
 * resource types it knows, and the API errors it raises (rendered by the server as Kubernetes
 * `Status` objects with the same code and reason a real API server would send).
 */

/** Kubernetes object metadata, as far as the simulator uses it. Unknown fields are kept. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any object the store holds. `status` and `spec` are free-form. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A resource type the API serves: built in (Namespace, Secret, ...) or loaded from a real CRD. */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  /** `v1` or `group/version`. */
  apiVersion: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  /** True when the type has a status subresource: writes to the main resource ignore `status`. */
  hasStatus: boolean;
  /** `additionalPrinterColumns` of the CRD, or a built-in type's columns (for Table output), if any. */
  printerColumns?: {
    name: string;
    type: string;
    /** Where the cell's value is; for a column with `cell`, only what it is computed from. */
    jsonPath: string;
    description?: string;
    priority?: number;
    /** Computes the cell, for the built-in columns kube-apiserver computes in Go (a Node's STATUS). */
    cell?(obj: KubeObject): unknown;
  }[];
  /** Validates a whole object; returns field errors (`spec.platform.type: Unsupported value ...`). Built-ins: none. */
  validate?(obj: KubeObject): FieldError[];
  /**
   * What the API server does to every write before validating it, in place: drops the fields the
   * schema does not declare (pruning; their paths are returned, for warnings or strict field
   * validation), drops nulls of non-nullable fields, applies schema defaults; a Secret folds
   * `stringData` into `data` (and throws a 400 HubApiError on `data` that is not base64).
   */
  normalize?(obj: KubeObject): { unknownFields: string[] };
  /** Subresources beside `status` the type declares (`scale`); listed in discovery, not served. */
  subresources?: string[];
  /** Where the type came from: a CRD file, or `builtin`. */
  source?: string;
}

export interface FieldError {
  /** Field path as the API server prints it: `spec.services[0].servicePublishingStrategy.type`. */
  field: string;
  message: string;
  /** The API server's cause reason: FieldValueNotSupported, FieldValueRequired, FieldValueInvalid, ... */
  reason?: string;
}

/** A watch event, as the store emits it to in-process listeners and the server streams it. */
export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  /** The object before a MODIFIED or DELETED. */
  old?: KubeObject;
  /** The resource type of `object`. */
  resource: ResourceType;
}

/** Where an object lives: its type and, for namespaced types, its namespace. */
export interface ObjectKey {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface ListOptions {
  namespace?: string;
  /** `a=b,c!=d,e in (x,y),!f,g` */
  labelSelector?: string;
  /** `metadata.name=x`, `metadata.namespace=y` */
  fieldSelector?: string;
}

/** An API failure. The server renders it as a `Status` with this HTTP code and reason. */
export class HubApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason:
      | 'NotFound'
      | 'AlreadyExists'
      | 'Conflict'
      | 'Invalid'
      | 'BadRequest'
      | 'MethodNotAllowed'
      | 'Gone'
      | 'UnsupportedMediaType'
      | 'InternalError'
      | 'Unauthorized'
      | 'Forbidden',
    message: string,
    readonly details?: {
      name?: string;
      group?: string;
      kind?: string;
      causes?: { field: string; message: string; reason?: string }[];
    },
  ) {
    super(message);
    this.name = 'HubApiError';
  }
}

/**
 * The in-memory object store. Semantics follow the API server:
 * - `create` sets uid, resourceVersion (one global counter, as a decimal string), generation 1,
 *   creationTimestamp; refuses an existing name (409 AlreadyExists), an unknown type (404), a missing
 *   namespace for namespaced types (404 NotFound namespace), and schema failures (422 Invalid).
 * - `update` (PUT) refuses a stale `metadata.resourceVersion` (409 Conflict) when one is given; for
 *   types with a status subresource it keeps the stored status; generation goes up by one when
 *   anything but metadata and status changed.
 * - `updateStatus` changes only `status` (and resourceVersion), never generation.
 * - `delete` with finalizers sets `deletionTimestamp` (MODIFIED) and the object goes when the last
 *   finalizer is removed (DELETED); a Namespace delete removes everything in it, then itself.
 * - Every change emits one StoreEvent to `watch` listeners, in order, after it is stored.
 * Objects returned are copies: changing them does not change the store.
 */
export interface HubStore {
  /** The types served, built-in and from CRDs. */
  types(): ResourceType[];
  /** The type for an apiVersion + kind, or undefined. */
  typeFor(apiVersion: string, kind: string): ResourceType | undefined;
  get(key: ObjectKey): KubeObject | undefined;
  list(apiVersion: string, kind: string, options?: ListOptions): KubeObject[];
  create(obj: KubeObject): KubeObject;
  update(obj: KubeObject): KubeObject;
  updateStatus(obj: KubeObject): KubeObject;
  /** JSON merge patch (RFC 7386) of the main resource or, with `subresource: 'status'`, of status only. */
  mergePatch(key: ObjectKey, patch: Record<string, unknown>, subresource?: 'status'): KubeObject;
  delete(key: ObjectKey): KubeObject | undefined;
  /** The resourceVersion of the last change. */
  resourceVersion(): string;
  /** Listen to every change; returns an unsubscribe function. */
  watch(listener: (event: StoreEvent) => void): () => void;
  /**
   * The events after `resourceVersion`, in order, from the store's bounded event log; undefined when
   * the log no longer reaches back that far (a watch from there must get 410 Gone).
   */
  eventsSince?(resourceVersion: string): StoreEvent[] | undefined;
  /** Runs `fn` against the store, then undoes every change it made and emits no event (dryRun=All). */
  dryRun?<T>(fn: () => T): T;
}
