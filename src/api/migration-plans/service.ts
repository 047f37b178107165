import { Types } from 'mongoose';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import { createMigrationPlan, deleteMigrationPlan } from '../../domain/migration-plans/store';
import { MigrationPlanModel, type MigrationPlan } from '../../domain/migration-plans/model';
import type { CreateMigrationPlanInput } from './schemas';
import { toMigrationPlanListView, toMigrationPlanView } from './views';

const SUMMARY = { title: 1, host: 1, status: 1, fingerprint: 1 } as const;

/** Active conversations about a plan, counted by the conversations module (which knows their statuses). */
export type ActiveConversationCount = (organizationId: string, planId: Types.ObjectId) => Promise<number>;

export function createMigrationPlanService({ activeConversations }: { activeConversations: ActiveConversationCount }) {
  async function find(organizationId: string, id: string) {
    const plan = await MigrationPlanModel.findOne({ _id: parseId(id, 'Migration plan'), organization_id: organizationId }).lean<MigrationPlan>();
    if (!plan) throw notFound('Migration plan');
    return plan;
  }

  return {
    list(organizationId: string, page: PageQuery) {
      return findPage(MigrationPlanModel, { organization_id: organizationId }, page, toMigrationPlanListView);
    },

    async get(organizationId: string, id: string) {
      const plan = await find(organizationId, id);
      const servers = await ServerModel.find({ _id: { $in: [plan.source_server_id, plan.target_server_id] }, organization_id: organizationId }, SUMMARY).lean();
      const byId = (id: Types.ObjectId) => servers.find((s) => s._id.equals(id)) ?? null;
      return toMigrationPlanView(plan, byId(plan.source_server_id), byId(plan.target_server_id));
    },

    /** Both servers must be the caller organization's; another organization's looks like none. */
    async create(organizationId: string, input: CreateMigrationPlanInput) {
      const ids = [input.source_server_id, input.target_server_id];
      const found = await ServerModel.find({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) }, organization_id: organizationId }, { _id: 1 }).lean();
      const missing = (['source_server_id', 'target_server_id'] as const).filter((field) => !found.some((s) => s._id.toString() === input[field].toLowerCase()));
      if (missing.length) {
        throw new ApiError('validation_failed', 'The request body is invalid', missing.map((path) => ({ path, message: 'No such server' })));
      }
      const created = await createMigrationPlan(organizationId, input);
      return this.get(organizationId, created._id.toString());
    },

    /** Refused while a conversation about the plan is still active; its finished conversations stay readable. */
    async remove(organizationId: string, id: string) {
      const plan = await find(organizationId, id);
      if (await activeConversations(organizationId, plan._id)) {
        throw new ApiError('conflict', 'A conversation about this migration plan is still active: cancel it first');
      }
      await deleteMigrationPlan(plan._id);
    },
  };
}

export type MigrationPlanService = ReturnType<typeof createMigrationPlanService>;
