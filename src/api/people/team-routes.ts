import { Router, type Request } from 'express';
import { Types } from 'mongoose';
import { IdentityModel, RoleBindingModel, TeamModel, type Team } from '../../domain/access/model';
import { principalOf } from '../http/auth';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, pageQuerySchema } from '../http/pagination';
import { validate } from '../http/validation';
import { assertAnAdminRemains } from './admins';
import { requireEverywhere } from '../access/gate';
import { unique } from './identity-routes';
import { createTeamSchema, updateTeamSchema } from './schemas';
import { toTeamView } from './views';
import { checkOwnedWith, checkOwnership, forceOf, forceQuerySchema } from '../ownership/guard';
import { managedBindingsOf } from './owned-bindings';

/** Refuses (422) members that are not people of the organization. */
async function checkMembers(organizationId: string, members: string[]) {
  const people = await IdentityModel.find({ _id: { $in: members }, organization_id: organizationId, type: 'person' }, { _id: 1 }).lean();
  const known = new Set(people.map((p) => p._id.toString()));
  const strangers = members.map((id, i) => ({ id, i })).filter(({ id }) => !known.has(id));
  if (strangers.length) {
    throw new ApiError('validation_failed', 'The request body is invalid', strangers.map(({ i }) => ({ path: `members.${i}`, message: 'no person of the organization has this id' })));
  }
}

/** Teams, for administrators: people who share role bindings; a provider's groups may map onto one. */
export function teamRoutes(): Router {
  const router = Router();
  const admin = requireEverywhere('admin');
  const org = (req: Request) => principalOf(req).organizationId;
  const teamOf = async (req: Request) => {
    const team = await TeamModel.findOne({ _id: parseId(req.params.id as string, 'Team'), organization_id: org(req) }).lean<Team>();
    if (!team) throw notFound('Team');
    return team;
  };

  router.get('/', admin, async (req, res) => {
    res.json(await findPage(TeamModel, { organization_id: new Types.ObjectId(org(req)) }, validate(pageQuerySchema, req.query, 'query'), toTeamView));
  });

  router.post('/', admin, async (req, res) => {
    const input = validate(createTeamSchema, req.body);
    await checkMembers(org(req), input.members);
    const created = await unique('Team', input.name, () => TeamModel.create({ organization_id: org(req), ...input }));
    res.status(201).location(`${req.baseUrl}/${created._id.toString()}`).json({ data: toTeamView(created.toObject() as Team) });
  });

  router.get('/:id', admin, async (req, res) => {
    res.json({ data: toTeamView(await teamOf(req)) });
  });

  router.patch('/:id', admin, async (req, res) => {
    const team = await teamOf(req);
    const { force = false, ...input } = validate(updateTeamSchema, req.body);
    const forced = checkOwnership(principalOf(req), { kind: 'Team', name: team.name, managedBy: team.managed_by }, { force });
    if (input.members) {
      await checkMembers(org(req), input.members);
      await assertAnAdminRemains(org(req), { teamMembers: { teamId: team._id.toString(), members: input.members } });
    }
    const updated = await unique('Team', input.name, () => TeamModel.findOneAndUpdate({ _id: team._id }, { $set: { ...input, ...forced } }, { returnDocument: 'after' }).lean<Team>().orFail());
    res.json({ data: toTeamView(updated) });
  });

  router.delete('/:id', admin, async (req, res) => {
    const team = await teamOf(req);
    const force = forceOf(validate(forceQuerySchema, req.query, 'query'));
    checkOwnership(principalOf(req), { kind: 'Team', name: team.name, managedBy: team.managed_by }, { force, deleting: true });
    checkOwnedWith(principalOf(req), await managedBindingsOf(team._id), { force });
    await assertAnAdminRemains(org(req), { teamGone: team._id.toString() });
    await RoleBindingModel.deleteMany({ 'subject.id': team._id });
    await TeamModel.deleteOne({ _id: team._id });
    res.status(204).end();
  });

  return router;
}
