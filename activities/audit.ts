import { Context } from '@temporalio/activity';
import { AuditChainer, BATCH } from '../src/domain/audit/chainer';
import { recordCheckpoints } from '../src/domain/audit/checkpoints';
import { organizationsWithEntriesBefore, pruneBefore } from '../src/domain/audit/trail';
import type { Logger } from '../src/logger';
import { throwIfStopping, untilStopping } from './worker-stopping';

export interface AuditActivityDeps {
  log: Logger;
  audit?: {
    /** AUDIT_CHECKPOINT_MINUTES: how often each organization's head is recorded and published. */
    checkpointMinutes: number;
    /** AUDIT_RETENTION_DAYS: entries older than this are pruned (after the chain's anchor is recorded). */
    retentionDays: number;
    /** Aborted when this worker stops: the chainer hands its work back at once instead of holding the shutdown. */
    stopping?: AbortSignal;
  };
}

/** How long one chainer activity runs before it returns (the workflow then starts the next). */
const CHAINER_RUN_MS = 10 * 60_000;
/**
 * How long the chainer waits after a round that did not fill its batch: entries are chained in
 * rounds about a second apart, many at a time, rather than one round per entry (which, beside runs of
 * quick steps, cost them a quarter more per step on a loaded 2-core machine).
 */
const ROUND_EVERY_MS = 1000;

const DEFAULTS = { checkpointMinutes: 60, retentionDays: 400 };

export function createAuditActivities({ log, audit = DEFAULTS }: AuditActivityDeps) {
  return {
    /**
     * The chainer: moves ready outbox entries into each organization's hash chain, in order, for
     * CHAINER_RUN_MS, heartbeating every round. A retry (or another worker after a heartbeat
     * timeout) continues from what is stored: nothing is chained twice or lost.
     */
    async chainAuditEntries(): Promise<number> {
      const context = Context.current();
      const chainer = new AuditChainer(log);
      const until = Date.now() + CHAINER_RUN_MS;
      let chained = 0;
      while (Date.now() < until) {
        throwIfStopping(audit.stopping, 'chains the audit trail');
        if (context.cancellationSignal.aborted) break;
        const moved = await chainer.round().catch((err: Error) => {
          chainer.forget();
          log.warn({ err: err.message }, 'an audit chaining round failed; trying again');
          return 0;
        });
        chained += moved;
        context.heartbeat({ chained });
        if (moved < BATCH) await untilStopping(audit.stopping, context.sleep(ROUND_EVERY_MS).catch(() => undefined));
      }
      return chained;
    },

    /** Records (logs, publishes) each organization's head, prunes entries past retention; returns the seconds to the next time. */
    async checkpointAuditTrail(): Promise<{ nextInSeconds: number }> {
      const before = new Date(Date.now() - audit.retentionDays * 86_400_000);
      for (const organizationId of await organizationsWithEntriesBefore(before)) {
        const pruned = await pruneBefore(organizationId, before);
        if (pruned) log.info({ organizationId, pruned, retentionDays: audit.retentionDays }, 'audit entries past retention pruned; the chain restarts from its anchor');
      }
      await recordCheckpoints(log);
      return { nextInSeconds: Math.max(1, Math.round(audit.checkpointMinutes * 60)) };
    },
  };
}

export type AuditActivities = ReturnType<typeof createAuditActivities>;
