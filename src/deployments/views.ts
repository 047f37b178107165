import type { Deployment, DeploymentRun } from './model';
import { iso } from '../http/timestamps';

export const toDeploymentListView = (d: Deployment) => ({
  id: d._id.toString(),
  name: d.name,
  server_id: d.server_id.toString(),
  last_run_at: iso(d.last_run_at),
  last_run_status: d.last_run_status ?? null,
  created_at: iso(d.createdAt),
});

export const toDeploymentView = (d: Deployment) => ({
  ...toDeploymentListView(d),
  steps: d.steps.map((s) => ({
    name: s.name,
    command: s.command,
    timeout_seconds: s.timeout_seconds ?? null,
    retries: s.retries ?? 0,
    continue_on_error: s.continue_on_error ?? false,
  })),
  updated_at: iso(d.updatedAt),
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
