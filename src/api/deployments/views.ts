import { actorText, actorView } from '../../domain/access/actor';
import { actorSchema } from '../access/views';
import { z } from 'zod';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { temporalUiUrlSchema } from '../../domain/temporal/ui-url-schema';
import { RUN_STATUSES, STEP_STATUSES, TARGET_STATUSES, type Deployment, type DeploymentRun } from '../../domain/deployments/model';
import { stepDefinitions } from '../../domain/deployments/new-runs';
import { gatesOf, healthCheckOf, rollbackOf } from '../../domain/deployments/strategy';
import { maskedParameters } from '../../domain/deployments/parameters';
import { toFreezeOverrideState, toFreezeState, toGateState, toHealthState, toPauseState, toRollbackState, toStepState } from '../../domain/deployments/run-events';

const countOrPercent = z.union([z.number().int(), z.string()]);
const gateDefinitionView = z.object({ before_batch: z.number().int(), approvals: z.number().int(), expires_in: z.string() });
const healthCheckView = z
  .object({ command: z.string(), soak_seconds: z.number().int(), timeout_seconds: z.number().int(), retries: z.number().int(), interval_seconds: z.number().int() })
  .nullable()
  .describe('The check run on each target after its batch (null: none)');
const strategyView = z.object({
  batch_size: countOrPercent.nullable(),
  max_failures: countOrPercent.nullable(),
  gates: z.array(gateDefinitionView).describe('Approval gates (empty: none)'),
  health_check: healthCheckView,
});

export const deploymentListItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    server_id: z.string().nullable().describe('The one server it runs on; null when it has `targets`'),
    targets: z
      .object({ server_ids: z.array(z.string()), tags: z.array(z.string()) })
      .nullable()
      .describe('The servers listed and the servers having all the tags, resolved at each trigger; null for a one-server deployment'),
    last_run_at: timestampSchema.nullable(),
    last_run_status: z.enum(RUN_STATUSES).nullable(),
    created_at: timestampSchema,
  })
  .meta({ id: 'DeploymentListItem' });

export const deploymentSchema = deploymentListItemSchema
  .extend({
    steps: z.array(
      z.object({
        name: z.string(),
        command: z.string(),
        timeout_seconds: z.number().int().nullable(),
        retries: z.number().int(),
        continue_on_error: z.boolean(),
      }),
    ),
    strategy: strategyView.nullable().describe('How many targets run at once and how many may fail (null: all at once, none)'),
    rollback: z
      .object({
        steps: z.array(z.object({ name: z.string(), command: z.string(), timeout_seconds: z.number().int().nullable(), retries: z.number().int(), continue_on_error: z.boolean() })),
        automatic: z.boolean(),
      })
      .nullable()
      .describe('Steps run on every server a halted fleet run touched (null: none)'),
    parameters: z.array(
      z.object({
        name: z.string(),
        description: z.string().nullable(),
        default: z.string().nullable(),
        required: z.boolean(),
        secret: z.boolean(),
        pattern: z.string().nullable(),
      }),
    ),
    updated_at: timestampSchema,
  })
  .meta({ id: 'Deployment' });

const stepStateSchema = z.object({
  name: z.string(),
  status: z.enum(STEP_STATUSES),
  exit_code: z.number().int().nullable(),
  attempts: z.number().int(),
  started_at: timestampSchema.nullable(),
  completed_at: timestampSchema.nullable(),
});

export const runTargetSchema = z
  .object({
    server_id: z.string(),
    title: z.string(),
    host: z.string().nullable(),
    batch: z.number().int(),
    status: z.enum(TARGET_STATUSES),
    started_at: timestampSchema.nullable(),
    completed_at: timestampSchema.nullable(),
    error: z.string().nullable(),
    seq: z.number().int().describe('The sequence number of the target’s latest change, as in its live events'),
    steps: z.array(stepStateSchema),
    health: z
      .object({
        status: z.enum(['running', 'success', 'failed']),
        command: z.string(),
        attempts: z.array(z.object({ attempt: z.number().int(), at: timestampSchema, exit_code: z.number().int().nullable(), timed_out: z.boolean(), output: z.string().describe('The end of what it printed') })),
        started_at: timestampSchema,
        completed_at: timestampSchema.nullable(),
      })
      .nullable()
      .describe('Its health check after its batch (strategy.health_check); null when none ran'),
    rollback: z
      .object({ run_id: z.string().describe('The rollback run: read its steps’ logs as a run’s'), status: z.enum(TARGET_STATUSES), steps: z.array(stepStateSchema) })
      .nullable()
      .describe('Its rollback, once its run rolled back (it touched this server); null otherwise'),
  })
  .meta({ id: 'RunTarget', description: 'One server of a run; its steps without output (GET …/targets/{server_id} has it)' });

