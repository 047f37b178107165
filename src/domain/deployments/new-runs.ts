import { Types } from 'mongoose';
import { batcher, insertEach } from '../batch';
import type { StoredParameter } from './parameters';
import type { StepOutput } from '../execution/output-file';
import { DeploymentRunModel, type DeploymentRun } from './model';

/*
 * Runs as their trigger creates them: queued, with a snapshot of the deployment's steps (the runs
 * store's first transition; runs.ts holds the rest).
 */

/** A step as a deployment defines it (the optional fields may be unset in older documents). */
export type StepDefinition = { name: string; command: string; timeout_seconds?: number | null; retries?: number | null; continue_on_error?: boolean | null };

/** A deployment's steps as runs copy them and the API shows them: every field the schema defaults, set. */
export const stepDefinitions = (steps: readonly StepDefinition[]) =>
  steps.map(({ name, command, timeout_seconds, retries, continue_on_error }) => ({
    name,
    command,
    timeout_seconds: timeout_seconds ?? null,
    retries: retries ?? 0,
    continue_on_error: continue_on_error ?? false,
  }));

/** Inserts runs; one refused (a duplicate idempotency key) fails alone, with its code. Triggers at the same moment share one insert. */
const insertRuns = batcher((runs: Record<string, unknown>[]) => insertEach(DeploymentRunModel.collection, runs));

/**
 * A new queued run, as the schema would build it (every default, on the run and on each step), from
 * defaults taken once from the schema itself rather than a mongoose document per trigger.
 */
const newRun = (() => {
  const { _id, steps, ...runDefaults } = new DeploymentRunModel({ steps: [{ name: 'x', command: 'x' }] }).toObject();
  const { name: _name, command: _command, ...stepDefaults } = steps[0]!;
  return ({ skipped_outputs, ...fields }: NewRun): DeploymentRun => {
    const now = new Date();
    return {
      ...runDefaults,
      _id: new Types.ObjectId(),
      ...fields,
      status: 'queued',
      // A retry's run skips the steps that succeeded before, keeping what they recorded.
      steps: stepDefinitions(fields.steps).map((definition, index) =>
        index < (fields.start_step ?? 0)
          ? { ...stepDefaults, ...definition, status: 'skipped', ...(skipped_outputs?.[index]?.length ? { outputs: skipped_outputs[index] } : {}) }
          : { ...stepDefaults, ...definition, status: 'pending' },
      ),
      createdAt: now,
      updatedAt: now,
      __v: 0,
    } as unknown as DeploymentRun;
  };
})();

export type NewRun = Pick<DeploymentRun, 'organization_id' | 'deployment_id' | 'server_id' | 'triggered_by' | 'token_id' | 'idempotency_key' | 'queue_seq'> &
  Partial<Pick<DeploymentRun, 'request_digest' | 'retry_of' | 'start_step' | 'parent_run_id' | 'batch' | 'server_title' | 'server_host' | 'plan_hash' | 'rolls_back' | 'freeze_override'>> & {
    steps: readonly StepDefinition[];
    /** A retry's: the outputs each step before `start_step` recorded in the run it retries (the run's outputs stay whole). */
    skipped_outputs?: ReadonlyArray<ReadonlyArray<StepOutput>>;
    parameters?: readonly StoredParameter[];
    fleet?: { total: number; batches: number; batch_size: number; max_concurrency?: number; max_failures: number; strategy: unknown; rollback?: unknown } | null;
  };

/** A fleet run's target as its trigger creates it: queued, waiting for its batch (no place in its server's queue yet). */
export type NewTarget = Pick<NewRun, 'server_id' | 'batch' | 'server_title' | 'server_host' | 'start_step' | 'skipped_outputs'>;

const TARGET_INSERT_CHUNK = 1000;

/**
 * A fleet run and its targets, queued. The run first (its idempotency key may refuse it, code
 * 11000), then its targets; if they cannot all be stored, the run is taken back.
 */
export async function createFleetRun(fields: NewRun, targets: NewTarget[]): Promise<DeploymentRun> {
  const run = await createRun(fields);
  try {
    for (let from = 0; from < targets.length; from += TARGET_INSERT_CHUNK) {
      const chunk = targets.slice(from, from + TARGET_INSERT_CHUNK).map((target) =>
        newRun({
          ...fields,
          ...target,
          idempotency_key: null,
          request_digest: null,
          plan_hash: null,
          freeze_override: null,
          fleet: null,
          retry_of: null,
          queue_seq: null,
          parent_run_id: run._id,
        }),
      );
      await DeploymentRunModel.collection.insertMany(chunk as never[], { ordered: false });
    }
  } catch (error) {
    await DeploymentRunModel.deleteMany({ $or: [{ _id: run._id }, { parent_run_id: run._id }] });
    throw error;
  }
  return run;
}

/** A trigger's run, queued (a snapshot of the deployment's steps). Rejects with code 11000 when its idempotency key was used. */
export async function createRun(fields: NewRun): Promise<DeploymentRun> {
  const run = newRun(fields);
  await insertRuns(run);
  return run;
}

