import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction, requireEverywhere } from '../access/gate';
import { validate } from '../http/validation';
import { createFreezeSchema, freezeRangeSchema, updateFreezeSchema } from './schemas';
import type { FreezeService } from './service';
import { forceOf, forceQuerySchema } from '../ownership/guard';

/** Change freezes: read by anyone who reads; written by admins of the whole organization. */
export function freezeRoutes(freezes: FreezeService): Router {
  const router = Router();
  const param = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0]! : value!);

  router.get('/', requireAction('read'), async (req, res) => {
    const { from, to } = validate(freezeRangeSchema, req.query, 'query');
    res.json({ data: await freezes.list(principalOf(req), from && to ? { from: new Date(from), to: new Date(to) } : undefined) });
  });

  router.post('/', requireEverywhere('admin'), async (req, res) => {
    const created = await freezes.create(principalOf(req), validate(createFreezeSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', requireAction('read'), async (req, res) => {
    res.json({ data: await freezes.get(principalOf(req), param(req.params.id)) });
  });

  router.patch('/:id', requireEverywhere('admin'), async (req, res) => {
    res.json({ data: await freezes.update(principalOf(req), param(req.params.id), validate(updateFreezeSchema, req.body)) });
  });

  router.delete('/:id', requireEverywhere('admin'), async (req, res) => {
    await freezes.remove(principalOf(req), param(req.params.id), forceOf(validate(forceQuerySchema, req.query, 'query')));
    res.status(204).end();
  });

  return router;
}
