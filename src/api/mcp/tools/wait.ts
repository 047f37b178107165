import { z } from 'zod';
import { FINAL_CONVERSATION_STATUSES } from '../../../domain/conversations/model';
import { FINAL_RUN_STATUSES } from '../../../domain/deployments/model';
import { conversationLink, readConversation, readRun, Refused, runLink } from './bosun-api';
import { id } from './inputs';
import { defineTool, READ } from './tool';

/* wait: until a conversation or a run changes or ends, for at most a minute. */

/** The longest a `wait` may wait, in seconds. */
export const MAX_WAIT_SECONDS = 60;

/** Statuses a run or a conversation never leaves. */
const FINAL = new Set<string>([...FINAL_RUN_STATUSES, ...FINAL_CONVERSATION_STATUSES]);

// What counts as a change: the status, each step's status and decision, a fleet run's servers' statuses, its gate.
const stateOf = (thing: Record<string, unknown>) =>
  JSON.stringify([
    thing.status,
    ((thing.steps ?? []) as Array<Record<string, unknown>>).map((s) => [s.status, (s.approval as { decision?: unknown } | null)?.decision ?? null]),
    ((thing.targets ?? []) as Array<Record<string, unknown>>).map((t) => t.status),
    thing.gate ?? null,
  ]);

export const wait = defineTool({
  name: 'wait',
  title: 'Wait for a change',
  description: `Waits until a conversation or a deployment run changes (its status or a step's), or has ended, or timeout_seconds pass (at most ${MAX_WAIT_SECONDS}). Returns it as it then is, and whether it changed. Give conversation_id, or deployment_id and run_id.`,
  inputSchema: {
    conversation_id: id('conversation id').optional(),
    deployment_id: id('deployment id').optional(),
    run_id: id('run id').optional(),
    timeout_seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).default(30),
  },
  annotations: READ,
  run: async ({ conversation_id, deployment_id, run_id, timeout_seconds }, context) => {
    const isConversation = !!conversation_id;
    if (isConversation === !!(deployment_id && run_id)) throw new Refused({ status: 422, code: 'validation_failed', message: 'Give conversation_id, or deployment_id and run_id' });
    const read = () => (isConversation ? readConversation(context, conversation_id!) : readRun(context, deployment_id!, run_id!));
    const first = await read();
    const before = stateOf(first);
    let now = first;
    const deadline = Date.now() + timeout_seconds * 1000;
    while (!FINAL.has(String(now.status)) && stateOf(now) === before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(context.pollMs ?? 1000, Math.max(0, deadline - Date.now()))));
      now = await read();
    }
    return {
      changed: stateOf(now) !== before,
      status: now.status,
      [isConversation ? 'conversation' : 'run']: now,
      console_url: isConversation ? conversationLink(context, conversation_id!) : runLink(context, deployment_id!, run_id!),
    };
  },
});
