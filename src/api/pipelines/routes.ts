import { Router, type Request } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import type { PipelineDefinitions } from './definitions';
import { forceOf, forceQuerySchema } from '../ownership/guard';

/** Pipelines' definitions; their runs have routes of their own (run-routes.ts). */
export function pipelineRoutes(pipelines: PipelineDefinitions): Router {
  const router = Router();
  const id = (req: Request) => String(req.params.id);

  router.get('/', requireAction('read'), async (req, res) => {
    res.json(await pipelines.list(principalOf(req), validate(pageQuerySchema, req.query, 'query')));
  });

  router.post('/', requireAction('deployments:write'), async (req, res) => {
    const defined = await pipelines.create(principalOf(req), req.body ?? {});
    res.status(201).location(`${req.baseUrl}/${defined.data.id}`).json(defined);
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await pipelines.get(principalOf(req), id(req)) });
  });

  router.patch('/:id', requireAction('deployments:write'), async (req, res) => {
    res.json(await pipelines.update(principalOf(req), id(req), req.body ?? {}));
  });

  router.delete('/:id', requireAction('deployments:write'), async (req, res) => {
    await pipelines.remove(principalOf(req), id(req), forceOf(validate(forceQuerySchema, req.query, 'query')));
    res.status(204).end();
  });

  return router;
}
