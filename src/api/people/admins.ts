import { Types, type ClientSession } from 'mongoose';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../domain/access/model';
import { ApiError } from '../http/errors';

/** A change about to be made, as the last-admin check imagines it done. */
export interface PendingChange {
  /** An identity disabled or deleted. */
  identityGone?: string;
  /** A binding deleted, or changed so that it no longer gives admin everywhere. */
  bindingGone?: string;
  /** A team deleted. */
  teamGone?: string;
  /** A team's members replaced. */
  teamMembers?: { teamId: string; members: string[] };
}

/**
 * Refuses (409) a change that would leave the organization with no enabled identity holding the admin
 * role everywhere: nobody could then manage people, roles or tokens. Within a transaction (`session`)
 * it reads the state that transaction has written.
 */
export async function assertAnAdminRemains(organizationId: string, change: PendingChange, session: ClientSession | null = null): Promise<void> {
  const bindings = await RoleBindingModel.find(
    { organization_id: organizationId, role: 'admin', server_tags: null, deployments: null, max_targets_per_run: null },
    { subject: 1 },
  )
    .session(session)
    .lean();
  const kept = bindings.filter((b) => b._id.toString() !== change.bindingGone);
  const teamIds = kept.filter((b) => b.subject.type === 'team' && b.subject.id.toString() !== change.teamGone).map((b) => b.subject.id);
  const teams = await TeamModel.find({ _id: { $in: teamIds } }, { members: 1 }).session(session).lean();
  const holders = new Set(kept.filter((b) => b.subject.type !== 'team').map((b) => b.subject.id.toString()));
  for (const team of teams) {
    const members = change.teamMembers?.teamId === team._id.toString() ? change.teamMembers.members : team.members.map(String);
    for (const member of members) holders.add(member);
  }
  holders.delete(change.identityGone ?? '');
  const enabled = await IdentityModel.countDocuments({
    _id: { $in: [...holders].map((id) => new Types.ObjectId(id)) },
    organization_id: organizationId,
    disabled_at: null,
  }).session(session);
  if (enabled === 0) throw new ApiError('conflict', 'This would leave the organization without an administrator: give the admin role to someone else first');
}
