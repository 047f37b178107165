import express, { type RequestHandler } from 'express';
import rateLimit, { ipKeyGenerator } from 'express-rate-limit';
import helmet from 'helmet';
import { version } from '../../package.json';
import { authenticate, principalOf } from './http/auth';
import { ApiError, errorHandler, routeNotFound } from './http/errors';
import { refuseOtherMethods } from './http/methods';
import type { Logger } from '../logger';
import { httpMetrics, observabilityRoutes, requestLogging, type ObservabilityDeps } from './observability/http';
import { serverRoutes } from './servers/routes';
import type { ServerService } from './servers/service';
import { deploymentRoutes } from './deployments/routes';
import { pipelineRoutes } from './pipelines/routes';
import { configRoutes } from './config/routes';
import { configSourceRoutes } from './config/source-routes';
import type { ConfigSourceService } from './config/source-service';
import { CONFIG_BODY_LIMIT_BYTES } from './config/kinds';
import type { KindAdapter } from '../domain/config/types';
import { pipelineDefinitions } from './pipelines/definitions';
import { pipelineRunRoutes } from './pipelines/run-routes';
import type { PipelineRunService } from './pipelines/run-service';
import { organizationScheduleRoutes, scheduleRoutes } from './schedules/routes';
import type { ScheduleServices } from './schedules/service';
import type { DeploymentService } from './deployments/service';
import { secretRoutes } from './secrets/routes';
import { tokenRoutes } from './tokens/routes';
import { runFeedRoutes } from './deployments/feed-routes';
import { meRoutes } from './people/me-routes';
import { identityRoutes } from './people/identity-routes';
import { teamRoutes } from './people/team-routes';
import { roleBindingRoutes } from './people/binding-routes';
import { conversationRoutes } from './conversations/routes';
import type { ConversationService } from './conversations/service';
import { freezeRoutes } from './freezes/routes';
import type { FreezeService } from './freezes/service';
import { migrationPlanRoutes } from './migration-plans/routes';
import type { MigrationPlanService } from './migration-plans/service';
import { policyRoutes } from './organizations/routes';
import { notificationChannelRoutes, notificationSettingsRoutes } from './notifications/routes';
import type { NotificationService } from './notifications/service';
import { auditRoutes } from './audit/routes';
import { mcpRoutes } from './mcp/routes';
import { recordWrites } from './audit/recorder';
import { referenceRoutes } from './openapi/routes';
import { bosunOperations, openApiDocument } from './bosun-api';
import { sessionRoutes } from './session/routes';
import type { SignInSettings } from './session/oidc-routes';
import { consolePage, consoleRoutes } from './console/routes';
import type { ConsoleBundle } from '../console/bundle';
import type { SessionLifetime } from '../domain/sessions/store';
import type { SecretBox } from '../domain/secrets/secret-box';

export interface AppDeps {
  log: Logger;
  http: { bodyLimitBytes: number; rateLimitPerMinute: number };
  servers: ServerService;
  deployments: DeploymentService;
  schedules: ScheduleServices;
  conversations: ConversationService;
  freezes: FreezeService;
  migrationPlans: MigrationPlanService;
  notifications: NotificationService;
  pipelineRuns: PipelineRunService;
  configSources: ConfigSourceService;
  /** Every kind's adapter of definitions kept in Git (/config). */
  configKinds: readonly KindAdapter[];
  secretBox: SecretBox;
  /** How long a console sign-in lasts. */
  sessions: SessionLifetime;
  /** Signing in to the console through an OpenID Connect provider, when one is configured. */
  signIn?: SignInSettings;
  /** The web console's built front end, served at / and its pages. */
  console: ConsoleBundle;
  /** How long a write's audit entry waits for its outcome before it is chained as `unknown` (AUDIT_PENDING_SECONDS). */
  auditPendingSeconds?: number;
  /** Metrics, readiness checks and the optional METRICS_TOKEN of /metrics. */
  observability: Omit<ObservabilityDeps, 'log'>;
}


/** The methods whose body the API reads; a GET's or a DELETE's is ignored, as none of them takes one. */
const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** A write that carries a body must say it is JSON; bodiless POSTs (such as /verify) need no header. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && WRITES.has(req.method) && !req.is('application/json')) {
    throw new ApiError('unsupported_media_type', 'Send the request body as JSON with "Content-Type: application/json"');
  }
  next();
};

/** Where a person (or a client) who opens Bosun's address goes next. */
const HOME_LINKS = {
  console: '/',
  api: '/api/v1',
  docs: '/docs',
  openapi: '/api/v1/openapi.json',
  health: '/healthz',
  ready: '/readyz',
  metrics: '/metrics',
} as const;

/** `/`: the console for a browser; the API's links for a JSON client (with no Accept header, JSON). */
const home =
  (page: RequestHandler): RequestHandler =>
  (req, res, next) => {
    const json = () => res.json({ name: 'Bosun', description: 'Runs work on your servers over SSH: the web console is at / in a browser, the API reference at /docs.', links: HOME_LINKS });
    res.format({ json, html: () => page(req, res, next), default: json });
  };

