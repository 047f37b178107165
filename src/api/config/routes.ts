import { Router } from 'express';
import { ConfigLimitError } from '../../domain/config/files';
import type { ConfigKind, KindAdapter } from '../../domain/config/types';
import type { Logger } from '../../logger';
import { requireAction } from '../access/gate';
import { principalOf } from '../http/auth';
import { ApiError } from '../http/errors';
import { validate } from '../http/validation';
import { applyConfig } from './apply';
import { driftedObjects } from './drift';
import { exportConfig } from './export';
import { documentsJsonSchema } from './json-schema';
import { planConfig } from './plan';
import { applyRequestSchema, exportQuerySchema, planRequestSchema } from './schemas';

/** A file over its limit is the request's size problem: 413 naming the file and the limit. */
async function withinLimits<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConfigLimitError) throw new ApiError('payload_too_large', error.message);
    throw error;
  }
}

/**
 * /api/v1/config — definitions kept in Git: plan files against the organization, apply them (one
 * transaction), export the organization as files. A caller needs, for each kind a document changes,
 * what that kind's own routes need for the whole organization (403 naming the document otherwise).
 */
export function configRoutes(adapters: readonly KindAdapter[], log: Logger): Router {
  const router = Router();

  router.post('/plan', requireAction('deployments:write'), async (req, res) => {
    const request = validate(planRequestSchema, req.body);
    res.json({ data: (await withinLimits(() => planConfig(principalOf(req), request, adapters))).view });
  });

  router.post('/apply', requireAction('deployments:write'), async (req, res) => {
    const request = validate(applyRequestSchema, req.body);
    const applied = await withinLimits(() => applyConfig(principalOf(req), request, adapters, log));
    const counts = { created: applied.created, updated: applied.updated, deleted: applied.deleted };
    // The apply's own audit entry: which source and revision (and the one before, a force-push's too), and how much changed.
    res.locals.auditDetails = { source: request.source, revision: request.revision, previous_revision: applied.previous_revision, ...counts };
    res.json({ data: { ...counts, plan: applied.plan } });
  });

  router.get('/export', requireAction('read'), async (req, res) => {
    const { kinds } = validate(exportQuerySchema, req.query, 'query');
    const files = await exportConfig(principalOf(req), adapters, kinds ? (kinds.split(',') as ConfigKind[]) : undefined);
    res.json({ data: { files } });
  });

  router.get('/drift', requireAction('read'), async (req, res) => {
    res.json({ data: await driftedObjects(principalOf(req), adapters) });
  });

  router.get('/schema', requireAction('read'), (_req, res) => {
    res.json({ data: documentsJsonSchema(adapters) });
  });

  return router;
}
