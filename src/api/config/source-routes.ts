import { Router, type Request } from 'express';
import { requireEverywhere } from '../access/gate';
import { principalOf } from '../http/auth';
import { validate } from '../http/validation';
import type { ConfigSourceService } from './source-service';
import { createSourceSchema, syncSourceSchema, updateSourceSchema } from './source-schemas';

/** /api/v1/config/sources — repositories Bosun syncs definitions from: an organization's admins' (for the whole organization). */
export function configSourceRoutes(sources: ConfigSourceService): Router {
  const router = Router();
  const id = (req: Request) => String(req.params.id);
  router.use(requireEverywhere('admin'));

  router.get('/', async (req, res) => {
    res.json({ data: await sources.list(principalOf(req)) });
  });

  router.post('/', async (req, res) => {
    const created = await sources.create(principalOf(req), validate(createSourceSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', async (req, res) => {
    res.json({ data: await sources.get(principalOf(req), id(req)) });
  });

  router.patch('/:id', async (req, res) => {
    res.json({ data: await sources.update(principalOf(req), id(req), validate(updateSourceSchema, req.body)) });
  });

  router.delete('/:id', async (req, res) => {
    await sources.remove(principalOf(req), id(req));
    res.status(204).end();
  });

  router.post('/:id/sync', async (req, res) => {
    const { trust_new_host_key } = validate(syncSourceSchema, req.body ?? {});
    res.status(202).json({ data: await sources.sync(principalOf(req), id(req), trust_new_host_key) });
  });

  return router;
}
