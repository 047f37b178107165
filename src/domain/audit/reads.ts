import { Types } from 'mongoose';
import { AuditEntryModel, type AuditActor, type AuditEntry } from './model';

export interface AuditFilter {
  actor?: string;
  /** Entries by this kind of actor (`system`: what Bosun did by itself). */
  actorType?: AuditActor['type'];
  server?: string;
  action?: string;
  since?: Date;
  until?: Date;
  /** A run and, for a fleet run, its targets' runs: entries that name one of them. */
  runIds?: string[];
}

/**
 * The MongoDB filter of a query: always one organization's entries. `actor` is an identity's id (or a
 * schedule's) or its name; `action` an action or a family ending in `.*` ("run.*").
 */
export function auditQuery(organizationId: string, filter: AuditFilter): Record<string, unknown> {
  const query: Record<string, unknown> = { organization_id: organizationId };
  if (filter.actor) query[Types.ObjectId.isValid(filter.actor) && filter.actor.length === 24 ? 'actor.id' : 'actor.name'] = filter.actor;
  if (filter.actorType) query['actor.type'] = filter.actorType;
  if (filter.server) query.server_id = filter.server;
  if (filter.action) query.action = filter.action.endsWith('.*') ? { $regex: `^${filter.action.slice(0, -2).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.` } : filter.action;
  if (filter.runIds) {
    const ids = { $in: filter.runIds };
    query.$or = [{ 'target.kind': 'run', 'target.id': ids }, { 'details.run_id': ids }, { 'details.created_id': ids }];
  }
  if (filter.since || filter.until) query.at = { ...(filter.since ? { $gte: filter.since } : {}), ...(filter.until ? { $lt: filter.until } : {}) };
  return query;
}

/** Entries in chain order, from a cursor: an export of any size in constant memory. */
export function auditCursor(organizationId: string, filter: AuditFilter) {
  // The driver's own cursor: no document wrapping per entry, at a million entries it shows.
  return AuditEntryModel.collection.find<AuditEntry>(auditQuery(organizationId, filter), { sort: { seq: 1 }, batchSize: 1000 });
}
