import type { Types } from 'mongoose';
import { RoleBindingModel } from '../../domain/access/model';
import type { OwnedDefinition } from '../ownership/guard';

/** A team's or identity's role bindings that a Git source manages: what deleting the subject would take along. */
export async function managedBindingsOf(subjectId: Types.ObjectId): Promise<OwnedDefinition[]> {
  const found = await RoleBindingModel.find({ 'subject.id': subjectId, managed_by: { $ne: null } }, { name: 1, managed_by: 1 }).lean();
  return found.map((binding) => ({ kind: 'RoleBinding', name: binding.name ?? binding._id.toString(), managedBy: binding.managed_by }));
}
