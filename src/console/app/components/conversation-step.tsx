// One step of a conversation's thread: what it runs, its risk and status, its decision, a transfer's progress, its output.
import type { Conversation, ConversationStep as Step } from '../api-types';
import type { Streamed } from '../live';
import { Status, When } from './common';
import { StepApproval } from './step-approval';
import { WholeLog } from './whole-log';

/** The last "moved X of Y (NN%), R" line a transfer wrote: its progress. */
function transferProgress(log: string): { percent: number; text: string } | null {
  const lines = log.match(/^moved .*\((\d{1,3})%\).*$/gm);
  const last = lines?.[lines.length - 1];
  if (!last) return null;
  return { percent: Number(/\((\d{1,3})%\)/.exec(last)![1]), text: last };
}

/** A transfer's progress bar, at 100% with its own summary line once the step completed. */
function TransferProgress({ step, number }: { step: Step; number: number }) {
  const moved = step.transfer ? transferProgress(step.execution_log) : null;
  // Done: the whole of it, said by the transfer's own summary line rather than its last progress line.
  const summary = step.status === 'completed' ? step.execution_log.match(/^(?:verified|transferred|moved) .*$/gm)?.pop() : undefined;
  const progress = moved && step.status === 'completed' ? { percent: 100, text: summary ?? 'done' } : moved;
  if (!progress) return null;
  return (
    <div class="progress">
      <progress max={100} value={progress.percent} aria-label={`Transfer of step ${number}`} /> <span class="small">{progress.text}</span>
    </div>
  );
}

/** A step of the thread, numbered across the whole conversation; a waiting one carries its decision. */
export function ConversationStep({ step, number, conversation, onChanged }: { step: Step; number: number; conversation: Conversation; onChanged: (c: Conversation) => void }) {
  const waiting = step.status === 'pending' && step.approval !== null && step.approval.decision === null && conversation.status === 'awaiting_approval';
  return (
    <li class={`run-step${waiting ? ' waiting' : ''}`} data-step={step.title}>
      <h3>
        <span class="step-no">{number}</span> {step.title} <Status value={step.status} /> <span class={`risk risk-${step.risk}`}>{step.risk}</span>
        <span class="muted small">{step.exit_code !== null ? ` exit ${step.exit_code}` : ''}</span>
      </h3>
      <code class="command">{step.command}</code>
      {step.approval?.decision ? (
        <p class="small">
          <Status value={step.approval.decision} /> by {step.approval.decided_by} <When at={step.approval.decided_at} />
        </p>
      ) : null}
      {waiting ? <StepApproval step={step} number={number} conversationId={conversation.id} onChanged={onChanged} /> : null}
      <TransferProgress step={step} number={number} />
      {step.status !== 'pending' || step.execution_log ? (
        <WholeLog
          path={`/api/v1/conversations/${conversation.id}/steps/${step.id}/log`}
          anchor={String(number)}
          label={`Output of ${step.title}`}
          version={`${step.status}:${(step as Streamed).streamed ?? step.execution_log.length}`}
          live={step.status === 'running'}
        />
      ) : null}
    </li>
  );
}
