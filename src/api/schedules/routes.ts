import { Router, type Request } from 'express';
import { z } from 'zod';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { createScheduleSchema, pauseScheduleSchema, runNowSchema, updateScheduleSchema } from './schemas';
import { TICK_OUTCOME_FILTERS, type ScheduleService, type ScheduleServices } from './service';
import { forceOf, forceQuerySchema } from '../ownership/guard';

export const tickQuerySchema = pageQuerySchema.extend({
  outcome: z.enum(TICK_OUTCOME_FILTERS).optional().describe('fired, skipped (any reason), or one reason: missed, overlap, frozen, paused, forbidden, refused'),
});

export const scheduleQuerySchema = z.object({
  from: z.iso.datetime({ offset: true }).optional().describe('Show next_runs after this time instead of now (ISO 8601): a preview of any week'),
});

/** /api/v1/deployments/:id/schedules and /api/v1/pipelines/:id/schedules — a deployment's or a pipeline's schedules and their ticks. */
export function scheduleRoutes(schedules: ScheduleService): Router {
  const router = Router({ mergeParams: true });
  const p = (req: Request) => ({ principal: principalOf(req), ownerId: String(req.params.id), scheduleId: String(req.params.scheduleId) });

  router.get('/', requireAction('read'), async (req, res) => {
    const { principal, ownerId } = p(req);
    res.json(await schedules.list(principal, ownerId, validate(pageQuerySchema, req.query, 'query')));
  });

  router.post('/', requireAction('deployments:write'), async (req, res) => {
    const { principal, ownerId } = p(req);
    const created = await schedules.create(principal, ownerId, validate(createScheduleSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:scheduleId', requireAction('read'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    const { from } = validate(scheduleQuerySchema, req.query, 'query');
    res.json({ data: await schedules.get(principal, ownerId, scheduleId, from ? new Date(from) : undefined) });
  });

  router.patch('/:scheduleId', requireAction('deployments:write'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    res.json({ data: await schedules.update(principal, ownerId, scheduleId, validate(updateScheduleSchema, req.body)) });
  });

  router.delete('/:scheduleId', requireAction('deployments:write'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    await schedules.remove(principal, ownerId, scheduleId, forceOf(validate(forceQuerySchema, req.query, 'query')));
    res.status(204).end();
  });

  router.post('/:scheduleId/pause', requireAction('deployments:write'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    const { note } = validate(pauseScheduleSchema, req.body ?? {});
    res.json({ data: await schedules.setPaused(principal, ownerId, scheduleId, true, note) });
  });

  router.post('/:scheduleId/unpause', requireAction('deployments:write'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    const { note } = validate(pauseScheduleSchema, req.body ?? {});
    res.json({ data: await schedules.setPaused(principal, ownerId, scheduleId, false, note) });
  });

  router.post('/:scheduleId/trigger', requireAction('deployments:run'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    const { overlap } = validate(runNowSchema, req.body ?? {});
    res.status(202).json(await schedules.runNow(principal, ownerId, scheduleId, overlap));
  });

  router.get('/:scheduleId/ticks', requireAction('read'), async (req, res) => {
    const { principal, ownerId, scheduleId } = p(req);
    const { outcome, ...page } = validate(tickQuerySchema, req.query, 'query');
    res.json(await schedules.ticks(principal, ownerId, scheduleId, page, outcome));
  });

  return router;
}

/** /api/v1/schedules — every schedule of the deployments and pipelines the caller may read, with its next runs. */
export function organizationScheduleRoutes(schedules: Pick<ScheduleServices, 'listAll'>): Router {
  const router = Router();
  router.get('/', requireAction('read'), async (req, res) => {
    res.json(await schedules.listAll(principalOf(req), validate(pageQuerySchema, req.query, 'query')));
  });
  return router;
}
