import type { Server } from '../servers/model';
import type { MigrationPlan } from './model';
import { iso } from '../http/timestamps';

export const toMigrationPlanListView = (p: MigrationPlan) => ({
  id: p._id.toString(),
  title: p.title,
  source_server_id: p.source_server_id.toString(),
  target_server_id: p.target_server_id.toString(),
  notes: p.notes ?? '',
  created_at: iso(p.createdAt),
  updated_at: iso(p.updatedAt),
});

type ServerSummary = Pick<Server, 'title' | 'host' | 'status' | 'fingerprint'> & { _id: Server['_id'] };

const toServerSummary = (s: ServerSummary | null) =>
  s ? { id: s._id.toString(), title: s.title, host: s.host, status: s.status, os: s.fingerprint?.os?.name ?? null } : null;

/** One plan with a summary of both servers (null for a server deleted since). */
export const toMigrationPlanView = (p: MigrationPlan, source: ServerSummary | null, target: ServerSummary | null) => ({
  ...toMigrationPlanListView(p),
  source: toServerSummary(source),
  target: toServerSummary(target),
});
