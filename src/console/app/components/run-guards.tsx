import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { Run } from '../api-types';
import { ErrorNote, Section, When, submitted } from './common';
import { session } from '../session';

type Gate = NonNullable<Run['gate']>;

/**
 * Why the signed-in identity may not approve this gate, or null when it may. A courtesy: the server
 * judges every decision the same way, whatever the client.
 */
export function whyNotApprove(run: Pick<Run, 'actor' | 'gate'>): string | null {
  const me = session.get()?.identity;
  if (!me) return 'Sign in to approve';
  if (me.type !== 'person') return 'Only people approve: this session is a service account’s';
  if (!session.can('approve')) return 'Approving takes the approver role, which you do not have';
  if (run.actor?.id === me.id) return 'You triggered this run: another person must approve it';
  if (run.gate?.approvals.some((a) => a.by.id === me.id)) return 'You have approved this gate';
  return null;
}

const OUTCOME: Record<NonNullable<Gate['outcome']>, string> = { approved: 'approved', rejected: 'rejected', expired: 'expired' };

/** A fleet run's approval gate: who approved, what is still needed, and Approve / Reject where the person may. */
export function GatePanel({ run, runPath }: { run: Run; runPath: string }) {
  const [error, setError] = useState<unknown>(null);
  const gate = run.gate;
  // A link to the gate (a notification's, the dashboard's: `#gate`) opens with it in view.
  useEffect(() => {
    if (gate && location.hash === '#gate') document.getElementById('gate')?.scrollIntoView({ block: 'start' });
  }, [!!gate]);
  if (!gate) return null;
  const waiting = run.status === 'awaiting_approval' && gate.outcome === null;
  const why = waiting ? whyNotApprove(run) : null;
  const decide = async (event: Event, decision: 'approve' | 'reject') => {
    const { field, form } = submitted(event);
    setError(null);
    try {
      await api('POST', `${runPath}/${decision}`, decision === 'approve' ? (field('comment') ? { comment: field('comment') } : {}) : { reason: field('reason') });
      form.reset();
    } catch (problem) {
      setError(problem);
    }
  };
  return (
    <Section title={`Approval gate before ${gate.before_target !== null ? `target ${gate.before_target}` : `batch ${gate.before_batch}`}`} id="gate">
      <p data-gate>
        {gate.approvals.length} of {gate.approvals_required} approval{gate.approvals_required > 1 ? 's' : ''}
        {gate.outcome ? ` · ${OUTCOME[gate.outcome]}` : ' · waiting'}
        {waiting ? (
          <span class="muted">
            {' '}
            · expires <When at={gate.expires_at} />
          </span>
        ) : null}
      </p>
      {gate.approvals.length ? (
        <ul class="approvals">
          {gate.approvals.map((a) => (
            <li key={a.by.id}>
              <strong>{a.by.name}</strong> <When at={a.at} />
              {a.comment ? <span class="muted"> — {a.comment}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {gate.outcome === 'rejected' && gate.rejected_by ? (
        <p>
          Rejected by <strong>{gate.rejected_by.name}</strong>: {gate.reason}
        </p>
      ) : null}
      {waiting ? <Approvers run={run} /> : null}
      <ErrorNote error={error} />
      {waiting && why ? (
        <p class="muted" data-why-not>
          {why}
        </p>
      ) : null}
      {waiting && !why ? (
        <div class="gate-actions">
          <form onSubmit={(e) => void decide(e, 'approve')} aria-label="Approve">
            <label>
              Comment <input name="comment" maxLength={2000} placeholder="what you checked" />
            </label>
            <button type="submit">Approve</button>
          </form>
          <form onSubmit={(e) => void decide(e, 'reject')} aria-label="Reject">
            <label>
              Reason <input name="reason" required maxLength={2000} />
            </label>
            <button type="submit" class="danger">
              Reject
            </button>
          </form>
        </div>
      ) : null}
    </Section>
  );
}

/**
 * Who may approve the gate, as the server judges it (the run's `approvers`), less those whose
 * approval came since it was read; who triggered the run is never among them.
 */
function Approvers({ run }: { run: Run }) {
  if (!run.approvers) return null;
  const approved = new Set(run.gate?.approvals.map((a) => a.by.id));
  const left = run.approvers.filter((a) => !approved.has(a.id));
  if (!left.length) {
    return (
      <p class="muted" data-approvers>
        Nobody may approve it now: it takes a person, other than who triggered the run, with the approver role on every server of the run.
      </p>
    );
  }
  return (
    <p data-approvers>
      May approve:{' '}
      {left.map((a, i) => (
        <span key={a.id}>
          {i === 0 ? '' : i === left.length - 1 ? ' or ' : ', '}
          {a.kind === 'team' ? 'a member of team ' : ''}
          <strong>{a.name}</strong>
        </span>
      ))}
    </p>
  );
}

/** Pause after the running batch, or resume: for a fleet run, where the person may run it. */
export function PauseControls({ run, runPath }: { run: Run; runPath: string }) {
  const [error, setError] = useState<unknown>(null);
  if (run.strategy === null || !session.can('deployments:run')) return null;
  const act = async (call: () => Promise<unknown>) => {
    setError(null);
    try {
      await call();
    } catch (problem) {
      setError(problem);
    }
  };
  const pause = (event: Event) => {
    const { field, form } = submitted(event);
    void act(async () => {
      await api('POST', `${runPath}/pause`, { reason: field('reason') });
      form.reset();
    });
  };
  const { pause: asked } = run;
  return (
    <div class="pause-controls">
      <ErrorNote error={error} />
      {asked ? (
        <p data-pause>
          {run.status === 'paused' ? 'Paused' : 'Pausing after this batch'} — asked by <strong>{asked.by.name}</strong>: {asked.reason}{' '}
          <button type="button" onClick={() => void act(() => api('POST', `${runPath}/resume`))}>
            Resume
          </button>
        </p>
      ) : run.status === 'running' ? (
        <form onSubmit={pause} aria-label="Pause">
          <label>
            Reason <input name="reason" required maxLength={2000} />
          </label>
          <button type="submit">Pause after this batch</button>
        </form>
      ) : null}
    </div>
  );
}

/** A run held by change freezes (which, until when), and a run triggered through them (who overrode, why). */
export function FreezeNotes({ run }: { run: Run }) {
  const { freeze, freeze_override: override } = run;
  if (!freeze && !override) return null;
  return (
    <div class="freeze-notes">
      {freeze ? (
        <p data-freeze>
          Frozen by <strong>{freeze.names.join(', ')}</strong> until <When at={freeze.until} />:{' '}
          {run.strategy !== null ? 'the next batch starts when the freeze lifts' : 'the run starts on its server when the freeze lifts'} (or cancel the run).
        </p>
      ) : null}
      {override ? (
        <p data-freeze-override>
          Triggered through the freeze {override.freezes.join(', ')} by <strong>{override.by.name}</strong> at <When at={override.at} />: {override.reason}
        </p>
      ) : null}
    </div>
  );
}

/** A fleet run's rollback: how it went, or Roll back on request (a failed run with rollback steps, for those who may run it). */
export function RollbackPanel({ run, runPath }: { run: Run; runPath: string; deploymentId: string }) {
  const [error, setError] = useState<unknown>(null);
  if (run.strategy === null) return null;
  const { rollback } = run;
  const offered = !rollback && run.status === 'failed' && run.rollback_steps > 0 && session.can('deployments:run');
  if (!rollback && !offered) return null;
  const ask = async (event: Event) => {
    const { field } = submitted(event);
    setError(null);
    try {
      await api('POST', `${runPath}/rollback`, field('reason') ? { reason: field('reason') } : {});
    } catch (problem) {
      setError(problem);
    }
  };
  return (
    <Section title="Rollback">
      <ErrorNote error={error} />
      {rollback ? (
        <p data-rollback>
          {rollback.summary ?? `rolling back on ${rollback.touched} touched server${rollback.touched > 1 ? 's' : ''}, newest batch first…`}
          {rollback.requested_by ? <span class="muted"> — asked by {rollback.requested_by.name}</span> : null}
        </p>
      ) : (
        <form onSubmit={(e) => void ask(e)} aria-label="Roll back">
          <p class="muted">Runs the deployment’s rollback steps on every server this run touched, newest batch first (if it has rollback steps).</p>
          <label>
            Reason <input name="reason" maxLength={2000} placeholder="why (the steps see it as BOSUN_ROLLBACK_REASON)" />
          </label>
          <button type="submit" class="danger">
            Roll back
          </button>
        </form>
      )}
    </Section>
  );
}
