import type { Server } from 'node:http';
import express from 'express';
import { errorHandler, routeNotFound } from '../http/errors';
import { refuseOtherMethods } from '../http/methods';
import { observabilityRoutes, type ObservabilityDeps } from './http';

/**
 * A worker process has no API: this small HTTP server gives it `/metrics`, `/healthz` and `/readyz`
 * (WORKER_METRICS_PORT).
 */
export function listenForScrapes(deps: ObservabilityDeps, host: string, port: number): Promise<Server> {
  const app = express();
  app.disable('x-powered-by');
  app.use(refuseOtherMethods(observabilityRoutes(deps)));
  app.use(routeNotFound);
  app.use(errorHandler(deps.log));
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}
