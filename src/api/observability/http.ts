import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { ApiError } from '../http/errors';
import { boundToRequestId, logContext, type Logger } from '../../logger';
import type { Metrics } from './metrics';
import { runChecks, type ReadinessCheck } from './readiness';

/** The route label of requests no route matched (404s, and requests refused before routing: 401, 429, 413…). */
export const UNMATCHED_ROUTE = '(unmatched)';
const READINESS_TIMEOUT_MS = 2000;

declare module 'http' {
  interface IncomingMessage {
    /** The request's id: its X-Request-Id, or a new UUID. */
    id: string;
  }
}

/** A caller's X-Request-Id kept as the request's id: 1–128 characters of `A-Z a-z 0-9 . _ -`. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is acceptable, else a new UUID),
 * returned as X-Request-Id; runs the rest of the request in a log context carrying it, so every line
 * logged meanwhile has `req_id`; and logs one line when it is done (method, URL, status, time):
 * "request completed", "request errored" (5xx, at error level), or "request aborted" when the client
 * went away first.
 */
export function requestLogging(log: Logger): RequestHandler {
  // Its lines are written after the request's context has ended: they carry the id themselves.
  const requestLog = log.child({});
  boundToRequestId(requestLog);
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    const line = () => ({
      req_id: id,
      req: { id, method: req.method, url: req.originalUrl, remoteAddress: req.socket.remoteAddress, userAgent: req.headers['user-agent'] },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(performance.now() - started),
    });
    res.once('close', () => {
      if (!res.writableFinished) {
        if (requestLog.isLevelEnabled('warn')) requestLog.warn(line(), 'request aborted');
        return;
      }
      if (res.statusCode >= 500) requestLog.error(line(), 'request errored');
      else if (requestLog.isLevelEnabled('info')) requestLog.info(line(), 'request completed');
    });
    logContext.run({ req_id: id }, next);
  };
}

/**
 * Times every request into the HTTP histogram, labelled with the route's pattern
 * (`/api/v1/servers/:id`). The pattern is taken when the router matches the route: by the time the
 * response is sent by the app's error handler, Express has already restored `req.baseUrl`.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    let route: unknown;
    let pattern: string | undefined;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => route,
      set: (value: { path?: unknown } | undefined) => {
        route = value;
        if (typeof value?.path === 'string') pattern = `${req.baseUrl}${value.path}`.replace(/(.)\/$/, '$1');
      },
    });
    res.once('finish', () => stop({ method: req.method, route: pattern ?? UNMATCHED_ROUTE, status: String(res.statusCode) }));
    next();
  };
}

/** With METRICS_TOKEN set, /metrics wants `Authorization: Bearer <METRICS_TOKEN>`; compared in constant time. */
function requireMetricsToken(token: string | undefined): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const expected = createHash('sha256').update(token).digest();
  return (req, _res, next) => {
    // The scheme is case-insensitive, as on the API (RFC 9110 §11.1).
    const given = /^Bearer +(.+)$/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
      throw new ApiError('unauthorized', 'Send the metrics token (METRICS_TOKEN) as "Authorization: Bearer <token>"');
    }
    next();
  };
}

export interface ObservabilityDeps {
  metrics: Metrics;
  readiness: Record<string, ReadinessCheck>;
  /** Unset: /metrics is open (keep it on a private network). */
  metricsToken?: string;
  log: Logger;
}

/** `/healthz` (the process is up), `/readyz` (its dependencies answer) and `/metrics`, outside the API's authentication. */
export function observabilityRoutes({ metrics, readiness, metricsToken, log }: ObservabilityDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const { ready, checks, errors } = await runChecks(readiness, READINESS_TIMEOUT_MS);
    if (!ready) log.warn({ checks, errors }, 'not ready');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  router.get('/metrics', requireMetricsToken(metricsToken), async (_req, res) => {
    res.type(metrics.contentType).send(await metrics.exposition());
  });
  return router;
}
