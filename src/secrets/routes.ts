import { Router } from 'express';
import { z } from 'zod';
import { principalOf, requireScope } from '../http/auth';
import { notFound } from '../http/errors';
import { validate } from '../http/validation';
import { OrganizationSecretModel, secretAssociatedData } from './model';
import type { SecretBox } from './secret-box';

const nameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a name: letters, digits and underscores, at most 64');
// Redaction matches values of 4 characters or more; shorter ones would shred ordinary output.
const bodySchema = z.strictObject({ value: z.string().min(4, 'value must be at least 4 characters').max(16 * 1024) });

/** Values an organization marks as secret: redacted from all step output. Values are write-only. */
export function secretRoutes(box: SecretBox): Router {
  const router = Router();

  router.get('/', requireScope('read'), async (req, res) => {
    const secrets = await OrganizationSecretModel.find({ organization_id: principalOf(req).organizationId }).sort({ name: 1 }).lean();
    res.json({ data: secrets.map((s) => ({ name: s.name, updated_at: s.updatedAt.toISOString() })) });
  });

  router.put('/:name', requireScope('admin'), async (req, res) => {
    const name = validate(nameSchema, req.params.name, 'path');
    const { value } = validate(bodySchema, req.body);
    const organizationId = principalOf(req).organizationId;
    const saved = await OrganizationSecretModel.findOneAndUpdate(
      { organization_id: organizationId, name },
      { $set: { value: box.encrypt(value, secretAssociatedData(organizationId, name)) } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    res.json({ data: { name, updated_at: saved!.updatedAt.toISOString() } });
  });

  router.delete('/:name', requireScope('admin'), async (req, res) => {
    const result = await OrganizationSecretModel.deleteOne({ organization_id: principalOf(req).organizationId, name: req.params.name });
    if (result.deletedCount === 0) throw notFound('Secret');
    res.status(204).end();
  });

  return router;
}
