import express, { type RequestHandler } from 'express';
import rateLimit, { ipKeyGenerator } from 'express-rate-limit';
import helmet from 'helmet';
import { authenticate, principalOf } from './http/auth';
import { ApiError, errorHandler, routeNotFound } from './http/errors';
import type { Logger } from './logger';
import { httpMetrics, observabilityRoutes, requestLogging, type ObservabilityDeps } from './observability/http';
import { serverRoutes } from './servers/routes';
import type { ServerService } from './servers/service';
import { deploymentRoutes } from './deployments/routes';
import type { DeploymentService } from './deployments/service';
import { secretRoutes } from './secrets/routes';
import { conversationRoutes } from './conversations/routes';
import type { ConversationService } from './conversations/service';
import { migrationPlanRoutes } from './migration-plans/routes';
import type { MigrationPlanService } from './migration-plans/service';
import { policyRoutes } from './organizations/routes';
import { referenceRoutes } from './openapi/routes';
import type { SecretBox } from './secrets/secret-box';

export interface AppDeps {
  log: Logger;
  http: { bodyLimitBytes: number; rateLimitPerMinute: number };
  servers: ServerService;
  deployments: DeploymentService;
  conversations: ConversationService;
  migrationPlans: MigrationPlanService;
  secretBox: SecretBox;
  /** Metrics, readiness checks and the optional METRICS_TOKEN of /metrics. */
  observability: Omit<ObservabilityDeps, 'log'>;
}


/** Requests that carry a body must say it is JSON; bodiless POSTs (such as /verify) need no header. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('application/json')) {
    throw new ApiError('unsupported_media_type', 'Send the request body as JSON with "Content-Type: application/json"');
  }
  next();
};

export function createApp({ log, http, servers, deployments, conversations, migrationPlans, secretBox, observability }: AppDeps) {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');

  app.use(httpMetrics(observability.metrics));
  app.use(requestLogging(log));
  app.use(helmet());

  app.use(observabilityRoutes({ ...observability, log }));
  // The OpenAPI document and /docs, before the API's authentication.
  app.use(referenceRoutes());

  const limiter = (keyGenerator: (req: express.Request) => string, extra: Partial<Parameters<typeof rateLimit>[0]> = {}) =>
    rateLimit({
      windowMs: 60_000,
      limit: http.rateLimitPerMinute,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      keyGenerator,
      handler: (_req, _res, next, options) => {
        next(new ApiError('rate_limited', `Too many requests: at most ${options.limit} a minute; retry after the Retry-After delay`));
      },
      ...extra,
    });

  const api = express.Router();
  // Failed authentications count per address, so guessing tokens (each a fresh "token") is bounded too.
  api.use(limiter((req) => ipKeyGenerator(req.ip ?? ''), { requestWasSuccessful: (_req, res) => res.statusCode !== 401, skipSuccessfulRequests: true }));
  api.use(authenticate);
  api.use(limiter((req) => principalOf(req).tokenId));
  // Bodies are parsed only for authenticated callers.
  api.use(requireJsonBody);
  api.use(express.json({ limit: http.bodyLimitBytes, strict: true }));
  api.use('/servers', serverRoutes(servers));
  api.use('/deployments', deploymentRoutes(deployments));
  api.use('/secrets', secretRoutes(secretBox));
  api.use('/conversations', conversationRoutes(conversations));
  api.use('/migration-plans', migrationPlanRoutes(migrationPlans));
  api.use('/policy', policyRoutes());

  app.use('/api/v1', api);
  app.use(routeNotFound);
  app.use(errorHandler(log));
  return app;
}
