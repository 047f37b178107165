import type { Logger } from '../../logger';
import { AuditCheckpointModel, AuditEntryModel } from './model';
import { headOf } from './trail';

export interface Checkpoint {
  seq: number;
  hash: string;
  at: Date;
}

/**
 * Publishes a checkpoint as an `audit.checkpoint` notification. The notifications outbox
 * (src/domain/notifications/outbox.ts, built beside this) is wired here at merge, in one line:
 *   await recordAuditCheckpoint(organizationId, checkpoint);
 * Until then a checkpoint is recorded (audit_checkpoints) and logged only.
 */
export async function publishCheckpoint(organizationId: string, checkpoint: Checkpoint): Promise<void> {
  // MERGE: import { recordAuditCheckpoint } from '../notifications/outbox'; and call it here.
  void organizationId;
  void checkpoint;
}

/**
 * Each organization's head, recorded, logged and published, when it moved since its last checkpoint
 * (an idle trail publishes nothing new). Returns the checkpoints made.
 */
export async function recordCheckpoints(log: Logger): Promise<Array<Checkpoint & { organization_id: string }>> {
  const organizations = (await AuditEntryModel.distinct('organization_id')) as string[];
  const made: Array<Checkpoint & { organization_id: string }> = [];
  for (const organizationId of organizations) {
    const head = await headOf(organizationId);
    const last = await AuditCheckpointModel.findOne({ organization_id: organizationId }).sort({ seq: -1 }).lean();
    if (last && last.seq === head.seq) continue;
    const checkpoint = { seq: head.seq, hash: head.hash, at: new Date() };
    await AuditCheckpointModel.create({ organization_id: organizationId, ...checkpoint });
    log.info({ organizationId, seq: checkpoint.seq, hash: checkpoint.hash }, 'audit checkpoint');
    await publishCheckpoint(organizationId, checkpoint);
    made.push({ organization_id: organizationId, ...checkpoint });
  }
  return made;
}

/** An organization's checkpoints, newest first. */
export function latestCheckpoints(organizationId: string, limit: number) {
  return AuditCheckpointModel.find({ organization_id: organizationId }).sort({ seq: -1 }).limit(limit).lean();
}
