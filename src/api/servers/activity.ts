import { createdByText, triggeredByText } from '../../domain/access/actor';
import { z } from 'zod';
import { CONVERSATION_STATUSES, ConversationModel } from '../../domain/conversations/model';
import { DeploymentModel, DeploymentRunModel, TARGET_STATUSES } from '../../domain/deployments/model';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { wholeNumber } from '../http/whole-numbers';

export const activityQuerySchema = z.strictObject({
  limit: wholeNumber('limit', { min: 1, max: 100 }).default(20),
});

export const activityItemSchema = z
  .object({
    kind: z.enum(['run', 'conversation']),
    id: z.string().describe('The run’s id (a fleet run’s, when the server was one of its targets), or the conversation’s'),
    deployment_id: z.string().nullable().describe('The run’s deployment; null for a conversation'),
    title: z.string().describe('The deployment’s name, or the conversation’s first instruction'),
    fleet: z.boolean().describe('The server was one target of a fleet run: its own part is at `…/runs/{id}/targets/{server_id}`'),
    role: z.enum(['server', 'source']).describe('`source`: the server is the source of a migration plan’s conversation'),
    status: z.enum([...new Set([...TARGET_STATUSES, ...CONVERSATION_STATUSES])] as [string, ...string[]]).describe('The server’s part: a fleet target’s status, a run’s, a conversation’s'),
    by: z.string().describe('Who triggered or started it: "alice (person)", "ci-web (service account)"'),
    error: z.string().nullable(),
    created_at: timestampSchema,
    completed_at: timestampSchema.nullable(),
  })
  .meta({ id: 'ServerActivity', description: 'A run or a conversation that touched a server' });
export type ActivityItem = z.infer<typeof activityItemSchema>;

const FIRST_LINE = 120;

/**
 * The latest runs (one-server runs and fleet targets) and conversations (of the server, or of a
 * migration plan it is the source of) that touched one server, newest first.
 */
export async function serverActivity(organizationId: string, serverId: string, limit: number): Promise<ActivityItem[]> {
  const [runs, conversations] = await Promise.all([
    DeploymentRunModel.find(
      { organization_id: organizationId, server_id: serverId },
      { deployment_id: 1, parent_run_id: 1, status: 1, triggered_by: 1, actor: 1, schedule: 1, error: 1, createdAt: 1, completed_at: 1 },
    )
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean(),
    ConversationModel.find(
      { organization_id: organizationId, $or: [{ server_id: serverId }, { source_server_id: serverId }] },
      { server_id: 1, status: 1, created_by: 1, actor: 1, error: 1, createdAt: 1, completed_at: 1, messages: { $slice: 1 } },
    )
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean(),
  ]);
  const deploymentIds = [...new Set(runs.map((r) => r.deployment_id.toString()))];
  const names = new Map(
    (await DeploymentModel.find({ _id: { $in: deploymentIds } }, { name: 1 }).lean()).map((d) => [d._id.toString(), d.name]),
  );
  const items: Array<ActivityItem & { at: number }> = [
    ...runs.map((r) => ({
      kind: 'run' as const,
      id: (r.parent_run_id ?? r._id).toString(),
      deployment_id: r.deployment_id.toString(),
      title: names.get(r.deployment_id.toString()) ?? '(a deleted deployment)',
      fleet: r.parent_run_id !== null,
      role: 'server' as const,
      status: r.status,
      by: triggeredByText(r),
      error: r.error ?? null,
      created_at: iso(r.createdAt)!,
      completed_at: iso(r.completed_at),
      at: r.createdAt.getTime(),
    })),
    ...conversations.map((c) => {
      const first = c.messages[0]?.text ?? '';
      return {
        kind: 'conversation' as const,
        id: c._id.toString(),
        deployment_id: null,
        title: first.length > FIRST_LINE ? `${first.slice(0, FIRST_LINE - 1)}…` : first,
        fleet: false,
        role: c.server_id.toString() === serverId ? ('server' as const) : ('source' as const),
        status: c.status,
        by: createdByText(c),
        error: c.error ?? null,
        created_at: iso(c.createdAt)!,
        completed_at: iso(c.completed_at),
        at: c.createdAt.getTime(),
      };
    }),
  ];
  return items
    .sort((a, b) => b.at - a.at)
    .slice(0, limit)
    .map(({ at: _at, ...item }) => item);
}
