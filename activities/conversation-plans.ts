import { Types } from 'mongoose';
import { MAX_CONVERSATION_STEPS, type Conversation, type ConversationStep } from '../src/domain/conversations/model';
import * as conversations from '../src/domain/conversations/store';
import { conversationPolicy } from '../src/domain/organizations/policy';
import type { Planner, Risk, StepReport, StepTarget } from '../src/domain/planner/types';
import { type PlanOutcome } from '../src/domain/contracts/conversations';
import { failure } from '../src/domain/contracts/failure-types';
import { literalPlan, LOG_TAIL_FOR_PLANNER, planContext, plannerCall, refOf, refusalUnder, stepsToStore } from './conversation-planning';
import { loadConversation } from './conversation-state';
import { closeSteps, type CommandStopDeps } from './conversation-steps';

/* A conversation's instructions planned into steps: the first plan of each, a planner that could not be reached, another way after a failed step. */

/** A step that stands for the instruction itself, failed with why it could not be planned. */
async function failPlanning(conversation: Conversation, messageId: Types.ObjectId, reason: string, risk: Risk = 'read'): Promise<PlanOutcome> {
  const now = new Date();
  await conversations.storePlan(conversation._id, messageId, [
    {
      message_id: messageId, title: 'Plan the instruction', command: '', target: conversation.chatable_type === 'server' ? 'server' : 'target',
      server_id: null, risk, status: 'failed', execution_success: false, output: `${reason}\n`, created_at: now, completed_at: now,
    },
  ]);
  return { ok: false };
}

export function createConversationPlanActivities({ planner, ...stopDeps }: CommandStopDeps & { planner: Planner }) {
  return {
    /**
     * Plans one instruction and persists its steps as pending (each judged by the organization's
     * policy), or one failed step saying why it could not be planned. Planned once: a retry returns
     * the steps already stored.
     */
    async planMessage({ conversationId, messageId }: { conversationId: string; messageId: string }): Promise<PlanOutcome> {
      const conversation = await loadConversation(conversationId);
      const message = conversation.messages.find((m) => m._id.toString() === messageId);
      if (!message) throw failure('MessageNotFound', `Conversation ${conversationId} has no message ${messageId}`);
      const plannedAlready = () => {
        const steps = (conversation.steps as ConversationStep[]).map((step, index) => ({ step, index })).filter(({ step }) => step.message_id.equals(message._id));
        if (steps.some(({ step }) => step.title === 'Plan the instruction' && step.command === '')) return { ok: false } as const;
        return { ok: true, steps: steps.map(({ step, index }) => refOf(step, index)) } as const;
      };
      if (message.planned) return plannedAlready();

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return failPlanning(conversation, message._id, planning);
      const policy = await conversationPolicy(conversation);
      // Commands given as they are (an agent's `run_commands`) are not planned: each is a step, judged like any other.
      const result = message.commands?.length
        ? literalPlan(message.commands)
        : await plannerCall(() => planner.plan(message.text, planning.context, { refusal: refusalUnder(policy, conversation) }));
      if (!result.ok) return failPlanning(conversation, message._id, result.reason, result.risk);
      if (conversation.steps.length + result.steps.length > MAX_CONVERSATION_STEPS) {
        return failPlanning(conversation, message._id, `This instruction needs ${result.steps.length} steps, more than the ${MAX_CONVERSATION_STEPS} a conversation may hold: start a new conversation.`);
      }
      const steps = stepsToStore(result.steps, conversation, message._id, planning.servers, planning.context, policy);
      if (!(await conversations.storePlan(conversation._id, message._id, steps))) {
        Object.assign(conversation, await loadConversation(conversationId));
        return plannedAlready();
      }
      const offset = conversation.steps.length;
      return { ok: true, steps: steps.map((step, i) => refOf(step as unknown as ConversationStep, offset + i)) };
    },

    /** Planning failed for good (the planner unreachable through every retry): the instruction fails, saying why. */
    async planningFailed({ conversationId, messageId, message }: { conversationId: string; messageId: string; message: string }): Promise<void> {
      const conversation = await loadConversation(conversationId);
      await failPlanning(conversation, new Types.ObjectId(messageId), `The planner (${planner.name}) could not be reached: ${message}`);
    },

    /**
     * After a step failed: asks the planner for another way (when it can re-plan, at most
     * maxReplans times per instruction). The instruction's steps not yet run are closed as replaced
     * and the new ones stored as pending; a retry returns the steps already stored.
     */
    async replanAfterFailure({ conversationId, messageId, failedStepId, round }: { conversationId: string; messageId: string; failedStepId: string; round: number }): Promise<PlanOutcome> {
      if (!planner.replan || round > (planner.maxReplans ?? 0)) return { ok: false };
      const conversation = await loadConversation(conversationId);
      // Commands given as they are were not planned: nothing to ask the planner for.
      if (conversation.messages.find((m) => m._id.toString() === messageId)?.commands?.length) return { ok: false };
      const steps = conversation.steps as ConversationStep[];
      const failedIndex = steps.findIndex((s) => s._id.toString() === failedStepId);
      const message = conversation.messages.find((m) => m._id.toString() === messageId);
      if (failedIndex < 0 || !message) throw failure('StepNotFound', `Conversation ${conversationId} has no step ${failedStepId}`);
      const storedFor = (all: ConversationStep[]): PlanOutcome => ({
        ok: true,
        steps: all.map((step, index) => ({ step, index })).filter(({ step }) => step.replan_of?.toString() === failedStepId).map(({ step, index }) => refOf(step, index)),
      });
      const stored = storedFor(steps);
      if (stored.ok && stored.steps.length) return stored;

      const planning = await planContext(conversation);
      if (typeof planning === 'string') return { ok: false };
      const policy = await conversationPolicy(conversation);
      const history: StepReport[] = steps
        .filter((step, index) => step.message_id.equals(message._id) && index <= failedIndex && (step.status === 'completed' || step.status === 'failed'))
        .map((step) => ({ title: step.title, command: step.command ?? '', target: step.target as StepTarget, status: step.status as 'completed' | 'failed', log: (step.output ?? '').slice(-LOG_TAIL_FOR_PLANNER) }));
      const result = await plannerCall(() => planner.replan!(message.text, planning.context, history, { refusal: refusalUnder(policy, conversation) }));
      const failed = steps[failedIndex]!;
      if (!result.ok || result.steps.length === 0) {
        const reason = result.ok ? 'it proposed nothing more' : result.reason;
        await conversations.noteOnStep(conversation._id, failedIndex, failed.output, `asked for another way, the planner gave up: ${reason.trim()}`);
        return { ok: false };
      }
      if (steps.length + result.steps.length > MAX_CONVERSATION_STEPS) return { ok: false };

      // The rest of the failed plan will not run: replaced by the new steps.
      await closeSteps(stopDeps, conversation, `Not run: replaced by a new plan after "${failed.title}" failed`, (index) => index > failedIndex && steps[index]!.message_id.equals(message._id));
      const replacement = stepsToStore(result.steps, conversation, message._id, planning.servers, planning.context, policy, failed._id);
      await conversations.storeReplacement(conversation._id, failed._id, replacement);
      return storedFor((await loadConversation(conversationId)).steps as ConversationStep[]);
    },
  };
}
