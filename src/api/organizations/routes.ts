import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction, requireEverywhere } from '../access/gate';
import { validate } from '../http/validation';
import { organizationPolicy, policySchema, setOrganizationPolicy } from '../../domain/organizations/policy';

/** The organization's command policy for conversations: read by anyone, set by an administrator. */
export function policyRoutes(): Router {
  const router = Router();
  router.get('/', requireAction('read'), async (req, res) => {
    res.json({ data: await organizationPolicy(principalOf(req).organizationId) });
  });
  router.put('/', requireEverywhere('admin'), async (req, res) => {
    res.json({ data: await setOrganizationPolicy(principalOf(req).organizationId, validate(policySchema, req.body)) });
  });
  return router;
}