export const runTargetDetailSchema = runTargetSchema
  .extend({ steps: z.array(stepStateSchema.extend({ command: z.string(), output: z.string() })) })
  .meta({ id: 'RunTargetDetail' });

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
    before_batch: z.number().int(),
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

export const runSchema = z
  .object({
    id: z.string(),
    deployment_id: z.string(),
    server_id: z.string().nullable().describe('The server of a one-server run; null for a fleet run (see targets)'),
    status: z.enum(RUN_STATUSES),
    retry_of: z.string().nullable().describe('The run this one retries'),
    parameters: z.record(z.string(), z.string()).describe('The parameters it runs with; secret ones as ********'),
    strategy: z
      .object({ batch_size: z.number().int(), max_failures: z.number().int(), batches: z.number().int() })
      .nullable()
      .describe('A fleet run’s strategy, resolved against its targets; null for a one-server run'),
    summary: runSummarySchema,
    triggered_by: z.string().describe('Who triggered it: "alice (person)", "ci-web (service account)", "schedule nightly as ci-nightly (service account)" (runs of an older version: "API token: <token name>")'),
    trigger: z
      .object({ type: z.enum(['person', 'service_account', 'schedule', 'token']), schedule_id: z.string().nullable(), name: z.string(), scheduled_at: timestampSchema.nullable() })
      .describe('What triggered it, structured: a person, a service account, or a schedule (its id, its name and the tick’s due time); "token" for runs of an older version'),
    actor: actorSchema.nullable().describe('The identity and token that triggered it (null on runs of an older version)'),
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
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'Run' });

export const runListItemSchema = runSchema
  .omit({ targets: true })
  .extend({ steps: z.array(z.object({ name: z.string(), status: z.enum(STEP_STATUSES), exit_code: z.number().int().nullable() })) })
  .meta({ id: 'RunListItem', description: 'A run without step output nor targets (read the run for those); its summary counts the targets' });

/** The trigger's answer, not wrapped in `data`. */
export const runTriggeredSchema = z
  .object({
    run_id: z.string(),
    status: z.enum(RUN_STATUSES).describe('queued, or the run’s current status for a replayed Idempotency-Key'),
    message: z.string().describe('Says where to poll for the run'),
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'RunTriggered' });

export const toDeploymentListView = (d: Deployment): z.infer<typeof deploymentListItemSchema> => ({
  id: d._id.toString(),
  name: d.name,
  server_id: d.server_id?.toString() ?? null,
  targets: d.targets ? { server_ids: (d.targets.server_ids ?? []).map(String), tags: [...(d.targets.tags ?? [])] } : null,
  last_run_at: iso(d.last_run_at),
  last_run_status: d.last_run_status ?? null,
  created_at: d.createdAt.toISOString(),
});

export const toDeploymentView = (d: Deployment): z.infer<typeof deploymentSchema> => ({
  ...toDeploymentListView(d),
  steps: stepDefinitions(d.steps),
  rollback: rollbackOf(d),
  strategy: d.strategy
    ? {
        batch_size: (d.strategy.batch_size as unknown as number | string | null) ?? null,
        max_failures: (d.strategy.max_failures as unknown as number | string | null) ?? null,
        gates: gatesOf(d),
        health_check: healthCheckOf(d),
      }
    : null,
  parameters: (d.parameters ?? []).map((p) => ({
    name: p.name,
    description: p.description ?? null,
    default: p.default ?? null,
    required: !!p.required,
    secret: !!p.secret,
    pattern: p.pattern ?? null,
  })),
  updated_at: d.updatedAt.toISOString(),
});


type Summary = z.infer<typeof runSummarySchema>;
type TargetStatusCounts = Record<string, number>;

/** The summary of a run's targets, from how many are in each status. */
export function toSummary(counts: TargetStatusCounts): Summary {
  const n = (status: string) => counts[status] ?? 0;
  const summary = { success: n('success'), failed: n('failed'), running: n('running'), queued: n('queued'), skipped: n('skipped'), cancelled: n('cancelled') };
  return { total: Object.values(summary).reduce((a, b) => a + b, 0), ...summary };
}

/** A run's counts: its targets' for a fleet run, its own for a one-server run (one target). */
export const runCounts = (r: DeploymentRun, targetCounts?: TargetStatusCounts): TargetStatusCounts => (r.fleet ? (targetCounts ?? {}) : { [r.status]: 1 });

const stepState = toStepState;

