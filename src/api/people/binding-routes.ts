import { Router, type Request } from 'express';
import { Types } from 'mongoose';
import { IdentityModel, RoleBindingModel, TeamModel, type RoleBinding } from '../../domain/access/model';
import { DeploymentModel } from '../../domain/deployments/model';
import { principalOf } from '../http/auth';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { assertAnAdminRemains } from './admins';
import { unique } from './identity-routes';
import { requireEverywhere } from '../access/gate';
import { createRoleBindingSchema, roleBindingQuerySchema, updateRoleBindingSchema } from './schemas';
import { toRoleBindingView } from './views';
import { checkOwnership, forceOf, forceQuerySchema, type OwnedDefinition } from '../ownership/guard';

const SUBJECT_WHAT = { person: 'Person', service_account: 'Service account', team: 'Team' } as const;

/** The subject must be the organization's: another organization's (or no one) is a 404, as everywhere. */
async function checkSubject(organizationId: string, subject: { type: keyof typeof SUBJECT_WHAT; id: string }) {
  const found =
    subject.type === 'team'
      ? await TeamModel.exists({ _id: subject.id, organization_id: organizationId })
      : await IdentityModel.exists({ _id: subject.id, organization_id: organizationId, type: subject.type });
  if (!found) throw notFound(SUBJECT_WHAT[subject.type]);
}

/** Every deployment named must be the organization's (422 naming the others). */
async function checkDeployments(organizationId: string, ids: string[] | null | undefined) {
  if (!ids) return;
  const found = new Set((await DeploymentModel.find({ _id: { $in: ids }, organization_id: organizationId }, { _id: 1 }).lean()).map((d) => d._id.toString()));
  const unknown = ids.map((id, i) => ({ id, i })).filter(({ id }) => !found.has(id));
  if (unknown.length) throw new ApiError('validation_failed', 'The request body is invalid', unknown.map(({ i }) => ({ path: `deployments.${i}`, message: 'no deployment of the organization has this id' })));
}

/** A role binding as the ownership guard sees it: named by its file's document when it has a name, else by its id. */
const ownedOf = (binding: RoleBinding): OwnedDefinition => ({ kind: 'RoleBinding', name: (binding as { name?: string | null }).name ?? binding._id.toString(), managedBy: binding.managed_by });

const givesAdminEverywhere = (b: { role: string; server_tags?: unknown; deployments?: unknown; max_targets_per_run?: unknown }) =>
  b.role === 'admin' && !b.server_tags && !b.deployments && !b.max_targets_per_run;

/**
 * Role bindings, for administrators: a role given to a person, team or service account, for the
 * whole organization or limited to servers by tags, to deployments, and to servers per run.
 */
export function roleBindingRoutes(): Router {
  const router = Router();
  const admin = requireEverywhere('admin');
  const org = (req: Request) => principalOf(req).organizationId;
  const bindingOf = async (req: Request) => {
    const binding = await RoleBindingModel.findOne({ _id: parseId(req.params.id as string, 'Role binding'), organization_id: org(req) }).lean<RoleBinding>();
    if (!binding) throw notFound('Role binding');
    return binding;
  };

  router.get('/', admin, async (req, res) => {
    const query = validate(roleBindingQuerySchema, req.query, 'query');
    const filter = {
      organization_id: new Types.ObjectId(org(req)),
      ...(query.subject_type ? { 'subject.type': query.subject_type } : {}),
      ...(query.subject_id ? { 'subject.id': new Types.ObjectId(query.subject_id) } : {}),
    };
    res.json(await findPage(RoleBindingModel, filter, validate(pageQuerySchema, req.query, 'query'), toRoleBindingView));
  });

  router.post('/', admin, async (req, res) => {
    const input = validate(createRoleBindingSchema, req.body);
    await checkSubject(org(req), input.subject);
    await checkDeployments(org(req), input.deployments);
    const created = await unique('Role binding', input.name ?? undefined, () => RoleBindingModel.create({
      organization_id: org(req),
      name: input.name,
      role: input.role,
      subject: input.subject,
      server_tags: input.servers?.tags ?? null,
      deployments: input.deployments,
      max_targets_per_run: input.max_targets_per_run,
    }));
    res.status(201).location(`${req.baseUrl}/${created._id.toString()}`).json({ data: toRoleBindingView(created.toObject() as RoleBinding) });
  });

  router.get('/:id', admin, async (req, res) => {
    res.json({ data: toRoleBindingView(await bindingOf(req)) });
  });

  router.patch('/:id', admin, async (req, res) => {
    const binding = await bindingOf(req);
    const { force = false, ...input } = validate(updateRoleBindingSchema, req.body);
    const forced = checkOwnership(principalOf(req), ownedOf(binding), { force });
    await checkDeployments(org(req), input.deployments);
    const set = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.role ? { role: input.role } : {}),
      ...(input.servers !== undefined ? { server_tags: input.servers?.tags ?? null } : {}),
      ...(input.deployments !== undefined ? { deployments: input.deployments } : {}),
      ...(input.max_targets_per_run !== undefined ? { max_targets_per_run: input.max_targets_per_run } : {}),
    };
    if (givesAdminEverywhere(binding) && !givesAdminEverywhere({ ...binding, ...set })) await assertAnAdminRemains(org(req), { bindingGone: binding._id.toString() });
    const updated = await unique('Role binding', input.name ?? undefined, () => RoleBindingModel.findOneAndUpdate({ _id: binding._id }, { $set: { ...set, ...forced } }, { returnDocument: 'after' }).lean<RoleBinding>().orFail());
    res.json({ data: toRoleBindingView(updated) });
  });

  router.delete('/:id', admin, async (req, res) => {
    const binding = await bindingOf(req);
    checkOwnership(principalOf(req), ownedOf(binding), { force: forceOf(validate(forceQuerySchema, req.query, 'query')), deleting: true });
    if (givesAdminEverywhere(binding)) await assertAnAdminRemains(org(req), { bindingGone: binding._id.toString() });
    await RoleBindingModel.deleteOne({ _id: binding._id });
    res.status(204).end();
  });

  return router;
}
