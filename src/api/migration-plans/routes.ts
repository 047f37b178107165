import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { createMigrationPlanSchema } from './schemas';
import type { MigrationPlanService } from './service';

export function migrationPlanRoutes(plans: MigrationPlanService): Router {
  const router = Router();
  const org = (req: Parameters<typeof principalOf>[0]) => principalOf(req);

  router.get('/', requireAction('read'), async (req, res) => {
    res.json(await plans.list(org(req), validate(pageQuerySchema, req.query, 'query')));
  });

  router.post('/', requireAction('conversations:write'), async (req, res) => {
    const created = await plans.create(org(req), validate(createMigrationPlanSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await plans.get(org(req), req.params.id as string) });
  });

  router.delete('/:id', requireAction('conversations:write'), async (req, res) => {
    await plans.remove(org(req), req.params.id as string);
    res.status(204).end();
  });

  return router;
}
