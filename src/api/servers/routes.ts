import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction } from '../access/gate';
import { pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { createServerSchema, serverListFilterSchema, updateServerSchema, verifyServerSchema } from './schemas';
import type { ServerService } from './service';
import { activityQuerySchema } from './activity';
import { importServersSchema } from './import-schemas';

export function serverRoutes(servers: ServerService): Router {
  const router = Router();

  router.get('/', requireAction('read'), async (req, res) => {
    const page = validate(pageQuerySchema, req.query, 'query');
    const filter = validate(serverListFilterSchema, req.query, 'query');
    res.json(await servers.list(principalOf(req), page, filter));
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await servers.get(principalOf(req), req.params.id as string) });
  });

  router.get('/:id/activity', requireAction('read'), async (req, res) => {
    const { limit } = validate(activityQuerySchema, req.query, 'query');
    res.json({ data: await servers.activity(principalOf(req), req.params.id as string, limit) });
  });

  router.post('/', requireAction('servers:write'), async (req, res) => {
    const input = validate(createServerSchema, req.body);
    const server = await servers.create(principalOf(req), input);
    res.status(201).location(`${req.baseUrl}/${server.id}`).json({ data: server });
  });

  router.post('/import', requireAction('servers:write'), async (req, res) => {
    res.json({ data: await servers.importInventory(principalOf(req), validate(importServersSchema, req.body)) });
  });

  router.patch('/:id', requireAction('servers:write'), async (req, res) => {
    res.json({ data: await servers.update(principalOf(req), req.params.id as string, validate(updateServerSchema, req.body)) });
  });

  router.post('/:id/verify', requireAction('servers:write'), async (req, res) => {
    const { trust_new_host_key } = validate(verifyServerSchema, req.body);
    res.status(202).json({ data: await servers.reverify(principalOf(req), req.params.id as string, trust_new_host_key) });
  });

  router.delete('/:id', requireAction('servers:write'), async (req, res) => {
    await servers.remove(principalOf(req), req.params.id as string);
    res.status(204).end();
  });

  return router;
}
