/**
 * How the hub API server answers: JSON bodies, and failures as `Status` objects with the reason,
 * code, message and details kube-apiserver would send (a HubApiError keeps its own; anything else
 * thrown is mapped from its HTTP status, 500 by default).
 */
import type { FastifyReply } from 'fastify';
import { HubApiError } from '../types.js';

/** The `reason` of a Status for each HTTP code the server sends. */
export const STATUS_REASON: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A failure `Status` object. */
export function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: unknown,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  };
}

/** Send `body` as JSON with HTTP `code`. */
export const send = (reply: FastifyReply, code: number, body: unknown) =>
  reply.code(code).type('application/json').send(JSON.stringify(body));

/** Send what was thrown as a Status. */
export function sendError(reply: FastifyReply, e: unknown) {
  if (e instanceof HubApiError) {
    const details = e.details
      ? Object.fromEntries(Object.entries(e.details).filter(([, v]) => v !== undefined))
      : undefined;
    return send(reply, e.code, statusBody(e.code, e.reason, e.message, details));
  }
  const err = e as { statusCode?: number; message?: string };
  const code = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500;
  const reason = code === 413 ? 'RequestEntityTooLarge' : (STATUS_REASON[code] ?? 'InternalError');
  return send(
    reply,
    code,
    statusBody(code, reason, code === 500 ? `Internal error occurred: ${err.message}` : String(err.message)),
  );
}

export function pathNotFound(): HubApiError {
  return new HubApiError(404, 'NotFound', 'the server could not find the requested resource');
}

export function methodNotAllowed(method: string): HubApiError {
  return new HubApiError(
    405,
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource (${method})`,
  );
}
