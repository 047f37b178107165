import { Types } from 'mongoose';
import { ApiError, notFound } from '../http/errors';
import { parseId } from '../http/ids';
import { findPage, type PageQuery } from '../http/pagination';
import { ServerModel } from '../../domain/servers/model';
import { createMigrationPlan, deleteMigrationPlan } from '../../domain/migration-plans/store';
import { MigrationPlanModel, type MigrationPlan } from '../../domain/migration-plans/model';
import type { CreateMigrationPlanInput } from './schemas';
import type { Principal } from '../../domain/tokens/service';
import type { Action } from '../../domain/access/roles';
import { assertOnServers, checkServersOf, readableAmong, readableServerIds } from '../access/gate';
import { toMigrationPlanListView, toMigrationPlanView } from './views';

const SUMMARY = { title: 1, host: 1, status: 1, fingerprint: 1 } as const;

/** Active conversations about a plan, counted by the conversations module (which knows their statuses). */
export type ActiveConversationCount = (organizationId: string, planId: Types.ObjectId) => Promise<number>;

export function createMigrationPlanService({ activeConversations }: { activeConversations: ActiveConversationCount }) {
  /** A plan between servers the caller may read (404 otherwise) and do `action` on (403 otherwise). */
  async function find(principal: Principal, id: string, action: Action = 'read') {
    const plan = await MigrationPlanModel.findOne({ _id: parseId(id, 'Migration plan'), organization_id: principal.organizationId }).lean<MigrationPlan>();
    if (!plan) throw notFound('Migration plan');
    await checkServersOf(principal, [plan.source_server_id, plan.target_server_id], 'Migration plan', action);
    return plan;
  }

  return {
    /** The plans between servers the caller may read. */
    async list(principal: Principal, page: PageQuery) {
      const readable = await readableServerIds(principal);
      const filter = { organization_id: new Types.ObjectId(principal.organizationId), ...(readable ? { source_server_id: { $in: readable }, target_server_id: { $in: readable } } : {}) };
      return findPage(MigrationPlanModel, filter, page, toMigrationPlanListView);
    },

    async get(principal: Principal, id: string) {
      const { organizationId } = principal;
      const plan = await find(principal, id);
      const servers = await ServerModel.find({ _id: { $in: [plan.source_server_id, plan.target_server_id] }, organization_id: organizationId }, SUMMARY).lean();
      const byId = (id: Types.ObjectId) => servers.find((s) => s._id.equals(id)) ?? null;
      return toMigrationPlanView(plan, byId(plan.source_server_id), byId(plan.target_server_id));
    },

    /** Both servers must be the caller organization's; another organization's looks like none. */
    async create(principal: Principal, input: CreateMigrationPlanInput) {
      const { organizationId } = principal;
      const ids = [input.source_server_id, input.target_server_id];
      const inOrganization = await ServerModel.find({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) }, organization_id: organizationId }, { title: 1, tags: 1 }).lean();
      // A server the caller may not read looks like none, as another organization's.
      const found = readableAmong(principal, inOrganization);
      const missing = (['source_server_id', 'target_server_id'] as const).filter((field) => !found.some((s) => s._id.toString() === input[field].toLowerCase()));
      if (missing.length) {
        throw new ApiError('validation_failed', 'The request body is invalid', missing.map((path) => ({ path, message: 'No such server' })));
      }
      assertOnServers(principal, 'conversations:write', found, { targetCount: found.length });
      const created = await createMigrationPlan(organizationId, input);
      return this.get(principal, created._id.toString());
    },

    /** Refused while a conversation about the plan is still active; its finished conversations stay readable. */
    async remove(principal: Principal, id: string) {
      const plan = await find(principal, id, 'conversations:write');
      if (await activeConversations(principal.organizationId, plan._id)) {
        throw new ApiError('conflict', 'A conversation about this migration plan is still active: cancel it first');
      }
      await deleteMigrationPlan(plan._id);
    },
  };
}

export type MigrationPlanService = ReturnType<typeof createMigrationPlanService>;
