/* The views of a run's targets: each server of a run, its steps without output in the run, with it on its own. */
import { z } from 'zod';
import { iso } from '../../../domain/timestamps';
import { timestampSchema } from '../../http/timestamps';
import { STEP_STATUSES, TARGET_STATUSES, type DeploymentRun } from '../../../domain/deployments/model';
import { toHealthState, toStepState } from '../../../domain/deployments/run-events';
import { outputsOf } from '../../../domain/deployments/outputs';

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
    outputs: z.record(z.string(), z.string()).describe('What its steps wrote to $BOSUN_OUTPUT, by name (a later step’s value wins; secrets redacted)'),
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
  steps: t.steps.map(toStepState),
  outputs: Object.fromEntries(outputsOf(t)),
  health: toHealthState(t.health),
  rollback: rollback ? { run_id: rollback._id.toString(), status: rollback.status, steps: rollback.steps.map(toStepState) } : null,
});

/** One target with its steps' commands and output. */
export const toTargetDetailView = (t: DeploymentRun, server?: { title: string; host: string } | null, rollback?: DeploymentRun | null): z.infer<typeof runTargetDetailSchema> => ({
  ...toTargetView(t, server, rollback),
  steps: t.steps.map((s) => ({ ...toStepState(s), command: s.command, output: s.output ?? '' })),
});
