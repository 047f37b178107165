import type { Application, Request, RequestHandler } from 'express';
import { recordIntent, recordOutcome } from '../../domain/audit/pending-entries';
import type { AuditActor } from '../../domain/audit/model';
import { principalOf } from '../http/auth';
import { registeredRoutes } from '../http/route-inventory';
import type { Logger } from '../../logger';
import type { Operation } from '../openapi/operation';
import { routeAction, type RouteAction } from './actions';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface KnownRoute extends RouteAction {
  route: string;
  method: string;
  pattern: RegExp;
  params: string[];
  /** Fewer parameters first: `/servers/verify` before `/servers/:id`, were there such a pair. */
  specificity: number;
}

/** Writes that only read (a deployment's plan, the trail's verification): the action they need says so. */
const readsOnly = (operations: readonly Operation[]) =>
  new Set(operations.filter((op) => op.scope === 'read' || op.scope === 'audit:read').map((op) => `${op.method.toUpperCase()} ${op.path}`));

/**
 * The routes whose calls the trail records: every POST, PUT, PATCH and DELETE under /api/v1 but those
 * that only read (as the API's `operations` say), and the console's sign-in (which records its own
 * entries: sign-in, refusal, sign-out).
 */
export function recordedRoutes(operations: readonly Operation[]): (route: string) => boolean {
  const reads = readsOnly(operations);
  return (route) => WRITES.has(route.split(' ')[0]!) && route.includes(' /api/v1/') && !/ \/api\/v1\/session(\/|$)/.test(route) && !reads.has(route);
}

/** The app's recorded routes, each with its action. */
function writeRoutes(app: Application, recorded: (route: string) => boolean): KnownRoute[] {
  return registeredRoutes(app)
    .filter(recorded)
    .map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const params: string[] = [];
      const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
        params.push(name);
        return '([^/]+)';
      });
      return { ...routeAction(route), route, method, pattern: new RegExp(`^${source}/?$`), params, specificity: params.length };
    })
    .sort((a, b) => a.specificity - b.specificity);
}

/** The caller as the trail records them: identity, token, console session. */
export function actorOfRequest(req: Request): AuditActor {
  const principal = principalOf(req);
  return {
    type: principal.identity.type,
    id: principal.identity.id,
    name: principal.identity.name,
    token_id: principal.tokenId,
    session_id: req.consoleSession ? String((req.consoleSession.session as { _id?: unknown })._id ?? '') || null : null,
  };
}

/** A change that overrides a Git source's ownership (`"force": true`, or `?force=true` on a DELETE): the trail says so. */
const asksForce = (req: Request) => (req.body as { force?: unknown } | undefined)?.force === true || req.query.force === 'true';

/** The id a create answered with: its Location's last segment, or `data.id`. */
function createdId(location: string | undefined, body: unknown): string | null {
  if (location) return decodeURIComponent(location.split('?')[0]!.split('/').filter(Boolean).at(-1) ?? '') || null;
  const id = (body as { data?: { id?: unknown }; run_id?: unknown } | null)?.data?.id ?? (body as { run_id?: unknown } | null)?.run_id;
  return typeof id === 'string' ? id : null;
}

/**
 * Every write of the API in the audit trail: the entry (actor, source address, action, target) is
 * written before the route runs, and completed with its outcome when the answer is sent (`ok`, or the
 * error's code). A write that never gets its outcome (the process died) is chained as `unknown`.
 * The routes come from the app itself, so a route added later is recorded like the rest.
 */
export function recordWrites(log: Logger, pendingSeconds: number, operations: readonly Operation[]): RequestHandler {
  const recorded = recordedRoutes(operations);
  let routes: KnownRoute[] | undefined;
  // Tests only: BOSUN_FAILPOINT=audit-after-change kills the process between a change and its outcome.
  const dieAfterChange = process.env.BOSUN_FAILPOINT === 'audit-after-change';
  return async (req, res, next) => {
    if (!WRITES.has(req.method)) return next();
    routes ??= writeRoutes(req.app, recorded);
    const path = req.originalUrl.split('?')[0]!;
    const known = routes.find((route) => route.method === req.method && route.pattern.test(path));
    if (!known) return next();
    const values = known.pattern.exec(path)!.slice(1).map((value) => {
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    });
    const params = Object.fromEntries(known.params.map((name, i) => [name, values[i]!]));
    const principal = principalOf(req);
    const targetId = known.idParam ? (params[known.idParam] ?? null) : null;
    const id = await recordIntent(
      {
        organizationId: principal.organizationId,
        actor: actorOfRequest(req),
        sourceAddress: req.ip ?? null,
        action: known.action,
        target: { kind: known.kind, id: targetId },
        serverId: known.kind === 'server' ? targetId : params.serverId ?? null,
        details: { route: known.route, params },
      },
      pendingSeconds,
    );
    let errorCode: string | null = null;
    let answered: unknown = null;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      answered = body;
      errorCode = (body as { error?: { code?: string } } | null)?.error?.code ?? null;
      return json(body);
    };
    res.once('close', () => {
      if (dieAfterChange) process.kill(process.pid, 'SIGKILL');
      const ok = res.statusCode < 400;
      const created = res.statusCode === 201 || res.statusCode === 202 ? createdId(res.getHeader('location') as string | undefined, answered) : null;
      const outcome = ok ? 'ok' : (errorCode ?? `http_${res.statusCode}`);
      recordOutcome(id, res.writableFinished ? outcome : `${outcome}_aborted`, {
        ...(created && !targetId ? { target: { kind: known.kind, id: created } } : {}),
        // A route may add what its entry should say beyond the request (an apply: its source, revision and counts).
        details: {
          status: res.statusCode,
          ...(created && targetId ? { created_id: created } : {}),
          ...(asksForce(req) ? { force: true } : {}),
          ...((res.locals.auditDetails as Record<string, unknown> | undefined) ?? {}),
        },
      }).catch((err: Error) => log.warn({ err: err.message, action: known.action }, 'could not record a write’s outcome in the audit trail (it is chained as unknown)'));
    });
    next();
  };
}
