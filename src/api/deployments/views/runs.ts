/* The views of a run: on its own (steps with output, targets), in a run list, and a trigger's answer. */
import { actorView, triggeredByText } from '../../../domain/access/actor';
import { actorSchema } from '../../access/views';
import { z } from 'zod';
import { iso } from '../../../domain/timestamps';
import { timestampSchema } from '../../http/timestamps';
import { temporalUiUrlSchema } from '../../../domain/temporal/ui-url-schema';
import { RUN_STATUSES, STEP_STATUSES, type DeploymentRun } from '../../../domain/deployments/model';
import { maskedParameters } from '../../../domain/deployments/parameters';
import { toFreezeOverrideState, toFreezeState, toGateState, toPauseState, toRollbackState } from '../../../domain/deployments/run-events';
import { runApproverSchema, runFreezeOverrideSchema, runFreezeSchema, runGateSchema, runPauseSchema, runWaitsSchema, runCounts, runSummarySchema, toSummary, type TargetStatusCounts } from './run-states';
import { toWaitsState } from '../../../domain/deployments/waits';
import { timeSplit, waitingOf } from '../../../domain/run-time';
import { runTargetSchema, toTargetView } from './targets';
import { fleetOutputs, outputsOf, targetOutputsOf } from '../../../domain/deployments/outputs';

