import { Router, type Request, type Response } from 'express';
import { AuditEntryModel, type AuditEntry } from '../../domain/audit/model';
import { auditCursor, auditQuery, type AuditFilter } from '../../domain/audit/reads';
import { verifyChain } from '../../domain/audit/verify';
import { AuditCheckpointModel } from '../../domain/audit/model';
import { requireEverywhere } from '../access/gate';
import { principalOf } from '../http/auth';
import { findPage, pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { auditExportQuerySchema, auditQuerySchema, verifyBodySchema } from './schemas';
import { auditEntryView, checkpointView } from './views';

const filterOf = ({ actor, server, action, since, until }: { actor?: string; server?: string; action?: string; since?: string; until?: string }): AuditFilter => ({
  actor,
  server: server?.toLowerCase(),
  action,
  since: since ? new Date(since) : undefined,
  until: until ? new Date(until) : undefined,
});

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

/** /api/v1/audit — the organization's audit trail: read, exported, verified (role admin or auditor). */
export function auditRoutes(): Router {
  const router = Router();
  const organizationOf = (req: Request) => principalOf(req).organizationId;

  router.get('/', requireEverywhere('audit:read'), async (req, res) => {
    const { page, per_page, ...filters } = validate(auditQuerySchema, req.query, 'query');
    res.json(await findPage<AuditEntry, ReturnType<typeof auditEntryView>>(AuditEntryModel, auditQuery(organizationOf(req), filterOf(filters)), { page, per_page }, auditEntryView, { seq: -1 }));
  });

  // JSON lines from a cursor, oldest first: constant memory whatever the trail's size; a slow reader slows the cursor.
  router.get('/export', requireEverywhere('audit:read'), async (req, res) => {
    const filters = validate(auditExportQuerySchema, req.query, 'query');
    const cursor = auditCursor(organizationOf(req), filterOf(filters));
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
