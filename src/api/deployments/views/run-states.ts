/* The views of a run's state beside its steps: its targets counted, its gate and who may approve it, pause, freeze, freeze override and waits. */
import { z } from 'zod';
import { actorSchema } from '../../access/views';
import { timestampSchema } from '../../http/timestamps';
import type { DeploymentRun } from '../../../domain/deployments/model';

export const runSummarySchema = z
  .object({
    total: z.number().int(),
    success: z.number().int(),
    failed: z.number().int(),
    running: z.number().int(),
    queued: z.number().int(),
    skipped: z.number().int(),
    cancelled: z.number().int(),
  })
  .meta({ id: 'RunSummary', description: 'How many targets are in each status' });

export const runGateSchema = z
  .object({
    before_batch: z.number().int().describe('The batch it stands before; in a rolling window, the group of before_target'),
    before_target: z.number().int().nullable().describe('In a rolling window: the target (1-based, in order) it stands before; null with batches'),
    approvals_required: z.number().int(),
    approvals: z.array(z.object({ by: actorSchema, at: timestampSchema, comment: z.string().nullable(), plan_hash: z.string().nullable().describe('The run’s plan_hash: what was approved') })),
    opened_at: timestampSchema,
    expires_at: timestampSchema,
    outcome: z.enum(['approved', 'rejected', 'expired']).nullable().describe('null while it waits'),
    rejected_by: actorSchema.nullable(),
    reason: z.string().nullable().describe('Why it was rejected'),
  })
  .meta({ id: 'RunGate' });

export const runPauseSchema = z
  .object({ by: actorSchema, reason: z.string(), requested_at: timestampSchema, paused_at: timestampSchema.nullable().describe('When the run stopped between batches; null while its batch finishes') })
  .meta({ id: 'RunPause' });

export const runFreezeSchema = z
  .object({
    names: z.array(z.string()).describe('The freezes covering the next batch’s servers'),
    until: timestampSchema.describe('When they lift as things stood at the last check (the run checks again then, within minutes, and at once when a freeze is edited or deleted)'),
    since: timestampSchema.describe('When the run stopped between batches for them'),
  })
  .meta({ id: 'RunFreeze' });

export const runFreezeOverrideSchema = z
  .object({ by: actorSchema, at: timestampSchema, reason: z.string(), freezes: z.array(z.string()).describe('The freezes that covered its servers then') })
  .meta({ id: 'RunFreezeOverride' });

export const runWaitsSchema = z
  .object({
    approval_seconds: z.number().int(),
    paused_seconds: z.number().int(),
    frozen_seconds: z.number().int(),
    current: z
      .object({ for: z.enum(['approval', 'pause', 'freeze']), since: timestampSchema })
      .nullable()
      .describe('The hold going on (its time counts on from `since`); null while it runs, and once it ended'),
  })
  .meta({ id: 'RunWaits', description: 'How long the run waited, in whole seconds, by hold: those that ended (a gate decided, a pause resumed, a freeze lifted; a hold the run ended in, until its end), and the one going on' });

export const runApproverSchema = z
  .object({ kind: z.enum(['person', 'team']), id: z.string(), name: z.string() })
  .meta({ id: 'RunApprover', description: 'A person who may approve, or a team whose members may (named instead of them)' });

type Summary = z.infer<typeof runSummarySchema>;
/** How many targets are in each status. */
export type TargetStatusCounts = Record<string, number>;

/** The summary of a run's targets, from how many are in each status. */
export function toSummary(counts: TargetStatusCounts): Summary {
  const n = (status: string) => counts[status] ?? 0;
  const summary = { success: n('success'), failed: n('failed'), running: n('running'), queued: n('queued'), skipped: n('skipped'), cancelled: n('cancelled') };
  return { total: Object.values(summary).reduce((a, b) => a + b, 0), ...summary };
}

/** A run's counts: its targets' for a fleet run, its own for a one-server run (one target). */
export const runCounts = (r: DeploymentRun, targetCounts?: TargetStatusCounts): TargetStatusCounts => (r.fleet ? (targetCounts ?? {}) : { [r.status]: 1 });