export const runSchema = z
  .object({
    id: z.string(),
    deployment_id: z.string(),
    server_id: z.string().nullable().describe('The server of a one-server run; null for a fleet run (see targets)'),
    status: z.enum(RUN_STATUSES),
    retry_of: z.string().nullable().describe('The run this one retries'),
    parameters: z.record(z.string(), z.string()).describe('The parameters it runs with; secret ones as ********'),
    strategy: z
      .object({
        batch_size: z.number().int().nullable().describe('Targets per batch; null in a rolling window'),
        max_concurrency: z.number().int().nullable().describe('A rolling window: at most this many targets at once, the next starting as one ends; null with batches'),
        max_failures: z.number().int(),
        batches: z.number().int().describe('How many batches; in a rolling window, how many groups of targets (a target’s `batch` is its group)'),
      })
      .nullable()
      .describe('A fleet run’s strategy, resolved against its targets; null for a one-server run'),
    summary: runSummarySchema,
    triggered_by: z
      .string()
      .describe('Who triggered it: "API token: <token name>" with a bearer token (a person’s, a service account’s, an AI agent’s), "alice (person)" from a console session, "schedule nightly as ci-nightly (service account)" from a schedule’s tick; `actor` says which identity'),
    trigger: z
      .object({ type: z.enum(['person', 'service_account', 'schedule', 'token']), schedule_id: z.string().nullable(), name: z.string(), scheduled_at: timestampSchema.nullable() })
      .describe('What triggered it, structured: a person, a service account, or a schedule (its id, its name and the tick’s due time); "token" for runs of an older version'),
    actor: actorSchema.nullable().describe('The identity that triggered it, and the token it used (null on runs of a version before identities)'),
    cancelled_by: actorSchema.nullable().describe('Who asked for its cancel; null unless cancelled by a request'),
    plan_hash: z.string().nullable().describe('The hash of its plan when it was triggered (as POST /plan computes it); null for runs of an older version'),
    gate: runGateSchema.nullable().describe('The approval gate it waits at (status awaiting_approval), or the last one it passed or failed at; null when it met none'),
    pause: runPauseSchema.nullable().describe('A pause asked (held from the end of the running batch: status paused) until resumed; null otherwise'),
    freeze: runFreezeSchema.nullable().describe('The change freezes it is held by between batches (status frozen); null otherwise'),
    freeze_override: runFreezeOverrideSchema.nullable().describe('Triggered through change freezes by a person with role admin: who, when, why, which freezes; null otherwise'),
    rollback: z
      .object({
        status: z.enum(['running', 'success', 'failed']),
        reason: z.string().describe('Why (BOSUN_ROLLBACK_REASON): the run’s halt, or what the person asked'),
        requested_by: actorSchema.nullable().describe('Who asked for it; null when it ran as the run halted'),
        touched: z.number().int().describe('Servers the run touched (ran at least one step on), each rolled back'),
        succeeded: z.number().int(),
        failed: z.number().int(),
        summary: z.string().nullable().describe('"rolled back on 4 of 4 touched servers" (or which failed), once done'),
        started_at: timestampSchema,
        completed_at: timestampSchema.nullable(),
      })
      .nullable()
      .describe('A fleet run’s rollback (each target’s own is on the target); null when none ran'),
    rollback_steps: z.number().int().describe('How many rollback steps the run was triggered with (0: it cannot be rolled back)'),
    created_at: timestampSchema,
    started_at: timestampSchema.nullable(),
    completed_at: timestampSchema.nullable(),
    duration_seconds: z.number().int().nullable().describe('Whole seconds; so far while running, null while queued'),
    running_seconds: z.number().int().nullable().describe('Of duration_seconds, the time it ran: the rest it waited (waiting_seconds); null while queued'),
    waiting_seconds: z.number().int().nullable().describe('Of duration_seconds, the time it waited at approval gates, paused and frozen (waits has each); null while queued'),
    waits: runWaitsSchema,
    approvers: z
      .array(runApproverSchema)
      .nullable()
      .describe('Who may approve the gate it waits at (status awaiting_approval): people, and teams whose members may, as the access gate judges an approval; never who triggered it nor who approved already. null when no gate waits'),
    error: z.string().nullable(),
    seq: z.number().int().describe('The sequence number of the latest change, as in live events'),
    steps: z.array(
      z.object({
        name: z.string(),
        command: z.string(),
        status: z.enum(STEP_STATUSES),
        output: z.string().describe('stdout and stderr as produced, capped at STEP_OUTPUT_LIMIT_BYTES, secrets redacted'),
        exit_code: z.number().int().nullable(),
        attempts: z.number().int(),
        started_at: timestampSchema.nullable(),
        completed_at: timestampSchema.nullable(),
      }),
    ).describe('A one-server run’s steps, with output; empty for a fleet run (its targets have them)'),
    targets: z.array(runTargetSchema).describe('Every server of the run (one for a one-server run), in batch order'),
    outputs: z
      .record(z.string(), z.string())
      .describe('What its steps wrote to $BOSUN_OUTPUT, by name (a later step’s value wins; secrets redacted); a fleet run’s: the values every target gave the same'),
    output_conflicts: z
      .array(
        z.object({
          name: z.string(),
          targets: z.array(z.object({ server_id: z.string(), server_title: z.string(), value: z.string().nullable().describe('null: it gave none') })),
        }),
      )
      .describe('A fleet run’s outputs its targets disagree on (or some gave none), with what each target gave; empty for a one-server run'),
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'Run' });

export const runListItemSchema = runSchema
  .omit({ targets: true, approvers: true, outputs: true, output_conflicts: true })
  .extend({ steps: z.array(z.object({ name: z.string(), status: z.enum(STEP_STATUSES), exit_code: z.number().int().nullable() })) })
  .meta({ id: 'RunListItem', description: 'A run without step output, targets nor outputs (read the run for those); its summary counts the targets' });

/** The trigger's answer, not wrapped in `data`. */
export const runTriggeredSchema = z
  .object({
    run_id: z.string(),
    status: z.enum(RUN_STATUSES).describe('queued, or the run’s current status for a replayed Idempotency-Key'),
    message: z.string().describe('Says where to poll for the run'),
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'RunTriggered' });

/** Whole seconds between start and end, or so far while running; null before it starts. */
const durationSeconds = (r: Pick<DeploymentRun, 'started_at' | 'completed_at'>, now = Date.now()) =>
  r.started_at ? Math.round(((r.completed_at?.getTime() ?? now) - r.started_at.getTime()) / 1000) : null;

