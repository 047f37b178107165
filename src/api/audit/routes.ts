import { Router, type Request, type Response } from 'express';
import type { AuditEntry } from '../../domain/audit/model';
import { DeploymentRunModel } from '../../domain/deployments/model';
import { auditCursor, auditQuery, type AuditFilter } from '../../domain/audit/reads';
import { trailPage } from '../../domain/audit/pages';
import { verifyChain } from '../../domain/audit/verify';
import { AuditCheckpointModel } from '../../domain/audit/model';
import { requireEverywhere } from '../access/gate';
import { principalOf } from '../http/auth';
import { findPage, pageQuerySchema } from '../http/pagination';
import type { Operation } from '../openapi/operation';
import { auditChoices, knownActions } from './choices';
import { validate } from '../http/validation';
import { auditExportQuerySchema, auditQuerySchema, verifyBodySchema } from './schemas';
import { auditEntryView, auditPageView, checkpointView } from './views';

/** How long before a run's creation its trigger's entry may have begun (a request's longest time). */
const RUN_LEAD_MS = 10 * 60_000;

type FilterQuery = { actor?: string; actor_type?: AuditFilter['actorType']; server?: string; run?: string; action?: string; since?: string; until?: string };

/**
 * The query's filter. A run's: the run and its fleet targets' runs, from its creation on (entries
 * outlive their run: one whose deployment was deleted is still found by its id).
 */
async function filterOf(organizationId: string, { actor, actor_type: actorType, server, run, action, since, until }: FilterQuery): Promise<AuditFilter> {
  const filter: AuditFilter = { actor, actorType, server: server?.toLowerCase(), action, since: since ? new Date(since) : undefined, until: until ? new Date(until) : undefined };
  if (!run) return filter;
  const runId = run.toLowerCase();
  const found = await DeploymentRunModel.findOne({ _id: runId, organization_id: organizationId }, { createdAt: 1 }).lean();
  const targets = found ? await DeploymentRunModel.distinct('_id', { parent_run_id: found._id }) : [];
  // Nothing about a run began long before it was created (its trigger's entry began a moment before): the scan starts there.
  const from = found ? new Date(found.createdAt.getTime() - RUN_LEAD_MS) : undefined;
  return { ...filter, runIds: [runId, ...targets.map(String)], since: from && (!filter.since || filter.since < from) ? from : filter.since };
}

/** Until the response can take more (or the client went away). */
const drained = (res: Response) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/** /api/v1/audit — the organization's audit trail: read, exported, verified, its filters' choices (role admin or auditor). */
export function auditRoutes(operations: readonly Operation[]): Router {
  const router = Router();
  const actions = knownActions(operations);
  const organizationOf = (req: Request) => principalOf(req).organizationId;

  router.get('/', requireEverywhere('audit:read'), async (req, res) => {
    const { page, per_page: perPage, before, after, ...filters } = validate(auditQuerySchema, req.query, 'query');
    const organizationId = organizationOf(req);
    const place = before !== undefined ? { before } : after !== undefined ? { after } : { page: page ?? 1 };
    const found = await trailPage(organizationId, auditQuery(organizationId, await filterOf(organizationId, filters)), place, perPage);
    res.json(await auditPageView(organizationId, found, perPage));
  });

  router.get('/choices', requireEverywhere('audit:read'), async (req, res) => {
    res.json({ data: await auditChoices(organizationOf(req), actions) });
  });

  // JSON lines from a cursor, oldest first: constant memory whatever the trail's size; a slow reader slows the cursor.
  router.get('/export', requireEverywhere('audit:read'), async (req, res) => {
    const filters = validate(auditExportQuerySchema, req.query, 'query');
    const cursor = auditCursor(organizationOf(req), await filterOf(organizationOf(req), filters));
    res.status(200).type('application/x-ndjson').setHeader('Content-Disposition', 'attachment; filename="audit.jsonl"');
    try {
      for await (const entry of cursor) {
        if (res.destroyed) break;
        if (!res.write(`${JSON.stringify(auditEntryView(entry as AuditEntry))}\n`)) await drained(res);
      }
    } finally {
      await cursor.close();
    }
    res.end();
  });

  router.get('/checkpoints', requireEverywhere('audit:read'), async (req, res) => {
    const page = validate(pageQuerySchema.strict(), req.query, 'query');
    res.json(await findPage(AuditCheckpointModel, { organization_id: organizationOf(req) }, page, checkpointView, { seq: -1 }));
  });

  router.post('/verify', requireEverywhere('audit:read'), async (req, res) => {
    const { checkpoint } = validate(verifyBodySchema, req.body ?? {});
    res.json(await verifyChain(organizationOf(req), checkpoint));
  });

  return router;
}
