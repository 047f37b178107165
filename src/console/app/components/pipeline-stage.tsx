// A stage of a pipeline run as its box shows it: its runs, why it failed or was skipped, its outputs, its gate.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api';
import type { PipelineRun, PipelineRunStage } from '../api-types';
import { session } from '../session';
import { ErrorNote, Status, submitted, When } from './common';

/**
 * Why the signed-in identity may not decide on this stage's gate, or null when it may. A courtesy:
 * the server judges every decision by the same rules as a run's gate.
 */
function whyNotDecide(run: PipelineRun, stage: PipelineRunStage): string | null {
  const me = session.get()?.identity;
  if (!me) return 'Sign in to approve';
  if (me.type !== 'person') return 'Only people approve: this session is a service account’s';
  if (!session.can('approve')) return 'Approving takes the approver role, which you do not have';
  if (run.actor?.id === me.id) return 'You triggered this run: another person must approve it';
  if (stage.approval?.approvals.some((a) => a.by?.id === me.id)) return 'You have approved this stage';
  return null;
}

/** Approve, or Reject with a reason; the run's next event shows the outcome. */
function StageDecision({ run, stage }: { run: PipelineRun; stage: PipelineRunStage }) {
  const [error, setError] = useState<unknown>(null);
  const [rejecting, setRejecting] = useState(false);
  const why = whyNotDecide(run, stage);
  if (why) {
    return (
      <p class="muted small" data-why-not>
        {why}
      </p>
    );
  }
  const path = `/api/v1/pipelines/${run.pipeline_id}/runs/${run.id}/stages/${encodeURIComponent(stage.name)}`;
  const decide = async (event: Event, decision: 'approve' | 'reject') => {
    const { field } = submitted(event);
    setError(null);
    try {
      await api('POST', `${path}/${decision}`, decision === 'approve' ? {} : { reason: field('reason') });
    } catch (problem) {
      setError(problem);
    }
  };
  return (
    <div class="stage-decision" role="group" aria-label={`Decide on ${stage.name}`}>
      <ErrorNote error={error} />
      {rejecting ? (
        <form onSubmit={(e) => void decide(e, 'reject')} aria-label={`Reject ${stage.name}`}>
          <label>
            Reason <input name="reason" required maxLength={2000} />
          </label>
          <button type="submit" class="danger">
            Reject
          </button>{' '}
          <button type="button" onClick={() => setRejecting(false)}>
            Back
          </button>
        </form>
      ) : (
        <form onSubmit={(e) => void decide(e, 'approve')} aria-label={`Approve ${stage.name}`}>
          <button type="submit" class="primary">
            Approve
          </button>{' '}
          <button type="button" class="danger" onClick={() => setRejecting(true)}>
            Reject…
          </button>
        </form>
      )}
    </div>
  );
}

/** The stage's gate: how many approvals it has of how many, how it was decided. */
function StageGate({ run, stage }: { run: PipelineRun; stage: PipelineRunStage }) {
  const approval = stage.approval;
  if (!approval) return stage.gate ? <p class="small">{stage.gate.approvals} approval(s) before it starts</p> : null;
  const waiting = stage.status === 'awaiting_approval' && approval.outcome === null;
  return (
    <div class="stage-gate" data-stage-gate>
      <p class="small">
        {approval.approvals.length} of {approval.approvals_required} approval{approval.approvals_required === 1 ? '' : 's'}
        {approval.outcome ? ` · ${approval.outcome}` : ''}
        {waiting ? (
          <>
            {' '}
            · expires <When at={approval.expires_at} />
          </>
        ) : null}
      </p>
      {approval.approvals.map((a) => (
        <p class="small" key={a.by?.id}>
          Approved by <strong>{a.by?.name}</strong>
          {a.comment ? ` — ${a.comment}` : ''}
        </p>
      ))}
      {approval.outcome === 'rejected' ? (
        <p class="small">
          Rejected by <strong>{approval.rejected_by?.name}</strong>: {approval.reason}
        </p>
      ) : null}
      {waiting ? <StageDecision run={run} stage={stage} /> : null}
    </div>
  );
}

/** Names and their values (a stage's parameters as written, its outputs): nothing when there is none. */
export function StageValues({ values, label }: { values: Record<string, string>; label: string }) {
  const entries = Object.entries(values);
  if (!entries.length) return null;
  return (
    <dl class="stage-values" aria-label={label}>
      {entries.map(([name, value]) => (
        <Fragment key={name}>
          <dt>{name}</dt>
          <dd>
            <code>{value}</code>
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

export function RunStage({ run, stage }: { run: PipelineRun; stage: PipelineRunStage }) {
  return (
    <>
      <h3>
        {stage.name} <Status value={stage.status} />
      </h3>
      <p class="small">
        <a href={`/deployments/${stage.deployment_id}`}>{stage.deployment_name}</a>
        {stage.deployment_run_id ? (
          <>
            {' · '}
            <a href={`/deployments/${stage.deployment_id}/runs/${stage.deployment_run_id}`} data-stage-run>
              run {stage.deployment_run_id.slice(-8)}
            </a>
            {stage.kept_from ? (
              ' (kept from the run retried)'
            ) : (
              <>
                {' · '}
                <span data-deployment-run-status>{stage.deployment_run_status}</span>
              </>
            )}
          </>
        ) : null}
      </p>
      {/* A rejected gate's reason is shown with the gate. */}
      {stage.error && stage.approval?.outcome !== 'rejected' ? (
        <p class={stage.status === 'skipped' ? 'small muted' : 'small stage-error'} data-stage-error>
          {stage.error}
        </p>
      ) : null}
      <StageValues values={stage.outputs} label={`Outputs of ${stage.name}`} />
      <StageGate run={run} stage={stage} />
    </>
  );
}
