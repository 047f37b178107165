import { Router, type Request } from 'express';
import { principalOf } from '../http/auth';
import { requireEverywhere } from '../access/gate';
import { validate } from '../http/validation';
import { createChannelSchema, deliveryQuerySchema, notificationSettingsSchema, updateChannelSchema } from './schemas';
import type { NotificationService } from './service';
import { forceOf, forceQuerySchema } from '../ownership/guard';

/** /api/v1/notification-channels: an organization's channels, their deliveries; administrators of the whole organization only. */
export function notificationChannelRoutes(notifications: NotificationService): Router {
  const router = Router();
  const admin = requireEverywhere('admin');
  const id = (req: Request) => String(req.params.id);

  router.get('/', admin, async (req, res) => {
    res.json({ data: await notifications.list(principalOf(req)) });
  });

  router.post('/', admin, async (req, res) => {
    const created = await notifications.create(principalOf(req), validate(createChannelSchema, req.body));
    res.status(201).location(`${req.baseUrl}/${created.id}`).json({ data: created });
  });

  router.get('/:id', admin, async (req, res) => {
    res.json({ data: await notifications.get(principalOf(req), id(req)) });
  });

  router.patch('/:id', admin, async (req, res) => {
    res.json({ data: await notifications.update(principalOf(req), id(req), validate(updateChannelSchema, req.body)) });
  });

  router.delete('/:id', admin, async (req, res) => {
    await notifications.remove(principalOf(req), id(req), forceOf(validate(forceQuerySchema, req.query, 'query')));
    res.status(204).end();
  });

  router.get('/:id/deliveries', admin, async (req, res) => {
    const { status, ...page } = validate(deliveryQuerySchema, req.query, 'query');
    res.json(await notifications.deliveries(principalOf(req), id(req), page, status));
  });

  router.post('/:id/deliveries/:deliveryId/redeliver', admin, async (req, res) => {
    res.status(202).json({ data: await notifications.redeliver(principalOf(req), id(req), String(req.params.deliveryId)) });
  });

  router.post('/:id/test', admin, async (req, res) => {
    await notifications.test(principalOf(req), id(req));
    res.status(202).json({ message: 'A ping is on its way; its delivery is listed under the channel’s deliveries' });
  });

  return router;
}

/** /api/v1/notification-settings: read and set by administrators of the whole organization. */
export function notificationSettingsRoutes(notifications: NotificationService): Router {
  const router = Router();
  router.get('/', requireEverywhere('admin'), async (req, res) => {
    res.json({ data: await notifications.settings(principalOf(req)) });
  });
  router.put('/', requireEverywhere('admin'), async (req, res) => {
    res.json({ data: await notifications.setSettings(principalOf(req), validate(notificationSettingsSchema, req.body)) });
  });
  return router;
}
