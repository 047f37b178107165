import type { Conversation, ConversationStatus, ConversationStep } from '../src/domain/conversations/model';
import { POLICY_REFUSAL } from '../src/domain/planner/policy';
import { clip } from '../src/domain/text';
import { ServerModel } from '../src/domain/servers/model';

/* The one line a failed or cancelled conversation ends with (its `error`), worked out from its steps. */

export interface FinishConversation {
  conversationId: string;
  status: ConversationStatus;
  /** Given: stored as is (null for none). Left out: worked out from the steps. */
  error?: string | null;
  /** The index of the step that ended the last instruction (failed, refused or rejected). */
  failedStep?: number;
}

/** The last line a step's log ends with: a note such as "--- rejected by …; not run ---", or output. */
function lastLine(output: string | null | undefined): string {
  const lines = (output ?? '').split('\n').map((line) => line.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').replace(/^---\s*/, '').replace(/\s*---$/, '');
}

/**
 * One line saying why a conversation's last instruction failed or was cancelled: the step that ended
 * it (its title, position, server and exit code, or the reason it was refused, rejected or could not
 * reach its server), or the instruction the planner could not plan.
 */
export async function outcomeLine(conversation: Conversation, status: ConversationStatus, failedStep: number | undefined): Promise<string> {
  const steps = conversation.steps as ConversationStep[];
  const step = failedStep === undefined ? undefined : steps[failedStep];
  const message = conversation.messages.at(-1);
  if (!step) {
    const planning = [...steps].reverse().find((s) => s.title === 'Plan the instruction' && s.command === '' && (!message || s.message_id.equals(message._id)));
    // The reason's first line says what happened (not understood, refused as destructive, planner unreachable).
    if (planning) return `Could not plan "${clip(message?.text ?? '', 60)}": ${(planning.output ?? '').split('\n').find((line) => line.trim())?.trim() ?? ''}`;
    return status === 'cancelled' ? 'Cancelled' : 'The instruction failed';
  }
  const siblings = steps.filter((s) => s.message_id.equals(step.message_id));
  const position = `(${siblings.indexOf(step) + 1}/${siblings.length})`;
  const server = step.server_id ? await ServerModel.findById(step.server_id, { title: 1 }).lean() : null;
  const where = step.server_id ? ` on ${server?.title ?? step.server_id.toString()}` : '';
  const head = `Step "${step.title}" ${position}`;
  if (step.refused) {
    const why = step.refused.split('\n')[0]!;
    return why.startsWith(POLICY_REFUSAL) ? `${head} was refused by the organization's command policy: ${why.slice(POLICY_REFUSAL.length)}` : `${head} was refused: ${why}`;
  }
  if (step.approval?.decision === 'rejected') return `${head} was rejected by ${step.approval.decided_by ?? 'a person'}`;
  if (step.last_exit?.timed_out) return `${head} failed${where}: timed out`;
  if (step.exit_code !== null && step.exit_code !== undefined) return `${head} failed${where}: exit code ${step.exit_code}`;
  return `${head} failed${where}: ${lastLine(step.output) || 'no exit code'}`;
}