export function createApp({ log, http, servers, deployments, schedules, conversations, freezes, migrationPlans, notifications, pipelineRuns, configKinds, configSources, secretBox, sessions, signIn = {}, console: bundle, observability, auditPendingSeconds = 300 }: AppDeps) {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');

  app.use(httpMetrics(observability.metrics));
  app.use(requestLogging(log));
  app.use(helmet());

  // Every known path answers another method with 405 and Allow, outside the API as inside it.
  app.use(refuseOtherMethods(observabilityRoutes({ ...observability, log })));
  // The OpenAPI document and /docs, before the API's authentication.
  app.use(refuseOtherMethods(referenceRoutes(openApiDocument)));
  app.use(refuseOtherMethods(express.Router().get('/', home(consolePage(bundle)))));
  app.use(refuseOtherMethods(consoleRoutes(bundle)));

  const limiter = (keyGenerator: (req: express.Request) => string, extra: Partial<Parameters<typeof rateLimit>[0]> = {}) =>
    rateLimit({
      windowMs: 60_000,
      limit: http.rateLimitPerMinute,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      keyGenerator,
      handler: (req, _res, next, options) => {
        const refused = new ApiError('rate_limited', `Too many requests: at most ${options.limit} a minute; retry after the Retry-After delay`);
        const resetTime = (req as express.Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
        if (resetTime) refused.retryAfterSeconds = Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
        next(refused);
      },
      ...extra,
    });

  // One counter each for the API and the MCP endpoint together: an agent's calls count as any client's.
  // Failed authentications count per address, so guessing tokens (each a fresh "token") is bounded too.
  // It sends no RateLimit headers: a response carries one set, the caller's token's (below).
  const perAddress = limiter((req) => ipKeyGenerator(req.ip ?? ''), { standardHeaders: false, requestWasSuccessful: (_req, res) => res.statusCode !== 401, skipSuccessfulRequests: true });
  // Per token; a person signed in without one (OpenID Connect) counts per person.
  const perCaller = limiter((req) => principalOf(req).tokenId ?? `person:${principalOf(req).identity.id}`);
  const readJson = express.json({ limit: http.bodyLimitBytes, strict: true });
  // Definition files travel whole in one body: their own limits (5 MiB a file) are the files layer's.
  const readConfigJson = express.json({ limit: CONFIG_BODY_LIMIT_BYTES, strict: true });

  const api = express.Router();
  api.use(perAddress);
  // Sign-in takes a token in its body (or goes through the OpenID provider); signing out and reading the session authenticate by cookie.
  api.use('/session', refuseOtherMethods(sessionRoutes(sessions, signIn, log)));
  api.use(authenticate(sessions));
  api.use(perCaller);
  // Every write route's entry in the audit trail, written before the route runs; its outcome after.
  api.use(recordWrites(log, auditPendingSeconds, bosunOperations));
  // Bodies are parsed only for authenticated callers.
  api.use(requireJsonBody);
  api.use((req, res, next) => (WRITES.has(req.method) ? (req.path.startsWith('/config/') ? readConfigJson : readJson)(req, res, next) : next()));
  // Each resource's known paths answer another method with 405 and Allow.
  api.use('/servers', refuseOtherMethods(serverRoutes(servers)));
  api.use('/deployments/:id/schedules', refuseOtherMethods(scheduleRoutes(schedules.deployments)));
  api.use('/pipelines/:id/schedules', refuseOtherMethods(scheduleRoutes(schedules.pipelines)));
  api.use('/schedules', refuseOtherMethods(organizationScheduleRoutes(schedules)));
  api.use('/deployments', refuseOtherMethods(deploymentRoutes(deployments)));
  api.use('/pipelines', refuseOtherMethods(pipelineRoutes(pipelineDefinitions(schedules.removed))));
  api.use('/pipelines', refuseOtherMethods(pipelineRunRoutes(pipelineRuns)));
  api.use('/secrets', refuseOtherMethods(secretRoutes(secretBox)));
  api.use('/tokens', refuseOtherMethods(tokenRoutes()));
  api.use('/me', refuseOtherMethods(meRoutes(deployments)));
  api.use('/runs', refuseOtherMethods(runFeedRoutes(deployments)));
  api.use('/people', refuseOtherMethods(identityRoutes('person')));
  api.use('/service-accounts', refuseOtherMethods(identityRoutes('service_account')));
  api.use('/teams', refuseOtherMethods(teamRoutes()));
  api.use('/role-bindings', refuseOtherMethods(roleBindingRoutes()));
  api.use('/conversations', refuseOtherMethods(conversationRoutes(conversations)));
  api.use('/freezes', refuseOtherMethods(freezeRoutes(freezes)));
  api.use('/migration-plans', refuseOtherMethods(migrationPlanRoutes(migrationPlans)));
  api.use('/policy', refuseOtherMethods(policyRoutes()));
  api.use('/notification-channels', refuseOtherMethods(notificationChannelRoutes(notifications)));
  api.use('/notification-settings', refuseOtherMethods(notificationSettingsRoutes(notifications)));
  api.use('/audit', refuseOtherMethods(auditRoutes(bosunOperations)));
  api.use('/config/sources', refuseOtherMethods(configSourceRoutes(configSources)));
  api.use('/config', refuseOtherMethods(configRoutes(configKinds, log)));

  app.use('/api/v1', api);

  // The door for AI agents (Model Context Protocol): the same authentication, limits and metrics as the API.
  const door = express.Router();
  door.use(perAddress, authenticate(sessions), perCaller, requireJsonBody, readJson);
  door.use(refuseOtherMethods(mcpRoutes({ log, secretBox, auditPendingSeconds, publicUrl: signIn.publicUrl, version })));
  app.use('/mcp', door);
  app.use(routeNotFound);
  app.use(errorHandler(log));
  return app;
}
