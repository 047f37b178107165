/* The views of a deployment's definition, in its list and on its own, and of its plan (a dry run's answer). */
import { z } from 'zod';
import { iso } from '../../../domain/timestamps';
import { timestampSchema } from '../../http/timestamps';
import { RUN_STATUSES, type Deployment } from '../../../domain/deployments/model';
import { stepDefinitions } from '../../../domain/deployments/new-runs';
import { gatesOf, healthCheckOf, maxConcurrencyOf, rollbackOf } from '../../../domain/deployments/strategy';
import type { LastRun } from '../../../domain/deployments/runs';
import type { ParameterDefinition } from '../../../domain/deployments/parameters';
import { managedByView, managedByViewSchema } from '../../ownership/views';
import { targetFreezeNoticesSchema, type TargetFreezeNotice } from '../../servers/freeze-notices';

const countOrPercent = z.union([z.number().int(), z.string()]);
const gateDefinitionView = z.object({
  before_batch: z.number().int().optional().describe('With batch_size: the batch it stands before'),
  before_target: z.number().int().optional().describe('With max_concurrency: the target (1-based, in order) it stands before'),
  approvals: z.number().int(),
  expires_in: z.string(),
});
const healthCheckView = z
  .object({ command: z.string(), soak_seconds: z.number().int(), timeout_seconds: z.number().int(), retries: z.number().int(), interval_seconds: z.number().int() })
  .nullable()
  .describe('The check run on each target after its batch (null: none)');
const strategyView = z.object({
  batch_size: countOrPercent.nullable(),
  max_concurrency: countOrPercent.nullable().describe('A rolling window (null: batches)'),
  max_failures: countOrPercent.nullable(),
  gates: z.array(gateDefinitionView).describe('Approval gates (empty: none)'),
  health_check: healthCheckView,
});

/** A parameter as a definition (a deployment's, a pipeline's) declares it. */
export const parameterDefinitionView = z.object({
  name: z.string(),
  description: z.string().nullable(),
  default: z.string().nullable(),
  required: z.boolean(),
  secret: z.boolean(),
  pattern: z.string().nullable(),
});

export const parameterDefinitionsOf = (parameters: readonly ParameterDefinition[] | null | undefined): z.infer<typeof parameterDefinitionView>[] =>
  (parameters ?? []).map((p) => ({ name: p.name, description: p.description ?? null, default: p.default ?? null, required: !!p.required, secret: !!p.secret, pattern: p.pattern ?? null }));

export const deploymentListItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    server_id: z.string().nullable().describe('The one server it runs on; null when it has `targets`'),
    server_title: z.string().nullable().describe('That server’s title; null when it has `targets` (or its server was deleted)'),
    targets: z
      .object({ server_ids: z.array(z.string()), tags: z.array(z.string()) })
      .nullable()
      .describe('The servers listed and the servers having all the tags, resolved at each trigger; null for a one-server deployment'),
    last_run_at: timestampSchema.nullable().describe('When its last run (the first of its runs list) began; while that run is queued, when it was triggered. Null: never run'),
    last_run_status: z.enum(RUN_STATUSES).nullable().describe('Its last run’s status now, as the run itself gives it. Null: never run'),
    managed_by: managedByViewSchema,
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
    parameters: z.array(parameterDefinitionView),
    freezes: targetFreezeNoticesSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Deployment' });

/** A deployment's list item, with its last run (`lastRunsOf`; undefined: never run) and its one server's title. */
export const toDeploymentListView = (d: Deployment, last: LastRun | undefined, serverTitle: string | null): z.infer<typeof deploymentListItemSchema> => ({
  id: d._id.toString(),
  name: d.name,
  server_id: d.server_id?.toString() ?? null,
  server_title: d.server_id ? serverTitle : null,
  targets: d.targets ? { server_ids: (d.targets.server_ids ?? []).map(String), tags: [...(d.targets.tags ?? [])] } : null,
  last_run_at: iso(last?.at ?? null),
  last_run_status: last?.status ?? null,
  managed_by: managedByView(d.managed_by),
  created_at: d.createdAt.toISOString(),
});

/** What a deployment's own view adds to its definition: read from its targets as resolved now. */
export interface DeploymentSurroundings {
  last: LastRun | undefined;
  serverTitle: string | null;
  freezes: TargetFreezeNotice[];
}

export const toDeploymentView = (d: Deployment, { last, serverTitle, freezes }: DeploymentSurroundings): z.infer<typeof deploymentSchema> => ({
  ...toDeploymentListView(d, last, serverTitle),
  steps: stepDefinitions(d.steps),
  rollback: rollbackOf(d),
  strategy: d.strategy
    ? {
        batch_size: (d.strategy.batch_size as unknown as number | string | null) ?? null,
        max_concurrency: maxConcurrencyOf(d),
        max_failures: (d.strategy.max_failures as unknown as number | string | null) ?? null,
        gates: gatesOf(d),
        health_check: healthCheckOf(d),
      }
    : null,
  parameters: parameterDefinitionsOf(d.parameters),
  freezes,
  updated_at: d.updatedAt.toISOString(),
});

/** A dry run's answer. */
export const planSchema = z
  .object({
    deployment_id: z.string(),
    plan_hash: z.string().describe('The hash of this plan (targets and batches, steps, strategy, parameters’ names and non-secret values): pass it to a trigger to run exactly what was reviewed'),
    strategy: z.object({
      batch_size: z.number().int().nullable().describe('Targets per batch; null in a rolling window (max_concurrency)'),
      max_concurrency: z.number().int().nullable().describe('A rolling window: at most this many targets at once, the next starting as one ends; null with batches'),
      max_failures: z.number().int(),
      batches: z.number().int().describe('How many batches; in a rolling window, how many groups of targets (at most max_concurrency each, a new one at each gate)'),
      gates: z.array(gateDefinitionView),
      health_check: healthCheckView,
    }),
    targets: z.array(
      z.object({
        server_id: z.string(),
        title: z.string(),
        host: z.string(),
        status: z.string(),
        batch: z.number().int().describe('Its batch; in a rolling window, its group (groups do not wait for each other: freezes are checked and a rollback goes group by group)'),
      }),
    ),
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
