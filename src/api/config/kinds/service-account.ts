import { Types } from 'mongoose';
import { accessCache } from '../../../domain/access/cache';
import { IdentityModel, RoleBindingModel, TeamModel, type Identity } from '../../../domain/access/model';
import { ApiTokenModel } from '../../../domain/tokens/model';
import { createServiceAccountSchema } from '../../people/schemas';
import { checked, lastAdminBlocker, managedByOf, schemaProblems, type NamedKindAdapter } from './references-b';

/** A service account's spec: description and agent (its tokens are never in files). */
const fileSchema = createServiceAccountSchema.omit({ name: true });

const accountSpec = (a: { description?: string | null; agent?: boolean | null }) => ({ description: a.description ?? null, agent: a.agent ?? false });

/** Service accounts: what CI and agents act as; removing one revokes its tokens as the API's delete does. */
export const serviceAccountKind: NamedKindAdapter = {
  kind: 'ServiceAccount',
  fileSchema,
  nameSchema: createServiceAccountSchema.shape.name,

  async current(organizationId) {
    const found = await IdentityModel.find({ organization_id: new Types.ObjectId(organizationId), type: 'service_account' }).sort({ name: 1 }).lean<Identity[]>();
    return found.map((a) => ({ id: a._id.toString(), name: a.name, spec: accountSpec(a), managed_by: managedByOf(a.managed_by) }));
  },

  async check(spec) {
    const parsed = fileSchema.safeParse(spec);
    return parsed.success ? checked([], () => accountSpec(parsed.data)) : checked(schemaProblems(parsed.error), () => ({}));
  },

  async write(context, object) {
    const fields = { name: object.name, ...accountSpec(fileSchema.parse(object.spec)), managed_by: object.managed_by };
    const organization_id = new Types.ObjectId(context.organizationId);
    if (!object.existing) await IdentityModel.create([{ _id: new Types.ObjectId(object.id), organization_id, type: 'service_account', ...fields }], { session: context.session });
    else await IdentityModel.updateOne({ _id: new Types.ObjectId(object.id), organization_id, type: 'service_account' }, { $set: fields }, { session: context.session });
  },

  /** As the API's delete: its tokens revoked, its bindings and memberships removed, then the account. */
  async remove(context, id) {
    const _id = new Types.ObjectId(id);
    const session = context.session;
    await ApiTokenModel.updateMany({ identity_id: _id, revoked_at: null }, { $set: { revoked_at: context.now }, $unset: { active_name: 1 } }, { session });
    await RoleBindingModel.deleteMany({ 'subject.id': _id }, { session });
    await TeamModel.updateMany({ members: _id }, { $pull: { members: _id } }, { session });
    await IdentityModel.deleteOne({ _id, organization_id: new Types.ObjectId(context.organizationId), type: 'service_account' }, { session });
  },

  pruneBlocker: (organizationId, id) => lastAdminBlocker(organizationId, { identityGone: id }),

  // Rights are kept between requests: what was read while the transaction was open is stale now it committed.
  async afterApply() {
    accessCache.changed();
  },
};
