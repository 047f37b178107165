import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction, requireEverywhere } from '../access/gate';
import { notFound } from '../http/errors';
import { validate } from '../http/validation';
import { OrganizationSecretModel, secretAssociatedData } from '../../domain/secrets/model';
import { secretBodySchema, secretNameSchema } from './schemas';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { toSecretView } from './views';

/** Values an organization marks as secret: redacted from all step output. Values are write-only. */
export function secretRoutes(box: SecretBox): Router {
  const router = Router();

  router.get('/', requireAction('read'), async (req, res) => {
    const secrets = await OrganizationSecretModel.find({ organization_id: principalOf(req).organizationId }).sort({ name: 1 }).lean();
    res.json({ data: secrets.map(toSecretView) });
  });

  router.put('/:name', requireEverywhere('admin'), async (req, res) => {
    const name = validate(secretNameSchema, req.params.name, 'path');
    const { value } = validate(secretBodySchema, req.body);
    const organizationId = principalOf(req).organizationId;
    const saved = await OrganizationSecretModel.findOneAndUpdate(
      { organization_id: organizationId, name },
      { $set: { value: box.encrypt(value, secretAssociatedData(organizationId, name)) } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    res.json({ data: toSecretView(saved!) });
  });

  router.delete('/:name', requireEverywhere('admin'), async (req, res) => {
    const result = await OrganizationSecretModel.deleteOne({ organization_id: principalOf(req).organizationId, name: req.params.name });
    if (result.deletedCount === 0) throw notFound('Secret');
    res.status(204).end();
  });

  return router;
}
