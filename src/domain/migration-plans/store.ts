import type { Types } from 'mongoose';
import { MigrationPlanModel, type MigrationPlan } from './model';

/* The migration plans store: a plan's writes. */

/** A planned move from one server of the organization to another. */
export interface NewMigrationPlan {
  title: string;
  source_server_id: string;
  target_server_id: string;
  notes?: string;
}

export async function createMigrationPlan(organizationId: string, plan: NewMigrationPlan): Promise<MigrationPlan> {
  return (await MigrationPlanModel.create({ ...plan, organization_id: organizationId })).toObject() as MigrationPlan;
}

/** A plan gone; its finished conversations stay readable. */
export async function deleteMigrationPlan(id: Types.ObjectId): Promise<void> {
  await MigrationPlanModel.deleteOne({ _id: id });
}