/** A target as a run lists it (a one-server run is its own one target): steps without output. */
export const toTargetView = (t: DeploymentRun, server?: { title: string; host: string } | null, rollback?: DeploymentRun | null): z.infer<typeof runTargetSchema> => ({
  server_id: String(t.server_id),
  title: t.server_title ?? server?.title ?? String(t.server_id),
  host: t.server_host ?? server?.host ?? null,
  batch: t.batch ?? 1,
  status: t.status,
  started_at: iso(t.started_at),
  completed_at: iso(t.completed_at),
  error: t.error ?? null,
  seq: t.seq,
  steps: t.steps.map(stepState),
  health: toHealthState(t.health),
  rollback: rollback ? { run_id: rollback._id.toString(), status: rollback.status, steps: rollback.steps.map(stepState) } : null,
});

/** One target with its steps' commands and output. */
export const toTargetDetailView = (t: DeploymentRun, server?: { title: string; host: string } | null, rollback?: DeploymentRun | null): z.infer<typeof runTargetDetailSchema> => ({
  ...toTargetView(t, server, rollback),
  steps: t.steps.map((s) => ({ ...stepState(s), command: s.command, output: s.output ?? '' })),
});

/** Whole seconds between start and end, or so far while running; null before it starts. */
const durationSeconds = (r: Pick<DeploymentRun, 'started_at' | 'completed_at'>, now = Date.now()) =>
  r.started_at ? Math.round(((r.completed_at?.getTime() ?? now) - r.started_at.getTime()) / 1000) : null;

/** The run's own fields, as every view of it shows them. */
function runFields(r: DeploymentRun, counts: TargetStatusCounts) {
  return {
    id: r._id.toString(),
    deployment_id: r.deployment_id.toString(),
    server_id: r.server_id?.toString() ?? null,
    status: r.status as (typeof RUN_STATUSES)[number],
    retry_of: r.retry_of?.toString() ?? null,
    parameters: maskedParameters(r.parameters),
    strategy: r.fleet ? { batch_size: r.fleet.batch_size, max_failures: r.fleet.max_failures, batches: r.fleet.batches } : null,
    summary: toSummary(counts),
    triggered_by: r.schedule ? `schedule ${r.schedule.name} as ${actorText(r.actor, r.triggered_by)}` : actorText(r.actor, r.triggered_by),
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
  };
}

/** The run list: no step output nor targets, the targets counted (`targetCounts` for a fleet run). */
export const toRunListView = (r: DeploymentRun, targetCounts?: TargetStatusCounts) => ({
  ...runFields(r, runCounts(r, targetCounts)),
  steps: r.fleet ? [] : r.steps.map(({ name, status, exit_code }) => ({ name, status, exit_code: exit_code ?? null })),
});

/** A dry run's answer. */
export const planSchema = z
  .object({
    deployment_id: z.string(),
    plan_hash: z.string().describe('The hash of this plan (targets and batches, steps, strategy, parameters’ names and non-secret values): pass it to a trigger to run exactly what was reviewed'),
    strategy: z.object({ batch_size: z.number().int(), max_failures: z.number().int(), batches: z.number().int(), gates: z.array(gateDefinitionView), health_check: healthCheckView }),
    targets: z.array(z.object({ server_id: z.string(), title: z.string(), host: z.string(), status: z.string(), batch: z.number().int() })),
    steps: deploymentSchema.shape.steps,
    rollback: deploymentSchema.shape.rollback.describe('The steps a halted run would run on the servers it touched (null: none)'),
    environment: z.record(z.string(), z.string()).describe('What each step would see: BOSUN_PARAM_<NAME>, secret values as ********'),
    warnings: z.array(z.object({ server_id: z.string().nullable(), code: z.enum(['no_targets', 'unverified', 'offline', 'busy', 'gate_ignored', 'frozen', 'freeze_upcoming']), message: z.string() })),
    likely_duration: z
      .object({ seconds: z.number().int(), basis: z.enum(['last_success', 'default']) })
      .describe('How long a run likely takes, for upcoming_freezes: the deployment’s last successful run’s duration, else 3600 s (default)'),
    frozen_targets: z
      .array(z.object({ server_id: z.string(), title: z.string(), freezes: z.array(z.object({ id: z.string(), name: z.string(), ends_at: timestampSchema })) }))
      .describe('Targets a change freeze covers now: a trigger would answer 409 frozen (unless overridden)'),
    upcoming_freezes: z
      .array(z.object({ id: z.string(), name: z.string(), starts_at: timestampSchema, ends_at: timestampSchema, server_ids: z.array(z.string()).describe('The targets it covers') }))
      .describe('Freezes not open now whose next window opens within likely_duration: a fleet run still going then holds between batches until it ends'),
  })
  .meta({ id: 'DeploymentPlan' });
