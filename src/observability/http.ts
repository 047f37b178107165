import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { ApiError } from '../http/errors';
import { boundToRequestId, logContext, type Logger } from '../logger';
import type { Metrics } from './metrics';
import { runChecks, type ReadinessCheck } from './readiness';

/** The route label of requests no route matched (404s, and requests refused before routing: 401, 429, 413…). */
export const UNMATCHED_ROUTE = '(unmatched)';
const READINESS_TIMEOUT_MS = 2000;

/** Everything logged while a request is handled carries its id (set by pino-http just before, with `req.log`). */
export const requestLogContext: RequestHandler = (req, _res, next) => {
  boundToRequestId(req.log);
  logContext.run({ req_id: String(req.id) }, next);
};

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
    const given = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1] ?? '';
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
