import { z } from 'zod';
import { SERVER_STATUSES, type Server } from '../../domain/servers/model';
import type { MigrationPlan } from '../../domain/migration-plans/model';
import { timestampSchema } from '../http/timestamps';

export const migrationPlanListItemSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    source_server_id: z.string(),
    target_server_id: z.string(),
    notes: z.string(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'MigrationPlanListItem' });

const serverSummarySchema = z
  .object({ id: z.string(), title: z.string(), host: z.string(), status: z.enum(SERVER_STATUSES), os: z.string().nullable() })
  .nullable()
  .describe('Null for a server deleted since');

export const migrationPlanSchema = migrationPlanListItemSchema
  .extend({ source: serverSummarySchema, target: serverSummarySchema })
  .meta({ id: 'MigrationPlan' });

export const toMigrationPlanListView = (p: MigrationPlan): z.infer<typeof migrationPlanListItemSchema> => ({
  id: p._id.toString(),
  title: p.title,
  source_server_id: p.source_server_id.toString(),
  target_server_id: p.target_server_id.toString(),
  notes: p.notes ?? '',
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

type ServerSummary = Pick<Server, 'title' | 'host' | 'status' | 'fingerprint'> & { _id: Server['_id'] };

const toServerSummary = (s: ServerSummary | null): z.infer<typeof serverSummarySchema> =>
  s ? { id: s._id.toString(), title: s.title, host: s.host, status: s.status, os: s.fingerprint?.os?.name ?? null } : null;

/** One plan with a summary of both servers (null for a server deleted since). */
export const toMigrationPlanView = (p: MigrationPlan, source: ServerSummary | null, target: ServerSummary | null): z.infer<typeof migrationPlanSchema> => ({
  ...toMigrationPlanListView(p),
  source: toServerSummary(source),
  target: toServerSummary(target),
});