/** The run's own fields, as every view of it shows them. */
function runFields(r: DeploymentRun, counts: TargetStatusCounts) {
  const waits = toWaitsState(r);
  const split = timeSplit({ started_at: iso(r.started_at), completed_at: iso(r.completed_at), waits });
  return {
    id: r._id.toString(),
    deployment_id: r.deployment_id.toString(),
    server_id: r.server_id?.toString() ?? null,
    status: r.status as (typeof RUN_STATUSES)[number],
    retry_of: r.retry_of?.toString() ?? null,
    parameters: maskedParameters(r.parameters),
    strategy: r.fleet
      ? { batch_size: r.fleet.max_concurrency ? null : r.fleet.batch_size, max_concurrency: r.fleet.max_concurrency ?? null, max_failures: r.fleet.max_failures, batches: r.fleet.batches }
      : null,
    summary: toSummary(counts),
    triggered_by: triggeredByText(r),
    trigger: r.schedule
      ? { type: 'schedule' as const, schedule_id: r.schedule.id.toString(), name: r.schedule.name, scheduled_at: r.schedule.scheduled_at.toISOString() }
      : { type: (r.actor?.type as 'person' | 'service_account' | undefined) ?? ('token' as const), schedule_id: null, name: r.actor?.name ?? r.triggered_by, scheduled_at: null },
    actor: actorView(r.actor),
    cancelled_by: actorView(r.cancelled_by),
    plan_hash: r.plan_hash ?? null,
    gate: r.gate ? toGateState(r.gate) : null,
    pause: toPauseState(r),
    freeze: toFreezeState(r),
    freeze_override: toFreezeOverrideState(r.freeze_override),
    rollback: toRollbackState(r.rollback),
    rollback_steps: r.fleet?.rollback?.steps.length ?? 0,
    created_at: iso(r.createdAt),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    duration_seconds: durationSeconds(r),
    running_seconds: split?.running ?? null,
    waiting_seconds: split ? waitingOf(split) : null,
    waits,
    error: r.error ?? null,
    /** The sequence number of the latest change, as in live events. */
    seq: r.seq,
  };
}

/**
 * The run as the API shows it: a one-server run's steps with output, and every run's targets (a
 * one-server run's is the run itself, on `server`).
 */
export function toRunView(r: DeploymentRun, targets: DeploymentRun[] = [], server?: { title: string; host: string } | null, rollbacks: DeploymentRun[] = []) {
  const rollbackByTarget = new Map(rollbacks.map((rb) => [rb.rolls_back!.target_id.toString(), rb]));
  const counts: TargetStatusCounts = {};
  for (const t of targets) counts[t.status] = (counts[t.status] ?? 0) + 1;
  const outputs = r.fleet ? fleetOutputs(targets.map(targetOutputsOf)) : { agreed: outputsOf(r), conflicts: [] };
  return {
    ...runFields(r, runCounts(r, counts)),
    steps: r.fleet
      ? []
      : r.steps.map((s) => ({
          name: s.name,
          command: s.command,
          status: s.status,
          output: s.output ?? '',
          exit_code: s.exit_code ?? null,
          attempts: s.attempts ?? 0,
          started_at: iso(s.started_at),
          completed_at: iso(s.completed_at),
        })),
    targets: r.fleet ? targets.map((t) => toTargetView(t, undefined, rollbackByTarget.get(t._id.toString()))) : [toTargetView(r, server)],
    outputs: Object.fromEntries(outputs.agreed),
    output_conflicts: outputs.conflicts.map(({ name, targets: given }) => ({
      name,
      targets: given.map(({ serverId, title, value }) => ({ server_id: serverId, server_title: title, value })),
    })),
  };
}

/** The run list: no step output nor targets, the targets counted (`targetCounts` for a fleet run). */
export const toRunListView = (r: DeploymentRun, targetCounts?: TargetStatusCounts) => ({
  ...runFields(r, runCounts(r, targetCounts)),
  steps: r.fleet ? [] : r.steps.map(({ name, status, exit_code }) => ({ name, status, exit_code: exit_code ?? null })),
});
