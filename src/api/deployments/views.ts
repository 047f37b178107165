import { z } from 'zod';
import { iso } from '../../domain/timestamps';
import { timestampSchema } from '../http/timestamps';
import { temporalUiUrlSchema } from '../../domain/temporal/ui-link';
import { RUN_STATUSES, STEP_STATUSES, type Deployment, type DeploymentRun } from '../../domain/deployments/model';
import { stepDefinitions } from '../../domain/deployments/runs';

export const deploymentListItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    server_id: z.string(),
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
    updated_at: timestampSchema,
  })
  .meta({ id: 'Deployment' });

export const runSchema = z
  .object({
    id: z.string(),
    deployment_id: z.string(),
    server_id: z.string(),
    status: z.enum(RUN_STATUSES),
    triggered_by: z.string().describe('"API token: <token name>"'),
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
    ),
    temporal_ui_url: temporalUiUrlSchema,
  })
  .meta({ id: 'Run' });

export const runListItemSchema = runSchema
  .extend({ steps: z.array(z.object({ name: z.string(), status: z.enum(STEP_STATUSES), exit_code: z.number().int().nullable() })) })
  .meta({ id: 'RunListItem', description: 'A run without step output (read the run for that)' });

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
  server_id: d.server_id.toString(),
  last_run_at: iso(d.last_run_at),
  last_run_status: d.last_run_status ?? null,
  created_at: d.createdAt.toISOString(),
});

export const toDeploymentView = (d: Deployment): z.infer<typeof deploymentSchema> => ({
  ...toDeploymentListView(d),
  steps: stepDefinitions(d.steps),
  updated_at: d.updatedAt.toISOString(),
});

/** Whole seconds between start and end, or so far while running; null before it starts. */
const durationSeconds = (r: Pick<DeploymentRun, 'started_at' | 'completed_at'>, now = Date.now()) =>
  r.started_at ? Math.round(((r.completed_at?.getTime() ?? now) - r.started_at.getTime()) / 1000) : null;

/** The run as the API and live events show it; `withOutput` false leaves each step's output out. */
export function toRunView(r: DeploymentRun, withOutput = true) {
  return {
    id: r._id.toString(),
    deployment_id: r.deployment_id.toString(),
    server_id: r.server_id.toString(),
    status: r.status,
    triggered_by: `API token: ${r.triggered_by}`,
    created_at: iso(r.createdAt),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    duration_seconds: durationSeconds(r),
    error: r.error ?? null,
    /** The sequence number of the latest change, as in live events. */
    seq: r.seq,
    steps: r.steps.map((s) => ({
      name: s.name,
      command: s.command,
      status: s.status,
      ...(withOutput ? { output: s.output ?? '' } : {}),
      exit_code: s.exit_code ?? null,
      attempts: s.attempts ?? 0,
      started_at: iso(s.started_at),
      completed_at: iso(s.completed_at),
    })),
  };
}

/** The run list: no step output (read one run for that). */
export const toRunListView = (r: DeploymentRun) => {
  const { steps, ...rest } = toRunView(r, false);
  return { ...rest, steps: steps.map(({ name, status, exit_code }) => ({ name, status, exit_code })) };
};
