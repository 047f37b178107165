/*
 * The audit trail's name for each write route, derived from its method and path so that a route
 * added tomorrow is named (and recorded) without a line here: `POST /api/v1/servers` → server.create,
 * `PATCH /api/v1/servers/:id` → server.update, `POST /api/v1/deployments/:id/runs/:runId/cancel` →
 * run.cancel. The few whose derived name (or target) would mislead are named below.
 */

const NAMED: Record<string, string> = {
  'POST /api/v1/deployments/:id/run': 'run.trigger',
  'POST /api/v1/deployments/:id/plan': 'deployment.plan',
  'POST /api/v1/conversations/:id/messages': 'conversation.message',
  'POST /api/v1/conversations/:id/steps/:stepId/approve': 'conversation.step.approve',
  'POST /api/v1/conversations/:id/steps/:stepId/reject': 'conversation.step.reject',
  'POST /api/v1/pipelines/:id/run': 'pipeline.trigger',
};

/** Routes whose derived target would mislead too: a pipeline run is no deployment run, a stage's gate is its pipeline run's, a config source is no `source`. */
const NAMED_WITH_TARGET: Record<string, RouteAction> = {
  'POST /api/v1/pipelines/:id/runs/:runId/cancel': { action: 'pipeline.run.cancel', kind: 'pipeline_run', idParam: 'runId' },
  'POST /api/v1/pipelines/:id/runs/:runId/retry': { action: 'pipeline.run.retry', kind: 'pipeline_run', idParam: 'runId' },
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/approve': { action: 'pipeline.stage.approve', kind: 'pipeline_run', idParam: 'runId' },
  'POST /api/v1/pipelines/:id/runs/:runId/stages/:stage/reject': { action: 'pipeline.stage.reject', kind: 'pipeline_run', idParam: 'runId' },
  'POST /api/v1/config/sources': { action: 'config_source.create', kind: 'config_source', idParam: null },
  'PATCH /api/v1/config/sources/:id': { action: 'config_source.update', kind: 'config_source', idParam: 'id' },
  'DELETE /api/v1/config/sources/:id': { action: 'config_source.delete', kind: 'config_source', idParam: 'id' },
  'POST /api/v1/config/sources/:id/sync': { action: 'config_source.sync', kind: 'config_source', idParam: 'id' },
};

const SINGULAR: Record<string, string> = { people: 'person', policy: 'policy', audit: 'audit' };
const singular = (noun: string) => SINGULAR[noun] ?? noun.replace(/s$/, '');
const isParam = (segment: string) => segment.startsWith(':');
const ON_ONE: Record<string, string> = { PATCH: 'update', PUT: 'set', DELETE: 'delete', POST: 'update' };
const ON_COLLECTION: Record<string, string> = { POST: 'create', PUT: 'set', PATCH: 'update', DELETE: 'delete' };

export interface RouteAction {
  action: string;
  /** What the route acts on, by kind; its id is the path parameter named by `idParam` (or the created thing's). */
  kind: string;
  idParam: string | null;
}

/** The action of a write route given as "POST /api/v1/servers/:id/verify". */
export function routeAction(route: string): RouteAction {
  const namedWithTarget = NAMED_WITH_TARGET[route];
  if (namedWithTarget) return namedWithTarget;
  const [method = '', path = ''] = route.split(' ');
  const segments = path.replace(/^\/api\/v1\/?/, '').split('/').filter(Boolean);
  const last = segments.at(-1) ?? '';
  const lastParam = [...segments].reverse().find(isParam) ?? null;
  const idParam = lastParam ? lastParam.slice(1) : null;
  const named = NAMED[route];
  let kind: string;
  let verb: string;
  if (isParam(last)) {
    kind = singular(segments.at(-2) ?? '');
    verb = ON_ONE[method] ?? method.toLowerCase();
  } else if (segments.length === 1 || (isParam(segments.at(-2) ?? '') && last.endsWith('s'))) {
    // A collection: POST creates one (its id comes from the answer).
    kind = singular(last);
    verb = ON_COLLECTION[method] ?? method.toLowerCase();
    return { action: named ?? `${kind}.${verb}`, kind, idParam: null };
  } else {
    // A verb on a thing (…/:runId/cancel) or on a collection (/audit/verify).
    const noun = [...segments.slice(0, -1)].reverse().find((segment) => !isParam(segment)) ?? last;
    kind = singular(noun);
    verb = last;
  }
  return { action: named ?? `${kind}.${verb}`, kind, idParam };
}
