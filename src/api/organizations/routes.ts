import { Router } from 'express';
import { principalOf } from '../http/auth';
import { requireAction, requireEverywhere } from '../access/gate';
import { validate } from '../http/validation';
import { organizationPolicy, policyManagedBy, setOrganizationPolicy } from '../../domain/organizations/policy';
import { checkOwnership } from '../ownership/guard';
import { managedByView } from '../ownership/views';
import { policyChangeSchema } from './schemas';

/** The policy with the Git source that manages it, if any. */
const policyDocument = async (organizationId: string) => {
  const [policy, managedBy] = await Promise.all([organizationPolicy(organizationId), policyManagedBy(organizationId)]);
  return { ...policy, managed_by: managedByView(managedBy) };
};

/** The organization's command policy for conversations: read by anyone, set by an administrator. */
export function policyRoutes(): Router {
  const router = Router();
  router.get('/', requireAction('read'), async (req, res) => {
    res.json({ data: await policyDocument(principalOf(req).organizationId) });
  });
  router.put('/', requireEverywhere('admin'), async (req, res) => {
    const { organizationId } = principalOf(req);
    const { force = false, ...policy } = validate(policyChangeSchema, req.body);
    const forced = checkOwnership(principalOf(req), { kind: 'Policy', name: 'policy', managedBy: await policyManagedBy(organizationId), field: 'policy_managed_by' }, { force });
    await setOrganizationPolicy(organizationId, policy, forced);
    res.json({ data: await policyDocument(organizationId) });
  });
  return router;
}
