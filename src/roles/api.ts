import { createPipelineRunService } from '../api/pipelines/run-service';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rightsListener } from '../api/access/freshness';
import { configAdapters } from '../api/config/kinds';
import { createApp } from '../api/app';
import { configSourceService } from '../api/config/source-service';
import { activeConversationsAbout, createConversationService } from '../api/conversations/service';
import { createFreezeService } from '../api/freezes/service';
import { createMigrationPlanService } from '../api/migration-plans/service';
import { createNotificationService } from '../api/notifications/service';
import { enableChangeStreamImages } from '../api/realtime/relay';
import { attachRealtime } from '../api/realtime/server';
import { createScheduleServices } from '../api/schedules/service';
import { createServerService } from '../api/servers/service';
import { consoleBundle } from '../console/bundle';
import { adoptTokensWithoutIdentity } from '../domain/tokens/service';
import { IdentityModel } from '../domain/access/model';
import { watchTogether } from '../domain/change-streams';
import { freePort } from '../embedded/ports';
import type { RoleContext } from './context';

/*
 * The API's part of a Bosun (roles all and api): every resource's service behind the Express app,
 * the console, Socket.IO, listening on HTTP.
 */

/** The API listening; a port in use (or not allowed) is refused with a message saying which, never a server that does not listen. */
function listen(app: ReturnType<typeof createApp>, host: string, port: number): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    // Express 5 hands a listen error to this callback rather than throwing it.
    const server = app.listen(port, host, (error?: Error) => {
      if (!error) return resolve(server);
      const why = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use (another Bosun? set PORT)' : error.message;
      reject(Object.assign(new Error(`Cannot listen on ${host}:${port}: ${why}`), { cause: error }));
    });
  });
}

/** The app of every resource's service, on this configuration. */
async function buildApp({ config, log, secretBox, workflows, deployments, countTick, observability }: RoleContext, sessions: { idleSeconds: number; maxSeconds: number }) {
  return createApp({
    log,
    http: config.http,
    servers: createServerService({ secretBox, workflows }),
    deployments,
    schedules: createScheduleServices({ schedules: workflows.schedules, findDeployment: deployments.findDeployment, secretBox, log, countTick, minIntervalSeconds: config.schedules.minIntervalSeconds }),
    conversations: createConversationService({ workflows }),
    freezes: createFreezeService({ workflows: workflows.runs, log }),
    migrationPlans: createMigrationPlanService({ activeConversations: activeConversationsAbout }),
    notifications: createNotificationService({ secretBox }),
    pipelineRuns: createPipelineRunService({ workflows, secretBox, deployments, log }),
    configKinds: configAdapters({ schedules: workflows.schedules, runs: workflows.runs, secretBox, minIntervalSeconds: config.schedules.minIntervalSeconds, log }),
    configSources: configSourceService({ secretBox, workflows }),
    secretBox,
    sessions,
    signIn: { oidc: config.console.oidc, publicUrl: config.console.publicUrl },
    console: await consoleBundle(config.cacheDir, log),
    observability,
    auditPendingSeconds: config.audit.pendingSeconds,
  });
}

/** The API serving: its address, app and banner lines on what compose() answers, its stop among the clean-ups. */
export async function startApiRole(ctx: RoleContext): Promise<void> {
  const { config, log, options, metrics, deployments, composed, cleanups } = ctx;
  // Before any request: an older version's tokens become service accounts' (nothing gains or loses access).
  const adopted = await adoptTokensWithoutIdentity();
  if (adopted) log.info({ tokens: adopted }, 'tokens of an older version now belong to service accounts of their names');
  const sessions = { idleSeconds: config.console.sessionIdleSeconds, maxSeconds: config.console.sessionMaxSeconds };
  const app = await buildApp(ctx, sessions);
  const port = config.http.portExplicit ? config.http.port : await freePort(config.http.port, config.http.host);
  await enableChangeStreamImages();
  const httpServer = await listen(app, config.http.host, port);
  // Closing Socket.IO closes the HTTP server too.
  const realtime = attachRealtime(httpServer, log, metrics, sessions, deployments, { subscriptionsPerConnection: options.subscriptionsPerConnection });
  cleanups.push(() => realtime.close());
  // One change stream for all the API hears (every open stream costs MongoDB on every write): runs'
  // and conversations' changes relayed to sockets, identities' grants kept between requests while
  // every change to them is heard (nothing is kept before it opens), sessions ended elsewhere.
  const changes = watchTogether(IdentityModel.db.db!, [rightsListener(), ...realtime.listeners], log, 'API');
  cleanups.push(() => changes.close());
  const base = `http://${config.http.host}:${(httpServer.address() as AddressInfo).port}`;
  Object.assign(composed, { app, httpServer, url: base });
  composed.lines.unshift(`  console     ${base}/`, `  API         ${base}/api/v1`, `  API docs    ${base}/docs`, `  metrics     ${base}/metrics`);
}
