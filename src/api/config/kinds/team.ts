import { Types } from 'mongoose';
import { z } from 'zod';
import { accessCache } from '../../../domain/access/cache';
import { RoleBindingModel, TeamModel, type Team } from '../../../domain/access/model';
import type { SpecProblem } from '../../../domain/config/types';
import { createTeamSchema, teamGroups, teamMembersField } from '../../people/schemas';
import { checked, lastAdminBlocker, managedByOf, namesOf, resolve, schemaProblems, type NamedKindAdapter } from './references-b';

/** A team's spec: the create body with its members by email (else name) rather than by id. */
const fileSchema = z.strictObject({
  members: teamMembersField.default([]).describe('People, by email (else by name)'),
  oidc_groups: teamGroups.default([]),
});

/** Teams: members are people of the organization (people are not a kind: an unknown one is a problem). */
export const teamKind: NamedKindAdapter = {
  kind: 'Team',
  fileSchema,
  nameSchema: createTeamSchema.shape.name,

  async current(organizationId, names) {
    const found = await TeamModel.find({ organization_id: new Types.ObjectId(organizationId) }).sort({ name: 1 }).lean<Team[]>();
    return found.map((t) => ({ id: t._id.toString(), name: t.name, spec: { members: namesOf(names, 'Person', t.members), oidc_groups: [...t.oidc_groups] }, managed_by: managedByOf(t.managed_by) }));
  },

  async check(spec, context) {
    const parsed = fileSchema.safeParse(spec);
    if (!parsed.success) return checked(schemaProblems(parsed.error), () => ({}));
    const problems: SpecProblem[] = [];
    const ids = parsed.data.members.map((member, i) => resolve(context.names, 'Person', member, ['members', i], problems));
    // The same person twice is one member (as the API keeps them), named as the index names them.
    const members = [...new Set(ids)].map((id) => context.names.nameOf('Person', id!)!);
    return checked(problems, () => ({ members, oidc_groups: parsed.data.oidc_groups }));
  },

  async write(context, object) {
    const spec = fileSchema.parse(object.spec);
    const members = [...new Set(spec.members.map((m) => context.names.idOf('Person', m)))].map((id) => new Types.ObjectId(id!));
    const fields = { name: object.name, members, oidc_groups: spec.oidc_groups, managed_by: object.managed_by };
    const organization_id = new Types.ObjectId(context.organizationId);
    if (!object.existing) await TeamModel.create([{ _id: new Types.ObjectId(object.id), organization_id, ...fields }], { session: context.session });
    else await TeamModel.updateOne({ _id: new Types.ObjectId(object.id), organization_id }, { $set: fields }, { session: context.session });
  },

  async remove(context, id) {
    const _id = new Types.ObjectId(id);
    await RoleBindingModel.deleteMany({ organization_id: new Types.ObjectId(context.organizationId), 'subject.id': _id }, { session: context.session });
    await TeamModel.deleteOne({ _id, organization_id: new Types.ObjectId(context.organizationId) }, { session: context.session });
  },

  pruneBlocker: (organizationId, id) => lastAdminBlocker(organizationId, { teamGone: id }),

  // Rights are kept between requests: what was read while the transaction was open is stale now it committed.
  async afterApply() {
    accessCache.changed();
  },
};
