import type { Logger } from '../../logger';
import { AuditCheckpointModel, AuditEntryModel } from './model';
import { headOf } from './trail';
import { inTransaction } from '../database';
import { recordAuditCheckpoint } from '../notifications/event-outbox';

export interface Checkpoint {
  seq: number;
  hash: string;
  at: Date;
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
    // Recorded and published together: a checkpoint is never kept without its audit.checkpoint notification.
    await inTransaction(async (session) => {
      await AuditCheckpointModel.create([{ organization_id: organizationId, ...checkpoint }], { session });
      await recordAuditCheckpoint(organizationId, checkpoint, { session });
    });
    log.info({ organizationId, seq: checkpoint.seq, hash: checkpoint.hash }, 'audit checkpoint');
    made.push({ organization_id: organizationId, ...checkpoint });
  }
  return made;
}

/** An organization's checkpoints, newest first. */
export function latestCheckpoints(organizationId: string, limit: number) {
  return AuditCheckpointModel.find({ organization_id: organizationId }).sort({ seq: -1 }).limit(limit).lean();
}
