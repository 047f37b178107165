import { inTransaction } from '../../domain/database';
import { recordAuditEvent } from '../../domain/audit/pending-entries';
import type { AuditActor } from '../../domain/audit/model';
import type { KindAdapter } from '../../domain/config/types';
import type { Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import type { ClientSession } from 'mongoose';
import { ApiError } from '../http/errors';
import { assertAnAdminRemains } from '../people/admins';
import { specHash } from './diff';
import { planConfig, type ConfigPlan, type PlannedWrite } from './plan';
import type { ApplyRequest, Plan } from './schemas';

/*
 * An apply: the plan made again, refused whole while it has an error or is not the plan reviewed
 * (plan_hash), then every change in one MongoDB transaction — the objects, their `managed_by`, and
 * one audit entry each — so a crash leaves all of it or none. What lives outside MongoDB (Temporal
 * Schedules, caches) follows after the commit; the worker's reconcile repairs it if that is lost.
 */

export interface Applied {
  plan: Plan;
  created: number;
  updated: number;
  deleted: number;
  /** The revision this source had applied before (the newest of its objects'), for the audit trail. */
  previous_revision: string | null;
}

// Tests only: BOSUN_FAILPOINT=config-apply-mid kills the process halfway through an apply's writes.
const dieMidApply = process.env.BOSUN_FAILPOINT === 'config-apply-mid';

const actorOf = (principal: Principal): AuditActor => ({ type: principal.identity.type, id: principal.identity.id, name: principal.identity.name, token_id: principal.tokenId ?? null });

export async function applyConfig(principal: Principal, request: ApplyRequest, adapters: readonly KindAdapter[], log: Logger): Promise<Applied> {
  const planned = await planConfig(principal, request, adapters);
  const { view } = planned;
  if (request.plan_hash && request.plan_hash !== view.plan_hash) {
    throw new ApiError('plan_changed', 'The plan of these files is not the one reviewed (the files or the organization changed since): plan again; nothing was applied');
  }
  if (view.errors.length) {
    throw new ApiError(
      'validation_failed',
      `The files have ${view.errors.length} problem${view.errors.length > 1 ? 's' : ''}: nothing was applied`,
      view.errors.map((e) => ({ path: e.line ? `${e.file}:${e.line}:${e.column}` : e.file, message: e.message })),
    );
  }
  const now = new Date();
  await inTransaction(async (session) => {
    const context = { organizationId: principal.organizationId, session, names: planned.names, principal, now };
    // What others reference is written first (a schedule reads its deployment as written), and deleted last.
    const order = (adapter: KindAdapter) => adapters.indexOf(adapter);
    const removals = [...planned.removals].sort((a, b) => order(b.adapter) - order(a.adapter));
    const writes = [...planned.writes].sort((a, b) => order(a.adapter) - order(b.adapter));
    for (const removal of removals) await removal.adapter.remove(context, removal.id);
    for (const [index, write] of writes.entries()) {
      if (dieMidApply && index === Math.floor(writes.length / 2)) process.kill(process.pid, 'SIGKILL');
      const url = request.web_url && request.revision ? `${request.web_url.replace(/\/+$/, '')}/blob/${request.revision}/${write.path}` : null;
      const managed_by = { source: request.source, revision: request.revision, path: write.path, url, applied_at: now, spec_hash: specHash(write.spec), forced_at: null, forced_by: null };
      await refusedAs422(write, () => write.adapter.write(context, { id: write.id, name: write.name, spec: write.spec, existing: write.existing !== null, managed_by }));
    }
    // Who may administer the organization is judged on the whole result: no apply leaves it without an admin.
    if (changesWhoAdministers(planned)) await adminRemainsAfter(principal.organizationId, session);
    await recordObjectEntries(principal, request, planned, session);
  });
  await followOutside(planned, principal.organizationId, log);
  return { plan: view, created: view.create.length, updated: view.update.length, deleted: view.delete.length, previous_revision: planned.previousRevision };
}

/** The kinds that decide who holds the admin role everywhere. */
const ACCESS_KINDS = new Set(['RoleBinding', 'Team', 'ServiceAccount']);
const changesWhoAdministers = (planned: ConfigPlan) => [...planned.writes, ...planned.removals].some((change) => ACCESS_KINDS.has(change.kind));

/** 409 when the organization, as this apply's transaction has written it, has no enabled admin left. */
async function adminRemainsAfter(organizationId: string, session: ClientSession): Promise<void> {
  try {
    await assertAnAdminRemains(organizationId, {}, session);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError('conflict', 'This apply would leave the organization without an administrator (no enabled person or service account would hold the admin role everywhere, as the files set role bindings and teams): keep one in the files, or give the admin role to someone else first; nothing was applied');
  }
}

/**
 * A write refused by a rule only the whole apply can check (a stage's parameters against its
 * deployment as this apply writes it): a 422 naming the document, the transaction rolled back. A
 * database's own error goes on as it is (a transient one is retried by the transaction).
 */
async function refusedAs422(write: PlannedWrite, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof ApiError) throw new ApiError(error.code, `${write.kind} "${write.name}" (${write.path}): ${error.message}`, error.details);
    if (!(error instanceof Error) || error.constructor !== Error) throw error;
    throw new ApiError('validation_failed', `${write.kind} "${write.name}" (${write.path}): ${error.message}; nothing was applied`, [{ path: write.path, message: error.message }]);
  }
}

/** One audit entry per object changed, in the apply's transaction. */
async function recordObjectEntries(principal: Principal, request: ApplyRequest, planned: ConfigPlan, session: ClientSession) {
  const base = { organizationId: principal.organizationId, actor: actorOf(principal) };
  const details = { source: request.source, revision: request.revision };
  const updated = new Map(planned.view.update.map((u) => [`${u.kind}/${u.name}`, u.fields]));
  for (const write of planned.writes) {
    const action = write.existing ? 'config.update' : 'config.create';
    const fields = updated.get(`${write.kind}/${write.name}`);
    await recordAuditEvent({ ...base, action, target: { kind: write.kind, id: write.id, name: write.name }, details: { ...details, path: write.path, ...(fields ? { fields: Object.keys(fields) } : {}) } }, 'ok', { session });
  }
  for (const removal of planned.removals) {
    await recordAuditEvent({ ...base, action: 'config.delete', target: { kind: removal.kind, id: removal.id, name: removal.name }, details }, 'ok', { session });
  }
}

/** Each kind's world outside MongoDB brought to what was committed (best effort: the worker's reconcile repairs). */
async function followOutside(planned: ConfigPlan, organizationId: string, log: Logger) {
  const kinds = new Set<KindAdapter>([...planned.writes.map((w) => w.adapter), ...planned.removals.map((r) => r.adapter)]);
  for (const adapter of kinds) {
    if (!adapter.afterApply) continue;
    const written = planned.writes.filter((w) => w.adapter === adapter).map((w) => w.id);
    const removed = planned.removals.filter((r) => r.adapter === adapter).map((r) => r.id);
    await adapter.afterApply(organizationId, { written, removed }).catch((err: unknown) => log.warn({ err, kind: adapter.kind }, 'could not bring what lives outside MongoDB to an apply now; the worker’s reconcile will'));
  }
}
