import type { ErrorRequestHandler, RequestHandler } from 'express';
import { z } from 'zod';
import type { Logger } from '../../logger';

export type ErrorCode =
  | 'bad_request'
  | 'malformed_json'
  | 'unauthorized'
  | 'forbidden'
  | 'self_approval'
  | 'people_only'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'plan_changed'
  | 'managed_by_source'
  | 'frozen'
  | 'overlap'
  | 'expired'
  | 'not_awaiting_approval'
  | 'already_approved'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export interface ErrorDetail {
  path: string;
  message: string;
}

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  malformed_json: 400,
  unauthorized: 401,
  forbidden: 403,
  self_approval: 403,
  people_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  plan_changed: 409,
  managed_by_source: 409,
  frozen: 409,
  overlap: 409,
  expired: 409,
  not_awaiting_approval: 409,
  already_approved: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

export const statusOf = (code: ErrorCode) => STATUS[code];

export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('One entry per invalid field (422), or per server refused (403)'),
      given_plan_hash: z.string().optional().describe('plan_changed: the plan_hash the trigger gave (the plan reviewed)'),
      current_plan_hash: z.string().optional().describe('plan_changed: the plan_hash of the plan as it is now'),
      freezes: z
        .array(z.object({ id: z.string(), name: z.string(), ends_at: z.iso.datetime().describe('When its current window ends (as things stand)') }))
        .optional()
        .describe('frozen: the change freezes that cover the servers now'),
      servers: z.array(z.object({ id: z.string(), title: z.string() })).optional().describe('frozen: the servers they cover'),
      run_ids: z.array(z.string()).optional().describe('overlap: the runs of the schedule still going'),
    }),
  })
  .meta({ id: 'Error', description: 'The one envelope of every failure; nothing was changed by the request.' });

/** An operational error that becomes one JSON envelope: {"error":{"code","message","details"?}}. */
export class ApiError extends Error {
  readonly status: number;
  /** Sent as Retry-After: when a refused request may succeed. */
  retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Fields of the error beside its message (plan_changed: both hashes; frozen: the freezes and the servers). */
    readonly extra?: {
      given_plan_hash?: string;
      current_plan_hash?: string;
      freezes?: Array<{ id: string; name: string; ends_at: string }>;
      servers?: Array<{ id: string; title: string }>;
      run_ids?: string[];
    },
  ) {
    super(message);
    this.status = STATUS[code];
  }

  toBody(): z.infer<typeof errorBodySchema> {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}), ...this.extra } };
  }
}

export const notFound = (what: string) => new ApiError('not_found', `${what} not found`);

/** 429 with Retry-After: a limit was reached for now. */
export const tooMany = (message: string, retryAfterSeconds: number) => Object.assign(new ApiError('rate_limited', message), { retryAfterSeconds });

/** A Temporal call that fails becomes 503: the request changed nothing it could not undo. */
export async function unlessTemporalUnreachable<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw Object.assign(new ApiError('service_unavailable', `Could not ${what}: Temporal is unreachable; try again`), { cause: error });
  }
}

export const routeNotFound: RequestHandler = (req, _res, next) => {
  next(new ApiError('not_found', `No route for ${req.method} ${req.path}`));
};

/** Body-parser errors carry a `type`; map those to the envelope, hide everything else behind a 500. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    // The client went away while its body was being read: nothing to answer, nothing failed here
    // (the request log says "request aborted").
    if ((err as { type?: string } | null)?.type === 'request.aborted') return;
    const apiError = toApiError(err);
    if (apiError.status >= 500) {
      // Within the request's log context: the line carries its req_id.
      log.error({ err, method: req.method, url: req.originalUrl }, 'request failed');
    }
    if (res.headersSent) return;
    if (apiError.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(apiError.retryAfterSeconds));
    res.status(apiError.status).json(apiError.toBody());
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const type = (err as { type?: string } | null)?.type;
  // The router could not percent-decode a path parameter (`/servers/%zz`).
  if (err instanceof URIError) return new ApiError('bad_request', 'The path is not valid percent-encoding (a "%" must be followed by two hexadecimal digits of UTF-8)');
  if (type === 'entity.parse.failed') return parseFailure((err as { body?: unknown }).body);
  if (type === 'entity.too.large') return new ApiError('payload_too_large', 'The request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ApiError('unsupported_media_type', 'Unsupported body encoding; send UTF-8 JSON');
  }
  return new ApiError('internal_error', 'Internal server error');
}

/**
 * A body the JSON parser refused: malformed, or valid JSON that is not an object (the parser takes
 * objects and arrays only; `null`, `"hi"` or `42` are JSON, just not a request).
 */
function parseFailure(body: unknown): ApiError {
  let parsed: unknown;
  try {
    parsed = typeof body === 'string' ? JSON.parse(body) : undefined;
  } catch {
    return new ApiError('malformed_json', 'The request body is not valid JSON');
  }
  if (parsed === undefined) return new ApiError('malformed_json', 'The request body is not valid JSON');
  const kind = parsed === null ? 'null' : typeof parsed === 'string' ? 'a string' : typeof parsed === 'number' ? 'a number' : 'a boolean';
  return new ApiError('validation_failed', `The request body is valid JSON but ${kind}; send a JSON object`, [{ path: '', message: `expected a JSON object, received ${kind}` }]);
}
