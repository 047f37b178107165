import { Types, type ClientSession } from 'mongoose';
import { batcher, insertEach, updateEach } from '../batch';
import { isDuplicateKey } from '../database';
import { AuditPendingModel, type AuditActor, type AuditFields, type AuditTarget } from './model';

/*
 * The audit trail's outbox (`audit_pending`), the one module that writes it. A change's entry is written here
 * before the change is made (outcome `pending`) and completed with its outcome after; the chainer
 * moves finished entries into the trail. An entry whose outcome never comes (Bosun died between the
 * change and its outcome) is chained as `unknown` once `ready_at` passes.
 */

export interface AuditIntent {
  organizationId: string;
  actor: AuditActor;
  sourceAddress?: string | null;
  action: string;
  target: AuditTarget;
  serverId?: string | null;
  details?: Record<string, unknown>;
  /** When the change began (now unless given). */
  at?: Date;
}

// Single-node acknowledgement: an entry is on the primary before the change goes ahead; the trail's
// own copy (chained) is written with the deployment's write concern.
const W1 = { writeConcern: { w: 1 } } as const;

// A fleet's activities write their commands' entries and outcomes at about the same moments: those
// made while earlier ones are on their way go out together, one insert command and one update command
// (src/domain/batch.ts). At once otherwise: a command's entry is sent before its SSH exec (docs/audit.md).
const insertEntry = batcher((docs: Record<string, unknown>[]) => insertEach(AuditPendingModel.collection, docs, W1), { atOnce: true });
const completeEntry = batcher((updates: Parameters<typeof updateEach>[1]) => updateEach(AuditPendingModel.collection, updates, W1), { atOnce: true });

const fieldsOf = (intent: AuditIntent, outcome: string): AuditFields => ({
  organization_id: intent.organizationId,
  at: intent.at ?? new Date(),
  actor: intent.actor,
  source_address: intent.sourceAddress ?? null,
  action: intent.action,
  target: intent.target,
  server_id: intent.serverId ?? null,
  outcome,
  details: intent.details ?? {},
});

/**
 * Writes an entry before its change: chained as `unknown` if no outcome arrives within
 * `pendingSeconds`. With `key`, writing it again (an activity's retry) changes nothing. Returns its id.
 */
export async function recordIntent(intent: AuditIntent, pendingSeconds: number, key?: string): Promise<string> {
  const id = key ?? new Types.ObjectId().toHexString();
  const doc = { _id: id, ...fieldsOf(intent, 'pending'), ready_at: new Date(Date.now() + pendingSeconds * 1000) };
  try {
    await insertEntry(doc);
  } catch (error) {
    // Written before (a retried activity's): the first is kept.
    if (!key || !isDuplicateKey(error)) throw error;
  }
  return id;
}

/** An intent's outcome (`ok`, an error code, an exit status): the chainer takes it next. */
export async function recordOutcome(id: string, outcome: string, more: { target?: AuditTarget; details?: Record<string, unknown> } = {}): Promise<void> {
  const set: Record<string, unknown> = { outcome, ready_at: new Date() };
  if (more.target) set.target = more.target;
  for (const [key, value] of Object.entries(more.details ?? {})) set[`details.${key}`] = value;
  await completeEntry({ filter: { _id: id as never, outcome: 'pending' }, update: { $set: set } });
}

/**
 * An entry whose change and outcome are one moment (a sign-in, a refused sign-in, a decision Bosun
 * makes by itself): one write, in `session`'s transaction when given (the change's own).
 */
export async function recordAuditEvent(intent: AuditIntent, outcome: string, { session }: { session?: ClientSession } = {}): Promise<void> {
  await AuditPendingModel.collection.insertOne({ _id: new Types.ObjectId().toHexString(), ...fieldsOf(intent, outcome), ready_at: new Date() } as never, session ? { session } : W1);
}

export type PendingEntry = AuditFields & { _id: string; ready_at: Date };

/** The entries ready to chain (finished, or pending past their time), oldest first. */
export function readyEntries(limit: number, now = new Date()): Promise<PendingEntry[]> {
  return AuditPendingModel.find({ ready_at: { $lte: now } }).sort({ ready_at: 1, _id: 1 }).limit(limit).lean<PendingEntry[]>();
}

/** Entries now in the trail leave the outbox. */
export async function dropChained(ids: string[]): Promise<void> {
  if (ids.length) await AuditPendingModel.collection.deleteMany({ _id: { $in: ids as never[] } });
}

/** Actors as the trail records them. */
export const systemActor = (name = 'bosun'): AuditActor => ({ type: 'system', id: null, name });
