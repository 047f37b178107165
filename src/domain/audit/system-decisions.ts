import type { ClientSession } from 'mongoose';
import type { AuditTarget } from './model';
import { recordAuditEvent, systemActor } from './pending-entries';

/*
 * Decisions Bosun makes by itself, no person asking: a gate's approval expiring, an automatic
 * rollback and its end, a change freeze holding a run and releasing it, a schedule's tick skipped.
 * Each is an entry of the trail with actor `system` (named for what decided), written in the MongoDB
 * transaction of the change it decides: the change and its entry are stored together or not at all.
 */

export interface SystemDecision {
  organizationId: string;
  /** What in Bosun decided: "approval gate", "automatic rollback", "change freeze", "schedule clock". */
  by: string;
  action: string;
  target: AuditTarget;
  serverId?: string | null;
  details: Record<string, unknown>;
  /** `ok` unless the decision's own outcome says more (a rollback that failed, why a tick was skipped). */
  outcome?: string;
}

/** The decision's entry, in the transaction of its change (`session`). */
export function recordSystemDecision(decision: SystemDecision, session: ClientSession): Promise<void> {
  const { organizationId, by, action, target, serverId = null, details, outcome = 'ok' } = decision;
  return recordAuditEvent({ organizationId, actor: systemActor(by), action, target, serverId, details }, outcome, { session });
}

/** A decision about a run: its entry names the run (found by `GET /audit?run=`) and its server, if it has one. */
export function recordRunDecision(
  run: { _id: unknown; organization_id: unknown; server_id?: unknown },
  decision: Pick<SystemDecision, 'by' | 'action' | 'details' | 'outcome'>,
  session: ClientSession,
): Promise<void> {
  const serverId = run.server_id ? String(run.server_id) : null;
  return recordSystemDecision({ ...decision, organizationId: String(run.organization_id), target: { kind: 'run', id: String(run._id) }, serverId }, session);
}
