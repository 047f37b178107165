import type { Conversation, ConversationStep } from '../src/domain/conversations/model';
import * as conversations from '../src/domain/conversations/store';
import { organizationSecretValues } from '../src/domain/secrets/model';
import { DEFAULT_STEP_LIMIT_SECONDS, type StepResult } from '../src/domain/contracts/runs';
import { type ConversationStepAttempt } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { frozenLine } from '../src/domain/freezes/coverage';
import { credentialSecrets, loadVerifiedTarget } from './ssh-target';
import { executionSettings, recordedCommandResult, startStepExecution, type StepExecutionDeps } from './step-execution';
import { follow } from './step-follow';
import { stopLeftoverCommands } from './leftover-commands';
import { loadConversation } from './conversation-state';

/* A conversation's steps on their servers: one step's command run to its end, a step failed for good, the steps left open closed. */

/** What stopping a closed step's leftover command needs. */
export type CommandStopDeps = Pick<StepExecutionDeps, 'secretBox' | 'sshPool' | 'log'>;

/**
 * Fails the steps still pending or running (of those `which` picks) as not run, saying why — a refused
 * step with its own reason; a command still running is stopped once its step is closed.
 */
export async function closeSteps({ secretBox, sshPool, log }: CommandStopDeps, conversation: Conversation, reason: string, which: (index: number) => boolean = () => true) {
  const running = (conversation.steps as ConversationStep[])
    .map((step, index) => ({ step, index }))
    .filter(({ step, index }) => step.status === 'running' && step.pgid && which(index));
  // Closed first: a command killed before would end as its own failure in the execution still holding it.
  await conversations.closeSteps(conversation, reason, which);
  await Promise.all(
    running.map(({ step, index }) =>
      stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid!], { kind: 'conversation', id: String(conversation._id), stepIndex: index }),
    ),
  );
}

export function createConversationStepActivities({ secretBox, sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs = 200 }: StepExecutionDeps) {
  const settings = executionSettings({ sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs });

  return {
    /**
     * Runs one step's command to the end, heartbeating, streaming its output into the step's
     * execution log. A command that already finished (its worker died before reporting) is not run again.
     */
    async runConversationStep(input: ConversationStepAttempt): Promise<StepResult> {
      const { conversationId, index } = input;
      const [step, target, organizationSecrets] = await Promise.all([
        conversations.findStep(conversationId, index),
        loadVerifiedTarget(input.serverId, secretBox),
        organizationSecretValues(input.organizationId, secretBox),
      ]);
      if (!step || step._id.toString() !== input.stepId) throw failure('StepNotFound', `Conversation ${conversationId} has no step ${input.stepId}`);
      const attempt = { runId: conversationId, serverId: input.serverId, organizationId: input.organizationId, index, exitAttempt: 0, finalExitAttempt: true };
      const audit = { kind: 'conversation', stepId: input.stepId, stepName: step.title } as const;
      const recorded = await recordedCommandResult(step, { attempt, audit });
      if (recorded) return recorded;
      // A step not yet begun does not begin while a change freeze covers its server.
      const frozen = step.status === 'pending' ? await frozenLine(input.organizationId, [input.serverId]) : null;
      if (frozen) throw failure('ChangeFrozen', `Not run: ${frozen}`);
      const execution = startStepExecution(settings, {
        attempt,
        step: { ...step, retries: 0 },
        target,
        secrets: [...credentialSecrets(target), ...organizationSecrets],
        limitSeconds: DEFAULT_STEP_LIMIT_SECONDS,
        steps: conversations.conversationSteps(conversationId),
        failureNote: true,
        audit,
      });
      return follow(execution);
    },

    /** A step whose activity failed for good (server unreachable or refusing us): failed, with the reason. */
    async failConversationStep({ conversationId, index, message }: { conversationId: string; index: number; message: string }): Promise<void> {
      const step = await conversations.findStep(conversationId, index);
      if (!step) return;
      await conversations.failStep(conversationId, index, step, message);
      if (step.pgid) await stopLeftoverCommands({ secretBox, sshPool, log }, step.server_id, [step.pgid], { kind: 'conversation', id: conversationId, stepIndex: index });
    },

    /** Every step still pending or running fails, with the reason (a refused step with its own). */
    async closeOpenSteps({ conversationId, reason }: { conversationId: string; reason: string }): Promise<void> {
      await closeSteps({ secretBox, sshPool, log }, await loadConversation(conversationId), reason);
    },
  };
}
